"""Prompt templates live as files in `prompts/` (shipped in the wheel as `rag.prompts`); this
module loads them by name, checks their placeholders and builds LangChain chat prompts."""

from __future__ import annotations

import re
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


# A prompt's line "Label: {value}" (its label and the placeholder after it on the line).
_LABELLED = re.compile(r"^\s*([^{}\n:]{1,60}:)\s*\{")


@cache
def prompt_echoes() -> tuple[tuple[str, ...], tuple[str, ...]]:
    """What of the prompts a small model may write back into its answer, from the prompt files
    themselves: the labels that introduce a value filled in ("Question:", whose sentence repeats
    the question), and the instructions' own lines and sentences ("Answer with citations:"), each
    at least three words or ending with a colon."""
    labels: set[str] = set()
    instructions: set[str] = set()
    for system, user in CHAT_PROMPTS.values():
        for name in (system, user):
            if name is None:
                continue
            for line in load_prompt(name).splitlines():
                if line.strip() in ("", "<passages>", "</passages>"):
                    continue
                labelled = _LABELLED.match(line)
                if labelled:
                    labels.add(labelled.group(1).strip())
                    continue
                literal = line.split("{", 1)[0].strip()
                for sentence in re.split(r"(?<=[.!?])\s+", literal) if literal else []:
                    if sentence.endswith(":") or len(sentence.split()) >= 3:
                        instructions.add(sentence)
    return tuple(sorted(labels)), tuple(sorted(instructions, key=len, reverse=True))


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
