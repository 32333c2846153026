"""Exploring a whole conference: who has the most papers, which papers have the most authors,
and topics so broad that a large share of the collection is about them (real stores, bundled
models; the full-corpus tests are skipped when ../shared is absent)."""

from __future__ import annotations

import json
import re
from collections import Counter
from pathlib import Path

import pytest

from rag.answer.chain import Answerer
from rag.answer.intent import (
    asked_length,
    asks_authors_average,
    asks_largest_teams,
    both_topics,
    open_request,
    ranked_topic,
    similar_asked,
    summary_topic,
    wants_ranking,
    wants_summary,
)
from rag.explore.similar import similar_papers
from rag.explore.vectors import paper_vectors
from rag.settings import Settings
from rag.text.authors import fold

from .conftest import CAKE_ID, FULL_CORPUS


@pytest.mark.parametrize(
    ("question", "ranking", "teams"),
    [
        ("Who has the most papers?", True, False),
        ("Which authors have the most papers at the conference?", True, False),
        ("Who published the most oral papers?", True, False),
        ("Who are the most prolific authors?", True, False),
        ("List the top 10 authors", True, False),
        ("Which paper has the most authors?", True, True),
        ("What papers have the largest author lists?", True, True),
        ("Which paper has the most citations?", False, False),  # not recorded: refused
        ("Who has the most cited papers?", False, False),
        ("Who wrote FooNet?", False, False),
        ("Which papers use the most GPUs?", False, False),
        ("What did Jane Doe publish?", False, False),
    ],
)
def test_questions_that_rank_authors_or_papers(question: str, ranking: bool, teams: bool) -> None:
    assert wants_ranking(question) is ranking
    assert asks_largest_teams(question) is teams


def test_the_topic_of_a_ranking_question() -> None:
    assert ranked_topic("Who has the most papers on graph neural networks?") == (
        "graph neural networks"
    )
    assert ranked_topic("Who has the most papers about protein design at ICML 2025?") == (
        "protein design"
    )
    assert ranked_topic("Who has the most papers at ICML 2025?") == ""
    assert ranked_topic("Who has the most papers in the collection?") == ""


def _expected_counts(papers: dict[str, dict]) -> Counter[str]:
    counts: Counter[str] = Counter()
    for meta in papers.values():
        counts.update({fold(a) for a in meta["authors"]})
    return counts


def test_the_paper_with_the_most_authors_is_ranked_first(bundled_settings: Settings) -> None:
    answerer = Answerer(bundled_settings, llm_spec="extractive")
    papers = answerer.searcher.lexical.table.papers
    answer = answerer.answer("Which paper has the most authors?")
    assert answer.mode == "ranked" and not answer.refused
    largest = max(len(meta["authors"]) for meta in papers.values())
    first = answer.answer.splitlines()[1]
    assert f": {largest} authors (" in first and first.endswith("[1]")
    top = answer.citations[0].paper_id
    assert len(papers[top]["authors"]) == largest
    sizes = [int(n) for n in re.findall(r": (\d+) authors \(", answer.answer)]
    assert sizes == sorted(sizes, reverse=True) and len(sizes) == min(5, len(papers))


@pytest.mark.parametrize(
    ("question", "length", "average"),
    [
        ("Which paper has the longest title?", ("title", True), False),
        ("Which papers have the shortest abstracts?", ("abstract", False), False),
        ("Whose abstract is the longest?", ("abstract", True), False),
        ("How many authors does a paper have on average?", None, True),
        ("What is the median number of authors?", None, True),
        ("How many authors per paper are there?", None, True),
        ("Which papers study the longest context lengths?", None, False),
        ("How many authors does FooNet have?", None, False),
    ],
)
def test_questions_that_measure_the_records(
    question: str, length: tuple[str, bool] | None, average: bool
) -> None:
    assert asked_length(question) == length
    assert asks_authors_average(question) is average
    assert wants_ranking(question) is (length is not None or average)


def test_titles_are_ranked_by_length_and_authors_averaged_from_the_records(
    bundled_settings: Settings,
) -> None:
    answerer = Answerer(bundled_settings, llm_spec="extractive")
    papers = answerer.searcher.lexical.table.papers
    answer = answerer.answer("Which paper has the longest title?")
    assert answer.mode == "ranked" and not answer.refused
    longest = max(len(meta["title"].split()) for meta in papers.values())
    assert answer.answer.splitlines()[1].endswith(f": {longest} words [1]")
    assert len(papers[answer.citations[0].paper_id]["title"].split()) == longest
    sizes = [int(n) for n in re.findall(r": (\d+) words \[", answer.answer)]
    assert sizes == sorted(sizes, reverse=True) and len(sizes) == 5
    shortest = answerer.answer("Which paper has the shortest abstract?")
    first = shortest.citations[0].paper_id
    words = [len(" ".join(answerer.abstract_sentences(p)).split()) for p in papers]
    assert len(" ".join(answerer.abstract_sentences(first)).split()) == min(words)
    average = answerer.answer("How many authors does a paper have on average?")
    counts = [len(meta["authors"]) for meta in papers.values()]
    assert f"{sum(counts) / len(counts):.1f} authors on average" in average.answer
    assert average.citations == [] and not average.refused


