"""What the web UI does, without the web: answer a turn, check backends, ingest an upload.

`Engine` holds one searcher for the served store (shared by all sessions) and builds an
`Answerer` per request from the session's choices (backend, number of passages). `run_turn` is
the streaming generator the chat feeds on; it is a plain generator, tested without a server.
No gradio here.
"""

from __future__ import annotations

import contextlib
import logging
import tempfile
import threading
import urllib.error
import urllib.request
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

from rag.answer.chain import Answerer
from rag.answer.llm import EXTRACTIVE, bundled_gguf, parse_llm_spec
from rag.answer.modes import MODES
from rag.errors import PaperTalkError
from rag.ingest.pipeline import IngestReport, run_ingest
from rag.retrieve.hybrid import HybridSearcher, SearchFilters, open_searcher
from rag.settings import Settings
from ui.explore import TopicMaps
from ui.session import Conversation, Turn

log = logging.getLogger("papertalk.ui")

AnswererFactory = Callable[[Settings, str], Answerer]
UPLOAD_TYPES = (".jsonl", ".json", ".csv", ".txt")
DEFAULT_MAX_UPLOAD_MB = 50
MAX_PASSAGES = 20


@dataclass(frozen=True)
class BackendStatus:
    spec: str
    ok: bool
    detail: str


class Engine:
    """The served store and the answering backends, shared by every session of one app."""

    def __init__(
        self,
        settings: Settings,
        answerer_factory: AnswererFactory | None = None,
        *,
        max_upload_mb: int = DEFAULT_MAX_UPLOAD_MB,
    ) -> None:
        self.settings = settings
        self.max_upload_bytes = max_upload_mb * 1024 * 1024
        self.max_upload_mb = max_upload_mb
        self._factory = answerer_factory
        self._searcher: HybridSearcher | None = None
        self._lock = threading.Lock()
        self._files = tempfile.TemporaryDirectory(prefix="papertalk-ui-")
        self.maps = TopicMaps(settings.home, self.searcher)  # the topic map, similar papers

    # Store -------------------------------------------------------------------------------------
    def searcher(self) -> HybridSearcher:
        """The shared searcher, opened on first use (StoreError when there is no store yet)."""
        with self._lock:
            if self._searcher is None:
                self._searcher = open_searcher(self.settings)
            return self._searcher

    def reload(self) -> None:
        """Reopen the searcher so it sees papers added since (after an ingest)."""
        with self._lock:
            embedder = self._searcher.embedder if self._searcher is not None else None
            self._searcher = open_searcher(self.settings, embedder)

    def paper_count(self) -> int | None:
        try:
            return len(self.searcher().lexical.table.papers)
        except PaperTalkError:
            return None

    # Backends ----------------------------------------------------------------------------------
    def backends(self) -> list[str]:
        """The backends a session may choose: the configured one, the bundled one, extractive."""
        return list(dict.fromkeys([self.settings.llm, "local", EXTRACTIVE]))

    def backend_status(self, spec_text: str) -> BackendStatus:
        """Whether a backend can answer now (file present, server reachable); never raises."""
        try:
            spec = parse_llm_spec(spec_text)
            if spec.kind == EXTRACTIVE:
                return BackendStatus(
                    spec_text, True, "no generative model; answers quote abstracts"
                )
            if spec.kind == "local":
                return BackendStatus(
                    spec_text, True, f"bundled {bundled_gguf().name}, runs in this process"
                )
            if spec.kind == "gguf":
                path = Path(spec.target).expanduser()
                if path.is_file():
                    return BackendStatus(spec_text, True, f"{path.name}, runs in this process")
                return BackendStatus(spec_text, False, "GGUF file not found")
            return self._probe_openai(spec_text)
        except PaperTalkError as exc:
            return BackendStatus(spec_text, False, str(exc))

    def _probe_openai(self, spec_text: str) -> BackendStatus:
        base = (self.settings.openai_base_url or "https://api.openai.com/v1").rstrip("/")
        request = urllib.request.Request(f"{base}/models")
        if self.settings.openai_api_key is not None:
            key = self.settings.openai_api_key.get_secret_value()
            request.add_header("Authorization", f"Bearer {key}")
        try:
            with urllib.request.urlopen(request, timeout=2.0) as response:
                return BackendStatus(
                    spec_text, True, f"reachable at {base} (HTTP {response.status})"
                )
        except urllib.error.HTTPError as exc:
            ok = exc.code < 500
            hint = " (check the API key)" if exc.code in (401, 403) else ""
            return BackendStatus(spec_text, ok, f"{base} answered HTTP {exc.code}{hint}")
        except (urllib.error.URLError, OSError, ValueError) as exc:
            reason = getattr(exc, "reason", exc)
            return BackendStatus(spec_text, False, f"unreachable at {base} ({reason})")

    # Answering ---------------------------------------------------------------------------------
    def answerer(self, llm: str | None = None, passages: int | None = None) -> Answerer:
        """An Answerer for one request: a known backend, 1-20 passages, the shared searcher."""
        llm = llm or self.settings.llm
        if llm not in self.backends():
            raise PaperTalkError(f"unknown LLM backend {llm!r}: use one of the listed backends")
        settings = self.settings
        if passages is not None:
            settings = settings.with_overrides(passages=max(1, min(MAX_PASSAGES, int(passages))))
        if self._factory is not None:
            return self._factory(settings, llm)
        return Answerer(settings, searcher=self.searcher(), llm_spec=llm)

    def run_turn(
        self,
        conversation: Conversation,
        turn: Turn,
        *,
        filters: SearchFilters | None = None,
        llm: str | None = None,
        passages: int | None = None,
    ) -> Iterator[Turn]:
        """Answer `turn` (already in the conversation), yielding it after each step."""
        yield from run_turn(
            lambda: self.answerer(llm, passages), conversation, turn, filters=filters
        )

    # Files -------------------------------------------------------------------------------------
    def write_file(self, name: str, text: str) -> str:
        """A file to download (BibTeX, exported conversation), in a fresh folder of its own."""
        folder = Path(self._files.name) / uuid.uuid4().hex
        folder.mkdir()
        path = folder / name
        path.write_text(text, encoding="utf-8")
        return str(path)

    # Ingestion ---------------------------------------------------------------------------------
    def check_upload(self, path: str, upload_root: str) -> Path:
        """The uploaded file, if it is one: inside the upload folder, a known type, not too big."""
        file = Path(path).resolve()
        if not file.is_relative_to(Path(upload_root).resolve()):
            raise PaperTalkError("only files uploaded through the page can be added")
        if file.suffix.lower() not in UPLOAD_TYPES:
            raise PaperTalkError(
                f"{file.name}: unsupported file type; upload {', '.join(UPLOAD_TYPES)}"
            )
        if not file.is_file():
            raise PaperTalkError(f"{file.name}: the upload is gone; upload it again")
        if file.stat().st_size > self.max_upload_bytes:
            raise PaperTalkError(f"{file.name}: larger than the {self.max_upload_mb} MB limit")
        return file

    def ingest(
        self,
        path: str,
        upload_root: str,
        on_progress: Callable[[int, int], None] | None = None,
    ) -> IngestReport:
        """Add an uploaded paper list to the served store, then reopen the searcher."""
        file = self.check_upload(path, upload_root)
        embedder = None
        with contextlib.suppress(PaperTalkError):  # no store yet: this upload creates it
            embedder = self.searcher().embedder
        try:
            report = run_ingest(
                self.settings, [file], progress=False, embedder=embedder, on_progress=on_progress
            )
        except PaperTalkError as exc:  # name the file as the user knows it, not our temp path
            message = str(exc).replace(str(file), file.name).replace(path, file.name)
            raise PaperTalkError(message) from None
        self.reload()
        return report


