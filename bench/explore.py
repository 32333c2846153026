"""Exploring the whole conference: topic-map build time and quality, its scaling, counting
answers.

1. Topic map over all papers of a store from its stored embeddings (no re-embedding): seconds
   (import of BERTopic and its torch stack measured apart), peak memory, topics, share of papers
   assigned to a topic, and agreement with a check anyone can state: papers that share a
   distinctive method name (a name the name index gives to 2-5 papers) should land in the same
   topic far more often than random pairs of papers do.
2. Scaling of the clustering at 10k and 100k synthetic papers: real paper vectors with Gaussian
   noise (sigma 0.05, re-normalised) drawn with replacement, with their papers' texts and
   statuses; each size in its own process (time, peak RSS).
3. Counting answers ("How many papers ...?") over the full corpus with `extractive`.

    .venv/bin/python bench/explore.py --home HOME [--sizes 10000,100000] [--no-scale]

HOME must hold the full corpus (`papertalk ingest ../shared/data/icml2025/papers.jsonl`).
Results are saved under bench/results/explore-<timestamp>.md.
"""

from __future__ import annotations

import argparse
import itertools
import json
import os
import random
import resource
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[1]
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

from bench.common import machine, save_results  # noqa: E402

COUNT_QUESTIONS = (  # written for this benchmark, not taken from an evaluation set
    "How many papers work on protein design?",
    "How many papers study federated learning?",
    "How many orals are about diffusion models?",
    "How many papers use graph neural networks for molecules?",
    "How many papers are about speculative decoding?",
)
NOISE = 0.05
SEED = 7


def peak_rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def topic_quality(searcher, topics) -> dict[str, float]:  # type: ignore[no-untyped-def]
    """Same-topic rate of pairs of papers sharing a distinctive name, against random pairs."""
    names = searcher.lexical.names
    groups = [ids for ids in names._by_words.values() if 2 <= len(set(ids)) <= 5]
    pairs = {tuple(sorted(p)) for ids in groups for p in itertools.combinations(set(ids), 2)}
    assigned = {p: t for p, t in topics.assignment.items() if t >= 0}
    named = [(a, b) for a, b in pairs if a in assigned and b in assigned]
    same = sum(1 for a, b in named if assigned[a] == assigned[b]) / max(1, len(named))
    rng = random.Random(SEED)
    pool = sorted(assigned)
    randoms = [tuple(rng.sample(pool, 2)) for _ in range(20_000)]
    chance = sum(1 for a, b in randoms if assigned[a] == assigned[b]) / len(randoms)
    return {"name_pairs": len(named), "same_topic": same, "random_same_topic": chance}


def run_full(home: Path) -> dict[str, object]:
    os.environ["PAPERTALK_HOME"] = str(home)
    from rag.explore.topics import build_topics
    from rag.retrieve.hybrid import open_searcher
    from rag.settings import load_settings

    settings = load_settings(llm="extractive")
    searcher = open_searcher(settings)
    started = time.perf_counter()
    import bertopic  # noqa: F401  (timed apart: torch and sentence-transformers come with it)

    import_s = time.perf_counter() - started
    built = build_topics(searcher)
    rebuilt = build_topics(searcher)
    quality = topic_quality(searcher, built)

    from rag.answer.chain import Answerer

    answerer = Answerer(settings)
    answerer.answer(COUNT_QUESTIONS[0])  # warm: index, name index, vectors
    timings, counts = [], []
    for question in COUNT_QUESTIONS:
        t0 = time.perf_counter()
        answer = answerer.answer(question)
        timings.append(time.perf_counter() - t0)
        counts.append(answer.answer.splitlines()[0][:90] if not answer.refused else "refused")
    return {
        "papers": len(built.assignment),
        "topics": len(built.topics),
        "assigned_share": built.assigned_share,
        "import_s": import_s,
        "build_s": built.seconds,
        "deterministic": built.assignment == rebuilt.assignment and built.coords == rebuilt.coords,
        "peak_rss_mb": peak_rss_mb(),
        "quality": quality,
        "count_s": timings,
        "counts": counts,
    }


