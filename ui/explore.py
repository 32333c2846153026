"""The page's topic map and similar papers, without the web: the kept topic map (built in a
background thread when missing, so the chat never waits for it), the map as pre-serialized
plotly JSON (one WebGL scatter trace per topic, built once per map), and papers like a given one.

    maps = TopicMaps(settings.home, engine.searcher)
    state = maps.state()              # "ready" (state.map), "building", "failed" or "missing"
    maps.start_build()                # builds in the background; state() says when it is done
    figure = maps.figure()            # plotly JSON of the kept map, cached
    maps.similar("WOyOtaO6lQ", k=5)   # [(SimilarPaper, its topic or None)]

No gradio here; rag.explore does the clustering.
"""

from __future__ import annotations

import colorsys
import json
import logging
import threading
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from rag.errors import PaperTalkError
from rag.explore.similar import SimilarPaper, similar_papers
from rag.explore.topics import NOISE, Topic, TopicMap, load_topics, topic_map, topics_path
from rag.explore.vectors import PaperVectors, paper_vectors
from rag.retrieve.hybrid import HybridSearcher
from rag.text.latex import latex_to_text

log = logging.getLogger("papertalk.ui")

SIMILAR_K = 5
HOVER_TITLE_CHARS = 90
NOISE_COLOUR = "rgba(148, 163, 184, 0.55)"  # papers in no topic: grey, under the topics


@dataclass(frozen=True)
class MapState:
    """Where the topic map stands: "ready" (with `map`), "building", "failed" (`error`) or
    "missing" (no map kept and none being built)."""

    status: str
    map: TopicMap | None = None
    error: str = ""


class TopicMaps:
    """The served store's topic map, figure and paper vectors, shared by every session."""

    def __init__(self, home: Path, searcher: Callable[[], HybridSearcher]) -> None:
        self.home = home
        self._searcher = searcher
        self._lock = threading.Lock()
        self._map: tuple[Path, TopicMap] | None = None  # keyed by the kept file (the papers)
        self._figure: tuple[TopicMap, str] | None = None
        self._vectors: tuple[HybridSearcher, PaperVectors] | None = None
        self._build: threading.Thread | None = None
        self._error = ""

    def kept(self) -> TopicMap | None:
        """The kept map of the current papers (loaded once), or None."""
        searcher = self._searcher()
        path = topics_path(self.home, searcher)
        with self._lock:
            if self._map is not None and self._map[0] == path:
                return self._map[1]
        loaded = load_topics(self.home, searcher)
        if loaded is not None:
            with self._lock:
                self._map = (path, loaded)
        return loaded

    def state(self) -> MapState:
        try:
            kept = self.kept()
        except PaperTalkError as exc:  # no store yet
            return MapState("failed", error=str(exc))
        if kept is not None:
            return MapState("ready", kept)
        with self._lock:
            if self._build is not None and self._build.is_alive():
                return MapState("building")
            if self._error:
                return MapState("failed", error=self._error)
        return MapState("missing")

    def start_build(self) -> MapState:
        """Build the map in a background thread unless it is kept or being built."""
        state = self.state()
        if state.status in ("ready", "building"):
            return state
        with self._lock:
            if self._build is None or not self._build.is_alive():
                self._error = ""
                self._build = threading.Thread(
                    target=self._run_build, name="papertalk-topic-map", daemon=True
                )
                self._build.start()
        return MapState("building")

    def wait(self, timeout_s: float | None = None) -> MapState:
        """Wait for a running build (at most `timeout_s`), then say where the map stands."""
        with self._lock:
            build = self._build
        if build is not None:
            build.join(timeout_s)
        return self.state()

    def _run_build(self) -> None:
        try:
            built = topic_map(self.home, self._searcher())
            log.info("topic map built: %d topics in %.1f s", len(built.topics), built.seconds)
        except Exception as exc:  # reported on the page; the chat goes on
            log.exception("building the topic map failed")
            with self._lock:
                self._error = f"{type(exc).__name__}: {str(exc)[:200]}"

    def figure(self) -> str | None:
        """The kept map as plotly JSON (serialized once per map), or None."""
        kept = self.kept()
        if kept is None:
            return None
        with self._lock:
            if self._figure is not None and self._figure[0] is kept:
                return self._figure[1]
        text = figure_json(kept, self._searcher().lexical.table.papers)
        with self._lock:
            self._figure = (kept, text)
        return text

    def vectors(self) -> PaperVectors:
        searcher = self._searcher()
        with self._lock:
            if self._vectors is not None and self._vectors[0] is searcher:
                return self._vectors[1]
        vectors = paper_vectors(searcher)
        with self._lock:
            self._vectors = (searcher, vectors)
        return vectors

    def similar(self, paper_id: str, k: int = SIMILAR_K) -> list[tuple[SimilarPaper, Topic | None]]:
        """The `k` papers nearest to `paper_id` (itself excluded), each with its topic when a
        map is kept (never built here)."""
        found = similar_papers(self._searcher(), self.vectors(), paper_id, k)
        kept = self.kept()
        return [(s, kept.topic_of(s.paper_id) if kept else None) for s in found]

    def papers_in(self, topic_id: int) -> list[str]:
        """The papers of a topic of the kept map ([] without a map)."""
        kept = self.kept()
        return kept.papers_in(topic_id) if kept else []

    def topic(self, topic_id: str | int | None) -> Topic | None:
        """A topic of the kept map by id (as the page's dropdown gives it), or None."""
        kept = self.kept()
        try:
            wanted = int(topic_id)  # type: ignore[arg-type]
        except (TypeError, ValueError):
            return None
        if kept is None:
            return None
        return next((t for t in kept.topics if t.id == wanted), None)