def make_filters(
    status: str | None,
    author: str | None,
    title: str | None,
    paper_ids: frozenset[str] | None = None,
) -> SearchFilters | None:
    """Filters from the page's fields (blank means no filter; `paper_ids`: a topic's papers)."""
    status, author, title = (" ".join((v or "").split()) or None for v in (status, author, title))
    if not (status or author or title or paper_ids is not None):
        return None
    return SearchFilters(status=status, author=author, title=title, paper_ids=paper_ids)


def run_turn(
    make_answerer: Callable[[], Answerer],
    conversation: Conversation,
    turn: Turn,
    *,
    filters: SearchFilters | None = None,
) -> Iterator[Turn]:
    """Stream one turn: retrieved papers, text pieces, then the final answer (or an error).

    Errors never escape: a user-facing `PaperTalkError` (bad filter, store missing) or anything
    unexpected becomes `turn.error`; a failed generation keeps its retrieved papers.
    """
    try:
        if turn.mode not in MODES:
            raise PaperTalkError(f"unknown mode {turn.mode!r}: use one of {', '.join(MODES)}")
        answerer = make_answerer()
        history = conversation.history()
        papers = conversation.history_papers()
        for event in answerer.stream(
            turn.question, mode=turn.mode, history=history, history_papers=papers, filters=filters
        ):
            if event.kind == "retrieved":
                turn.hits = list(event.hits)
            elif event.kind == "token":
                turn.partial += event.text
            elif event.kind == "final":
                turn.answer = event.answer
            yield turn
    except PaperTalkError as exc:
        turn.error = str(exc)
        yield turn
    except Exception as exc:  # the page must survive anything: report, log, go on
        log.exception("answering failed")
        turn.error = f"internal error: {type(exc).__name__}: {str(exc)[:200]}"
        yield turn
    if turn.pending:  # the stream ended without a final answer
        turn.error = "no answer was produced"
        yield turn
