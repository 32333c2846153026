"""What a quoted (extractive) answer says: the paper's name when asked which paper, each named
paper's method when asked what each does, and only quotable sentences. Pure cases use made-up
papers; end-to-end cases use the bundled store and the bundled embedding model."""

from __future__ import annotations

from typing import Any

import pytest

from rag.answer.chain import Answerer
from rag.answer.context import ContextPassage, Sentence, TermWeights, build_context
from rag.answer.intent import asks_which_paper, wants_identity
from rag.answer.modes.extractive import compose_extractive, cover_question, left_out
from rag.answer.modes.quotes import is_link, overcomes_problem
from rag.records import PaperHit, Passage
from rag.text.names import query_names
from rag.text.terms import tokenize

DFUSION_ID = "WVlEwFiDGH"
DREAMDPO_ID = "WIIfdh0GJu"
CAKE_ID = "WOyOtaO6lQ"


@pytest.fixture(scope="module")
def answerer(bundled_home, onnx_cache) -> Answerer:  # type: ignore[no-untyped-def]
    from rag.settings import Settings

    return Answerer(Settings(home=bundled_home, cache_dir=onnx_cache), llm_spec="extractive")


def _weights() -> TermWeights:
    return TermWeights(tokenize, {}, 100)


def _passage(n: int, title: str, *texts: str, score: float = 5.0) -> ContextPassage:
    hit = PaperHit(f"p{n}", title, [], "", "", 1.0)
    sentences = [Sentence(t, 10 * i, 10 * i + 9, score - i) for i, t in enumerate(texts)]
    return ContextPassage(n, hit, sentences)


# Question analysis --------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("question", "identity"),
    [
        ("Which paper trains a robot arm from videos?", True),
        ("What benchmark tests how well agents plan trips?", True),
        ("Which NeurIPS 2024 method prunes attention heads?", True),
        ("Which paper's method is fastest?", True),
        ("Which papers train robot arms from videos?", False),  # a list
        ("What does the work propose?", False),  # the work is the subject
        ("What is the method of HeadCut?", False),
        ("How does HeadCut work?", False),
    ],
)
def test_a_question_asking_which_paper(question: str, identity: bool) -> None:
    assert wants_identity(question) is identity


@pytest.mark.parametrize(
    ("question", "which_paper"),
    [
        ("Which paper trains a robot arm from videos?", True),
        ("What ICML 2025 work maps coral reefs from drone images?", True),
        ("Which study finds that wider layers forget less, and by how much?", True),
        ("Which paper's method is fastest?", True),
        ("What benchmark tests how well agents plan trips?", False),  # its benchmark
        ("Which NeurIPS 2024 method prunes attention heads?", False),  # its method
        ("Which papers train robot arms from videos?", False),  # a list
        ("What does the work propose?", False),  # the work is the subject
        ("Which dataset does HeadCut train on?", False),
    ],
)
def test_a_question_asking_which_one_paper(question: str, which_paper: bool) -> None:
    assert asks_which_paper(question) is which_paper


def test_a_venue_and_its_year_is_not_a_name() -> None:
    assert query_names("Which ICML 2025 paper uses an LLM as a judge?") == ["LLM"]
    assert query_names("Which NeurIPS'24 method beats HeadCut?") == ["HeadCut"]


@pytest.mark.parametrize(
    ("sentence", "link"),
    [
        ("Code is available at https://example.org/x.", True),
        ("The code and models will be open-sourced.", True),
        ("Our datasets and weights are made publicly available.", True),
        ("Our method is available for many tasks.", False),
        ("We release a dataset of 10k dialogues for this task.", False),
    ],
)
def test_a_sentence_about_released_code_is_not_a_claim(sentence: str, link: bool) -> None:
    assert is_link(sentence) is link


# Composing ---------------------------------------------------------------------------------------
def test_which_paper_opens_with_the_papers_name_unless_the_question_names_it() -> None:
    passages = [
        _passage(
            1,
            "HeadCut: Pruning Attention Heads at Scale",
            "Pruning attention heads by their gradient saliency keeps accuracy.",
            "Memory falls by 40% on long inputs.",
        )
    ]
    question = "Which paper prunes attention heads by gradient saliency?"
    text = compose_extractive(passages, question, _weights())
    assert text.startswith("HeadCut: Pruning attention heads by their gradient saliency")
    # Asked about a paper it names, the answer needs no label.
    named = compose_extractive(
        passages, "Which heads does HeadCut prune?", _weights(), named=["p1"]
    )
    assert not named.startswith("HeadCut:")