# Pure functions --------------------------------------------------------------------------------
def topic_colour(rank: int) -> str:
    """A distinct colour for the topic of size rank `rank` (golden-angle hues)."""
    hue = (rank * 0.618033988749895) % 1.0
    light = 0.42 if rank % 2 else 0.52
    r, g, b = colorsys.hls_to_rgb(hue, light, 0.72)
    return f"rgb({round(r * 255)}, {round(g * 255)}, {round(b * 255)})"


def topic_name(topic: Topic) -> str:
    return f"{topic.label} ({topic.size})"


def _hover_text(text: str) -> str:
    """Paper text for plotly's hover label: Unicode, cut short, markup shown as text."""
    text = " ".join(latex_to_text(text).split())
    if len(text) > HOVER_TITLE_CHARS:
        text = text[: HOVER_TITLE_CHARS - 1].rsplit(" ", 1)[0] + " …"
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def figure_json(topics: TopicMap, papers: Mapping[str, Mapping[str, Any]]) -> str:
    """The map as plotly JSON: one `scattergl` trace per topic (largest first, papers in no
    topic under them in grey); hover shows the title and topic; `customdata` is the paper id."""
    groups: dict[int, list[str]] = {}
    for pid in sorted(topics.coords):
        groups.setdefault(topics.assignment.get(pid, NOISE), []).append(pid)
    traces: list[dict[str, Any]] = []
    named = [(t, topic_colour(rank), topic_name(t)) for rank, t in enumerate(topics.topics)]
    order: list[tuple[int, str, str]] = [(NOISE, NOISE_COLOUR, "no topic")]
    order += [(t.id, colour, name) for t, colour, name in named]
    for topic_id, colour, name in order:
        ids = groups.get(topic_id, [])
        if not ids:
            continue
        label = _hover_text(name)
        traces.append(
            {
                "type": "scattergl",
                "mode": "markers",
                "name": name,
                "x": [topics.coords[p][0] for p in ids],
                "y": [topics.coords[p][1] for p in ids],
                "customdata": ids,
                "text": [_hover_text(str(papers.get(p, {}).get("title", p))) for p in ids],
                "hovertemplate": f"%{{text}}<br><i>{label}</i><extra></extra>",
                "marker": {"color": colour, "size": 6 if topic_id != NOISE else 4},
                "meta": {"topic": topic_id},
            }
        )
    layout = {
        "height": 620,
        "margin": {"l": 8, "r": 8, "t": 8, "b": 8},
        "showlegend": False,
        "hovermode": "closest",
        "dragmode": "pan",
        "xaxis": {"visible": False},
        "yaxis": {"visible": False, "scaleanchor": "x"},
        "plot_bgcolor": "rgba(0,0,0,0)",
        "paper_bgcolor": "rgba(0,0,0,0)",
    }
    config = {
        "displaylogo": False,
        "scrollZoom": True,
        "modeBarButtonsToRemove": ["select2d", "lasso2d"],
    }
    return json.dumps({"data": traces, "layout": layout, "config": config}, ensure_ascii=False)


def topic_choices(topics: TopicMap | None) -> list[tuple[str, str]]:
    """The topic dropdown's choices: (label (size), topic id), largest topic first."""
    if topics is None:
        return []
    return [(topic_name(t), str(t.id)) for t in topics.topics]
