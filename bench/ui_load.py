"""UI load: concurrent `gradio_client` sessions against one `papertalk serve`.

Each session is about one paper of the bundled corpus and asks up to five questions: the paper by
name, then follow-ups ("How does it work?", "What does it improve?") that only the session's own
history can resolve, so a mixed-up history shows as an answer citing another session's paper.
All sessions connect first, then ask at once; every `/ask` call is timed from submission to its
answer (queueing included). After its questions each session reads its own turns back from
`/history`. A baseline in the same run asks the same sessions one at a time (no queueing), so the
report gives the latency ratio under load.

    .venv/bin/python bench/ui_load.py [--sessions 20] [--questions 5] [--llm extractive|local]
        [--corpus PATH | --home DIR] [--no-baseline]

Saves a markdown table to bench/results/ui-load-<timestamp>.md. `tests/test_ui_load.py` drives
the same workload (`workload`, `run_load`) and checks every answer.
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
from collections.abc import Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

BENCH = Path(__file__).resolve().parent
REPO = BENCH.parent
if str(REPO) not in sys.path:  # run as a script: bench.common is found from the repository root
    sys.path.insert(0, str(REPO))

from bench.common import free_port, running_server  # noqa: E402

# One subject per bundled paper (the name or a short description its abstract answers to).
SUBJECTS: tuple[tuple[str, str], ...] = (
    ("WOyOtaO6lQ", "Cake"),
    ("WIIfdh0GJu", "DreamDPO text-to-3D preference optimization"),
    ("WFhQ9owxOH", "LightningDrag"),
    ("WUGrleBcYP", "SafetyAnalyst"),
    ("WVlEwFiDGH", "D-Fusion"),
    ("WSUO2uRDPc", "MVA linear attention"),
    ("WSGpXQRUtH", "fast incomplete multi-view clustering with flexible anchors"),
    (
        "WR0ahlhOoy",
        "zero-shot adversarial robustness of vision-language models with adversarial path "
        "simplices",
    ),
    ("WPeAraSKAK", "discovering latent causal graphs from spatiotemporal data"),
    ("WMIueIRcAm", "computing Wasserstein barycenters with conditional normalizing flows"),
    ("WMHNs2Necq", "dueling convex optimization"),
    ("WISfJyOA6M", "PhySpec hyperspectral reconstruction"),
    ("WHqSAEmvai", "online learning in the random-order model"),
    ("WH3ZRH2jno", "identifying latent confounders with tensor ranks"),
    ("WGejWCgrpD", "learning the electronic Hamiltonian of large atomic structures"),
    ("WGXb7UdvTX", "the layer by layer analysis of hidden representations in language models"),
    ("WFIMSlNS7C", "LEVIS verifiable input spaces"),
    ("WDybFnCPaB", "causal abstraction inference under lossy representations"),
    ("WD2CKUrxmx", "memorization in diffusion models with shallow neural nets"),
)
# Named questions and follow-ups alternate; a follow-up's retrieval query carries the questions
# it leans on (rag.conversation.standalone_query).
QUESTIONS = (
    "What is {subject}?",
    "How does it work?",
    "What problem does {subject} address?",
    "What does it improve?",
    "What results does {subject} report?",
)
FOLLOW_UPS = frozenset(q for q in QUESTIONS if "{subject}" not in q)
SLOW_STATES = ("STARTING", "JOINING_QUEUE")  # gradio_client states before a job is queued


@dataclass(frozen=True)
class Session:
    paper_id: str
    subject: str
    questions: tuple[str, ...]


@dataclass
class Call:
    session: int
    index: int
    question: str
    submitted: float  # seconds since the load started
    seconds: float = 0.0  # submission to answer (queueing included)
    text: str | None = None
    paper_ids: list[str] = field(default_factory=list)
    error: str | None = None

    @property
    def finished(self) -> float:
        return self.submitted + self.seconds


@dataclass
class SessionRun:
    session: Session
    calls: list[Call] = field(default_factory=list)
    history: list[dict[str, Any]] | None = None
    error: str | None = None  # a failure outside the calls (connecting, reading /history)


@dataclass
class LoadRun:
    runs: list[SessionRun]
    wall_s: float
    concurrency: int

    @property
    def calls(self) -> list[Call]:
        return [c for r in self.runs for c in r.calls]

    @property
    def answered(self) -> list[Call]:
        return [c for c in self.calls if c.error is None and c.text is not None]

    @property
    def errors(self) -> list[str]:
        found = [f"session {r.session.paper_id}: {r.error}" for r in self.runs if r.error]
        return found + [
            f"session {c.session} question {c.index + 1} ({c.question!r}): {c.error}"
            for c in self.calls
            if c.error is not None
        ]

    def stats(self) -> dict[str, float]:
        from rag.eval.metrics import percentile

        seconds = [c.seconds for c in self.answered]
        return {
            "requests": len(self.calls),
            "answers": len(seconds),
            "errors": len(self.errors),
            "p50_s": percentile(seconds, 50),
            "p95_s": percentile(seconds, 95),
            "max_s": max(seconds, default=0.0),
            "wall_s": self.wall_s,
            "throughput": len(seconds) / self.wall_s if self.wall_s > 0 else 0.0,
        }

    def summary(self, label: str = "load") -> str:
        s = self.stats()
        return (
            f"{label}: {len(self.runs)} sessions x concurrency {self.concurrency}: "
            f"{s['answers']:.0f}/{s['requests']:.0f} answered, {s['errors']:.0f} errors, "
            f"latency p50 {s['p50_s']:.2f} s, p95 {s['p95_s']:.2f} s, max {s['max_s']:.2f} s; "
            f"{s['throughput']:.2f} answers/s over {s['wall_s']:.1f} s"
        )


def workload(
    sessions: int, questions: int = len(QUESTIONS), subjects: Sequence[tuple[str, str]] = SUBJECTS
) -> list[Session]:
    """`sessions` sessions over `subjects` in turn (more sessions than papers reuse papers)."""
    if not 1 <= questions <= len(QUESTIONS):
        raise ValueError(f"questions must be 1-{len(QUESTIONS)}")
    chosen = [subjects[i % len(subjects)] for i in range(sessions)]
    return [
        Session(pid, name, tuple(q.format(subject=name) for q in QUESTIONS[:questions]))
        for pid, name in chosen
    ]


def connect(url: str, auth: tuple[str, str] | None = None) -> Any:
    """A `gradio_client.Client`: one session (its own conversation) on the server."""
    os.environ.setdefault("GRADIO_ANALYTICS_ENABLED", "False")
    os.environ.setdefault("HF_HUB_DISABLE_TELEMETRY", "1")
    from gradio_client import Client

    return Client(url, auth=auth, verbose=False)


def run_load(
    url: str,
    sessions: Sequence[Session],
    *,
    concurrency: int | None = None,
    auth: tuple[str, str] | None = None,
    timeout: float = 300,
    stagger: bool = False,
) -> LoadRun:
    """Run `sessions` against the server at `url`, `concurrency` at a time (default: all).

    Every session connects first (not timed). With `stagger`, the questions join the server's
    queue round by round, in session order: session i submits its n-th question only once
    session i-1's n-th question and every session's (n-1)-th question are queued (and its own
    answer has come). The queue's order is then known and can be checked against the order
    answers arrive in; on a loaded machine a quick answer could otherwise let its follow-up
    overtake a later session's question on its way to the queue.
    """
    concurrency = concurrency or len(sessions)
    runs = [SessionRun(s) for s in sessions]
    clients: list[Any] = [None] * len(sessions)

    def open_one(i: int) -> None:
        try:
            clients[i] = connect(url, auth)
        except Exception as exc:
            runs[i].error = f"connect: {type(exc).__name__}: {exc}"

    with ThreadPoolExecutor(max_workers=min(8, len(sessions) or 1)) as pool:
        list(pool.map(open_one, range(len(sessions))))

    rounds = max((len(s.questions) for s in sessions), default=0)
    # queued[n][i]: session i's n-th question is in the server's queue (or never will be).
    queued = [[threading.Event() for _ in sessions] for _ in range(rounds)]
    started = time.perf_counter()

    def run_one(i: int) -> None:
        run, client = runs[i], clients[i]
        try:
            if client is None:
                return
            for n, question in enumerate(run.session.questions):
                if stagger:
                    for before in ([queued[n][i - 1]] if i > 0 else []) + (
                        queued[n - 1] if n > 0 else []
                    ):
                        before.wait(timeout)
                call = Call(i, n, question, time.perf_counter() - started)
                run.calls.append(call)
                t0 = time.perf_counter()
                try:
                    job = client.submit(question, "ask", api_name="/ask")
                    if stagger:
                        _wait_queued(job, timeout)
                        queued[n][i].set()
                    text, citations = job.result(timeout=timeout)
                    call.text = text
                    call.paper_ids = [c["paper_id"] for c in citations]
                except Exception as exc:
                    call.error = f"{type(exc).__name__}: {exc}"
                call.seconds = time.perf_counter() - t0
            try:
                run.history = client.predict(api_name="/history")
            except Exception as exc:
                run.error = f"/history: {type(exc).__name__}: {exc}"
        finally:
            for events in queued:
                events[i].set()

    with ThreadPoolExecutor(max_workers=concurrency) as pool:
        list(pool.map(run_one, range(len(sessions))))
    wall = time.perf_counter() - started
    for client in clients:
        if client is not None:
            client.close()
    return LoadRun(runs, wall, concurrency)


def _wait_queued(job: Any, timeout: float) -> None:
    deadline = time.monotonic() + timeout
    while job.status().code.name in SLOW_STATES and not job.done():
        if time.monotonic() > deadline:
            return
        time.sleep(0.02)


def check_run(run: SessionRun, *, cited_first: bool = True) -> list[str]:
    """What is wrong with one session's answers and history (empty when all is right).

    Every answer must cite the session's paper (as its first citation with `cited_first`, else
    anywhere); `/history` must hold exactly this session's questions and answers, in order.
    """
    problems = []
    pid = run.session.paper_id
    for call in run.calls:
        if call.error is not None:
            problems.append(f"{call.question!r}: {call.error}")
        elif (call.paper_ids[:1] != [pid]) if cited_first else (pid not in call.paper_ids):
            problems.append(f"{call.question!r} cited {call.paper_ids}, not {pid}")
    asked = [(c.question, c.text, c.paper_ids) for c in run.calls]
    held = [(t.get("question"), t.get("answer"), t.get("paper_ids")) for t in run.history or []]
    if held != asked:
        problems.append(f"/history holds {held!r}, not this session's turns {asked!r}")
    return problems


# The benchmark -------------------------------------------------------------------------------
@contextmanager
def serve(
    home: Path, llm: str, logs: Path, cache: Path | None = None
) -> Iterator[tuple[str, subprocess.Popen]]:
    """`papertalk serve --llm LLM` on a free 127.0.0.1 port over `home`; yields (url, process)."""
    port = free_port()
    env = {k: v for k, v in os.environ.items() if not k.startswith("PAPERTALK_")}
    env.update(PAPERTALK_HOME=str(home), HF_HUB_OFFLINE="1", GRADIO_TEMP_DIR=str(logs / "gradio"))
    if cache is not None:
        env["PAPERTALK_CACHE_DIR"] = str(cache)
    command = [sys.executable, "-m", "rag.cli", "serve", "--llm", llm, "--port", str(port)]
    log = logs / "serve.log"
    with running_server(command, port, log, timeout=120, env=env, cwd=REPO) as proc:
        yield f"http://127.0.0.1:{port}", proc


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sessions", type=int, default=20, help="concurrent sessions")
    parser.add_argument("--questions", type=int, default=5, help=f"per session, 1-{len(QUESTIONS)}")
    parser.add_argument("--llm", default="extractive", help="extractive, local, gguf:..., ...")
    parser.add_argument("--corpus", type=Path, help="paper list for a temp home (default: bundled)")
    parser.add_argument("--home", type=Path, help="serve an existing home instead (not modified)")
    parser.add_argument("--no-baseline", action="store_true", help="skip the one-at-a-time run")
    parser.add_argument("--timeout", type=float, default=600, help="seconds per request")
    args = parser.parse_args()
    if not 1 <= args.questions <= len(QUESTIONS) or args.sessions < 1:
        parser.error(f"--sessions >= 1 and --questions 1-{len(QUESTIONS)}")
    if args.home and args.corpus:
        parser.error("--home and --corpus exclude each other")

    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("ANONYMIZED_TELEMETRY", "False")
    from bench.common import machine, machine_busy_s, process_cpu_s, save_results

    machine_line = machine()
    work = Path(tempfile.mkdtemp(prefix="papertalk-ui-load-"))
    home = args.home
    corpus = "bundled" if args.corpus is None else str(args.corpus)
    if home is None:
        home = work / "home"
        t0 = time.perf_counter()
        ingest = [sys.executable, "-m", "rag.cli", "ingest", "--home", str(home), "--no-progress"]
        ingest += [str(args.corpus)] if args.corpus else []
        subprocess.run(ingest, check=True, cwd=REPO)
        print(f"ingested {corpus} into {home} in {time.perf_counter() - t0:.1f} s")
    else:
        corpus = f"existing home {home}"
    sessions = workload(args.sessions, args.questions)
    n_requests = len(sessions) * args.questions

    with serve(home, args.llm, work) as (url, proc):
        t0 = time.perf_counter()
        warm = connect(url)  # opens the store (and loads the model) before anything is timed
        warm.predict("What is Cake?", api_name="/ask")
        warm.close()
        warm_s = time.perf_counter() - t0
        print(f"serving {url} ({args.llm}); first answer after {warm_s:.1f} s")
        measured: list[tuple[str, LoadRun, float]] = []
        plan = [("concurrent", args.sessions)]
        if not args.no_baseline:
            plan.append(("baseline (one session at a time)", 1))
        for label, concurrency in plan:
            busy0, t0 = machine_busy_s(), time.perf_counter()
            own0 = process_cpu_s(proc.pid) + time.process_time()
            result = run_load(url, sessions, concurrency=concurrency, timeout=args.timeout)
            wall = time.perf_counter() - t0
            busy, own = machine_busy_s(), process_cpu_s(proc.pid) + time.process_time()
            others = (  # cores busy with neither the server nor these clients
                max(0.0, (busy - busy0) - (own - own0)) / wall
                if busy is not None and busy0 is not None
                else float("nan")
            )
            print(result.summary(label))
            measured.append((label, result, others))

    lines = [
        f"# UI load ({time.strftime('%Y-%m-%d %H:%M', time.gmtime())} UTC)",
        "",
        f"Machine: {machine_line}.",
        f"`papertalk serve --llm {args.llm}` on {corpus}; {args.sessions} `gradio_client` "
        f"sessions x {args.questions} questions = {n_requests} `/ask` calls (each session about "
        "one paper, with follow-ups that need its own history). Latency = submission to answer, "
        "queueing included; answering runs one request at a time (concurrency group `answer`, "
        f"limit 1). Warm-up (store open, first answer): {warm_s:.1f} s.",
        "",
        "| run | concurrency | answers | errors | wrong paper or history | p50 s | p95 s | max s "
        "| answers/s | wall s | other CPU (cores) |",
        "|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for label, result, others in measured:
        s = result.stats()
        wrong = sum(bool(check_run(r)) for r in result.runs)
        lines.append(
            f"| {label} | {result.concurrency} | {s['answers']:.0f}/{s['requests']:.0f} | "
            f"{s['errors']:.0f} | {wrong} of {len(result.runs)} sessions | {s['p50_s']:.2f} | "
            f"{s['p95_s']:.2f} | {s['max_s']:.2f} | {s['throughput']:.2f} | {s['wall_s']:.1f} | "
            f"{others:.2f} |"
        )
    if len(measured) == 2:
        load, base = measured[0][1].stats(), measured[1][1].stats()
        if base["p50_s"] > 0 and base["throughput"] > 0:
            lines += [
                "",
                f"Under load vs one at a time: p50 latency x{load['p50_s'] / base['p50_s']:.1f}, "
                f"p95 x{load['p95_s'] / max(base['p95_s'], 1e-9):.1f}, throughput "
                f"x{load['throughput'] / base['throughput']:.2f} (requests queue: latency grows "
                "with the queue; throughput stays that of one answering slot).",
            ]
    lines += [
        "",
        "Other CPU = cores used meanwhile by processes other than the server and these clients; "
        "on a shared machine, figures taken while it is busy are slower.",
    ]
    for label, result, _ in measured:
        for problem in result.errors[:5] + [p for r in result.runs for p in check_run(r)][:5]:
            lines.append(f"- {label}: {problem[:300]}")
    text = "\n".join(lines)
    print(text)
    out = save_results("ui-load", text)
    print(f"\nsaved {out.relative_to(REPO)}")
    shutil.rmtree(work, ignore_errors=True)  # the temp home and the server's log
    return 0


if __name__ == "__main__":
    sys.exit(main())
