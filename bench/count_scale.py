"""Counting answers at scale: a PaperTalk home with the 2,738 real papers plus synthetic ones
(up to 100,000 papers in all), and the time of counting questions asked through `Answerer`.

The synthetic papers are those of bench/scale.py (real sentences recombined, fixed seed); each
chunk's vector is the stored vector of a random real chunk plus a little noise, so similarities
keep the real distribution without embedding 150k chunks. The real papers keep their real
vectors and texts, so the counted papers are meaningful and the synthetic ones are the load:
every anchor term is used by ~37× more papers than in the real corpus, which makes the
candidate cap (MAX_EXAMINED) the bound that matters.

    .venv/bin/python bench/count_scale.py --home HOME_WITH_ALL_PAPERS [--papers 100000]
                                          [--work DIR]

The synthetic home is built once in --work (default /tmp/papertalk-count-scale) and reused.
"""

from __future__ import annotations

import argparse
import os
import resource
import sys
import time
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "bench"))
os.environ.setdefault("ANONYMIZED_TELEMETRY", "False")

from common import machine, save_results  # noqa: E402 - bench/ is on sys.path
from explore import COUNT_QUESTIONS  # noqa: E402
from scale import CORPUS, SyntheticCorpus  # noqa: E402

NOISE = 0.05
SEED = 11
BATCH = 4000


def build(real_home: Path, home: Path, papers: int) -> float:
    """Copy the real store into `home` and add synthetic papers up to `papers`; seconds taken."""
    from rag.settings import load_settings
    from rag.store.chroma import PaperStore, StoreLayout

    started = time.perf_counter()
    real_settings = load_settings(home=real_home)
    layout = StoreLayout.for_settings(real_settings)
    real = PaperStore.open(real_settings, layout, create=False)
    chunks = list(real.iter_chunks(documents=True))
    vectors = real.vectors([c.id for c in chunks])
    matrix = np.stack([vectors[c.id] for c in chunks]).astype(np.float32)
    store = PaperStore.open(load_settings(home=home), layout, create=True)
    for start in range(0, len(chunks), BATCH):
        part = chunks[start : start + BATCH]
        store.upsert(
            [c.id for c in part],
            matrix[start : start + BATCH],
            [c.document for c in part],
            [c.metadata for c in part],
        )
    n_real = len({c.metadata["paper_id"] for c in chunks})
    corpus = SyntheticCorpus(CORPUS)
    rng = np.random.default_rng(SEED)
    pending: list[tuple[str, str, dict]] = []

    def flush() -> None:
        picks = rng.integers(0, len(matrix), size=len(pending))
        noisy = matrix[picks] + rng.normal(0, NOISE, (len(pending), matrix.shape[1]))
        noisy /= np.linalg.norm(noisy, axis=1, keepdims=True)
        store.upsert(
            [p[0] for p in pending],
            noisy.astype(np.float32),
            [p[1] for p in pending],
            [p[2] for p in pending],
        )
        pending.clear()

    for chunk in corpus.chunks(0, max(0, papers - n_real)):
        pending.append(chunk)
        if len(pending) >= BATCH:
            flush()
    if pending:
        flush()
    return time.perf_counter() - started


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--home", type=Path, required=True, help="a home with all 2,738 papers")
    parser.add_argument("--papers", type=int, default=100_000)
    parser.add_argument("--work", type=Path, default=Path("/tmp/papertalk-count-scale"))
    args = parser.parse_args()
    home = args.work / f"home-{args.papers}"
    build_s = None
    if not (home / "chroma").exists():
        print(f"building {args.papers} papers in {home} …", file=sys.stderr, flush=True)
        build_s = build(args.home, home, args.papers)

    from rag.answer.chain import Answerer
    from rag.settings import load_settings

    started = time.perf_counter()
    answerer = Answerer(load_settings(home=home), llm_spec="extractive")
    answerer.answer(COUNT_QUESTIONS[0])  # opens the store, builds the lexical index once
    open_s = time.perf_counter() - started
    rows = []
    for question in COUNT_QUESTIONS:
        t0 = time.perf_counter()
        answer = answerer.answer(question)
        seconds = time.perf_counter() - t0
        first = answer.answer.splitlines()[0] if not answer.refused else "refused"
        rows.append((question, seconds, first[:110]))
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    n = answerer.searcher.lexical.table
    lines = [
        f"# Counting at scale ({time.strftime('%Y-%m-%d %H:%M', time.gmtime())} UTC)",
        "",
        f"Machine: {machine()}. Command: `python bench/count_scale.py --home {args.home} "
        f"--papers {args.papers}`.",
        "",
        f"Store: {len(n.papers)} papers, {len(n.texts)} chunks (2,738 real, the rest synthetic);"
        + (f" built in {build_s:.0f} s;" if build_s is not None else " reused;")
        + f" first answer (store open, lexical index, name index) {open_s:.1f} s; "
        f"peak RSS {peak:.0f} MB.",
        "",
        "| question | seconds | answer's first line |",
        "|---|---|---|",
        *[f"| {q} | {s:.2f} | {f} |" for q, s, f in rows],
        "",
    ]
    out = save_results("count-scale", "\n".join(lines))
    print("\n".join(lines))
    print(f"saved {out}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
