"""The topic map of a collection: BERTopic over the paper vectors the store already holds (UMAP
to 5 dimensions, HDBSCAN clusters, class-based TF-IDF labels over titles and abstracts), and a
2-D UMAP layout for the map. Fixed seeds: the same papers and settings give the same map.

Computed after ingest, on demand, and kept beside the store in `<home>/topics/`, keyed by the
store's content fingerprint and these settings: it is recomputed only when the papers change.
"""

from __future__ import annotations

import hashlib
import json
import time
from collections import Counter
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from rag.explore.vectors import paper_vectors
from rag.records import STATUSES
from rag.retrieve.hybrid import HybridSearcher
from rag.text.terms import tokenize

TOPICS_VERSION = 2
SEED = 42
MIN_TOPIC_SIZE = 12  # HDBSCAN's smallest cluster, in papers
NEIGHBOURS = 15  # UMAP neighbourhood
LABEL_WORDS = 3
VOCABULARY = 50_000  # label vocabulary (words and word pairs), most frequent first
TOP_PAPERS = 5
NOISE = -1


@dataclass
class Topic:
    id: int
    label: str
    size: int
    statuses: dict[str, int]
    top_papers: list[str]  # paper ids nearest to the topic's centre

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


@dataclass
class TopicMap:
    fingerprint: str
    topics: list[Topic]
    assignment: dict[str, int]  # paper id -> topic id (NOISE: none)
    coords: dict[str, tuple[float, float]]  # paper id -> 2-D map position
    seconds: float = 0.0
    meta: dict[str, Any] = field(default_factory=dict)

    @property
    def assigned_share(self) -> float:
        if not self.assignment:
            return 0.0
        return sum(1 for t in self.assignment.values() if t != NOISE) / len(self.assignment)

    def topic_of(self, paper_id: str) -> Topic | None:
        topic_id = self.assignment.get(paper_id, NOISE)
        return next((t for t in self.topics if t.id == topic_id), None)

    def papers_in(self, topic_id: int) -> list[str]:
        return sorted(p for p, t in self.assignment.items() if t == topic_id)

    def to_json(self) -> dict[str, Any]:
        return {
            "version": TOPICS_VERSION,
            "fingerprint": self.fingerprint,
            "seconds": round(self.seconds, 1),
            "assigned_share": round(self.assigned_share, 4),
            "meta": self.meta,
            "topics": [t.to_json() for t in self.topics],
            "papers": {
                pid: {"topic": self.assignment[pid], "x": xy[0], "y": xy[1]}
                for pid, xy in sorted(self.coords.items())
            },
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> TopicMap:
        papers = data["papers"]
        return cls(
            fingerprint=data["fingerprint"],
            topics=[Topic(**t) for t in data["topics"]],
            assignment={pid: int(p["topic"]) for pid, p in papers.items()},
            coords={pid: (float(p["x"]), float(p["y"])) for pid, p in papers.items()},
            seconds=float(data.get("seconds", 0.0)),
            meta=dict(data.get("meta", {})),
        )


def fingerprint(searcher: HybridSearcher) -> str:
    """Changes when the stored papers or the topic settings change."""
    key = f"{searcher.lexical.fingerprint}|v{TOPICS_VERSION}|{SEED}|{MIN_TOPIC_SIZE}|{NEIGHBOURS}"
    return hashlib.sha256(key.encode()).hexdigest()[:16]


def topics_path(home: Path, searcher: HybridSearcher) -> Path:
    return home / "topics" / f"{searcher.store.name}-{fingerprint(searcher)}.json"


def load_topics(home: Path, searcher: HybridSearcher) -> TopicMap | None:
    """The kept topic map of the current papers, or None when there is none yet."""
    path = topics_path(home, searcher)
    if not path.is_file():
        return None
    try:
        return TopicMap.from_json(json.loads(path.read_text()))
    except (OSError, ValueError, KeyError, TypeError):
        return None  # a damaged file is rebuilt


def topic_map(home: Path, searcher: HybridSearcher, *, rebuild: bool = False) -> TopicMap:
    """The topic map of the current papers: kept, or built now (and kept)."""
    kept = None if rebuild else load_topics(home, searcher)
    if kept is not None:
        return kept
    built = build_topics(searcher)
    path = topics_path(home, searcher)
    path.parent.mkdir(parents=True, exist_ok=True)
    for old in path.parent.glob(f"{searcher.store.name}-*.json"):
        old.unlink(missing_ok=True)  # maps of earlier papers
    tmp = path.with_suffix(".tmp")
    tmp.write_text(json.dumps(built.to_json()))
    tmp.replace(path)
    return built


def build_topics(searcher: HybridSearcher) -> TopicMap:
    """Cluster and label every paper of the store (see module doc)."""
    started = time.perf_counter()
    vectors = paper_vectors(searcher)
    papers = searcher.lexical.table.papers
    ids = vectors.paper_ids
    docs = [
        papers[pid]["title"] + ". " + " ".join(t for _, t in searcher.lexical.paper_chunks(pid))
        for pid in ids
    ]
    statuses = [str(papers[pid].get("status", "")) for pid in ids]
    built = cluster_papers(ids, docs, vectors.matrix, statuses)
    built.fingerprint = fingerprint(searcher)
    built.seconds = time.perf_counter() - started
    return built


def cluster_papers(
    ids: list[str], docs: list[str], matrix: np.ndarray, statuses: list[str]
) -> TopicMap:
    """The topic map of papers given by id, text (for labels), vector and status."""
    # Deferred on purpose: BERTopic imports torch and sentence-transformers (~20 s).
    from bertopic import BERTopic
    from bertopic.vectorizers import ClassTfidfTransformer
    from hdbscan import HDBSCAN
    from sklearn.feature_extraction.text import CountVectorizer
    from umap import UMAP

    started = time.perf_counter()
    if len(ids) < MIN_TOPIC_SIZE * 2:
        return _one_topic(ids, statuses, started)
    neighbours = min(NEIGHBOURS, len(ids) - 1)
    model = BERTopic(
        umap_model=UMAP(
            n_neighbors=neighbours, n_components=5, min_dist=0.0, metric="cosine", random_state=SEED
        ),
        hdbscan_model=HDBSCAN(min_cluster_size=MIN_TOPIC_SIZE, metric="euclidean"),
        # min_df counts topics here (c-TF-IDF joins each topic's papers): 1 keeps words of one topic
        vectorizer_model=CountVectorizer(
            stop_words="english", ngram_range=(1, 2), max_features=VOCABULARY
        ),
        ctfidf_model=ClassTfidfTransformer(reduce_frequent_words=True),
        calculate_probabilities=False,
    )
    labels, _ = model.fit_transform(docs, embeddings=matrix)
    layout = UMAP(
        n_neighbors=neighbours, n_components=2, min_dist=0.1, metric="cosine", random_state=SEED
    ).fit_transform(matrix)
    assignment = {pid: int(t) for pid, t in zip(ids, labels, strict=True)}
    topics = []
    for topic_id in sorted(set(assignment.values()) - {NOISE}):
        members = [i for i, pid in enumerate(ids) if assignment[pid] == topic_id]
        words = _distinct_words([w for w, _ in (model.get_topic(topic_id) or [])])
        centre = matrix[members].mean(axis=0)
        nearest = sorted(members, key=lambda i: -float(matrix[i] @ centre))
        counts = Counter(statuses[i] for i in members)
        topics.append(
            Topic(
                id=topic_id,
                label=", ".join(words) or f"topic {topic_id}",
                size=len(members),
                statuses={s: counts.get(s, 0) for s in STATUSES},
                top_papers=[ids[i] for i in nearest[:TOP_PAPERS]],
            )
        )
    topics.sort(key=lambda t: (-t.size, t.id))
    coords = {
        pid: (round(float(x), 4), round(float(y), 4))
        for pid, (x, y) in zip(ids, layout, strict=True)
    }
    return TopicMap(
        "",
        topics,
        assignment,
        coords,
        seconds=time.perf_counter() - started,
        meta={"papers": len(ids), "min_topic_size": MIN_TOPIC_SIZE, "seed": SEED},
    )


def _distinct_words(words: list[str]) -> list[str]:
    """The first LABEL_WORDS label words that share no stemmed word with an earlier one
    ("graph, graphs, gnns" -> "graph, gnns, ...")."""
    kept: list[str] = []
    seen: set[str] = set()
    for word in words:
        stems = set(tokenize([word])[0])
        if stems and not stems & seen:
            kept.append(word)
            seen |= stems
        if len(kept) == LABEL_WORDS:
            break
    return kept


def _one_topic(ids: list[str], statuses: list[str], started: float) -> TopicMap:
    """Too few papers to cluster: one topic holding them all, laid out on a circle."""
    counts = Counter(statuses)
    angles = np.linspace(0, 2 * np.pi, num=max(1, len(ids)), endpoint=False)
    topics = (
        [
            Topic(
                0, "all papers", len(ids), {s: counts.get(s, 0) for s in STATUSES}, ids[:TOP_PAPERS]
            )
        ]
        if ids
        else []
    )
    coords = {
        pid: (round(float(np.cos(a)), 4), round(float(np.sin(a)), 4))
        for pid, a in zip(ids, angles, strict=True)
    }
    return TopicMap(
        "",
        topics,
        {pid: 0 for pid in ids},
        coords,
        seconds=time.perf_counter() - started,
        meta={"papers": len(ids), "min_topic_size": MIN_TOPIC_SIZE, "seed": SEED},
    )
