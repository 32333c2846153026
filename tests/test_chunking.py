"""Sentence splitting and chunking with the real model tokenizer."""

from __future__ import annotations

import json
from itertools import pairwise

import pytest

from rag.embed.base import TokenCounter, resolve_model_dir
from rag.ingest.chunking import chunk_abstract
from rag.records import embedding_text
from rag.text.sentences import split_sentences

from .conftest import BUNDLED


@pytest.fixture(scope="module")
def count_tokens() -> TokenCounter:
    return TokenCounter(resolve_model_dir("bundled"))


def test_sentences_respect_abbreviations_and_decimals() -> None:
    text = (
        "We cut TTFT by 2.6x on average, e.g. for long prompts. Prior work (Smith et al. 2024) "
        "did not. It works! Does it scale? Yes."
    )
    sentences = [text[s.start : s.end] for s in split_sentences(text)]
    assert sentences == [
        "We cut TTFT by 2.6x on average, e.g. for long prompts.",
        "Prior work (Smith et al. 2024) did not.",
        "It works!",
        "Does it scale?",
        "Yes.",
    ]


def test_a_sentence_ends_where_an_abstract_left_out_the_space() -> None:
    text = "We redefine two GTs.These kernels capture long-term behavior.Fig.3 shows 2.5x. Done."
    sentences = [text[s.start : s.end] for s in split_sentences(text)]
    assert sentences == [
        "We redefine two GTs.",
        "These kernels capture long-term behavior.Fig.3 shows 2.5x.",  # a capital, then a digit
        "Done.",
    ]


def test_short_abstract_is_one_chunk_with_exact_offsets(count_tokens: TokenCounter) -> None:
    abstract = "  We study X. It is good.  "
    chunks = chunk_abstract("p1", "Title", abstract, count_tokens=count_tokens, max_tokens=254)
    assert len(chunks) == 1
    chunk = chunks[0]
    assert abstract[chunk.start : chunk.end] == chunk.text == "We study X. It is good."


def test_chunks_fit_the_model_window_and_cover_every_sentence(count_tokens: TokenCounter) -> None:
    papers = [json.loads(line) for line in BUNDLED.read_text().splitlines()]
    for budget in (64, 128, 254):
        for paper in papers:
            abstract, title = paper["abstract"], paper["title"]
            chunks = chunk_abstract(
                paper["id"], title, abstract, count_tokens=count_tokens, max_tokens=budget
            )
            assert chunks, paper["id"]
            for chunk in chunks:
                assert abstract[chunk.start : chunk.end] == chunk.text
                assert count_tokens(embedding_text(title, chunk.text)) <= budget + 2
            # No overlap by default: chunks are ordered and disjoint, and cover all sentences.
            for a, b in pairwise(chunks):
                assert a.end <= b.start
            covered = "".join(c.text for c in chunks).replace(" ", "")
            assert covered == abstract.replace(" ", "")


def test_chunks_are_balanced(count_tokens: TokenCounter) -> None:
    abstract = " ".join(
        f"Sentence number {i} describes one more finding of the work." for i in range(30)
    )
    chunks = chunk_abstract("p", "T", abstract, count_tokens=count_tokens, max_tokens=200)
    sizes = [count_tokens(c.text) for c in chunks]
    assert len(chunks) >= 2
    assert max(sizes) - min(sizes) <= 15


def test_overlap_repeats_sentences(count_tokens: TokenCounter) -> None:
    abstract = " ".join(f"Claim {i} is stated here in a sentence." for i in range(40))
    plain = chunk_abstract("p", "T", abstract, count_tokens=count_tokens, max_tokens=100)
    overlapped = chunk_abstract(
        "p", "T", abstract, count_tokens=count_tokens, max_tokens=100, overlap_sentences=1
    )
    assert len(plain) > 1
    for a, b in pairwise(overlapped):
        assert b.start < a.end  # the last sentence of a opens b


def test_a_sentence_longer_than_the_window_is_split(count_tokens: TokenCounter) -> None:
    abstract = "word " * 600
    chunks = chunk_abstract("p", "T", abstract.strip(), count_tokens=count_tokens, max_tokens=128)
    assert len(chunks) >= 5
    assert all(count_tokens(c.text) <= 128 for c in chunks)
