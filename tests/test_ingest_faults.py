"""Ingestion under bad input, end to end: what reaches the store is exactly the usable records.

Property tests drive a real embedded store through batches that mix good papers, edited papers,
duplicate ids with different content, wrong types and broken lines, and compare the store with
a model of what it must hold. Large inputs (10 MB abstracts, 100k-record files) and truncated
files go through the `papertalk ingest` command, as users run it.
"""

from __future__ import annotations

import json
import tempfile
import time
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from rag.errors import PaperTalkError
from rag.ingest.loaders import MAX_ABSTRACT_CHARS, CorpusError, load_papers
from rag.ingest.pipeline import run_ingest
from rag.settings import Settings
from rag.store.chroma import PaperStore, StoreLayout

from .conftest import run_cli


def is_unusable_input_error(message: str) -> bool:
    return "no usable papers" in message or "records could be loaded" in message


WORDS = "graph model kernel token policy reward signal sample noise prior layer bound".split()


def abstract_for(seed: int) -> str:
    words = [WORDS[(seed * 7 + i * 3) % len(WORDS)] for i in range(12)]
    return f"We study {' '.join(words[:6])}. It improves {' '.join(words[6:])} by {seed}%."


def good_record(paper_id: str, version: int) -> dict[str, Any]:
    return {
        "id": paper_id,
        "title": f"Paper {paper_id} v{version}",
        "abstract": abstract_for(version),
        "authors": ["Ada Lovelace", "Alan Turing"],
    }


BAD_RECORDS: list[str] = [
    "{not json",
    '{"id": "p0", "title": "truncated", "abstract": "We st',
    json.dumps({"id": "p1", "title": 3, "abstract": 7}),
    json.dumps({"id": "p2", "title": "No abstract"}),
    json.dumps({"id": ["p3"], "abstract": "An abstract. Really."}),
    json.dumps({"id": "p4", "abstract": "x" * (MAX_ABSTRACT_CHARS + 1)}),
    json.dumps(["a", "list"]),
    "null",
    "\x00\x00",
]

# One batch line: a good record (id from a small pool, content version 0-2) or a bad line.
batch_lines = st.lists(
    st.tuples(st.sampled_from(["p0", "p1", "p2", "p3"]), st.integers(0, 2)).map(
        lambda pair: json.dumps(good_record(*pair))
    )
    | st.sampled_from(BAD_RECORDS),
    min_size=1,
    max_size=7,
)


def expected_after(state: dict[str, str], lines: list[str]) -> dict[str, str]:
    """The store's papers (id → abstract) after ingesting `lines`: last good record wins."""
    updated = dict(state)
    for line in lines:
        try:
            record = json.loads(line)
        except ValueError:
            continue
        if (
            isinstance(record, dict)
            and isinstance(record.get("id"), str)
            and isinstance(record.get("title"), str)
            and isinstance(record.get("abstract"), str)
            and len(record["abstract"]) <= MAX_ABSTRACT_CHARS
        ):
            updated[record["id"]] = record["abstract"]
    return updated


def stored_papers(settings: Settings) -> dict[str, str]:
    store = PaperStore.open(settings, StoreLayout.for_settings(settings), create=False)
    papers: dict[str, list[tuple[int, str]]] = {}
    ids = []
    for chunk in store.iter_chunks():
        ids.append(chunk.id)
        papers.setdefault(chunk.metadata["paper_id"], []).append(
            (int(chunk.metadata["chunk_index"]), chunk.document)
        )
    assert len(ids) == len(set(ids))
    return {pid: " ".join(doc for _, doc in sorted(chunks)) for pid, chunks in papers.items()}


@pytest.fixture(scope="module")
def embedder(onnx_cache: Path):  # type: ignore[no-untyped-def]
    from rag.embed.factory import make_embedder

    return make_embedder(Settings(cache_dir=onnx_cache))


@settings(
    max_examples=12,
    deadline=None,
    database=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)
@given(batches=st.lists(batch_lines, min_size=1, max_size=3))
def test_store_holds_exactly_the_last_good_version_of_each_paper(
    batches: list[list[str]], embedder: Any, onnx_cache: Path
) -> None:
    with tempfile.TemporaryDirectory() as folder:
        settings = Settings(home=Path(folder) / "home", cache_dir=onnx_cache)
        state: dict[str, str] = {}
        for number, lines in enumerate(batches):
            path = Path(folder) / f"batch{number}.jsonl"
            path.write_text("\n".join(lines) + "\n", encoding="utf-8")
            want = expected_after(state, lines)
            try:
                run_ingest(settings, [path], progress=False, embedder=embedder)
            except PaperTalkError as exc:  # only a batch without one usable paper may fail
                assert want == state, f"{exc} although the batch had usable papers"
                assert str(exc) and "\n" not in str(exc)
            state = want
            if state:
                assert stored_papers(settings) == state


def test_duplicate_ids_with_different_content_keep_the_last(tmp_path: Path) -> None:
    path = tmp_path / "dups.jsonl"
    records = [good_record("p0", 0), good_record("p1", 0), good_record("p0", 2)]
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    result = run_cli("ingest", str(path))
    assert result.returncode == 0, result.stderr
    assert "2 added" in result.stdout
    assert "p0" in result.stderr and "duplicate" in result.stderr.lower()
    assert stored_papers(Settings()) == {"p0": abstract_for(2), "p1": abstract_for(0)}


