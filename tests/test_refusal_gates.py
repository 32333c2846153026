"""The gates that decide whether the papers state what a question asks for: a named instance of a
kind ("which datasets"), a measured value ("what top-1 accuracy"), and names written in another
form. General cases with made-up papers, then the real bundled store and models."""

from __future__ import annotations

from typing import Any

import pytest

from rag.answer.chain import Answerer
from rag.answer.context import ContextPassage, Sentence, TermWeights
from rag.answer.refusal import asked_phrases, check_answerable, measured_things, named_kinds
from rag.records import PaperHit
from rag.text.names import query_names
from rag.text.terms import tokenize


def _weights() -> TermWeights:
    return TermWeights(tokenize, {}, 100)


def _verdict(question: str, abstract: str, title: str = "Fast retrieval with FooNet") -> Any:
    hit = PaperHit("p1", title, [], "", "", 1.0)
    passage = ContextPassage(1, hit, [Sentence(abstract, 0, len(abstract), 1.0)])
    return check_answerable(
        question,
        [passage],
        _weights(),
        min_coverage=0.0,
        subject_names=["FooNet"],
        abstracts={"p1": abstract},
        subject_papers=["p1"],
    )


@pytest.mark.parametrize(
    ("question", "kinds"),
    [
        ("Which retrieval benchmarks is FooNet evaluated on?", [("retrieval", "benchmarks")]),
        ("On which datasets do they test it?", [("", "datasets")]),
        ("What large language model does FooNet call?", [("large", "language model")]),
        ("Which datasets and encoders are used?", [("", "datasets")]),
        # The kind is the subject of its own verb: the question asks which paper.
        ("Which benchmark measures whether agents can cheat?", []),
        # The question word asks for a paper; the kind comes later.
        ("Which paper routes LLM queries to a cheaper model?", []),
        ("What is the dataset size?", []),
    ],
)
def test_which_named_kind_a_question_asks_for(question: str, kinds: list[tuple[str, str]]) -> None:
    assert named_kinds(question) == kinds


def test_a_kind_the_abstract_only_counts_is_not_named() -> None:
    question = "Which retrieval benchmarks is FooNet evaluated on?"
    vague = _verdict(question, "FooNet is fast. Experiments on several retrieval benchmarks help.")
    assert not vague.answerable and "name the benchmarks" in vague.reason
    named = _verdict(question, "FooNet is fast. Experiments on SciDocs and TREC-COVID show gains.")
    assert named.answerable, named.reason


def test_a_short_form_or_the_papers_own_name_is_not_an_instance() -> None:
    question = "Which graph benchmarks is FooNet evaluated on?"
    abstract = (
        "We study knowledge graphs (KGs). FooNet reasons over KGs with a trie, BarIndex. "
        "Experiments on several graph benchmarks show that FooNet generalizes to unseen KGs."
    )
    verdict = _verdict(question, abstract, title="BarIndex: reasoning over graphs")
    assert not verdict.answerable and "name the benchmarks" in verdict.reason


@pytest.mark.parametrize(
    ("question", "measured"),
    [
        ("What top-1 accuracy does FooNet reach on ImageNet?", ["top-1 accuracy"]),
        ("What speedup does FooNet give?", ["speedup"]),
        ("Which score function does FooNet use?", []),  # the head noun is "function"
        ("Which encoder does FooNet use?", []),
    ],
)
def test_what_measured_value_a_question_asks_for(question: str, measured: list[str]) -> None:
    assert measured_things(question) == measured


def test_a_measured_value_must_be_stated_as_a_number_with_the_measure() -> None:
    question = "What top-1 accuracy does FooNet reach?"
    unstated = _verdict(question, "FooNet improves top-1 accuracy on four datasets.")
    assert not unstated.answerable and "top-1 accuracy" in unstated.reason
    stated = _verdict(question, "FooNet reaches 71.2% top-1 accuracy on ImageNet.")
    assert stated.answerable, stated.reason


def test_a_descriptive_compound_is_the_name_it_is_built_on() -> None:
    names = query_names("Does an LLM-driven agent beat a Mamba-based one, as D-Fusion claims?")
    assert names == ["LLM", "Mamba", "D-Fusion"]


def test_a_name_written_without_its_hyphen_is_mentioned() -> None:
    question = "What perplexity does FooNet reach on FooText-2?"
    verdict = _verdict(question, "FooNet reaches a perplexity of 6.6 on footext2.")
    assert verdict.answerable, verdict.reason
    absent = _verdict(question, "FooNet reaches a perplexity of 6.6 on footext3.")
    assert not absent.answerable and "FooText-2" in absent.reason


def test_a_degree_adverb_ends_the_asked_phrase() -> None:
    assert asked_phrases("Which training examples best match the target?") == ["training examples"]


# The real bundled store and models -----------------------------------------------------------
@pytest.fixture(scope="module")
def answerer(bundled_home, onnx_cache) -> Answerer:  # type: ignore[no-untyped-def]
    from rag.settings import Settings

    return Answerer(Settings(home=bundled_home, cache_dir=onnx_cache), llm_spec="extractive")


def test_datasets_an_abstract_does_not_name_are_refused_with_the_reason(answerer) -> None:  # type: ignore[no-untyped-def]
    answer = answerer.answer("Which datasets is FIML evaluated on?")
    assert answer.refused, answer.answer
    assert "name the datasets" in answer.refusal_reason


def test_a_benchmark_the_abstract_names_is_answered(answerer) -> None:  # type: ignore[no-untyped-def]
    answer = answerer.answer("Which benchmark does MVA improve by 1.2 percentage points?")
    assert not answer.refused, answer.refusal_reason
    assert "MMLU" in answer.answer
