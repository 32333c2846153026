"""Helpers shared by the bench scripts: the machine line, machine-wide CPU use, saving results.

from common import machine, machine_busy_s, save_results   # bench/ is on sys.path
from bench.common import running_server                     # from tests (repo root on the path)
"""

from __future__ import annotations

import os
import platform
import socket
import subprocess
import time
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
CHROMIUM = "/usr/bin/chromium"  # Debian's chromium; a downloaded browser is never used
# Headless chromium in a container, quiet: used by the browser tests and the page benchmarks.
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]
RESULTS = REPO / "bench" / "results"


def machine() -> str:
    """CPU model, cores, memory, Python and the load average when the run started."""
    cpu = ""
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    try:
        mem = f"{os.sysconf('SC_PAGE_SIZE') * os.sysconf('SC_PHYS_PAGES') / 2**30:.0f} GiB RAM, "
    except (ValueError, OSError, AttributeError):
        mem = ""
    return (
        f"{cpu or platform.processor() or platform.machine()}, {os.cpu_count()} cores, {mem}"
        f"Python {platform.python_version()}, load average at start {os.getloadavg()[0]:.2f}"
    )


def machine_busy_s() -> float | None:
    """CPU seconds the whole machine has spent busy (Linux /proc/stat), or None."""
    try:
        fields = Path("/proc/stat").read_text().splitlines()[0].split()[1:]
    except OSError:
        return None
    user, nice, system, _idle, _iowait, irq, softirq, steal = (int(x) for x in fields[:8])
    return (user + nice + system + irq + softirq + steal) / os.sysconf("SC_CLK_TCK")


def process_cpu_s(pid: int) -> float:
    """CPU seconds (user + system) used so far by process `pid` (0.0 when unreadable)."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    except (OSError, IndexError, ValueError):
        return 0.0


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


class ServerFailed(RuntimeError):
    """A server exited, or did not listen in time; the message ends with its log."""


def wait_for_port(port: int, timeout: float, proc: subprocess.Popen | None = None) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc is not None and proc.poll() is not None:
            raise ServerFailed(f"server exited early with code {proc.returncode}")
        with socket.socket() as sock:
            if sock.connect_ex(("127.0.0.1", port)) == 0:
                return
        time.sleep(0.2)
    raise ServerFailed(f"nothing listening on 127.0.0.1:{port} after {timeout} s")


@contextmanager
def running_server(
    command: list[str], port: int, log_path: Path, *, timeout: float = 60, **popen: Any
) -> Iterator[subprocess.Popen]:
    """Start `command` (a server on 127.0.0.1:`port`), wait until it listens, stop it after
    (SIGTERM, then SIGKILL after 15 s). A server that dies or never listens raises
    ServerFailed with the end of its log."""
    log = open(log_path, "w")  # noqa: SIM115 - closed below
    proc = subprocess.Popen(command, stdout=log, stderr=subprocess.STDOUT, **popen)
    try:
        try:
            wait_for_port(port, timeout, proc)
        except ServerFailed as exc:
            log.flush()
            raise ServerFailed(f"{exc}\n{log_path.read_text()[-3000:]}") from None
        yield proc
    finally:
        proc.terminate()
        try:
            proc.wait(15)
        except subprocess.TimeoutExpired:
            proc.kill()
        log.close()


def save_results(prefix: str, text: str, *, folder: Path = RESULTS) -> Path:
    """Write `text` to bench/results/`prefix`-YYYYmmdd-HHMM.md and return the path."""
    folder.mkdir(parents=True, exist_ok=True)
    out = folder / f"{prefix}-{datetime.now(UTC):%Y%m%d-%H%M}.md"
    out.write_text(text.rstrip("\n") + "\n")
    return out
