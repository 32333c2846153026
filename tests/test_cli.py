"""The `papertalk` CLI as a user runs it: real subprocesses, real store."""

from __future__ import annotations

import json
from pathlib import Path

from .conftest import CAKE_ID, run_cli


def _no_traceback(result) -> None:  # type: ignore[no-untyped-def]
    assert "Traceback" not in result.stderr, result.stderr


def test_ingest_search_stats_round_trip(tmp_path: Path) -> None:
    first = run_cli("ingest", "--no-progress")
    assert first.returncode == 0, first.stderr
    assert "19 added, 0 updated, 0 unchanged, 0 skipped" in first.stdout

    again = run_cli("ingest")
    assert "0 added, 0 updated, 19 unchanged" in again.stdout

    result = run_cli("search", "compute or load KV cache", "--json")
    assert result.returncode == 0, result.stderr
    payload = json.loads(result.stdout)
    assert set(payload) == {"query", "results"}
    top = payload["results"][0]
    assert top["paper_id"] == CAKE_ID and top["rank"] == 1
    assert set(top) == {
        "rank",
        "paper_id",
        "title",
        "authors",
        "url",
        "status",
        "score",
        "passages",
    }
    assert set(top["passages"][0]) == {"text", "start", "end"}

    human = run_cli("search", "Cake time to first token", "-k", "2")
    assert human.returncode == 0 and human.stdout.startswith("1. Compute or Load KV Cache?")

    stats = run_cli("stats", "--json")
    info = json.loads(stats.stdout)
    assert info["papers"] == 19 and info["chunks"] >= 19

    skip = run_cli("ingest", "--if-empty")
    assert "nothing to do" in skip.stdout


def test_user_errors_are_one_line_and_non_zero(tmp_path: Path) -> None:
    no_store = run_cli("search", "anything")
    assert no_store.returncode == 2 and "papertalk ingest" in no_store.stderr
    _no_traceback(no_store)

    missing = run_cli("ingest", str(tmp_path / "nope.jsonl"))
    assert missing.returncode == 2 and "file not found" in missing.stderr
    _no_traceback(missing)

    binary = tmp_path / "bin.jsonl"
    binary.write_bytes(b"\xff\xfe\x00garbage\x81")
    not_utf8 = run_cli("ingest", str(binary))
    assert not_utf8.returncode == 2 and "UTF-8" in not_utf8.stderr
    _no_traceback(not_utf8)

    empty = run_cli("search", "   ")
    assert empty.returncode == 2 and "empty query" in empty.stderr

    bad_setting = run_cli("search", "x", env={"PAPERTALK_TOP_K": "zero"})
    assert bad_setting.returncode == 2 and "top_k" in bad_setting.stderr
    _no_traceback(bad_setting)

    down = run_cli("search", "x", "--chroma-url", "http://127.0.0.1:9")
    assert down.returncode == 2 and "cannot reach the Chroma server" in down.stderr
    _no_traceback(down)

    for result in (no_store, missing, not_utf8, empty, bad_setting, down):
        assert len(result.stderr.strip().splitlines()) == 1, result.stderr


def test_malformed_lines_are_skipped_with_line_numbers(tmp_path: Path) -> None:
    good = {"id": "abc", "title": "A paper", "abstract": "We study things. They matter."}
    path = tmp_path / "mixed.jsonl"
    path.write_text(json.dumps(good) + "\n{broken\n" + json.dumps({"title": "x"}) + "\n")
    result = run_cli("ingest", str(path))
    assert result.returncode == 0, result.stderr
    assert "1 added, 0 updated, 0 unchanged, 2 skipped" in result.stdout
    assert "mixed.jsonl:2" in result.stderr and "mixed.jsonl:3" in result.stderr
    strict = run_cli("ingest", "--strict", str(path))
    assert strict.returncode == 2 and "mixed.jsonl:2" in strict.stderr
    _no_traceback(strict)


def test_a_venue_given_at_ingest_names_where_papers_appeared(tmp_path: Path) -> None:
    records = [
        {"id": "abc", "title": "FooNet: Fast Things", "abstract": "We study things. They matter."},
        {"id": "def", "title": "BarNet: Slow Things", "abstract": "We study x.", "venue": "Q 2029"},
    ]
    path = tmp_path / "papers.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    result = run_cli("ingest", str(path), "--venue", "BarConf  2030")
    assert result.returncode == 0, result.stderr
    for name, venue in (("FooNet", "BarConf 2030"), ("BarNet", "Q 2029")):  # a record's own stays
        answer = run_cli("ask", f"When was {name} published?", "--llm", "extractive", "--json")
        assert answer.returncode == 0, answer.stderr
        assert f"paper at {venue}" in json.loads(answer.stdout)["answer"]
    too_long = run_cli("ingest", str(path), "--venue", "x" * 201)
    assert too_long.returncode == 2 and "--venue is too long" in too_long.stderr
    _no_traceback(too_long)


def test_chroma_server_backend(chroma_server: str, isolated_home: Path) -> None:
    env = {"PAPERTALK_CHROMA_URL": chroma_server}
    result = run_cli("ingest", env=env)
    assert result.returncode == 0, result.stderr
    assert "19 added" in result.stdout
    again = run_cli("ingest", env=env)
    assert "19 unchanged" in again.stdout
    found = json.loads(run_cli("search", "compute or load KV cache", "--json", env=env).stdout)
    assert found["results"][0]["paper_id"] == CAKE_ID
    stats = json.loads(run_cli("stats", "--json", env=env).stdout)
    assert stats["store"] == chroma_server and stats["papers"] == 19
    assert not (isolated_home / "chroma").exists()  # nothing went to the embedded store
