"""PaperTalk installs as a wheel: built from the checkout, installed into a fresh virtual
environment outside it (torch first, as the Makefile does), then used from another directory:
the prompts and the bundled corpus come from inside the installed package."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from .conftest import CAKE_ID, REPO

pytestmark = pytest.mark.slow


def _run(command: list[str], cwd: Path, env: dict[str, str], timeout: float) -> str:
    done = subprocess.run(
        command, cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout
    )
    assert done.returncode == 0, (
        f"{command[:4]} failed:\n{done.stdout[-2000:]}\n{done.stderr[-3000:]}"
    )
    return done.stdout


def test_wheel_installs_and_answers_outside_the_checkout(tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PAPERTALK_", "VIRTUAL_ENV"))}
    env.update(HF_HUB_OFFLINE="1", TRANSFORMERS_OFFLINE="1", ANONYMIZED_TELEMETRY="False")
    dist = tmp_path / "dist"
    _run(
        [sys.executable, "-m", "pip", "wheel", ".", "--no-deps", "-w", str(dist), "-q"],
        REPO,
        env,
        600,
    )
    wheels = list(dist.glob("papertalk-*.whl"))
    assert len(wheels) == 1
    venv = tmp_path / "venv"
    _run([sys.executable, "-m", "venv", str(venv)], tmp_path, env, 120)
    pip = [str(venv / "bin" / "python"), "-m", "pip", "install", "-q"]
    _run([*pip, "torch==2.13.0"], tmp_path, env, 900)
    _run([*pip, str(wheels[0])], tmp_path, env, 1500)

    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    env["PAPERTALK_HOME"] = str(tmp_path / "home")
    env["PAPERTALK_CACHE_DIR"] = str(tmp_path / "cache")
    papertalk = str(venv / "bin" / "papertalk")
    out = _run([papertalk, "ingest", "--no-progress"], elsewhere, env, 600)
    assert "19 added" in out
    question = "How much does Cake reduce time to first token?"
    answer = json.loads(
        _run([papertalk, "ask", question, "--llm", "extractive", "--json"], elsewhere, env, 300)
    )
    assert not answer["refused"] and "2.6" in answer["answer"]
    assert answer["citations"][0]["paper_id"] == CAKE_ID
    # The package itself, not the checkout, provides prompts and the corpus.
    where = _run(
        [
            str(venv / "bin" / "python"),
            "-c",
            "import rag, rag.answer.prompts as p, rag.settings as s;"
            "print(rag.__file__); print(p.PROMPTS_DIR); print(s.BUNDLED_CORPUS)",
        ],
        elsewhere,
        env,
        120,
    )
    assert str(REPO) not in where and str(venv) in where
    assert "serve" in _run([papertalk, "--help"], elsewhere, env, 120)  # ui's entry point
