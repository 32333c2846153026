"""Store scale: search latency, memory (RSS) and disk from 2.7k to 100k papers, for embedded
Chroma and for a `chroma run` server.

A synthetic corpus (fixed seed): each paper recombines real sentences of
../shared/data/icml2025/papers.jsonl (a real paper's sentence count, random sentences from all
abstracts, a title spliced from two real titles, a status drawn like the real ones). It is
store-only: each paper becomes one or two chunks (two when its abstract exceeds 1,100 characters,
like PaperTalk's ~1.5 chunks per paper) with PaperTalk's metadata and a random 384-d unit vector
in place of an embedding (embedding cost is measured by bench/retrieval.py). Papers are added in
batches of at most 5,000 chunks; at each step the store is queried with random unit vectors
(k=10, like a search's dense candidates, plus a `status` filter). A BM25 index (bm25s, as
PaperTalk's lexical side) over the same chunk texts is timed beside it.

    .venv/bin/python bench/scale.py [--max N] [--steps 2738,10000,30000,100000] [--no-server]
                                    [--no-bm25] [--queries 200]

The 100k step adds ~150k chunks per store: a few minutes each on 2 cores.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
os.environ.setdefault("ANONYMIZED_TELEMETRY", "False")

from common import machine, save_results  # noqa: E402 - bench/ is on sys.path

from rag.eval.metrics import percentile  # noqa: E402

SHARED = REPO.parent / "shared"
CORPUS = SHARED / "data" / "icml2025" / "papers.jsonl"
DIM = 384
SEED = 20250713
BATCH = 5000  # chunks per add (Chroma's maximum batch is 5,461)
DEFAULT_STEPS = (2738, 10_000, 30_000, 100_000)
TWO_CHUNKS_ABOVE = 1100  # characters


# Synthetic corpus ------------------------------------------------------------------------------
class SyntheticCorpus:
    """Papers recombined from real sentences; paper i is the same on every run (seeded by i)."""

    def __init__(self, path: Path) -> None:
        from rag.text.sentences import split_sentences

        self.titles: list[str] = []
        self.sentences: list[str] = []
        self.counts: list[int] = []
        self.statuses: list[str] = []
        for line in path.read_text(encoding="utf-8").splitlines():
            if not line.strip():
                continue
            paper = json.loads(line)
            abstract = " ".join(paper["abstract"].split())
            spans = split_sentences(abstract)
            self.sentences += [abstract[s.start : s.end] for s in spans]
            self.counts.append(max(1, len(spans)))
            self.titles.append(paper["title"])
            self.statuses.append(paper.get("status") or "poster")

    def paper(self, i: int) -> dict:
        rng = random.Random(SEED * 1_000_003 + i)
        a, b = rng.choice(self.titles).split(), rng.choice(self.titles).split()
        title = " ".join(a[: max(1, len(a) // 2)] + b[len(b) // 2 :])
        n = rng.choice(self.counts)
        abstract = " ".join(rng.choice(self.sentences) for _ in range(n))
        return {
            "id": f"syn{i:06d}",
            "title": title,
            "abstract": abstract,
            "status": rng.choice(self.statuses),
        }

    def chunks(self, start: int, stop: int) -> Iterator[tuple[str, str, dict]]:
        """(chunk id, text, metadata) of papers start..stop-1, PaperTalk's metadata fields."""
        for i in range(start, stop):
            p = self.paper(i)
            text = p["abstract"]
            if len(text) > TWO_CHUNKS_ABOVE:
                cut = text.find(". ", len(text) // 2)
                cut = cut + 1 if cut > 0 else len(text) // 2
                parts = [(0, cut), (cut + 1, len(text))]
            else:
                parts = [(0, len(text))]
            for index, (s, e) in enumerate(parts):
                meta = {
                    "paper_id": p["id"],
                    "paper_hash": "synthetic",
                    "chunk_index": index,
                    "n_chunks": len(parts),
                    "title": p["title"],
                    "title_derived": False,
                    "authors": "A. Author; B. Author",
                    "url": f"https://example.org/{p['id']}",
                    "pmlr_url": "",
                    "status": p["status"],
                    "start": s,
                    "end": e,
                }
                yield f"{p['id']}:synthetic:{index}", text[s:e], meta


def unit_vectors(n: int, seed: int) -> np.ndarray:
    vectors = np.random.default_rng(seed).standard_normal((n, DIM)).astype(np.float32)
    return vectors / np.linalg.norm(vectors, axis=1, keepdims=True)


# Measurements ----------------------------------------------------------------------------------
def rss_mib(pid: int | str = "self") -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return 0.0


def tree_rss_mib(pid: int) -> float:
    """RSS of a process and all its descendants."""
    children: dict[int, list[int]] = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                ppid = int((entry / "stat").read_text().rsplit(")", 1)[1].split()[1])
            except (OSError, IndexError, ValueError):
                continue
            children.setdefault(ppid, []).append(int(entry.name))
    total, todo = 0.0, [pid]
    while todo:
        p = todo.pop()
        try:
            total += rss_mib(p)
        except OSError:
            continue
        todo += children.get(p, [])
    return total


def disk_mib(path: Path) -> float:
    return sum(p.stat().st_size for p in path.rglob("*") if p.is_file()) / 2**20


def query_latency(collection, n: int, where: dict | None = None) -> tuple[float, float]:  # type: ignore[no-untyped-def]
    queries = unit_vectors(n, SEED + 7)
    collection.query(query_embeddings=[queries[0]], n_results=10, where=where)  # warm
    times = []
    for q in queries:
        t0 = time.perf_counter()
        collection.query(query_embeddings=[q], n_results=10, where=where, include=["distances"])
        times.append((time.perf_counter() - t0) * 1000)
    return percentile(times, 50), percentile(times, 95)


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def start_server(path: Path, log: Path) -> tuple[subprocess.Popen, int]:
    chroma = Path(sys.executable).with_name("chroma")
    port = free_port()
    handle = open(log, "w")  # noqa: SIM115 - lives as long as the server
    proc = subprocess.Popen(
        [str(chroma), "run", "--path", str(path), "--host", "127.0.0.1", "--port", str(port)],
        stdout=handle,
        stderr=subprocess.STDOUT,
    )
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"chroma run exited with {proc.returncode}; see {log}")
        with socket.socket() as sock:
            if sock.connect_ex(("127.0.0.1", port)) == 0:
                return proc, port
        time.sleep(0.2)
    proc.terminate()
    raise RuntimeError(f"chroma run did not listen within 60 s; see {log}")


