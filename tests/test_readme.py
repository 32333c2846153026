"""The README's LangChain snippet runs as written, on a store with the bundled papers."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

from .conftest import REPO


def test_readme_langchain_snippet_runs(
    bundled_home: Path, onnx_cache: Path, tmp_path: Path
) -> None:
    readme = (REPO / "README.md").read_text()
    found = re.search(
        r"<!-- langchain-snippet -->\n```python\n(.*?)```\n<!-- /langchain-snippet -->",
        readme,
        re.S,
    )
    assert found, "the README has the LangChain snippet between its markers"
    script = tmp_path / "snippet.py"
    script.write_text(found.group(1))
    env = dict(os.environ, PAPERTALK_HOME=str(bundled_home), PAPERTALK_CACHE_DIR=str(onnx_cache))
    done = subprocess.run(
        [sys.executable, str(script)],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    out = done.stdout
    assert "Compute or Load KV Cache? Why Not Both?" in out  # the retriever found Cake
    assert "2.6" in out and "[1]" in out  # the cited answer
    assert "References:" in out  # the summary's bibliography
