"""The Chroma store of chunk vectors: embedded on disk by default, or a Chroma server.

One collection per (embedding model, chunking) pair, so changing either never mixes vectors.
Every chunk carries its paper's metadata and the hash of the paper's content, which is how
ingestion tells added / updated / unchanged papers apart and repairs interrupted runs.
"""

from __future__ import annotations

import hashlib
import logging
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urlparse

import numpy as np

from rag.embed.base import model_identity, resolve_model_dir
from rag.errors import StoreError
from rag.settings import Settings

CHUNKER_VERSION = 1
COLLECTION_PREFIX = "papers"
_PAGE = 5000  # below Chroma's maximum batch size (5,461)
# Chroma's HNSW search is approximate, and which true neighbours it misses differs from one
# process to the next on the same store: asked for the 40 nearest chunks of a question, a fresh
# process missed one at cosine 0.316 and returned one at 0.303 instead in 2 of 5 runs, so the
# same question got different answers after a restart. Asking for OVERFETCH times as many and
# keeping the nearest by their (exact) distances returned the same 40 in 10 of 10 runs.
OVERFETCH = 4
# A Chroma server that accepts connections but never answers must not hang a question forever
# (chromadb's own HTTP client waits without limit). An upsert of one page takes a few seconds.
SERVER_TIMEOUT_S = 60.0
SERVER_CONNECT_TIMEOUT_S = 5.0

logging.getLogger("chromadb").setLevel(logging.ERROR)


@dataclass(frozen=True)
class StoreLayout:
    """What identifies a collection: the embedding model and the chunking settings."""

    model: str
    chunk_tokens: int
    overlap_sentences: int

    @classmethod
    def for_settings(cls, settings: Settings) -> StoreLayout:
        """The layout of the collection that `settings` (embedding model, chunking) point at."""
        return cls(
            model_identity(resolve_model_dir(settings.embedding_model)),
            settings.chunk_tokens,
            settings.chunk_overlap_sentences,
        )

    @property
    def collection_name(self) -> str:
        key = f"{self.model}|{self.chunk_tokens}|{self.overlap_sentences}|v{CHUNKER_VERSION}"
        digest = hashlib.sha256(key.encode()).hexdigest()[:10]
        slug = "".join(c if c.isalnum() else "-" for c in self.model.lower())[:40].strip("-")
        return f"{COLLECTION_PREFIX}-{slug}-{digest}"

    def as_metadata(self) -> dict[str, Any]:
        return {
            "embedding_model": self.model,
            "chunk_tokens": self.chunk_tokens,
            "chunk_overlap_sentences": self.overlap_sentences,
            "chunker_version": CHUNKER_VERSION,
        }


@dataclass(frozen=True)
class StoredChunk:
    id: str
    document: str
    metadata: dict[str, Any]


def _client_settings():  # type: ignore[no-untyped-def]
    from chromadb.config import Settings as ChromaSettings  # deferred: chromadb is slow to import

    return ChromaSettings(anonymized_telemetry=False, allow_reset=False)


def describe_location(settings: Settings) -> str:
    return settings.chroma_url or str(settings.home / "chroma")


def make_client(settings: Settings):  # type: ignore[no-untyped-def]
    """A Chroma client: `HttpClient` for `chroma_url`, else `PersistentClient` under home."""
    import chromadb  # deferred: slow to import; commands that never open a store skip it

    if settings.chroma_url:
        url = urlparse(settings.chroma_url)
        port = url.port or (443 if url.scheme == "https" else 8000)
        try:
            client = chromadb.HttpClient(
                host=url.hostname or "127.0.0.1",
                port=port,
                ssl=url.scheme == "https",
                settings=_client_settings(),
            )
            _limit_waits(client)
            client.heartbeat()
        except Exception as exc:
            message = describe_failure(settings.chroma_url, exc)
            if not is_connection_error(exc):  # something answered, but not a Chroma server
                message = f"cannot reach the Chroma server at {settings.chroma_url}: {_short(exc)}"
            raise StoreError(message) from exc
        return client
    path = settings.home / "chroma"
    try:
        path.mkdir(parents=True, exist_ok=True)
        return chromadb.PersistentClient(path=str(path), settings=_client_settings())
    except Exception as exc:
        raise StoreError(f"cannot open the store at {path}: {_short(exc)}") from exc


