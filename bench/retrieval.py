"""Retrieval benchmark on the full ICML 2025 list (../shared/data/icml2025/papers.jsonl).

Measures, in one run: ingest time and papers/s (PaperTalk's ingest, and plain
sentence-transformers encoding of the same chunk texts as the baseline), search latency p50/p95
(warm, query embedding included), and paper-level recall@1/5/10 + MRR on the dev questions for
the hybrid retriever, dense-only and BM25-only.

    .venv/bin/python bench/retrieval.py [--limit N] [--skip-baseline] [--home DIR]
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import sys
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "bench"))
from common import save_results  # noqa: E402 - bench/ is on sys.path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("ANONYMIZED_TELEMETRY", "False")

from rag.eval.metrics import percentile, recall_at, reciprocal_rank  # noqa: E402

SHARED = REPO.parent / "shared"
CORPUS = SHARED / "data" / "icml2025" / "papers.jsonl"
DEV_QA = SHARED / "eval" / "dev_qa.jsonl"


def dev_questions() -> list[dict]:
    items = [json.loads(line) for line in DEV_QA.read_text().splitlines() if line.strip()]
    return [q for q in items if q["type"] != "unanswerable" and q["gold"]]


def retrieval_query(item: dict) -> str:
    """Follow-ups carry their history's questions (what the answering chain also does)."""
    from rag.answer.conversation import standalone_query

    return standalone_query(item["question"], [tuple(t) for t in item.get("history") or []])


def machine() -> str:
    return f"{platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--limit", type=int, default=0, help="first N papers only (0 = all)")
    parser.add_argument("--skip-baseline", action="store_true", help="skip the ST encode baseline")
    parser.add_argument("--home", type=Path, help="reuse a home (default: a temp dir)")
    parser.add_argument("--repeat", type=int, default=5, help="latency repetitions per question")
    parser.add_argument("--chunk-tokens", type=int, default=None)
    parser.add_argument("--overlap", type=int, default=None)
    parser.add_argument("--quantize", action="store_true")
    args = parser.parse_args()
    if not CORPUS.exists() or not DEV_QA.exists():
        print(f"bench: {CORPUS} or {DEV_QA} is absent; nothing to measure", file=sys.stderr)
        return 2

    from rag.embed.base import SentenceTransformerEmbedder, TokenCounter, resolve_model_dir
    from rag.ingest.loaders import load_papers
    from rag.ingest.pipeline import run_ingest
    from rag.retrieve.hybrid import open_searcher
    from rag.settings import Settings

    home = args.home or Path(tempfile.mkdtemp(prefix="papertalk-bench-"))
    overrides = {"home": home}
    if args.chunk_tokens:
        overrides["chunk_tokens"] = args.chunk_tokens
    if args.overlap is not None:
        overrides["chunk_overlap_sentences"] = args.overlap
    if args.quantize:
        overrides["embedding_quantize"] = True
    settings = Settings().with_overrides(**overrides)
    papers = load_papers(CORPUS).papers
    if args.limit:
        papers = papers[: args.limit]
        corpus = home / "subset.jsonl"
        home.mkdir(parents=True, exist_ok=True)
        corpus.write_text("".join(json.dumps(p.to_json()) + "\n" for p in papers))
    else:
        corpus = CORPUS
    rows: list[tuple[str, str]] = [("papers", str(len(papers)))]

    # Warm the ONNX export outside the timed ingest (it happens once per machine).
    from rag.embed.factory import make_embedder

    embedder = make_embedder(settings)
    embedder.embed_query("warm up")

    t0 = time.perf_counter()
    report = run_ingest(settings, [corpus], progress=False, embedder=embedder)
    ingest_s = time.perf_counter() - t0
    rows += [
        ("ingest (onnx) s", f"{ingest_s:.1f}"),
        ("ingest papers/s", f"{len(papers) / ingest_s:.1f}"),
        ("chunks embedded", str(report.chunks_embedded)),
        ("embedding share of ingest", f"{report.embed_seconds / ingest_s:.1%}"),
        ("non-embedding overhead s", f"{ingest_s - report.embed_seconds:.1f}"),
    ]
    t0 = time.perf_counter()
    again = run_ingest(settings, [corpus], progress=False, embedder=embedder)
    rows.append(("re-ingest unchanged s", f"{time.perf_counter() - t0:.2f}"))
    assert again.added == again.updated == 0, again.summary_line()

    if not args.skip_baseline:
        from rag.ingest.chunking import chunk_abstract
        from rag.records import embedding_text

        model_dir = resolve_model_dir(settings.embedding_model)
        count = TokenCounter(model_dir)
        texts = [
            embedding_text(p.title, c.text)
            for p in papers
            for c in chunk_abstract(
                p.id,
                p.title,
                p.abstract,
                count_tokens=count,
                max_tokens=settings.chunk_tokens,
                overlap_sentences=settings.chunk_overlap_sentences,
            )
        ]
        reference = SentenceTransformerEmbedder(model_dir, batch_size=32)
        reference.embed_query("warm up")
        t0 = time.perf_counter()
        reference.embed_documents(texts)
        st_s = time.perf_counter() - t0
        rows += [
            ("baseline: ST encode of same texts s", f"{st_s:.1f}"),
            ("speed-up vs ST (whole ingest)", f"{st_s / ingest_s:.2f}x"),
        ]

    questions = dev_questions()
    table: list[tuple[str, ...]] = []
    for name, dense_w, bm25_w in (
        ("hybrid", 1.0, 1.0),
        ("dense-only", 1.0, 0.0),
        ("bm25-only", 0.0, 1.0),
    ):
        searcher = open_searcher(
            settings.with_overrides(dense_weight=dense_w, bm25_weight=bm25_w), embedder
        )
        r1 = r5 = r10 = mrr = 0.0
        latencies: list[float] = []
        for item in questions:
            query = retrieval_query(item)
            ranked = [h.paper_id for h in searcher.search(query, 10)]
            for _ in range(args.repeat):
                t0 = time.perf_counter()
                searcher.search(query, 10)
                latencies.append((time.perf_counter() - t0) * 1000)
            r1 += recall_at(ranked, item["gold"], 1)
            r5 += recall_at(ranked, item["gold"], 5)
            r10 += recall_at(ranked, item["gold"], 10)
            mrr += reciprocal_rank(ranked, item["gold"])
        n = len(questions)
        table.append(
            (
                name,
                f"{r1 / n:.3f}",
                f"{r5 / n:.3f}",
                f"{r10 / n:.3f}",
                f"{mrr / n:.3f}",
                f"{percentile(latencies, 50):.1f}",
                f"{percentile(latencies, 95):.1f}",
            )
        )

    lines = [
        f"# Retrieval benchmark ({datetime.now(UTC):%Y-%m-%d %H:%M} UTC)",
        "",
        f"Machine: {machine()}. Settings: backend={settings.embedding_backend}, "
        f"quantize={settings.embedding_quantize}, chunk_tokens={settings.chunk_tokens}, "
        f"overlap={settings.chunk_overlap_sentences}. Questions: {len(questions)}.",
        "",
        "| measure | value |",
        "|---|---|",
    ]
    lines += [f"| {k} | {v} |" for k, v in rows]
    lines += [
        "",
        "| retriever | recall@1 | recall@5 | recall@10 | MRR | p50 ms | p95 ms |",
        "|---|---|---|---|---|---|---|",
    ]
    lines += ["| " + " | ".join(r) + " |" for r in table]
    text = "\n".join(lines)
    print(text)
    out = save_results("retrieval", text)
    print(f"\nsaved {out.relative_to(REPO)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