def run_synthetic(home: Path, size: int) -> dict[str, object]:
    os.environ["PAPERTALK_HOME"] = str(home)
    from rag.explore.topics import cluster_papers
    from rag.explore.vectors import paper_vectors
    from rag.retrieve.hybrid import open_searcher
    from rag.settings import load_settings

    searcher = open_searcher(load_settings())
    real = paper_vectors(searcher)
    papers = searcher.lexical.table.papers
    rng = np.random.default_rng(SEED)
    picks = rng.integers(0, len(real.paper_ids), size=size)
    matrix = real.matrix[picks] + rng.normal(0, NOISE, (size, real.matrix.shape[1])).astype(
        np.float32
    )
    matrix /= np.linalg.norm(matrix, axis=1, keepdims=True)
    source = [real.paper_ids[i] for i in picks]
    docs = [papers[p]["title"] for p in source]
    statuses = [papers[p]["status"] for p in source]
    import bertopic  # noqa: F401

    started = time.perf_counter()
    built = cluster_papers([f"s{i}" for i in range(size)], docs, matrix, statuses)
    return {
        "papers": size,
        "topics": len(built.topics),
        "assigned_share": built.assigned_share,
        "build_s": time.perf_counter() - started,
        "peak_rss_mb": peak_rss_mb(),
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--home", type=Path, required=True)
    parser.add_argument("--sizes", default="10000,100000")
    parser.add_argument("--no-scale", action="store_true")
    parser.add_argument("--child", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        result = (
            run_full(args.home)
            if args.child == "full"
            else run_synthetic(args.home, int(args.child))
        )
        print(json.dumps(result))
        return 0
    line = machine()
    runs = {}
    sizes = ["full"] + ([] if args.no_scale else args.sizes.split(","))
    for size in sizes:
        print(f"running {size} …", file=sys.stderr, flush=True)
        done = subprocess.run(
            [sys.executable, __file__, "--home", str(args.home), "--child", size],
            capture_output=True,
            text=True,
            env=dict(os.environ, HF_HUB_OFFLINE="1", TOKENIZERS_PARALLELISM="false"),
        )
        if done.returncode != 0:
            print(done.stderr[-3000:], file=sys.stderr)
            return 1
        runs[size] = json.loads(done.stdout.strip().splitlines()[-1])
    full = runs["full"]
    quality = full["quality"]
    lines = [
        f"# Exploring the conference ({time.strftime('%Y-%m-%d %H:%M', time.gmtime())} UTC)",
        "",
        f"Machine: {line}. Command: `python bench/explore.py --home {args.home}`.",
        "",
        "## Topic map of the full corpus (stored embeddings, no re-embedding)",
        "",
        "| papers | topics | assigned to a topic | import BERTopic s | build s | same map twice |"
        " peak RSS MB |",
        "|---|---|---|---|---|---|---|",
        f"| {full['papers']} | {full['topics']} | {full['assigned_share']:.1%} | "
        f"{full['import_s']:.1f} | {full['build_s']:.1f} | {full['deterministic']} | "
        f"{full['peak_rss_mb']:.0f} |",
        "",
        f"Check: of {quality['name_pairs']} pairs of assigned papers that share a distinctive name "
        f"(a name of 2-5 papers), {quality['same_topic']:.1%} are in the same topic; random pairs: "
        f"{quality['random_same_topic']:.1%} "
        f"({quality['same_topic'] / max(quality['random_same_topic'], 1e-9):.1f}× chance).",
        "",
        "## Clustering at scale (synthetic papers: real vectors + noise; each in its own process)",
        "",
        "| papers | topics | assigned | build s (UMAP 5-d, HDBSCAN, labels, UMAP 2-d) |"
        " peak RSS MB |",
        "|---|---|---|---|---|",
    ]
    for size in sizes[1:]:
        r = runs[size]
        lines.append(
            f"| {r['papers']} | {r['topics']} | {r['assigned_share']:.1%} | {r['build_s']:.1f} | "
            f"{r['peak_rss_mb']:.0f} |"
        )
    count_s = sorted(full["count_s"])
    lines += [
        "",
        "## Counting answers over the full corpus (extractive)",
        "",
        f"{len(count_s)} questions: p50 {count_s[len(count_s) // 2]:.2f} s, "
        f"max {count_s[-1]:.2f} s.",
        "",
    ]
    lines += [f"- {q} → {c}" for q, c in zip(COUNT_QUESTIONS, full["counts"], strict=True)]
    out = save_results("explore", "\n".join(lines))
    print("\n".join(lines))
    print(f"saved {out}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
