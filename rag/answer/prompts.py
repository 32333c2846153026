"""Prompt templates live as files in `prompts/` (shipped in the wheel as `rag.prompts`); this
module loads them by name, checks their placeholders and builds LangChain chat prompts."""

from __future__ import annotations

import string
from functools import cache
from importlib.resources import files
from pathlib import Path

from langchain_core.prompts import ChatPromptTemplate

from rag.errors import PaperTalkError

PROMPTS_DIR = Path(str(files("rag.prompts")))

# Every prompt and the placeholders it must contain (no more, no fewer).
REQUIRED_PLACEHOLDERS: dict[str, set[str]] = {
    "answer_system": set(),
    "answer_user": {"passages", "question"},
    "compare_user": {"passages", "question", "papers"},
    "summarize_user": {"passages", "question"},
    "condense": {"history", "question"},
    "baseline_rag": {"context", "question"},
}

# Chat prompts by task: (system prompt file or None, user prompt file).
CHAT_PROMPTS: dict[str, tuple[str | None, str]] = {
    "answer": ("answer_system", "answer_user"),
    "compare": ("answer_system", "compare_user"),
    "summarize": ("answer_system", "summarize_user"),
    "condense": (None, "condense"),
    "baseline": (None, "baseline_rag"),
}

# Retrieved text is data: a prompt that shows passages encloses them in this element (the
# passages themselves are escaped by rag.answer.context.format_passages, so they cannot close it).
PASSAGES_BLOCK = "<passages>\n{passages}\n</passages>"


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
    if "passages" in placeholders(template) and PASSAGES_BLOCK not in template:
        raise PaperTalkError(
            f"prompt {path.name} must show retrieved text as {PASSAGES_BLOCK!r} (delimited data)"
        )
    return template.strip() + "\n"


def render(name: str, **values: str) -> str:
    return load_prompt(name).format(**values)


def chat_prompt(task: str) -> ChatPromptTemplate:
    """The chat prompt of a task ('answer', 'compare', 'summarize', 'condense', 'baseline')."""
    if task not in CHAT_PROMPTS:
        raise PaperTalkError(f"unknown prompt task {task!r}")
    system, user = CHAT_PROMPTS[task]
    messages = [("system", load_prompt(system))] if system else []
    messages.append(("human", load_prompt(user)))
    return ChatPromptTemplate.from_messages(messages)