def _limit_waits(client: Any) -> None:
    """Give the HTTP client's requests a timeout (chromadb sets none)."""
    import httpx

    session = getattr(getattr(client, "_server", None), "_session", None)
    if isinstance(session, httpx.Client):
        session.timeout = httpx.Timeout(SERVER_TIMEOUT_S, connect=SERVER_CONNECT_TIMEOUT_S)


def _short(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()
    return text[0][:200] if text else type(exc).__name__


def _transport_error(exc: BaseException) -> BaseException | None:
    """The transport failure (refused, reset, closed, timed out) behind `exc`, if any: chromadb
    re-raises some of them as a plain ValueError."""
    import httpx

    seen: BaseException | None = exc
    for _ in range(5):
        if seen is None:
            return None
        if isinstance(seen, httpx.TransportError | ConnectionError):
            return seen
        seen = seen.__cause__ or seen.__context__
    return None


def is_connection_error(exc: BaseException) -> bool:
    """A transport failure talking to a Chroma server: refused, reset, closed, timed out."""
    return _transport_error(exc) is not None


def describe_failure(location: str, exc: BaseException) -> str:
    """One line for a failed store operation; an unreachable server says so and names its URL."""
    import httpx

    transport = _transport_error(exc)
    if isinstance(transport, httpx.TimeoutException):
        return (
            f"the Chroma server at {location} did not answer in time "
            f"({type(transport).__name__}); check that it is running and not overloaded, "
            "then try again"
        )
    if transport is not None:
        return (
            f"cannot reach the Chroma server at {location} ({_short(transport)}); "
            "check that it is running, then try again"
        )
    return f"the store at {location} failed: {_short(exc)}"


class PaperStore:
    """Chunk vectors and metadata in one Chroma collection."""

    def __init__(self, client: Any, collection: Any, layout: StoreLayout, location: str) -> None:
        self._client = client
        self._collection = collection
        self.layout = layout
        self.location = location

    @classmethod
    def open(cls, settings: Settings, layout: StoreLayout, *, create: bool) -> PaperStore:
        """Open the collection for `layout`; with `create=False` a missing one is an error."""
        client = make_client(settings)
        location = describe_location(settings)
        name = layout.collection_name
        try:
            if create:
                collection = client.get_or_create_collection(
                    name,
                    metadata=layout.as_metadata(),
                    configuration={"hnsw": {"space": "cosine"}},
                    embedding_function=None,
                )
            else:
                existing = [c.name for c in client.list_collections()]
                if name not in existing:
                    raise StoreError(_missing_collection_message(location, existing))
                collection = client.get_collection(name, embedding_function=None)
        except StoreError:
            raise
        except Exception as exc:
            if is_connection_error(exc):
                raise StoreError(describe_failure(location, exc)) from exc
            raise StoreError(f"cannot open the store at {location}: {_short(exc)}") from exc
        return cls(client, collection, layout, location)

    @property
    def name(self) -> str:
        return self.layout.collection_name

    def count(self) -> int:
        return int(self._call(self._collection.count))

    def iter_chunks(self, *, documents: bool = True) -> Iterator[StoredChunk]:
        """Every stored chunk with its metadata (and document), in pages."""
        include = ["metadatas", "documents"] if documents else ["metadatas"]
        offset = 0
        while True:
            page = self._call(self._collection.get, include=include, limit=_PAGE, offset=offset)
            ids = page["ids"]
            if not ids:
                return
            docs = page.get("documents") or [""] * len(ids)
            for chunk_id, doc, meta in zip(ids, docs, page["metadatas"], strict=True):
                yield StoredChunk(chunk_id, doc or "", dict(meta or {}))
            if len(ids) < _PAGE:
                return
            offset += len(ids)

    def iter_ids(self) -> Iterator[str]:
        """Every stored chunk id (no metadata: the cheapest full scan)."""
        offset = 0
        while True:
            page = self._call(self._collection.get, include=[], limit=_PAGE, offset=offset)
            yield from page["ids"]
            if len(page["ids"]) < _PAGE:
                return
            offset += len(page["ids"])

    def upsert(
        self,
        ids: Sequence[str],
        vectors: np.ndarray,
        documents: Sequence[str],
        metadatas: Sequence[dict[str, Any]],
    ) -> None:
        for start in range(0, len(ids), _PAGE):
            end = start + _PAGE
            self._call(
                self._collection.upsert,
                ids=list(ids[start:end]),
                embeddings=vectors[start:end],
                documents=list(documents[start:end]),
                metadatas=list(metadatas[start:end]),
            )

    def delete(self, ids: Sequence[str]) -> None:
        for start in range(0, len(ids), _PAGE):
            self._call(self._collection.delete, ids=list(ids[start : start + _PAGE]))

    def query(
        self, vector: np.ndarray, n: int, where: dict[str, Any] | None = None
    ) -> list[tuple[str, float]]:
        """Nearest chunks to `vector`: (chunk id, cosine similarity), best first (see OVERFETCH;
        equally near chunks by id)."""
        result = self._call(
            self._collection.query,
            query_embeddings=[vector],
            n_results=n * OVERFETCH,
            where=where,
            include=["distances"],
        )
        ids = result["ids"][0]
        distances = result["distances"][0]
        found = [(cid, 1.0 - float(d)) for cid, d in zip(ids, distances, strict=True)]
        return sorted(found, key=lambda item: (-item[1], item[0]))[:n]

    def vectors(self, ids: Sequence[str]) -> dict[str, np.ndarray]:
        """The stored embedding of each chunk id (ids not in the store are left out)."""
        out: dict[str, np.ndarray] = {}
        for start in range(0, len(ids), _PAGE):
            result = self._call(
                self._collection.get, ids=list(ids[start : start + _PAGE]), include=["embeddings"]
            )
            for cid, vector in zip(result["ids"], result["embeddings"], strict=True):
                out[cid] = np.asarray(vector, dtype=np.float32)
        return out

    def _call(self, fn: Any, *args: Any, **kwargs: Any) -> Any:
        """Run one Chroma operation (a bound method of the collection); failures become
        one-line StoreErrors.

        The client object outlives a server restart (every call is a fresh HTTP request), so a
        failed call needs no reconnect: the next one works once the server is back. A collection
        that went missing (the server restarted on a store that was rebuilt) is looked up again
        by name once.
        """
        try:
            return fn(*args, **kwargs)
        except Exception as exc:
            if not _is_not_found(exc) or not self._refresh_collection():
                raise StoreError(describe_failure(self.location, exc)) from exc
        fn = getattr(self._collection, fn.__name__)
        try:
            return fn(*args, **kwargs)
        except Exception as exc:
            raise StoreError(describe_failure(self.location, exc)) from exc

    def _refresh_collection(self) -> bool:
        """Look the collection up again by name; False when it is not there (or no server)."""
        try:
            self._collection = self._client.get_collection(self.name, embedding_function=None)
        except Exception:
            return False
        return True

    def size_bytes(self) -> int | None:
        """Disk used by an embedded store (None for a server)."""
        if self.location.startswith("http"):
            return None
        root = Path(self.location)
        return sum(p.stat().st_size for p in root.rglob("*") if p.is_file())


def _is_not_found(exc: BaseException) -> bool:
    from chromadb.errors import NotFoundError  # deferred with chromadb

    return isinstance(exc, NotFoundError) or "does not exist" in str(exc)


def _missing_collection_message(location: str, existing: list[str]) -> str:
    ours = [name for name in existing if name.startswith(COLLECTION_PREFIX + "-")]
    if not ours:
        return f"no papers ingested yet at {location}: run `papertalk ingest` first"
    return (
        f"the store at {location} was built with other embedding or chunking settings "
        f"({', '.join(ours)}); run `papertalk ingest` with the current settings, "
        "or use the settings that built it"
    )