def test_the_authors_with_the_most_papers_are_counted_from_the_author_lists(
    bundled_settings: Settings,
) -> None:
    answerer = Answerer(bundled_settings, llm_spec="extractive")
    papers = answerer.searcher.lexical.table.papers
    expected = _expected_counts(papers)
    answer = answerer.answer("Who has the most papers?")
    assert answer.mode == "ranked" and not answer.refused
    assert answer.answer.startswith(
        f"The authors with the most papers among the {len(papers)} papers"
    )
    shown = re.findall(r"^- (.+?): (\d+) papers?: ", answer.answer, flags=re.M)
    assert shown and int(shown[0][1]) == max(expected.values())
    for name, count in shown:
        assert expected[fold(name)] == int(count)
    # Every paper cited for an author has that author.
    by_ref = {c.n: c.paper_id for c in answer.citations}
    for line in answer.answer.splitlines()[1:]:
        found = re.match(r"- (.+?): \d+ papers?: ", line)
        if found:
            for ref in re.findall(r"\[(\d+)\]", line):
                authors = {fold(a) for a in papers[by_ref[int(ref)]]["authors"]}
                assert fold(found.group(1)) in authors


@pytest.fixture(scope="module")
def full(full_home: Path, onnx_cache: Path) -> Answerer:
    return Answerer(Settings(home=full_home, cache_dir=onnx_cache), llm_spec="extractive")


@pytest.mark.slow
def test_who_has_the_most_papers_at_the_conference(full: Answerer) -> None:
    expected: Counter[str] = Counter()
    with FULL_CORPUS.open(encoding="utf-8") as lines:
        for line in lines:
            expected.update({fold(a) for a in json.loads(line)["authors"]})
    answer = full.answer("Who has the most papers at ICML 2025?")
    assert answer.mode == "ranked" and not answer.refused
    name, count = re.findall(r"^- (.+?): (\d+) papers: ", answer.answer, flags=re.M)[0]
    assert int(count) == max(expected.values()) == expected[fold(name)]
    assert f"(and {int(count) - 3} more)" in answer.answer.splitlines()[1]

    orals = full.answer("Who has the most oral papers?")
    statuses = {full.searcher.lexical.table.papers[p]["status"] for p in orals.cited_paper_ids}
    assert orals.mode == "ranked" and statuses == {"oral"}

    on_topic = full.answer("Who has the most papers on reinforcement learning?")
    assert on_topic.mode == "ranked" and not on_topic.refused
    assert " papers on reinforcement learning (" in on_topic.answer.splitlines()[0]
    topical = re.findall(r"^- (.+?): (\d+) papers?: ", on_topic.answer, flags=re.M)
    assert topical and all(int(n) <= expected[fold(name)] for name, n in topical)
    assert int(topical[0][1]) < int(count)


@pytest.mark.parametrize(
    ("question", "topics"),
    [
        (
            "Which authors work on both diffusion and graph coloring?",
            ("diffusion", "graph coloring"),
        ),
        ("Who has papers on both FooNets and BarNets?", ("FooNets", "BarNets")),
        ("Who works on diffusion?", None),
        ("Which papers use both FooNet and BarNet?", None),  # papers, not people
    ],
)
def test_asking_who_works_on_two_topics(question: str, topics: tuple[str, str] | None) -> None:
    assert both_topics(question) == topics
    assert wants_ranking(question) is (topics is not None)


@pytest.mark.slow
def test_the_authors_on_both_of_two_topics_wrote_papers_on_each(full: Answerer) -> None:
    answer = full.answer("Which authors work on both diffusion and reinforcement learning?")
    assert answer.mode == "ranked" and not answer.refused
    papers = full.searcher.lexical.table.papers
    by_ref = {c.n: c.paper_id for c in answer.citations}
    lines = [line for line in answer.answer.splitlines() if line.startswith("- ")]
    assert lines
    pattern = r"- (.+?): on diffusion: (.+) \| on reinforcement learning: (.+)"
    for line in lines:
        name, diffusion, rl = re.fullmatch(pattern, line).groups()  # type: ignore[union-attr]
        for part, word in ((diffusion, "diffusion"), (rl, "reinforcement")):
            refs = [by_ref[int(r)] for r in re.findall(r"\[(\d+)\]", part)]
            assert refs and all(fold(name) in {fold(a) for a in papers[p]["authors"]} for p in refs)
            texts = [" ".join(full.abstract_sentences(p)) + papers[p]["title"] for p in refs]
            assert all(word in text.lower() for text in texts), (name, word)


