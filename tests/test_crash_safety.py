"""Crash safety of ingestion on the full ICML 2025 corpus (2,738 papers), as users run it.

One `papertalk ingest` is started in a subprocess; while it embeds, a second ingest on the same
home is refused by the lock; the first is then killed with SIGKILL midway and run again. The
store must then hold exactly the corpus: every paper once, every chunk of its current content,
nothing else, a BM25 index that matches the store, vectors that are searchable.
"""

from __future__ import annotations

import os
import random
import re
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from .conftest import BUNDLED, CAKE_ID, FULL_CORPUS, REPO, run_cli

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(not FULL_CORPUS.exists(), reason=f"full corpus not found: {FULL_CORPUS}"),
]
PROGRESS = re.compile(r"embedding: (\d+)/(\d+) chunks")


class IngestProcess:
    """`papertalk ingest` in a subprocess, its stderr read line by line in a thread."""

    def __init__(self, *args: str) -> None:
        self.lines: list[str] = []
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "rag.cli", "ingest", *args],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            cwd=REPO,
            env=dict(os.environ),
        )
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()

    def _read(self) -> None:
        assert self.proc.stderr is not None
        for line in self.proc.stderr:
            self.lines.append(line.rstrip("\n"))

    def embedded_share(self) -> float:
        for line in reversed(self.lines):
            if match := PROGRESS.search(line):
                return int(match.group(1)) / int(match.group(2))
        return 0.0

    def wait_for_share(self, share: float, timeout: float) -> None:
        deadline = time.monotonic() + timeout
        while self.embedded_share() < share:
            if self.proc.poll() is not None:
                pytest.fail(f"ingest ended early ({self.proc.returncode}): {self.lines[-5:]}")
            if time.monotonic() > deadline:
                pytest.fail(f"ingest did not reach {share:.0%} in {timeout} s: {self.lines[-5:]}")
            time.sleep(0.5)


def expected_chunk_ids(home: Path) -> set[str]:
    """The chunk ids a complete ingest of the full corpus must leave, computed independently."""
    from rag.embed.base import TokenCounter, resolve_model_dir
    from rag.ingest.chunking import chunk_abstract
    from rag.ingest.loaders import load_many
    from rag.ingest.pipeline import chunk_id, paper_hash
    from rag.settings import load_settings

    settings = load_settings(home=home)
    count = TokenCounter(resolve_model_dir(settings.embedding_model))
    ids: set[str] = set()
    for paper in load_many([FULL_CORPUS]).papers:
        digest = paper_hash(paper)
        chunks = chunk_abstract(
            paper.id,
            paper.title,
            paper.abstract,
            count_tokens=count,
            max_tokens=settings.chunk_tokens,
        )
        ids.update(chunk_id(paper.id, digest, chunk.index) for chunk in chunks)
    return ids


def test_sigkill_midway_then_rerun_leaves_exactly_the_corpus(isolated_home: Path) -> None:
    from rag.ingest.loaders import load_many

    n_papers = len(load_many([FULL_CORPUS]).papers)
    first = IngestProcess(str(FULL_CORPUS))
    try:
        first.wait_for_share(0.05, timeout=600)
        # A second ingest on the same home while the first one writes: refused, one line.
        second = run_cli("ingest", str(BUNDLED), timeout=120)
        assert second.returncode != 0
        assert "another `papertalk ingest` is writing to" in second.stderr
        assert len(second.stderr.strip().splitlines()) == 1, second.stderr
        assert "Traceback" not in second.stderr

        first.wait_for_share(0.3, timeout=900)
        first.proc.send_signal(signal.SIGKILL)
        assert first.proc.wait(30) == -signal.SIGKILL
    finally:
        if first.proc.poll() is None:
            first.proc.kill()
            first.proc.wait()
    killed_at = first.embedded_share()
    assert 0.3 <= killed_at < 1.0, "the kill must land while chunks are still being embedded"

    rerun = run_cli("ingest", str(FULL_CORPUS), "--no-progress", timeout=1200)
    assert rerun.returncode == 0, rerun.stderr
    added = int(re.search(r"(\d+) added", rerun.stdout).group(1))  # type: ignore[union-attr]
    assert 0 < added < n_papers, rerun.stdout  # some papers were stored before the kill

    again = run_cli("ingest", str(FULL_CORPUS), timeout=600)
    assert again.returncode == 0, again.stderr
    assert f"0 added, 0 updated, {n_papers} unchanged" in again.stdout

    check_store_is_exactly_the_corpus(isolated_home, n_papers)

    found = run_cli("search", "Cake time to first token KV cache", "--json", "-k", "3")
    assert found.returncode == 0, found.stderr
    assert '"paper_id": "' + CAKE_ID + '"' in found.stdout.split('"rank": 2')[0]


def check_store_is_exactly_the_corpus(home: Path, n_papers: int) -> None:
    from rag.settings import load_settings
    from rag.store.chroma import PaperStore, StoreLayout
    from rag.store.lexical import LexicalIndex, index_dir, store_fingerprint

    settings = load_settings(home=home)
    store = PaperStore.open(settings, StoreLayout.for_settings(settings), create=False)
    stored = list(store.iter_chunks(documents=False))
    ids = [chunk.id for chunk in stored]
    assert len(ids) == len(set(ids))
    assert set(ids) == expected_chunk_ids(home)  # no orphan, stale or missing chunk
    assert len({chunk.metadata["paper_id"] for chunk in stored}) == n_papers

    # The saved BM25 index (not a rebuild) covers exactly the stored chunks.
    lexical = LexicalIndex.load(index_dir(home, store))
    assert lexical is not None
    assert set(lexical.table.ids) == set(ids) and len(lexical.table.ids) == len(ids)
    assert lexical.fingerprint == store_fingerprint(store)
    assert len(lexical.table.papers) == n_papers

    # The vector index has every sampled chunk: embedding its text again finds it.
    from rag.embed.factory import make_embedder
    from rag.records import embedding_text

    sample = random.Random(0).sample([c for c in store.iter_chunks() if c.document], 25)
    vectors = make_embedder(settings).embed_documents(
        [embedding_text(str(c.metadata["title"]), c.document) for c in sample]
    )
    for chunk, vector in zip(sample, vectors, strict=True):
        assert chunk.id in [cid for cid, _ in store.query(vector, 3)]
