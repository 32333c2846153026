"""How long the page's Map tab takes to draw every paper of a store.

Serves `--home` (a store whose topic map is kept: run `papertalk topics` on it first) with
`papertalk serve --llm extractive`, opens the page in headless Debian chromium (Playwright),
clicks the Map tab and measures, in the page, the time from the click until the plot holds one
point per paper and the next frame after plotly finished drawing it. Each run is a fresh browser
context (nothing cached); the first run also builds the server's figure. Saves the result with
`save_results("map-view", ...)`.

    .venv/bin/python bench/map_view.py --home /tmp/full-home --runs 3
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from common import CHROMIUM, CHROMIUM_ARGS, REPO, free_port, machine, running_server, save_results

LAUNCH_ARGS = CHROMIUM_ARGS
SETTLE_MS = (0, 3000)  # clicked at once; clicked after a glance at the page
# True (elapsed ms) once the plot holds `expected` points, plotly has no pending work, and one
# more frame has been drawn.
DRAWN = """([expected, t0]) => {
  const g = document.querySelector('#pt-map-plot .js-plotly-plot');
  if (!g || !g._fullLayout || !g._fullData || !g.data) { return false; }
  const points = g.data.reduce((n, t) => n + (t.x ? t.x.length : 0), 0);
  if (points !== expected || (g._promises && g._promises.length)) { return false; }
  if (!g.querySelector('canvas')) { return false; }
  if (!window.__ptDrawnAt) {
    window.__ptDrawnAt = -1;
    requestAnimationFrame(() => { window.__ptDrawnAt = performance.now(); });
  }
  return window.__ptDrawnAt > 0 ? window.__ptDrawnAt - t0 : false;
}"""


def kept_map(home: Path) -> tuple[int, int]:
    """(papers, topics) of the kept topic map of `home` (exits when there is none)."""
    from rag.explore.topics import load_topics
    from rag.retrieve.hybrid import open_searcher
    from rag.settings import Settings

    searcher = open_searcher(Settings(home=home))
    topics = load_topics(home, searcher)
    if topics is None:
        sys.exit(f"no topic map kept in {home}: run `PAPERTALK_HOME={home} papertalk topics`")
    return len(topics.coords), len(topics.topics)


def measure(url: str, expected: int, runs: int, settle_ms: int) -> list[float]:
    from playwright.sync_api import sync_playwright

    times = []
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(
            executable_path=CHROMIUM, headless=True, args=LAUNCH_ARGS
        )
        for _ in range(runs):
            context = browser.new_context(viewport={"width": 1400, "height": 900})
            page = context.new_page()
            page.goto(url)
            page.locator("#pt-question textarea").wait_for(timeout=60_000)
            page.wait_for_timeout(settle_ms)  # the reader looks at the page first
            t0 = page.evaluate("() => performance.now()")
            page.get_by_role("tab", name="Map").click()
            handle = page.wait_for_function(
                DRAWN, arg=[expected, t0], polling="raf", timeout=120_000
            )
            times.append(float(handle.json_value()))
            context.close()
        browser.close()
    return times


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--home", type=Path, required=True, help="store with a kept topic map")
    parser.add_argument("--runs", type=int, default=3, help="page loads measured")
    args = parser.parse_args()
    home = args.home.resolve()
    papers, topics = kept_map(home)
    port = free_port()
    env = {k: v for k, v in os.environ.items() if not k.startswith("PAPERTALK_")}
    env.update(PAPERTALK_HOME=str(home), HF_HUB_OFFLINE="1", GRADIO_ANALYTICS_ENABLED="False")
    command = [sys.executable, "-m", "rag.cli", "serve", "--llm", "extractive"]
    command += ["--port", str(port)]
    log = Path("/tmp") / f"papertalk-map-view-{port}.log"
    started = time.perf_counter()
    with running_server(command, port, log, timeout=180, env=env, cwd=REPO):
        serve_s = time.perf_counter() - started
        url = f"http://127.0.0.1:{port}"
        rows = {settle: measure(url, papers, args.runs, settle) for settle in SETTLE_MS}
    table = ""
    for settle, times in rows.items():
        ms = ", ".join(f"{t:.0f}" for t in times)
        table += (
            f"| {settle} | {len(times)} | {statistics.median(times):.0f} | {max(times):.0f} "
            f"| {ms} |\n"
        )
    text = (
        "# Map view: time until every paper is drawn\n\n"
        f"Machine: {machine()}\n\n"
        f"Store: {home} ({papers} papers, {topics} topics, kept map); server ready in "
        f"{serve_s:.1f} s.\n"
        "Measured in headless Debian chromium (Playwright, --disable-gpu: WebGL in software), "
        "each run a fresh browser context: from the click on the Map tab until the plot holds "
        f"all {papers} points (one scattergl trace per topic) and a frame after plotly drew "
        "them.\n\n"
        "The page's head preloads plotly's module (4.6 MB) and its script evaluates it at "
        "once; a Map tab opened before that is done waits for it.\n\n"
        "| tab clicked after page ready (ms) | runs | median (ms) | max (ms) | all (ms) |\n"
        "|---|---|---|---|---|\n" + table
    )
    path = save_results("map-view", text)
    print(text)
    print(json.dumps({"results": str(path), "ms": rows}))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