@pytest.mark.slow
def test_a_topic_a_fifth_of_the_papers_use_is_listed_and_counted(full: Answerer) -> None:
    answer = full.answer("How many papers study LLMs?")
    assert answer.mode == "list" and not answer.refused
    count = int(answer.answer.split()[0])
    examined = int(re.search(r"\((\d+) candidate papers examined", answer.answer).group(1))
    # Every paper that writes the word is examined, not only the 40 retrieved.
    assert count >= 100 and examined >= count
    # Words most abstracts use name no topic.
    vague = full.answer("Which papers are about learning models?")
    listed = re.match(r"([\d,]+) papers", vague.answer)
    assert listed is None or int(listed.group(1).replace(",", "")) < 1000, vague.answer[:200]


@pytest.mark.slow
def test_a_status_filter_keeps_the_topics_words(full: Answerer) -> None:
    # Few orals are about the topic: its distinctive words are still the collection's.
    answer = full.answer("Which oral papers study reinforcement learning?")
    assert answer.mode == "list" and not answer.refused
    papers = full.searcher.lexical.table.papers
    assert {papers[p]["status"] for p in answer.cited_paper_ids} == {"oral"}
    about = [
        "reinforcement learning"
        in (papers[p]["title"] + " ".join(full.abstract_sentences(p))).lower()
        for p in answer.cited_paper_ids
    ]
    # Most, not all: a stem also matches other words ("reinforce spurious correlations").
    assert sum(about) >= 3 and sum(about) > len(about) / 2


@pytest.mark.parametrize(
    ("question", "name"),
    [
        ("Which papers are similar to FooNet?", "FooNet"),
        ("papers like BarNet", "BarNet"),
        ("Show me more papers like 'Quartz: fast sorting'", "Quartz: fast sorting"),
        ("What else is like FooNet at ICML 2025?", "FooNet"),
        ("related work to BarNet", "BarNet"),
        ("Which papers use FooNet?", None),
        ("How similar is FooNet to BarNet?", None),
    ],
)
def test_asking_for_papers_like_one(question: str, name: str | None) -> None:
    assert similar_asked(question) == name


def test_papers_like_a_named_one_are_its_nearest_by_paper_vector(
    bundled_settings: Settings,
) -> None:
    answerer = Answerer(bundled_settings, llm_spec="extractive")
    vectors = paper_vectors(answerer.searcher)
    expected = [s.paper_id for s in similar_papers(answerer.searcher, vectors, CAKE_ID, k=8)]
    answer = answerer.answer("Which papers are similar to Cake?")
    assert answer.mode == "similar" and not answer.refused
    assert answer.cited_paper_ids == [CAKE_ID, *expected]
    shown = [float(x) for x in re.findall(r"\(similarity (0\.\d\d)\)", answer.answer)]
    assert len(shown) == 8 and shown == sorted(shown, reverse=True)
    # A topic, not one paper: the papers on it.
    topic = answerer.answer("Which papers are related to preference optimization?")
    assert topic.mode == "list"


@pytest.mark.parametrize(
    "question",
    [
        "What are the trends in graph learning?",
        "What are the current developments in BarNet-style sorting?",
        "What are the recent advances in graph learning?",
    ],
)
def test_asking_for_trends_asks_for_an_overview(question: str) -> None:
    assert wants_summary(question)
    assert summary_topic(question).split()[0] in {"graph", "BarNet-style"}


@pytest.mark.parametrize(
    "question",
    ["What do the papers say about graph learning?", "Tell me about graph learning"],
)
def test_an_open_request_for_an_overview_has_the_topic_alone(question: str) -> None:
    assert open_request(question)
    assert summary_topic(question).rstrip("?") == "graph learning"


@pytest.mark.slow
def test_listed_papers_are_quoted_by_a_claim_not_a_code_link(full: Answerer) -> None:
    answer = full.answer("Which papers use LoRA?")
    assert answer.mode == "list" and len(answer.citations) >= 10
    lines = [line for line in answer.answer.splitlines() if line.startswith("- ")]
    assert lines and not any("http" in line or "github" in line.lower() for line in lines)
    # A name a single abstract writes picks out that paper.
    rare = full.answer("Any work on Muon?")
    assert not rare.refused and len(rare.citations) <= 3
    assert all("muon" in " ".join(full.abstract_sentences(p)).lower() for p in rare.cited_paper_ids)


@pytest.mark.slow
def test_how_papers_are_tested_is_not_what_they_are_about(full: Answerer) -> None:
    used = full.answer("Which papers use MMLU?")
    tested = full.answer("Which papers evaluate on MMLU?")
    assert len(used.citations) >= 5
    assert set(tested.cited_paper_ids) == set(used.cited_paper_ids)
    # "test-time" names a topic: its words stay.
    ttt = full.answer("Which papers study test-time training?")
    assert ttt.mode == "list" and " test," in ttt.answer.splitlines()[0] + ","
