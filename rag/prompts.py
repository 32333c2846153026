"""Prompt templates live as files in `prompts/`; this module loads them by name and checks them."""

from __future__ import annotations

import string
from functools import cache
from pathlib import Path

from rag.errors import PaperTalkError

PROMPTS_DIR = Path(__file__).resolve().parents[1] / "prompts"

# Every prompt and the placeholders it must contain (no more, no fewer).
REQUIRED_PLACEHOLDERS: dict[str, set[str]] = {
    "answer_system": set(),
    "answer_user": {"passages", "question"},
    "compare_user": {"passages", "question", "papers"},
    "summarize_user": {"passages", "question"},
    "condense": {"history", "question"},
    "baseline_rag": {"context", "question"},
}


def placeholders(template: str) -> set[str]:
    return {name for _, name, _, _ in string.Formatter().parse(template) if name}


@cache
def load_prompt(name: str) -> str:
    """The template `prompts/<name>.txt`, checked against its required placeholders."""
    path = PROMPTS_DIR / f"{name}.txt"
    try:
        template = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise PaperTalkError(f"prompt file missing: {path}") from exc
    expected = REQUIRED_PLACEHOLDERS.get(name)
    if expected is not None and placeholders(template) != expected:
        raise PaperTalkError(
            f"prompt {path.name} has placeholders {sorted(placeholders(template))}, "
            f"expected {sorted(expected)}"
        )
    return template.strip() + "\n"


def render(name: str, **values: str) -> str:
    return load_prompt(name).format(**values)
