"""The embedding backend for a settings object (`Settings.embedding_backend`)."""

from __future__ import annotations

from rag.embed.base import Embedder, SentenceTransformerEmbedder, resolve_model_dir
from rag.embed.onnx_runtime import OnnxEmbedder
from rag.errors import PaperTalkError
from rag.settings import Settings


def make_embedder(settings: Settings) -> Embedder:
    """The embedding backend the settings ask for (nothing is loaded until first use)."""
    model_dir = resolve_model_dir(settings.embedding_model)
    if settings.embedding_backend == "sentence-transformers":
        if settings.device == "cuda":
            import torch  # deferred: only to check for a GPU on request

            if not torch.cuda.is_available():
                raise PaperTalkError("device=cuda but torch sees no CUDA GPU")
        return SentenceTransformerEmbedder(
            model_dir, device=settings.device, batch_size=settings.embedding_batch_size
        )

    providers = ["CPUExecutionProvider"]
    if settings.device == "cuda":
        import onnxruntime  # deferred: heavy runtime, only to check for a GPU

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