def test_which_paper_names_the_method_its_abstract_introduces_when_the_title_gives_none() -> None:
    def passages(*sentences: str) -> list[ContextPassage]:
        return [_passage(1, "Pruning Attention Heads at Scale", *sentences)]

    question = "Which paper prunes attention heads by their gradient saliency?"
    first = "Attention heads are pruned by their gradient saliency, and memory falls by 40%."
    named = passages(first, "This pruner, called HeadSnip, keeps accuracy on long inputs.")
    text = compose_extractive(named, question, _weights())
    assert text.startswith("HeadSnip: Attention heads are pruned"), text
    # Without a name in its title or abstract, the paper is not labelled.
    plain = compose_extractive(passages(first, "It keeps accuracy."), question, _weights())
    assert plain.startswith("Attention heads are pruned"), plain


def test_what_each_named_paper_does_quotes_each_method_and_the_sentence_after() -> None:
    passages = [
        _passage(
            1,
            "AlphaNet: Fast Caches",
            "AlphaNet is fast on long inputs.",
            "We propose AlphaNet, a cache that keeps few tokens.",
            "It evicts stale tokens by their attention mass.",
            "AlphaNet is evaluated on five tasks.",
            score=9.0,
        ),
        _passage(
            2,
            "BetaNet: Small Caches",
            "BetaNet is small.",
            "We introduce BetaNet, a compressed cache.",
            "It stores keys in a low-rank basis.",
        ),
    ]
    question = "AlphaNet and BetaNet both shrink caches. What does each one change?"
    plain = compose_extractive(passages, question, _weights(), named=["p1", "p2"])
    each = compose_extractive(passages, question, _weights(), named=["p1", "p2"], compared=True)
    for sentence in ("It evicts stale tokens by their attention mass", "low-rank basis"):
        assert sentence not in plain
        assert sentence in each
    assert "We propose AlphaNet" in each and "We introduce BetaNet" in each


@pytest.mark.parametrize(
    ("sentence", "overcomes"),
    [
        ("To address this, we propose QZ-Net.", True),
        ("For training, we overcome these limits by a closed-form bound.", True),
        ("A cheap proxy avoids this cost entirely.", True),
        # Solving a problem is what a paper does, not how it gets around one.
        ("Classic solvers are slow when solving this problem.", False),
        ("We overcome the curse of dimensionality.", False),
    ],
)
def test_a_sentence_that_says_how_a_problem_is_overcome(sentence: str, overcomes: bool) -> None:
    assert overcomes_problem(sentence) is overcomes


def test_how_a_paper_gets_around_a_problem_quotes_the_sentence_that_says_so(
    answerer: Answerer,
) -> None:
    # The simplex paper's abstract: "However, sampling simplices for adversaries is very costly.
    # To train robust VLM, we overcome these limitations by Taylor expansion and ..."
    answer = answerer.answer(
        "How does the paper on adversarial simplices for zero-shot robustness get around the "
        "cost of sampling them?"
    )
    assert not answer.refused, answer.refusal_reason
    assert "very costly" in answer.answer and "Taylor expansion" in answer.answer


def test_a_name_a_paper_only_mentions_brings_one_of_its_sentences_not_all() -> None:
    ranked = [
        (Sentence("HeadCut prunes attention heads by saliency.", 0, 9, 9.0), 1),
        *[
            (Sentence(f"Unrelated finding number {i} about graphs.", 10 * i, 10 * i + 9, 1.0), 2)
            for i in range(1, 6)
        ],
    ]
    # Every sentence of paper 2 "covers" the name the question uses (the paper mentions it).
    chosen = cover_question(
        "How does HeadCut use saliency?",
        ranked,
        _weights(),
        owned={1: {"headcut"}, 2: {"headcut", "gpu"}},
    )
    assert sum(1 for _, n in chosen if n == 2) <= 1


def test_a_question_describing_its_paper_by_its_title_is_answered_for_the_rest() -> None:
    # The title's words say which paper is meant; the answer is what the rest asks.
    passage = _passage(
        1,
        "Quartz rebasing of adapter deltas",
        "We rebase adapter deltas with quartz permutations of the adapter weights.",
        "Quartz rebasing tailors the adapter deltas to attention layers.",
        "Adapters are small modules added to a frozen model.",
        "Deltas of adapters go stale when the base model changes.",
        "It works in a label-free manner, without any gradient step.",
        score=9.0,
    )
    answer = compose_extractive(
        [passage], "Does quartz rebasing of adapter deltas need labels?", _weights()
    )
    assert "label-free" in answer


def test_a_quoted_answer_may_draw_on_sentences_that_share_no_word_with_the_question() -> None:
    text = "Cats purr. Dogs bark loudly at night. Fish swim."
    hit = PaperHit("p1", "Animals", [], "", "", 1.0, [Passage("p1-0", text, 0, len(text))])
    question = "Which animals purr?"

    def count(t: str) -> int:
        return len(t.split())

    matched = build_context(
        question, [hit], _weights(), count, budget_tokens=500, max_sentences_per_paper=5
    )
    every = build_context(
        question,
        [hit],
        _weights(),
        count,
        budget_tokens=500,
        max_sentences_per_paper=5,
        unmatched=True,
    )
    assert [s.text for s in matched[0].sentences] == ["Cats purr."]
    assert len(every[0].sentences) == 3


