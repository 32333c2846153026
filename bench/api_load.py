"""API load: streaming OpenAI-compatible clients and UI sessions on one `papertalk serve`.

Two measurements in one run, on one server:

1. Time to first token, API vs UI, one request at a time (nothing else running): each question
   is asked through `POST /v1/chat/completions` with `stream=true` (the `openai` client) and
   through the page in headless Chromium (Debian's, driven by Playwright; skipped when either is
   missing), then through the UI's `/ask` endpoint (`gradio_client`, which does not stream).
   API: first streamed delta (the unchecked draft, `reasoning_content`), first `content` delta
   (the checked, cited answer), last event. Page: first answer text shown in the chat, then the
   finished answer (its footer note). Both answers must cite the same first paper.
2. Load: `--clients` streaming API conversations and `--ui-sessions` `gradio_client` sessions
   at once, each about its own paper of the bundled corpus, with follow-ups ("How does it
   work?") that only its own conversation resolves. API conversations carry their history in
   `messages`; UI sessions keep theirs on the server (read back from `/history`). None may be
   dropped, and an answer citing another conversation's paper counts as cross-talk.

    .venv/bin/python bench/api_load.py [--clients 10] [--ui-sessions 5] [--questions 3]
        [--llm extractive|local] [--ttft-questions 5] [--no-browser] [--home DIR]

Saves a markdown report to bench/results/api-load-<timestamp>.md.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, cast

BENCH = Path(__file__).resolve().parent
REPO = BENCH.parent
if str(REPO) not in sys.path:  # run as a script: bench.* is found from the repository root
    sys.path.insert(0, str(REPO))

from bench.common import CHROMIUM_ARGS  # noqa: E402
from bench.ui_load import (  # noqa: E402
    SUBJECTS,
    LoadRun,
    Session,
    check_run,
    connect,
    run_load,
    serve,
    workload,
)

CHROMIUM = Path("/usr/bin/chromium")
# The n-th answer shows text: a streamed draft (ending in the \u258d cursor) or the finished answer.
FIRST_TEXT_JS = """n => {
  const m = document.querySelectorAll('[data-testid=bot]')[n];
  return m && (m.innerText.includes('\u258d') || m.querySelector('.pt-note'));
}"""
BROWSER_ARGS = CHROMIUM_ARGS


@dataclass
class ApiCall:
    conversation: int
    index: int
    question: str
    first_token_s: float | None = None  # first delta of any kind (the draft)
    first_content_s: float | None = None  # first delta of the checked answer
    total_s: float = 0.0
    started: float = 0.0  # time.perf_counter() when the request was sent
    content: str = ""
    paper_ids: list[str] = field(default_factory=list)
    error: str | None = None


def stream_chat(
    url: str, messages: list[dict[str, str]], *, timeout: float = 300, index: int = 0
) -> ApiCall:
    """One streamed chat completion, timed from the request to each kind of delta."""
    from openai import OpenAI

    call = ApiCall(0, index, messages[-1]["content"])
    client = OpenAI(base_url=f"{url}/v1", api_key="bench", max_retries=0, timeout=timeout)
    t0 = call.started = time.perf_counter()
    try:
        stream = client.chat.completions.create(
            model="papertalk", messages=cast(Any, messages), stream=True
        )
        for chunk in stream:
            now = time.perf_counter() - t0
            delta = chunk.choices[0].delta
            extra = delta.model_extra or {}
            if (extra.get("reasoning_content") or delta.content) and call.first_token_s is None:
                call.first_token_s = now
            if delta.content:
                if call.first_content_s is None:
                    call.first_content_s = now
                call.content += delta.content
            if chunk.choices[0].finish_reason is not None:
                call.paper_ids = [c["paper_id"] for c in extra.get("citations", [])]
        if not call.content:
            call.error = "no content"
    except Exception as exc:
        call.error = f"{type(exc).__name__}: {str(exc)[:200]}"
    finally:
        client.close()
    call.total_s = time.perf_counter() - t0
    return call


def api_conversation(
    url: str, number: int, session: Session, start: threading.Event, timeout: float
) -> list[ApiCall]:
    """One client's conversation: each question streamed, the replies kept in `messages`."""
    start.wait()
    messages: list[dict[str, str]] = []
    calls = []
    for index, question in enumerate(session.questions):
        messages.append({"role": "user", "content": question})
        call = stream_chat(url, messages, timeout=timeout, index=index)
        call.conversation = number
        calls.append(call)
        messages.append({"role": "assistant", "content": call.content})
    return calls


