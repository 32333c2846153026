"""Paper text for reading (ui/text.py): abstracts' LaTeX as Unicode, Markdown emphasis found.

The cases are the markup ICML 2025 abstracts use (see data/papers.jsonl and the full list)."""

from __future__ import annotations

import json

import pytest

from rag.text.latex import latex_to_text, math_to_text
from ui.text import emphasis_spans, plain_text

from .conftest import BUNDLED, FULL_CORPUS


@pytest.mark.parametrize(
    ("source", "shown"),
    [
        ("speeds up prefill by $3.31\\times$", "speeds up prefill by 3.31×"),
        ("within $\\sim 1.3\\times$ of the optimum", "within ~1.3× of the optimum"),
        ("uses 40\\% less memory", "uses 40% less memory"),
        ("$O(\\epsilon^{-4p})$ to $\\widetilde O(\\epsilon^{-2p})$", "O(ε⁻⁴ᵖ) to Õ(ε⁻²ᵖ)"),
        ("for $p \\leq 2$ and $\\alpha, \\beta$", "for p ≤ 2 and α, β"),
        ("a set $ \\mathcal{C} $ in $\\mathbb{R}^d$", "a set 𝒞 in ℝᵈ"),
        ("the $\\ell^2$ norm, $x_{\\text{max}}$, $\\log n$", "the ℓ² norm, xₘₐₓ, log n"),
        ("$\\frac{1}{2}$ and $\\sqrt{n+1}$", "1/2 and √(n+1)"),
        ("ImageNet 512$\\times$512, F1$<$0.72, $<$$1/4$", "ImageNet 512×512, F1<0.72, <1/4"),
        ("the \\textbf{Hard} effect, {\\it locally}", "the **Hard** effect, *locally*"),
        ("code at \\url{https://github.com/x/y}", "code at https://github.com/x/y"),
        ("valued at \\$1 million, bugs from \\\\$50", "valued at $1 million, bugs from $50"),
    ],
)  # fmt: skip
def test_latex_is_shown_as_unicode(source: str, shown: str) -> None:
    assert latex_to_text(source) == shown


@pytest.mark.parametrize(
    "text",
    [
        "costs $5 and $10 per run",  # money, not math
        "from $50 bug fixes to $32000 features",
        "plain text with no markup",
        "a C:\\new\\path stays",  # unknown commands outside math are left alone
    ],
)
def test_text_that_is_not_latex_is_unchanged(text: str) -> None:
    assert latex_to_text(text) == text


def test_unknown_math_commands_lose_their_backslash() -> None:
    assert math_to_text("\\foo{x} + \\bar{y}") == "foox + ȳ"


def test_emphasis_spans() -> None:
    assert emphasis_spans("we introduce ***VersaPRM***, a") == [
        ("", "we introduce "),
        ("strong em", "VersaPRM"),
        ("", ", a"),
    ]
    assert emphasis_spans("**LEVIS** and *x*") == [("strong", "LEVIS"), ("", " and "), ("em", "x")]
    assert plain_text("named ***D***istributional ***A***dversarial") == (
        "named Distributional Adversarial"
    )
    assert plain_text('"***C**ollaborate with **E**ach **O**ther*"') == (
        '"Collaborate with Each Other"'
    )
    for text in ("2 * 3 * 4", "x* and y*", "**unclosed", "snake_case_name", ""):
        assert plain_text(text) == text


@pytest.mark.parametrize("corpus", [BUNDLED, FULL_CORPUS], ids=["bundled", "full"])
def test_no_latex_is_left_in_the_corpus(corpus) -> None:  # type: ignore[no-untyped-def]
    """Every abstract and title reads without TeX commands or math dollars once converted
    (money such as "$1 million" aside)."""
    if not corpus.exists():
        pytest.skip(f"{corpus} is not here")
    left = []
    for line in corpus.read_text(encoding="utf-8").splitlines():
        paper = json.loads(line)
        for text in (paper.get("title", ""), paper.get("abstract", "")):
            shown = latex_to_text(text)
            for command in ("\\times", "\\sim", "\\mathcal", "\\alpha", "\\%", "\\frac", "$\\"):
                if command in shown:
                    left.append((command, shown[:80]))
    assert left == []
