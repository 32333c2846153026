"""Ingestion into a real embedded Chroma store: idempotence, updates, pruning, locking."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from rag.errors import PaperTalkError
from rag.ingest.pipeline import ingest_lock, run_ingest
from rag.settings import Settings
from rag.store.chroma import PaperStore, StoreLayout
from rag.store.lexical import LexicalIndex, index_dir, store_fingerprint
from rag.text.latex import without_emphasis

from .conftest import BUNDLED


def _write(path: Path, papers: list[dict]) -> Path:
    path.write_text("".join(json.dumps(p) + "\n" for p in papers))
    return path


def _bundled() -> list[dict]:
    return [json.loads(line) for line in BUNDLED.read_text().splitlines()]


class CountingEmbedder:
    """Wraps the real embedder and counts what it embeds."""

    def __init__(self, settings: Settings) -> None:
        from rag.embed.factory import make_embedder

        self.inner = make_embedder(settings)
        self.texts: list[str] = []

    @property
    def dimension(self) -> int:
        return self.inner.dimension

    def embed_documents(self, texts):  # type: ignore[no-untyped-def]
        self.texts.extend(texts)
        return self.inner.embed_documents(texts)

    def embed_query(self, text: str):  # type: ignore[no-untyped-def]
        return self.inner.embed_query(text)


def _store(settings: Settings) -> PaperStore:
    return PaperStore.open(settings, StoreLayout.for_settings(settings), create=False)


def test_reingest_is_a_noop_and_an_edit_reembeds_one_paper(tmp_path: Path) -> None:
    settings = Settings()
    papers = _bundled()[:6]
    source = _write(tmp_path / "p.jsonl", papers)

    first = CountingEmbedder(settings)
    report = run_ingest(settings, [source], embedder=first, progress=False)
    assert (report.added, report.updated, report.unchanged) == (6, 0, 0)
    chunks_after_first = _store(settings).count()
    assert len(first.texts) == chunks_after_first == report.chunks_embedded
    assert all(
        text.startswith(p["title"]) for p in papers for text in first.texts if p["title"] in text
    )

    again = CountingEmbedder(settings)
    report = run_ingest(settings, [source], embedder=again, progress=False)
    assert (report.added, report.updated, report.unchanged) == (0, 0, 6)
    assert again.texts == []
    assert _store(settings).count() == chunks_after_first

    papers[2] = dict(papers[2], abstract=papers[2]["abstract"] + " We also release code.")
    _write(source, papers)
    edit = CountingEmbedder(settings)
    report = run_ingest(settings, [source], embedder=edit, progress=False)
    assert (report.added, report.updated, report.unchanged) == (0, 1, 5)
    assert edit.texts and all(papers[2]["title"] in t for t in edit.texts)
    store = _store(settings)
    stored = [c for c in store.iter_chunks() if c.metadata["paper_id"] == papers[2]["id"]]
    assert {c.metadata["paper_hash"] for c in stored} == {stored[0].metadata["paper_hash"]}
    assert any("release code" in c.document for c in stored)
    assert len(stored) == stored[0].metadata["n_chunks"]


def test_chunk_metadata_and_offsets(tmp_path: Path) -> None:
    settings = Settings()
    papers = _bundled()[:3]
    run_ingest(settings, [_write(tmp_path / "p.jsonl", papers)], progress=False)
    by_id = {p["id"]: p for p in papers}
    for chunk in _store(settings).iter_chunks():
        meta = chunk.metadata
        paper = by_id[meta["paper_id"]]
        # offsets index the stored abstract: the file's, without Markdown emphasis markers
        abstract = without_emphasis(paper["abstract"])
        assert abstract[meta["start"] : meta["end"]] == chunk.document
        assert meta["title"] == paper["title"]
        assert meta["authors"].split("; ") == paper["authors"]
        assert meta["url"] == paper["url"] and meta["status"] == paper["status"]


def test_prune_and_duplicates(tmp_path: Path) -> None:
    settings = Settings()
    papers = _bundled()[:4]
    run_ingest(settings, [_write(tmp_path / "a.jsonl", papers)], progress=False)
    report = run_ingest(
        settings, [_write(tmp_path / "b.jsonl", papers[:2])], prune=True, progress=False
    )
    assert report.pruned == 2 and report.unchanged == 2
    ids = {c.metadata["paper_id"] for c in _store(settings).iter_chunks(documents=False)}
    assert ids == {papers[0]["id"], papers[1]["id"]}

    dup = dict(papers[0], abstract="A different abstract about something. It has two sentences.")
    report = run_ingest(settings, [_write(tmp_path / "c.jsonl", [papers[0], dup])], progress=False)
    assert report.updated == 1
    assert any("duplicate" in str(w) for w in report.warnings)
    docs = [
        c.document for c in _store(settings).iter_chunks() if c.metadata["paper_id"] == dup["id"]
    ]
    assert docs == ["A different abstract about something. It has two sentences."]


def test_bad_records_are_skipped_and_nothing_stored_is_lost(tmp_path: Path) -> None:
    settings = Settings()
    papers = _bundled()[:2]
    run_ingest(settings, [_write(tmp_path / "a.jsonl", papers)], progress=False)
    before = _store(settings).count()
    bad = tmp_path / "bad.jsonl"
    bad.write_text(
        json.dumps(papers[0]) + "\n{not json\n" + json.dumps({"title": "No abstract"}) + "\n"
    )
    report = run_ingest(settings, [bad], progress=False)
    assert report.unchanged == 1 and len(report.skipped) == 2
    assert [p.line for p in report.skipped] == [2, 3]
    assert _store(settings).count() == before
    with pytest.raises(PaperTalkError):
        run_ingest(settings, [bad], strict=True, progress=False)
    assert _store(settings).count() == before


def test_lexical_index_follows_the_store(tmp_path: Path) -> None:
    settings = Settings()
    run_ingest(settings, [_write(tmp_path / "a.jsonl", _bundled()[:3])], progress=False)
    store = _store(settings)
    directory = index_dir(settings.home, store)
    index = LexicalIndex.load(directory)
    assert index is not None and index.fingerprint == store_fingerprint(store)
    assert len(index.table) == store.count()


def test_second_ingest_on_the_same_home_is_refused(tmp_path: Path) -> None:
    settings = Settings()
    with ingest_lock(settings.home, "here"), pytest.raises(PaperTalkError, match="another"):
        run_ingest(settings, [_write(tmp_path / "a.jsonl", _bundled()[:1])], progress=False)


def test_other_chunk_settings_use_another_collection(tmp_path: Path) -> None:
    settings = Settings()
    run_ingest(settings, [_write(tmp_path / "a.jsonl", _bundled()[:2])], progress=False)
    other = settings.with_overrides(chunk_tokens=100)
    assert (
        StoreLayout.for_settings(other).collection_name
        != StoreLayout.for_settings(settings).collection_name
    )
    with pytest.raises(PaperTalkError, match="other embedding or chunking settings"):
        PaperStore.open(other, StoreLayout.for_settings(other), create=False)


def test_missing_or_stale_lexical_index_is_rebuilt_from_the_store(tmp_path: Path) -> None:
    import shutil

    from rag.retrieve.hybrid import open_searcher
    from rag.store.lexical import open_lexical_index

    settings = Settings()
    run_ingest(settings, [_write(tmp_path / "a.jsonl", _bundled())], progress=False)
    store = _store(settings)
    directory = index_dir(settings.home, store)
    shutil.rmtree(directory)
    hits = open_searcher(settings).search("compute or load KV cache", 3)
    assert hits[0].paper_id == "WOyOtaO6lQ"
    assert directory.exists()

    # A chunk removed behind the index's back makes it stale: it is rebuilt, never wrong.
    victim = next(c.id for c in store.iter_chunks(documents=False))
    store.delete([victim])
    index = open_lexical_index(settings.home, store)
    assert victim not in index.table.ids and len(index.table) == store.count()