def run_mixed(
    url: str, api: Sequence[Session], ui: Sequence[Session], timeout: float
) -> tuple[list[list[ApiCall]], LoadRun, float]:
    """The API conversations and the UI sessions, all started at once."""
    start = threading.Event()
    ui_result: list[LoadRun] = []

    def ui_side() -> None:
        start.wait()
        ui_result.append(run_load(url, ui, timeout=timeout))

    with ThreadPoolExecutor(max_workers=len(api) + 1) as pool:
        ui_job = pool.submit(ui_side)
        jobs = [pool.submit(api_conversation, url, i, s, start, timeout) for i, s in enumerate(api)]
        t0 = time.perf_counter()
        start.set()
        api_calls = [job.result() for job in jobs]
        ui_job.result()
    return api_calls, ui_result[0], time.perf_counter() - t0


def api_problems(session: Session, calls: Sequence[ApiCall]) -> list[str]:
    """Errors, missing answers and answers citing another conversation's paper."""
    problems = []
    if len(calls) != len(session.questions):
        problems.append(f"{len(calls)} of {len(session.questions)} questions answered")
    for call in calls:
        if call.error:
            problems.append(f"{call.question!r}: {call.error}")
        elif call.paper_ids[:1] != [session.paper_id]:
            problems.append(f"{call.question!r} cited {call.paper_ids}, not {session.paper_id}")
    return problems


# Time to first token, API vs UI ---------------------------------------------------------------
class PageTimer:
    """The page in headless Chromium: time to the first answer text and to the finished one."""

    def __init__(self, url: str) -> None:
        from playwright.sync_api import sync_playwright

        self._playwright = sync_playwright().start()
        self._browser = self._playwright.chromium.launch(
            executable_path=str(CHROMIUM), headless=True, args=BROWSER_ARGS
        )
        self._page = self._browser.new_page(viewport={"width": 1400, "height": 900})
        self._page.goto(url)
        self._page.locator("#pt-question textarea").wait_for(timeout=60_000)

    def ask(self, question: str, timeout_s: float = 300) -> tuple[float, float]:
        page = self._page
        before = page.locator("[data-testid=bot]").count()
        box = page.locator("#pt-question textarea")
        box.fill(question)
        t0 = time.perf_counter()
        box.press("Enter")
        # The first answer text: a streamed draft (ends in the ▍ cursor) or the finished answer.
        page.wait_for_function(
            FIRST_TEXT_JS,
            arg=before,
            polling="raf",
            timeout=timeout_s * 1000,
        )
        first = time.perf_counter() - t0
        page.locator("[data-testid=bot]").nth(before).locator(".pt-note").wait_for(
            timeout=timeout_s * 1000
        )
        return first, time.perf_counter() - t0

    def close(self) -> None:
        self._browser.close()
        self._playwright.stop()


@dataclass
class FirstToken:
    question: str
    api: ApiCall
    page: tuple[float, float] | None = None  # first text, finished
    ask_s: float = 0.0  # the UI's /ask endpoint (not streamed): request to answer
    same_paper: bool = False


def first_tokens(url: str, questions: Sequence[str], browser: bool) -> tuple[list[FirstToken], str]:
    """Each question through the API (streamed), the page and `/ask`, one at a time."""
    note = ""
    timer = None
    if browser:
        try:
            timer = PageTimer(url)
        except Exception as exc:
            note = f"page not measured: {type(exc).__name__}: {str(exc)[:200]}"
    rows = []
    try:
        for question in questions:
            api = stream_chat(url, [{"role": "user", "content": question}])
            client = connect(url)
            t0 = time.perf_counter()
            _, citations = client.predict(question, "ask", api_name="/ask")
            ask_s = time.perf_counter() - t0
            client.close()
            row = FirstToken(question, api, ask_s=ask_s)
            row.same_paper = api.paper_ids[:1] == [c["paper_id"] for c in citations][:1]
            if timer is not None:
                try:
                    row.page = timer.ask(question)
                except Exception as exc:
                    note = f"page timing failed: {type(exc).__name__}: {str(exc)[:200]}"
            rows.append(row)
    finally:
        if timer is not None:
            timer.close()
    return rows, note