def test_ten_megabyte_abstract_is_skipped_with_one_line(tmp_path: Path) -> None:
    huge = tmp_path / "huge.jsonl"
    big = {"id": "big", "title": "Big", "abstract": "word " * 2_000_000}
    huge.write_text(json.dumps(good_record("p0", 1)) + "\n" + json.dumps(big) + "\n")
    assert huge.stat().st_size > 10_000_000
    result = run_cli("ingest", str(huge))
    assert result.returncode == 0, result.stderr
    assert "1 added, 0 updated, 0 unchanged, 1 skipped" in result.stdout
    assert "huge.jsonl:2: abstract too long (9,999,999 chars; the limit is 100,000)" in (
        result.stderr
    )
    assert stored_papers(Settings()) == {"p0": abstract_for(1)}

    only_huge = tmp_path / "only.jsonl"
    only_huge.write_text(json.dumps(big) + "\n")
    unusable = run_cli("ingest", str(only_huge))
    assert unusable.returncode != 0
    assert len(unusable.stderr.strip().splitlines()) == 1 and is_unusable_input_error(
        unusable.stderr
    )
    assert stored_papers(Settings()) == {"p0": abstract_for(1)}


def test_hundred_thousand_records(tmp_path: Path) -> None:
    """100k lines load in seconds; duplicates collapse to the last version of each id."""
    path = tmp_path / "many.jsonl"
    with path.open("w") as out:
        for i in range(100_000):
            out.write(json.dumps(good_record(f"p{i % 5}", i % 3 if i < 99_995 else 1)) + "\n")
    started = time.perf_counter()
    loaded = load_papers(path)
    assert time.perf_counter() - started < 60
    assert sorted(p.id for p in loaded.papers) == ["p0", "p1", "p2", "p3", "p4"]
    assert {p.abstract for p in loaded.papers} == {abstract_for(1)}

    result = run_cli("ingest", str(path))
    assert result.returncode == 0, result.stderr
    assert "5 added, 0 updated, 0 unchanged, 0 skipped" in result.stdout
    assert len(result.stderr.strip().splitlines()) <= 6  # 5 warnings and a count, not 99,995
    assert stored_papers(Settings()) == {f"p{i}": abstract_for(1) for i in range(5)}


def test_hundred_thousand_bad_records_exit_non_zero_and_store_is_unchanged(
    tmp_path: Path,
) -> None:
    good = tmp_path / "good.jsonl"
    good.write_text(json.dumps(good_record("p0", 0)) + "\n")
    assert run_cli("ingest", str(good)).returncode == 0
    bad = tmp_path / "bad.jsonl"
    small = [r.replace("\x00", "") for r in BAD_RECORDS if len(r) < 1000]  # not 1 GB of text
    with bad.open("w") as out:
        for i in range(100_000):
            out.write(small[i % len(small)] + "\n")
    result = run_cli("ingest", str(bad))
    assert result.returncode != 0
    assert is_unusable_input_error(result.stderr)
    assert len(result.stderr.strip().splitlines()) == 1 and "Traceback" not in result.stderr
    assert stored_papers(Settings()) == {"p0": abstract_for(0)}


@pytest.mark.parametrize("fmt", ["jsonl", "json", "csv"])
def test_truncated_files_load_only_complete_records(tmp_path: Path, fmt: str) -> None:
    records = [good_record(f"p{i}", i % 3) for i in range(6)]
    if fmt == "jsonl":
        content = "".join(json.dumps(r) + "\n" for r in records)
    elif fmt == "json":
        content = json.dumps(records, indent=1)
    else:
        rows = ['"id","title","abstract","authors"'] + [
            f'"{r["id"]}","{r["title"]}","{r["abstract"]}","Ada Lovelace"' for r in records
        ]
        content = "\n".join(rows) + "\n"
    originals = {r["id"]: r["abstract"] for r in records}
    for cut in range(1, len(content), max(1, len(content) // 40)):
        path = tmp_path / f"cut.{fmt}"
        path.write_text(content[:cut])
        try:
            loaded = load_papers(path)
        except CorpusError as exc:
            assert "\n" not in str(exc)
            continue
        for paper in loaded.papers:
            # CSV can only cut the last field short; everything else is whole or not loaded.
            if fmt == "csv" and paper is loaded.papers[-1]:
                assert originals[paper.id].startswith(paper.abstract)
            else:
                assert paper.abstract == originals[paper.id]


def test_a_store_opened_with_other_settings_says_so(tmp_path: Path) -> None:
    path = tmp_path / "one.jsonl"
    path.write_text(json.dumps(good_record("p0", 0)) + "\n")
    assert run_cli("ingest", str(path)).returncode == 0
    other = run_cli("search", "graph model", "--chunk-tokens", "100")
    assert other.returncode == 2 and "Traceback" not in other.stderr
    assert "other embedding or chunking settings" in other.stderr
    assert len(other.stderr.strip().splitlines()) == 1
    assert run_cli("search", "graph model").returncode == 0  # the store itself is untouched