# End to end, bundled store ------------------------------------------------------------------------
def test_which_paper_is_answered_with_its_name(answerer: Answerer) -> None:
    answer = answerer.answer(
        "Which paper uses mask-guided self-attention fusion to make aligned images consistent?"
    )
    assert not answer.refused and answer.cited_paper_ids == [DFUSION_ID]
    assert answer.answer.startswith("D-Fusion: ")
    assert all(s.support == "supported" for s in answer.sentences)


def test_what_each_of_two_named_papers_changes_quotes_both_methods(answerer: Answerer) -> None:
    answer = answerer.answer("D-Fusion and DreamDPO both build on DPO. What does each one change?")
    assert not answer.refused
    assert sorted(answer.cited_paper_ids) == sorted([DFUSION_ID, DREAMDPO_ID])
    assert "mask-guided self-attention fusion" in answer.answer  # after D-Fusion's method
    assert "first constructs pairwise examples" in answer.answer  # after DreamDPO's
    assert "open-sourced" not in answer.answer


# A model's answer and what it leaves out ----------------------------------------------------------
def test_a_quote_counts_as_given_when_the_text_has_most_of_its_words() -> None:
    quotes = [
        ("HeadCut prunes attention heads by gradient saliency.", 1),
        ("HeadCut saves 40% of memory on long inputs.", 1),
    ]
    said = ["HeadCut removes attention heads ranked by gradient saliency [1]."]
    assert left_out(said, quotes, _weights()) == [quotes[1]]
    assert left_out([], quotes, _weights()) == quotes
    # A sentence drawn from a longer quote restates it, though it leaves most of its words out.
    long = ("Across many datasets, sizes and settings, HeadCut saves 40% of memory on inputs.", 1)
    assert left_out(["HeadCut saves 40% of memory [1]."], [long], _weights()) == []
    # A figure is a fact of its own: a sentence without it does not give it.
    assert left_out(["HeadCut saves memory on inputs [1]."], [long], _weights()) == [long]


def _scripted(answerer: Answerer, reply: str) -> Answerer:
    from langchain_core.language_models.fake_chat_models import FakeListChatModel

    return Answerer(
        answerer.settings, searcher=answerer.searcher, llm=FakeListChatModel(responses=[reply] * 4)
    )


def _streamed(model: Answerer, question: str) -> tuple[str, Any]:
    shown, final = "", None
    for event in model.stream(question):
        if event.kind == "token":
            shown += event.text
        elif event.kind == "final":
            final = event.answer
    return shown, final


def test_what_a_model_leaves_out_is_quoted_after_its_answer(answerer: Answerer) -> None:
    question = "How much does Cake cut time to first token?"
    partial = "Cake balances KV cache computation and loading with a bidirectional schedule [1]."
    shown, answer = _streamed(_scripted(answerer, partial), question)
    assert not answer.refused and answer.cited_paper_ids == [CAKE_ID]
    assert answer.answer.startswith("Cake balances KV cache computation")
    assert "2.6× reduction in Time to First Token" in answer.answer  # the amount, quoted
    assert "2.6× reduction" in shown  # streamed like the model's own sentences
    assert all(s.support == "supported" for s in answer.sentences)
    # A model answer that already states it gets no quote added.
    full = (
        "Cake achieves on average 2.6× reduction in Time to First Token (TTFT) compared to "
        "compute-only and I/O-only methods [1]."
    )
    _, answer = _streamed(_scripted(answerer, full), question)
    assert len(answer.sentences) == 1 and "2.6×" in answer.answer


def test_a_sentence_the_model_repeats_is_shown_once(answerer: Answerer) -> None:
    from rag.answer.safety import guard_generated

    said = (
        "Cake loads part of the cache [1]. Cake loads part of the cache. [1] It computes the rest."
    )
    kept = guard_generated(said, lambda text: set(text.lower().split()), {"cake", "computes"})
    assert kept.count("Cake loads part of the cache") == 1 and "It computes the rest." in kept
    repeated = "Cake balances KV cache computation and loading with a bidirectional schedule [1]. "
    shown, answer = _streamed(
        _scripted(answerer, repeated * 3), "How does Cake decide what to load?"
    )
    assert shown.count("bidirectional schedule") == 1
    assert answer.answer.count("bidirectional schedule") == 1


def test_what_a_model_repeats_of_its_prompt_is_never_shown(answerer: Answerer) -> None:
    question = "How does Cake decide what to load?"
    reply = (
        f"Question: {question} Answer with citations: Cake balances KV cache computation and "
        "loading with a bidirectional schedule [1]."
    )
    shown, answer = _streamed(_scripted(answerer, reply), question)
    for text in (shown, answer.answer):
        assert "Question" not in text and "Answer with citations" not in text, text
        assert "bidirectional schedule" in text
    assert not answer.refused and answer.cited_paper_ids == [CAKE_ID]
