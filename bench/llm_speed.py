"""LLM speed: time to first token and tokens/s for `local` (in-process llama.cpp) and `openai:`
against a local `python -m llama_cpp.server`, both serving the bundled SmolLM2 GGUF.

Every backend gets the same prompts: for each dev question, the answering chain's own messages
(system prompt + numbered passages from the bundled corpus + question), generated to completion
(at most `max_answer_tokens`, temperature 0), after one warm-up each. Backends take turns on each
question in rotating order, and the CPU used by other processes meanwhile is reported.
Generated tokens are counted with the GGUF's own tokenizer (the server's stream reports no
usage). Decode tokens/s = (tokens - 1) / (total - first token); prompt tokens/s = prompt tokens /
first token (an upper bound on the wait: llama.cpp reuses the KV cache of a shared prefix).

    .venv/bin/python bench/llm_speed.py [--limit N] [--backends local,openai,local-1t]

Rows: `local` = the app's default (llm_threads unset: all cores); `openai` = the server with
--n_threads set to the core count; `local-1t` (not run by default) = llm_threads=1, which shows
how much a second thread buys.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("ANONYMIZED_TELEMETRY", "False")

from common import machine, machine_busy_s, save_results  # noqa: E402 - bench/ is on sys.path

from rag.eval.metrics import percentile  # noqa: E402

SHARED = REPO.parent / "shared"
DEV_QA = SHARED / "eval" / "dev_qa.jsonl"
BACKENDS = ("local", "openai", "local-1t")
DEFAULT_BACKENDS = ("local", "openai")


def own_cpu_s(server: subprocess.Popen | None) -> float:
    """CPU seconds of this process and of the llama.cpp server it started."""
    total = time.process_time()
    if server is not None:
        try:
            fields = Path(f"/proc/{server.pid}/stat").read_text().rsplit(")", 1)[1].split()
            total += (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
        except (OSError, IndexError, ValueError):
            pass
    return total


def free_port() -> int:
    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def start_server(model: Path, threads: int, n_ctx: int, log: Path) -> tuple[subprocess.Popen, str]:
    """`python -m llama_cpp.server` on a free 127.0.0.1 port; returns (process, base URL)."""
    import urllib.request

    port = free_port()
    handle = open(log, "w")  # noqa: SIM115 - lives as long as the server
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "llama_cpp.server",
            "--model",
            str(model),
            "--host",
            "127.0.0.1",
            "--port",
            str(port),
            "--n_ctx",
            str(n_ctx),
            "--n_threads",
            str(threads),
            "--model_alias",
            "smollm2",
        ],
        stdout=handle,
        stderr=subprocess.STDOUT,
    )
    base = f"http://127.0.0.1:{port}/v1"
    deadline = time.monotonic() + 90
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"llama_cpp.server exited with {proc.returncode}; see {log}")
        try:
            with urllib.request.urlopen(f"{base}/models", timeout=2):
                return proc, base
        except OSError:
            time.sleep(0.3)
    proc.terminate()
    raise RuntimeError(f"llama_cpp.server did not answer within 90 s; see {log}")


def stop(proc: subprocess.Popen) -> None:
    proc.terminate()
    try:
        proc.wait(10)
    except subprocess.TimeoutExpired:
        proc.kill()


def build_prompts(settings, questions: list[dict]) -> list[tuple[str, list]]:  # type: ignore[no-untyped-def]
    """(qid, messages) for every question: the ask-mode chain's context and prompt."""
    from rag.answer.chain import Answerer
    from rag.answer.context import build_context, format_passages
    from rag.answer.conversation import standalone_query

    answerer = Answerer(settings, llm_spec="extractive")
    weights = answerer.weights()
    prompts = []
    for q in questions:
        query = standalone_query(q["question"], [tuple(t) for t in q.get("history") or []])
        hits = answerer.searcher.search(query, settings.passages)
        passages = build_context(
            query,
            hits,
            weights,
            answerer.count_tokens,
            budget_tokens=settings.context_tokens,
            max_sentences_per_paper=2,
        )
        messages = answerer.messages(
            "answer_user", passages=format_passages(passages), question=q["question"]
        )
        prompts.append((q["qid"], messages))
    return prompts


