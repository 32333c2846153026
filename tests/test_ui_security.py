"""`papertalk serve` seen from the network, as an attacker would probe it with raw HTTP: it listens
on 127.0.0.1 only, wants the login, caps upload size, checks upload types, and never opens a file
path that a client names (only files that were uploaded through the page)."""

from __future__ import annotations

import json
import shutil
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from .conftest import run_cli, serve_ui

pytestmark = pytest.mark.server
AUTH = ("reader", "s3cret-pass")


@pytest.fixture(scope="module")
def home(bundled_home: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A copy of the bundled home: these tests may add papers."""
    copy = tmp_path_factory.mktemp("security") / "home"
    shutil.copytree(bundled_home, copy)
    return copy


@pytest.fixture(scope="module")
def url(home: Path, onnx_cache: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    logs = tmp_path_factory.mktemp("security-serve")
    yield from serve_ui(
        home, onnx_cache, logs, auth=AUTH, extra_env={"PAPERTALK_MAX_UPLOAD_MB": "1"}
    )


@pytest.fixture
def http(url: str) -> Iterator[Any]:
    import httpx

    with httpx.Client(base_url=url, timeout=60) as client:
        yield client


@pytest.fixture
def logged_in(http: Any) -> Any:
    response = http.post("/login", data={"username": AUTH[0], "password": AUTH[1]})
    assert response.status_code == 200, response.text
    return http


def listening_addresses(port: int) -> set[str]:
    """Local addresses with a socket listening on `port`, from /proc/net/tcp{,6}."""
    found = set()
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        for line in Path(table).read_text().splitlines()[1:]:
            fields = line.split()
            address, hex_port = fields[1].rsplit(":", 1)
            if int(hex_port, 16) == port and fields[3] == "0A":  # 0A: LISTEN
                found.add(address)
    return found


def upload(client: Any, name: str, content: bytes) -> Any:
    return client.post("/gradio_api/upload", files={"files": (name, content)})


def add_papers(client: Any, file_path: str) -> dict[str, Any]:
    """Call the page's "add papers" event (not a public API) with a FileData naming `file_path`;
    returns the final queue message."""
    config = client.get("/config").json()
    upload_id = next(
        c["id"] for c in config["components"] if c.get("props", {}).get("elem_id") == "pt-upload"
    )
    fn_index = next(
        i for i, dep in enumerate(config["dependencies"]) if dep["inputs"] == [upload_id]
    )
    session = uuid.uuid4().hex
    body = {
        "data": [{"path": file_path, "meta": {"_type": "gradio.FileData"}}],
        "fn_index": fn_index,
        "session_hash": session,
        "event_data": None,
        "trigger_id": None,
    }
    joined = client.post("/gradio_api/queue/join", json=body)
    assert joined.status_code == 200, joined.text
    with client.stream("GET", f"/gradio_api/queue/data?session_hash={session}") as stream:
        for line in stream.iter_lines():
            if line.startswith("data:"):
                message = json.loads(line[5:])
                if message.get("msg") == "process_completed":
                    return dict(message)
    raise AssertionError("the event never completed")


def paper_count(home: Path, onnx_cache: Path) -> int:
    stats = run_cli(
        "stats", "--json", env={"PAPERTALK_HOME": str(home), "PAPERTALK_CACHE_DIR": str(onnx_cache)}
    )
    assert stats.returncode == 0, stats.stderr
    return int(json.loads(stats.stdout)["papers"])


def test_listens_on_loopback_only(url: str) -> None:
    port = int(url.rsplit(":", 1)[1])
    assert listening_addresses(port) == {"0100007F"}  # 127.0.0.1, and no IPv6 socket


def test_everything_needs_the_login(http: Any) -> None:
    assert upload(http, "p.jsonl", b"{}\n").status_code in (401, 403)
    assert http.get("/config").status_code in (401, 403)
    wrong = http.post("/login", data={"username": AUTH[0], "password": "guess"})
    assert wrong.status_code in (400, 401)
    assert upload(http, "p.jsonl", b"{}\n").status_code in (401, 403)


def test_uploads_over_the_limit_are_refused(logged_in: Any) -> None:
    assert upload(logged_in, "big.jsonl", b"x" * (1024 * 1024 + 10)).status_code == 413
    assert upload(logged_in, "small.jsonl", b"{}\n").status_code == 200


@pytest.mark.parametrize(
    "forged",
    ["/etc/hostname", "{home}/chroma/chroma.sqlite3", "../../../../etc/passwd", "{home}"],
)
def test_a_path_named_by_the_client_is_never_opened(
    logged_in: Any, home: Path, onnx_cache: Path, forged: str
) -> None:
    before = paper_count(home, onnx_cache)
    result = add_papers(logged_in, forged.format(home=home))
    assert not result.get("success", False)
    assert "not uploaded by a user" in str(result.get("output", {}).get("error"))
    assert paper_count(home, onnx_cache) == before


def test_uploaded_files_are_type_checked_then_ingested(
    logged_in: Any, home: Path, onnx_cache: Path
) -> None:
    before = paper_count(home, onnx_cache)
    exe = upload(logged_in, "tool.exe", b"MZ\x90\x00 not papers")
    assert exe.status_code == 200
    refused = add_papers(logged_in, exe.json()[0])
    # Gradio checks the component's file types on the server before PaperTalk sees the file.
    assert not refused.get("success") and "Invalid file type" in json.dumps(refused["output"])
    assert paper_count(home, onnx_cache) == before

    paper = {
        "id": "sec1",
        "title": "<script>alert(1)</script> Secure Kernels",
        "abstract": "We propose secure kernels. They stop 99 percent of attacks in our tests.",
    }
    good = upload(logged_in, "../../../escape.jsonl", (json.dumps(paper) + "\n").encode())
    assert good.status_code == 200
    stored_at = Path(good.json()[0])
    assert stored_at.name == "escape.jsonl" and ".." not in stored_at.parts
    added = add_papers(logged_in, str(stored_at))
    assert added.get("success"), added
    assert "1 added" in json.dumps(added["output"]["data"])
    assert paper_count(home, onnx_cache) == before + 1