# The report ------------------------------------------------------------------------------------
def _p(values: Sequence[float | None], q: float) -> str:
    from rag.eval.metrics import percentile

    found = [v for v in values if v is not None]
    return f"{percentile(found, q):.2f}" if found else "n/a"


def report(
    args: argparse.Namespace,
    machine_line: str,
    warm_s: float,
    rows: Sequence[FirstToken],
    note: str,
    api_sessions: Sequence[Session],
    api_calls: Sequence[Sequence[ApiCall]],
    ui_sessions: Sequence[Session],
    ui_run: LoadRun,
    wall: float,
    others: float,
) -> str:
    api_flat = [c for calls in api_calls for c in calls]
    api_ok = [c for c in api_flat if c.error is None]
    api_wrong = [api_problems(s, c) for s, c in zip(api_sessions, api_calls, strict=True)]
    ui_stats = ui_run.stats()
    api_wall = max(c.started + c.total_s for c in api_flat) - min(c.started for c in api_flat)
    ui_wrong = sum(bool(check_run(r)) for r in ui_run.runs)
    pages = [r.page for r in rows if r.page is not None]
    lines = [
        f"# API load ({time.strftime('%Y-%m-%d %H:%M', time.gmtime())} UTC)",
        "",
        f"Machine: {machine_line}.",
        f"`papertalk serve --llm {args.llm}` on the bundled corpus (19 papers); one server, one "
        f"port, the page and `/v1` side by side. Warm-up (store open, first answer): "
        f"{warm_s:.1f} s.",
        "",
        "## Time to first token, API vs UI (one request at a time)",
        "",
        f"{len(rows)} questions, each asked through the streamed API, the page (headless "
        "Chromium) and the UI's `/ask` endpoint, in turn. API first token = the first streamed "
        "delta (the unchecked draft, `reasoning_content`); first content = the checked, cited "
        "answer. Page first text = the first answer text shown in the chat (draft or finished).",
        "",
        "| path | first token p50 s | p95 s | finished p50 s | p95 s |",
        "|---|---|---|---|---|",
        f"| API, streamed (first delta) | {_p([r.api.first_token_s for r in rows], 50)} | "
        f"{_p([r.api.first_token_s for r in rows], 95)} | {_p([r.api.total_s for r in rows], 50)}"
        f" | {_p([r.api.total_s for r in rows], 95)} |",
        f"| API, streamed (first content) | {_p([r.api.first_content_s for r in rows], 50)} | "
        f"{_p([r.api.first_content_s for r in rows], 95)} | | |",
    ]
    if pages:
        lines.append(
            f"| UI page | {_p([p[0] for p in pages], 50)} | {_p([p[0] for p in pages], 95)} | "
            f"{_p([p[1] for p in pages], 50)} | {_p([p[1] for p in pages], 95)} |"
        )
    lines += [
        f"| UI `/ask` (not streamed) | | | {_p([r.ask_s for r in rows], 50)} | "
        f"{_p([r.ask_s for r in rows], 95)} |",
        "",
        f"Same first cited paper through the API and the UI: {sum(r.same_paper for r in rows)} "
        f"of {len(rows)}. API errors: {sum(r.api.error is not None for r in rows)}."
        + (f" Note: {note}." if note else ""),
        "",
        "## Load: streaming API clients and UI sessions at once",
        "",
        f"{len(api_sessions)} `openai` clients, each a streamed conversation of "
        f"{args.questions} questions about its own paper (history in `messages`), and "
        f"{len(ui_sessions)} `gradio_client` sessions of {args.questions} `/ask` questions "
        "(history on the server), all started together. Latency = request to answer, queueing "
        "included. Cross-talk = an answer citing another conversation's paper first, or a "
        "`/history` that is not the session's own.",
        "",
        "| clients | answers | errors | cross-talk | first token p50 s | p95 s | answer p50 s "
        "| p95 s |",
        "|---|---|---|---|---|---|---|---|",
        f"| API, {len(api_sessions)} streaming | {len(api_ok)}/{len(api_sessions) * args.questions}"
        f" | {len(api_flat) - len(api_ok)} | {sum(bool(w) for w in api_wrong)} of "
        f"{len(api_sessions)} | {_p([c.first_token_s for c in api_ok], 50)} | "
        f"{_p([c.first_token_s for c in api_ok], 95)} | {_p([c.total_s for c in api_ok], 50)} | "
        f"{_p([c.total_s for c in api_ok], 95)} |",
        f"| UI, {len(ui_sessions)} sessions | {ui_stats['answers']:.0f}/{ui_stats['requests']:.0f}"
        f" | {ui_stats['errors']:.0f} | {ui_wrong} of {len(ui_sessions)} | | | "
        f"{ui_stats['p50_s']:.2f} | {ui_stats['p95_s']:.2f} |",
        "",
        f"The API conversations took {api_wall:.1f} s ({len(api_ok) / api_wall:.2f} answers/s), "
        f"the UI sessions {ui_stats['wall_s']:.1f} s from their first question (connecting "
        f"first, {ui_stats['throughput']:.2f} answers/s); {wall:.1f} s in all. Meanwhile other "
        f"processes kept {others:.2f} cores busy (figures taken on a busy machine are slower).",
    ]
    problems = [p for w in api_wrong for p in w] + ui_run.errors
    problems += [p for r in ui_run.runs for p in check_run(r)]
    lines += [f"- {p[:300]}" for p in problems[:10]]
    return "\n".join(lines)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--clients", type=int, default=10, help="streaming API conversations")
    parser.add_argument("--ui-sessions", type=int, default=5, help="gradio_client sessions")
    parser.add_argument("--questions", type=int, default=3, help="questions per conversation")
    parser.add_argument("--llm", default="extractive", help="extractive, local, gguf:..., ...")
    parser.add_argument("--ttft-questions", type=int, default=5, help="for API vs UI timing")
    parser.add_argument("--no-browser", action="store_true", help="skip the page timing")
    parser.add_argument("--home", type=Path, help="serve an existing home (not modified)")
    parser.add_argument("--timeout", type=float, default=600, help="seconds per request")
    args = parser.parse_args()
    if args.clients + args.ui_sessions > len(SUBJECTS):
        parser.error(f"at most {len(SUBJECTS)} conversations in all (one paper each)")

    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("ANONYMIZED_TELEMETRY", "False")
    from bench.common import machine, machine_busy_s, process_cpu_s, save_results

    machine_line = machine()
    work = Path(tempfile.mkdtemp(prefix="papertalk-api-load-"))
    home = args.home
    if home is None:
        home = work / "home"
        ingest = [sys.executable, "-m", "rag.cli", "ingest", "--home", str(home), "--no-progress"]
        subprocess.run(ingest, check=True, cwd=REPO, capture_output=True)
    # Each conversation is about its own paper: the UI sessions' papers, then the API clients'.
    sessions = workload(args.clients + args.ui_sessions, args.questions)
    ui_sessions, api_sessions = sessions[: args.ui_sessions], sessions[args.ui_sessions :]
    questions = [f"What is {name}?" for _, name in SUBJECTS[: args.ttft_questions]]
    browser = not args.no_browser and CHROMIUM.exists()

    with serve(home, args.llm, work) as (url, proc):
        t0 = time.perf_counter()
        warm = connect(url)  # opens the store (and loads the model) before anything is timed
        warm.predict("What is Cake?", api_name="/ask")
        warm.close()
        stream_chat(url, [{"role": "user", "content": "What is Cake?"}])
        warm_s = time.perf_counter() - t0
        print(f"serving {url} ({args.llm}); warm after {warm_s:.1f} s")
        rows, note = first_tokens(url, questions, browser)
        print(f"first tokens measured for {len(rows)} questions {note}")
        busy0, own0 = machine_busy_s(), process_cpu_s(proc.pid) + time.process_time()
        api_calls, ui_run, wall = run_mixed(url, api_sessions, ui_sessions, args.timeout)
        busy, own = machine_busy_s(), process_cpu_s(proc.pid) + time.process_time()
        # Cores busy meanwhile with neither the server nor these clients (a shared machine).
        others = (
            max(0.0, (busy - busy0) - (own - own0)) / wall
            if busy is not None and busy0 is not None
            else float("nan")
        )
        print(ui_run.summary("UI sessions"))

    text = report(
        args,
        machine_line,
        warm_s,
        rows,
        note,
        api_sessions,
        api_calls,
        ui_sessions,
        ui_run,
        wall,
        others,
    )
    print(text)
    out = save_results("api-load", text)
    print(f"\nsaved {out.relative_to(REPO)}")
    shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
