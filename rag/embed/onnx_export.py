"""Export a sentence-transformers model (BERT-like, mean pooling, L2 norm) to ONNX, once.

torch and transformers are imported only here, inside `export_onnx`; pooling and normalisation
go inside the graph, which is fused with the ONNX Runtime transformer optimizer and optionally
quantized to int8. `rag.embed.onnx_runtime` runs the file.
"""

from __future__ import annotations

import contextlib
import inspect
import json
import logging
import os
import re
import uuid
import warnings
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from rag.embed.base import model_identity

# Bump when the exported graph changes (inputs, pooling, fusion or quantization settings), so
# that files written by an older version of this module are never reused.
_EXPORT_VERSION = 1
_OPSET = 17
OUTPUT_NAME = "sentence_embedding"
_WEIGHT_SUFFIXES = (".safetensors", ".bin", ".pt", ".pth", ".h5", ".msgpack", ".onnx")
_SUPPORTED_MODULES = {"Transformer", "Pooling", "Normalize"}


def read_json(path: Path) -> dict[str, Any]:
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


def transformer_dir_of(model_dir: Path) -> Path:
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
        config = read_json(model_dir / str(module.get("path", "")) / "config.json")
        modes = {k for k, v in config.items() if k.startswith("pooling_mode_") and v is True}
        mode = config.get("pooling_mode")  # newer sentence-transformers spell it this way
        if modes - {"pooling_mode_mean_tokens"} or (mode is not None and mode != "mean"):
            raise ValueError(f"{model_dir}: only mean pooling is supported, got {config}")
    st_config_path = model_dir / "config_sentence_transformers.json"
    if st_config_path.is_file() and read_json(st_config_path).get("default_prompt_name"):
        raise ValueError(f"{model_dir}: models with a default prompt are not supported")
    transformer_dir = model_dir / str(modules[0].get("path", ""))
    for name in ("config.json", "tokenizer.json"):
        if not (transformer_dir / name).is_file():
            raise ValueError(f"{transformer_dir}: {name} is missing")
    return transformer_dir


def onnx_model_path(model_dir: Path, cache_dir: Path, quantize: bool) -> Path:
    """Where the exported ONNX file for ``model_dir`` lives inside ``cache_dir``.

    The name holds the model directory's name, its identity (`rag.embed.base.model_identity`),
    the export version and ``int8`` or ``fp32``: a changed
    model (or a change to the export format) never reuses a stale file. Nothing is created.
    """
    model_dir = Path(model_dir)
    stem = re.sub(r"[^A-Za-z0-9._-]+", "_", model_dir.resolve().name) or "model"
    transformer_dir_of(model_dir)  # a model this export cannot handle fails here, with a reason
    kind = "int8" if quantize else "fp32"
    fingerprint = f"{model_identity(model_dir.resolve())}-v{_EXPORT_VERSION}-opset{_OPSET}"
    return Path(cache_dir) / f"{stem}-{fingerprint}-{kind}.onnx"


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

    import torch  # deferred: torch and transformers only for the one-time export
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
    batch = pad_batch(encodings, pad_id=pad_id_of(transformer_dir, tokenizer))
    example = tuple(torch.from_numpy(batch[name]) for name in input_names)

    dynamic_axes: dict[str, dict[int, str]] = {
        name: {0: "batch", 1: "sequence"} for name in input_names
    }
    dynamic_axes[OUTPUT_NAME] = {0: "batch"}
    with warnings.catch_warnings(), torch.no_grad():
        warnings.simplefilter("ignore")
        torch.onnx.export(
            _Encoder(model),
            example,
            str(out_path),
            input_names=input_names,
            output_names=[OUTPUT_NAME],
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
    from onnxruntime.transformers.optimizer import optimize_model  # type: ignore[import-untyped]

    model_dir = Path(model_dir)
    out_path = Path(out_path)
    transformer_dir = transformer_dir_of(model_dir)
    config = read_json(transformer_dir / "config.json")
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


def pad_id_of(transformer_dir: Path, tokenizer: Any) -> int:
    """The padding token id, as the Hugging Face tokenizer would use it."""
    pad_token = "[PAD]"
    for name in ("tokenizer_config.json", "special_tokens_map.json"):
        path = transformer_dir / name
        if not path.is_file():
            continue
        value = read_json(path).get("pad_token")
        if isinstance(value, dict):
            value = value.get("content")
        if isinstance(value, str):
            pad_token = value
            break
    pad_id = tokenizer.token_to_id(pad_token)
    return 0 if pad_id is None else int(pad_id)


def pad_batch(encodings: Sequence[Any], pad_id: int) -> dict[str, np.ndarray]:
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