def measure(model, messages: list, max_tokens: int, spec_kind: str) -> tuple[float, float, str]:  # type: ignore[no-untyped-def]
    """(seconds to first token, total seconds, text) for one streamed generation."""
    kwargs = {"max_tokens": max_tokens}
    if spec_kind == "openai":
        kwargs["extra_body"] = {"max_tokens": max_tokens}
    started = time.perf_counter()
    first = None
    text = ""
    for chunk in model.stream(messages, **kwargs):
        piece = chunk.content if isinstance(chunk.content, str) else ""
        if piece and first is None:
            first = time.perf_counter() - started
        text += piece
    total = time.perf_counter() - started
    return (first if first is not None else total), total, text


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--limit", type=int, default=0, help="first N dev questions (0 = all)")
    parser.add_argument(
        "--backends",
        default=",".join(DEFAULT_BACKENDS),
        help=f"comma-separated, from {', '.join(BACKENDS)}",
    )
    parser.add_argument("--home", type=Path, help="reuse a home with the bundled corpus")
    args = parser.parse_args()
    backends = [b.strip() for b in args.backends.split(",") if b.strip()]
    unknown = set(backends) - set(BACKENDS)
    if unknown or not backends:
        parser.error(f"unknown backends {sorted(unknown)}: use {', '.join(BACKENDS)}")
    if not DEV_QA.exists():
        print(f"bench: {DEV_QA} is absent; nothing to measure", file=sys.stderr)
        return 2

    from llama_cpp import Llama

    from rag.answer.llm import bundled_gguf, make_chat_model, parse_llm_spec
    from rag.eval.dataset import load_qa
    from rag.ingest.pipeline import run_ingest
    from rag.settings import Settings

    machine_line = machine()
    home = args.home or Path(tempfile.mkdtemp(prefix="papertalk-llm-bench-"))
    settings = Settings().with_overrides(home=home, condense=False)
    run_ingest(settings, [], progress=False)  # bundled corpus (an upsert when reusing a home)
    items = load_qa(DEV_QA)
    questions = [
        {"qid": i.qid, "question": i.question, "history": [list(t) for t in i.history]}
        for i in items
    ]
    if args.limit:
        questions = questions[: args.limit]
    prompts = build_prompts(settings, questions)
    gguf = bundled_gguf()
    vocab = Llama(model_path=str(gguf), vocab_only=True, verbose=False)

    def count(text: str) -> int:
        return len(vocab.tokenize(text.encode("utf-8"), add_bos=False, special=False))

    def prompt_tokens(messages: list) -> int:
        return sum(count(str(m.content)) for m in messages) + 4 * len(messages)  # + template

    from langchain_core.messages import HumanMessage

    class Run:
        def __init__(self, name: str) -> None:
            self.name = name
            self.model = None
            self.kind = ""
            self.load_s = 0.0
            self.ttfts: list[float] = []
            self.rates: list[float] = []
            self.prompt_rates: list[float] = []
            self.tokens: list[int] = []
            self.totals: list[float] = []

    server = None
    runs = [Run(b) for b in backends]
    try:
        for run in runs:
            if run.name == "openai":
                cores = os.cpu_count() or 1
                server, base = start_server(gguf, cores, settings.n_ctx, home / "llama-server.log")
                conf = settings.with_overrides(openai_base_url=base)
                spec = parse_llm_spec("openai:smollm2")
            else:
                threads = 1 if run.name == "local-1t" else None
                conf = settings.with_overrides(llm_threads=threads)
                spec = parse_llm_spec("local")
            t0 = time.perf_counter()
            run.model, run.kind = make_chat_model(spec, conf), spec.kind
            # Warm-up: loads the model (local) and caches the shared system prompt, so no
            # question gets the load time or an unfair full-prompt cache hit.
            warm = [prompts[0][1][0], HumanMessage(content="Say hello.")]
            measure(run.model, warm, 8, run.kind)
            run.load_s = time.perf_counter() - t0

        # Backends take turns on each question, in rotating order, so load from other work on
        # a shared machine slows them alike.
        busy0, own0, wall0 = machine_busy_s(), own_cpu_s(server), time.perf_counter()
        for turn, (qid, messages) in enumerate(prompts):
            order = runs[turn % len(runs) :] + runs[: turn % len(runs)]
            for run in order:
                time.sleep(0.2)  # let the previous backend's threads go idle
                first, total, text = measure(
                    run.model, messages, settings.max_answer_tokens, run.kind
                )
                n = count(text)
                run.ttfts.append(first * 1000)
                run.totals.append(total)
                run.tokens.append(n)
                if n > 1 and total > first:
                    run.rates.append((n - 1) / (total - first))
                run.prompt_rates.append(prompt_tokens(messages) / first)
                print(f"  {run.name} {qid}: first token {first:.2f} s, {n} tokens in {total:.2f} s")
        wall = time.perf_counter() - wall0
        busy, own = machine_busy_s(), own_cpu_s(server)
    finally:
        if server is not None:
            stop(server)
    others = (
        max(0.0, (busy - busy0) - (own - own0)) / wall
        if busy is not None and busy0 is not None
        else float("nan")
    )
    rows = [
        (
            run.name,
            f"{run.load_s:.1f}",
            f"{percentile(run.ttfts, 50):.0f}",
            f"{percentile(run.ttfts, 95):.0f}",
            f"{percentile(run.rates, 50):.1f}",
            f"{percentile(run.prompt_rates, 50):.0f}",
            f"{sum(run.tokens) / len(run.tokens):.0f}",
            f"{percentile(run.totals, 50):.2f}",
        )
        for run in runs
    ]

    mean_prompt = sum(prompt_tokens(m) for _, m in prompts) / len(prompts)
    lines = [
        f"# LLM speed ({datetime.now(UTC):%Y-%m-%d %H:%M} UTC)",
        "",
        f"Machine: {machine_line}. Other processes used {others:.2f} cores on average while "
        "measuring (llama.cpp slows several-fold when its threads share cores with other work; "
        "backends take turns per question, so they share any such load alike).",
        f"Model: {gguf.name}; n_ctx {settings.n_ctx}; max {settings.max_answer_tokens} answer "
        f"tokens; temperature 0. {len(prompts)} dev questions, ask-mode prompts from the bundled "
        f"corpus (mean ~{mean_prompt:.0f} prompt tokens).",
        "`local` = in-process, app default threads (all cores); `local-1t` = llm_threads=1; "
        f"`openai` = `python -m llama_cpp.server --n_threads {os.cpu_count()}` through "
        "langchain-openai (streamed SSE).",
        "",
        "| backend | load + warm-up s | first token p50 ms | first token p95 ms | decode tok/s p50 "
        "| prompt tok/s p50 | tokens/answer | total s p50 |",
        "|---|---|---|---|---|---|---|---|",
    ]
    lines += ["| " + " | ".join(r) + " |" for r in rows]
    text = "\n".join(lines)
    print(text)
    out = save_results("llm-speed", text)
    print(f"\nsaved {out.relative_to(REPO)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
