"""Settings come from one place and are documented; prompts are files with their placeholders."""

from __future__ import annotations

from pathlib import Path

import pytest

from rag.answer.prompts import PROMPTS_DIR, REQUIRED_PLACEHOLDERS, load_prompt, placeholders
from rag.errors import PaperTalkError
from rag.settings import Settings, load_settings

README = Path(__file__).resolve().parents[1] / "README.md"


def test_precedence_defaults_env_flags(monkeypatch: pytest.MonkeyPatch) -> None:
    assert Settings().top_k == 5
    monkeypatch.setenv("PAPERTALK_TOP_K", "7")
    assert Settings().top_k == 7
    assert load_settings(top_k=9).top_k == 9
    assert load_settings(top_k=None).top_k == 7  # an unset flag keeps the env value


def test_openai_variables_have_standard_aliases(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_BASE_URL", "http://127.0.0.1:1/v1")
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    settings = Settings()
    assert settings.openai_base_url == "http://127.0.0.1:1/v1"
    assert settings.openai_api_key is not None
    assert settings.openai_api_key.get_secret_value() == "sk-test"
    assert "sk-test" not in repr(settings)


def test_bad_values_are_rejected(monkeypatch: pytest.MonkeyPatch) -> None:
    with pytest.raises(ValueError):
        Settings(chroma_url="ftp://x")
    with pytest.raises(ValueError):
        Settings(chunk_tokens=5)
    with pytest.raises(ValueError):
        Settings(not_a_setting=1)  # type: ignore[call-arg]


def test_every_setting_is_described_and_documented() -> None:
    readme = README.read_text()
    for name, field in Settings.model_fields.items():
        assert field.description, f"{name} has no description"
        assert f"`PAPERTALK_{name.upper()}`" in readme, f"README does not document {name}"


def test_prompt_files_have_exactly_their_placeholders() -> None:
    for name, expected in REQUIRED_PLACEHOLDERS.items():
        template = load_prompt(name)
        assert placeholders(template) == expected
    assert {p.stem for p in PROMPTS_DIR.glob("*.txt")} == set(REQUIRED_PLACEHOLDERS)


def test_a_broken_prompt_is_reported(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import rag.answer.prompts as prompts

    (tmp_path / "answer_user.txt").write_text("Only {question}")
    monkeypatch.setattr(prompts, "PROMPTS_DIR", tmp_path)
    prompts.load_prompt.cache_clear()
    try:
        with pytest.raises(PaperTalkError, match="placeholders"):
            prompts.load_prompt("answer_user")
    finally:
        prompts.load_prompt.cache_clear()