def run_store(
    kind: str, corpus: SyntheticCorpus, steps: list[int], root: Path, queries: int
) -> list[tuple[str, ...]]:
    """Fill one store step by step; a row per step."""
    import chromadb
    from chromadb.config import Settings as ChromaSettings

    path = root / kind
    proc = None
    client_rss0 = rss_mib()
    if kind == "embedded":
        client = chromadb.PersistentClient(
            path=str(path), settings=ChromaSettings(anonymized_telemetry=False)
        )
    else:
        proc, port = start_server(path, root / "chroma-server.log")
        client = chromadb.HttpClient(
            host="127.0.0.1", port=port, settings=ChromaSettings(anonymized_telemetry=False)
        )
    collection = client.get_or_create_collection(
        "scale-bench", configuration={"hnsw": {"space": "cosine"}}, embedding_function=None
    )
    rows = []
    done_papers = 0
    chunk_total = 0
    seed = 0
    try:
        for step in steps:
            t0 = time.perf_counter()
            added = 0
            while done_papers < step:
                stop = min(step, done_papers + BATCH * 2 // 3)  # <= 5,000 chunks per batch
                batch = list(corpus.chunks(done_papers, stop))
                for start in range(0, len(batch), BATCH):
                    part = batch[start : start + BATCH]
                    seed += 1
                    collection.add(
                        ids=[c[0] for c in part],
                        documents=[c[1] for c in part],
                        metadatas=[c[2] for c in part],
                        embeddings=unit_vectors(len(part), SEED + seed),
                    )
                    added += len(part)
                done_papers = stop
            add_s = time.perf_counter() - t0
            chunk_total += added
            p50, p95 = query_latency(collection, queries)
            f50, _ = query_latency(collection, max(20, queries // 4), {"status": "oral"})
            if kind == "embedded":
                rss = rss_mib()
                rss_note = f"{rss:.0f} (client process)"
            else:
                rss = tree_rss_mib(proc.pid) if proc else 0.0
                rss_note = f"{rss:.0f} (server) + {rss_mib() - client_rss0:.0f} client growth"
            reopen = ""
            if kind == "embedded":
                reopen = f"{reopen_seconds(path):.2f}"
            rows.append(
                (
                    kind,
                    f"{step:,}",
                    f"{chunk_total:,}",
                    f"{added / add_s:,.0f}" if add_s else "–",
                    f"{p50:.1f}",
                    f"{p95:.1f}",
                    f"{f50:.1f}",
                    rss_note,
                    f"{disk_mib(path):.0f}",
                    reopen or "–",
                )
            )
            print("  " + " | ".join(rows[-1]), flush=True)
    finally:
        if proc is not None:
            proc.terminate()
            try:
                proc.wait(15)
            except subprocess.TimeoutExpired:
                proc.kill()
    return rows


def reopen_seconds(path: Path) -> float:
    """A fresh process opening the embedded store and answering one query (cold start)."""
    code = (
        "import time, numpy as np, chromadb\n"
        "from chromadb.config import Settings\n"
        "t = time.perf_counter()\n"
        f"c = chromadb.PersistentClient(path={str(path)!r}, "
        "settings=Settings(anonymized_telemetry=False))\n"
        "col = c.get_collection('scale-bench')\n"
        "v = np.ones(384, dtype=np.float32) / 384 ** 0.5\n"
        "col.query(query_embeddings=[v], n_results=10)\n"
        "print(time.perf_counter() - t)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=600)
    try:
        return float(out.stdout.strip().splitlines()[-1])
    except (IndexError, ValueError):
        return float("nan")


def bm25_rows(corpus: SyntheticCorpus, steps: list[int], queries: int) -> list[tuple[str, ...]]:
    """bm25s index build and query time over the same chunk texts (PaperTalk's lexical side)."""
    from rag.text.terms import tokenize

    rng = random.Random(SEED)
    rows = []
    for step in steps:
        import bm25s

        texts = [f"{m['title']} {t}" for _, t, m in corpus.chunks(0, step)]
        t0 = time.perf_counter()
        tokens = tokenize(texts)
        index = bm25s.BM25()
        index.index(tokens, show_progress=False)
        build_s = time.perf_counter() - t0
        words = [w for t in rng.sample(corpus.titles, 50) for w in t.split()]
        times = []
        for _ in range(queries):
            query = " ".join(rng.sample(words, 8))
            t1 = time.perf_counter()
            index.get_scores(tokenize([query])[0])
            times.append((time.perf_counter() - t1) * 1000)
        rows.append(
            (
                f"{step:,}",
                f"{len(texts):,}",
                f"{build_s:.1f}",
                f"{percentile(times, 50):.1f}",
                f"{percentile(times, 95):.1f}",
            )
        )
        print("  bm25 " + " | ".join(rows[-1]), flush=True)
    return rows


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--max", type=int, default=None, help="largest step (papers)")
    parser.add_argument("--steps", help="comma-separated paper counts (default 2738,10k,30k,100k)")
    parser.add_argument("--no-server", action="store_true", help="embedded Chroma only")
    parser.add_argument("--no-bm25", action="store_true", help="skip the BM25 rows")
    parser.add_argument("--queries", type=int, default=200, help="queries per step")
    parser.add_argument("--keep", type=Path, help="build the stores under DIR and keep them")
    args = parser.parse_args()
    if not CORPUS.exists():
        print(f"bench: {CORPUS} is absent; nothing to measure", file=sys.stderr)
        return 2
    steps = [int(s) for s in args.steps.split(",")] if args.steps else list(DEFAULT_STEPS)
    if args.max is not None:
        steps = [s for s in steps if s < args.max] + [args.max]
    steps = sorted(set(steps))
    if steps[0] < 1:
        parser.error("steps must be positive")

    machine_line = machine()
    corpus = SyntheticCorpus(CORPUS)
    root = args.keep or Path(tempfile.mkdtemp(prefix="papertalk-scale-"))
    root.mkdir(parents=True, exist_ok=True)
    started = time.perf_counter()
    rows: list[tuple[str, ...]] = []
    try:
        for kind in ("embedded",) + (() if args.no_server else ("server",)):
            print(f"{kind} Chroma …", flush=True)
            rows += run_store(kind, corpus, steps, root, args.queries)
        lexical = [] if args.no_bm25 else bm25_rows(corpus, steps, args.queries)
    finally:
        if args.keep is None:
            shutil.rmtree(root, ignore_errors=True)

    import chromadb

    lines = [
        f"# Store scale ({datetime.now(UTC):%Y-%m-%d %H:%M} UTC)",
        "",
        f"Machine: {machine_line}; at end {os.getloadavg()[0]:.2f}. "
        f"chromadb {chromadb.__version__}. Synthetic corpus from "
        f"{len(corpus.titles):,} real abstracts ({len(corpus.sentences):,} sentences), seed "
        f"{SEED}; random {DIM}-d unit vectors; HNSW cosine; k=10; {args.queries} queries per "
        f"step (filter: `status = oral`). Run took {time.perf_counter() - started:.0f} s.",
        "",
        "| store | papers | chunks | add chunks/s | query p50 ms | query p95 ms "
        "| filtered p50 ms | RSS MiB | disk MiB | cold open + query s |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    lines += ["| " + " | ".join(r) + " |" for r in rows]
    if lexical:
        lines += [
            "",
            "BM25 (bm25s, PaperTalk's tokenizer) over the same chunk texts, in memory:",
            "",
            "| papers | chunks | index build s | query p50 ms | query p95 ms |",
            "|---|---|---|---|---|",
        ]
        lines += ["| " + " | ".join(r) + " |" for r in lexical]
    text = "\n".join(lines)
    print(text)
    out = save_results("scale", text)
    print(f"\nsaved {out.relative_to(REPO)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
