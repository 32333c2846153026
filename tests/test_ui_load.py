"""Load on one `papertalk serve`: many `gradio_client` sessions at once, none dropped or mixed.

The workload (`bench/ui_load.py`) gives each session one paper of the bundled corpus: it names
the paper, then asks follow-ups ("How does it work?", "What does it improve?") that only its own
history can resolve, so a mixed-up history shows as an answer citing another session's paper;
`/history` must hold exactly the session's own turns. Latency p50/p95 is printed (not asserted:
the figures with a baseline come from `bench/ui_load.py`).
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from bench.ui_load import SUBJECTS, LoadRun, check_run, connect, run_load, workload
from rag.answer.refusal import CANNOT_ANSWER

from .conftest import serve_ui

pytestmark = [pytest.mark.server, pytest.mark.slow]

LOCAL_PAPERS = ("WOyOtaO6lQ", "WIIfdh0GJu", "WFhQ9owxOH", "WUGrleBcYP", "WGejWCgrpD")


@pytest.fixture(scope="module")
def extractive_server(
    bundled_home: Path, onnx_cache: Path, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[str]:
    yield from serve_ui(bundled_home, onnx_cache, tmp_path_factory.mktemp("load-extractive"))


@pytest.fixture(scope="module")
def local_server(
    bundled_home: Path, onnx_cache: Path, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[str]:
    """`local` with its default settings: a follow-up about "it" is answered from the paper of
    the session's previous answer only, so its citation tells which history the server used."""
    yield from serve_ui(
        bundled_home, onnx_cache, tmp_path_factory.mktemp("load-local"), llm="local"
    )


def warm_up(url: str) -> None:
    """One answer first, so the store (and the model) are loaded before anything is timed."""
    client = connect(url)
    try:
        client.predict("What is Cake?", api_name="/ask")
    finally:
        client.close()


def report(result: LoadRun, label: str, capsys: pytest.CaptureFixture[str]) -> None:
    with capsys.disabled():
        print(f"\n{result.summary(label)}")


def peak_in_flight(result: LoadRun) -> int:
    edges = sorted(
        [(c.submitted, 1) for c in result.calls] + [(c.finished, -1) for c in result.calls],
        key=lambda e: (e[0], e[1]),
    )
    peak = now = 0
    for _, step in edges:
        now += step
        peak = max(peak, now)
    return peak


def test_twenty_concurrent_sessions_get_all_their_answers_unmixed(
    extractive_server: str, capsys: pytest.CaptureFixture[str]
) -> None:
    warm_up(extractive_server)
    sessions = workload(20, 5)
    assert len({s.paper_id for s in sessions}) == len(SUBJECTS)  # every bundled paper, one twice

    result = run_load(extractive_server, sessions, timeout=120)
    report(result, "extractive, 20 sessions x 5 questions", capsys)

    assert result.errors == []
    assert len(result.answered) == 100
    problems = {r.session.subject: check_run(r) for r in result.runs}
    assert {k: v for k, v in problems.items() if v} == {}
    assert peak_in_flight(result) >= 5  # the requests really were in flight together
    assert result.wall_s < 300  # generous: ~10 s on an idle 2-core machine
    # The follow-ups needed each session's history: a new session cannot answer them.
    client = connect(extractive_server)
    try:
        text, citations = client.predict("What does it improve?", api_name="/ask")
        assert (text, citations) == (CANNOT_ANSWER, [])
        assert client.predict(api_name="/history")[0]["paper_ids"] == []
    finally:
        client.close()


def test_local_model_queues_concurrent_sessions_in_order(
    local_server: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """With the local LLM (one request at a time), 5 sessions' requests wait in the queue and
    are answered in the order they joined it: none is dropped, none answered from another
    session's history."""
    warm_up(local_server)
    subjects = [s for s in SUBJECTS if s[0] in LOCAL_PAPERS]
    sessions = workload(len(subjects), 2, subjects)
    result = run_load(local_server, sessions, timeout=600, stagger=True)
    report(result, "local, 5 sessions x 2 questions", capsys)

    assert result.errors == []
    assert len(result.answered) == 10
    problems = {r.session.subject: check_run(r) for r in result.runs}
    assert {k: v for k, v in problems.items() if v} == {}
    # The questions joined the queue round by round, in session order (`stagger`): a FIFO
    # queue answers them in that order.
    arrived = [(c.session, c.index) for c in sorted(result.calls, key=lambda c: c.finished)]
    assert arrived == [(s, n) for n in range(2) for s in range(len(sessions))]
