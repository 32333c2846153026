"""The contenders' model of rag/answer/relevance.py: which papers it rates, on what features, and
how its ratings decide the papers about a topic (FooNet-style cases, no question of an eval set)."""

from __future__ import annotations

import re
from dataclasses import replace

import numpy as np
import pytest

import rag.answer.relevance as relevance
from rag.answer.relevance import (
    CONTENDER_FEATURES,
    CONTENDER_SCORE,
    CORE_SIMILARITY,
    MAX_RATED,
    RATED_BAR,
    THRESHOLD,
    Judgement,
    TopicDecision,
    contender_features,
    rate_contenders,
)
from rag.records import PaperHit


def judged(
    paper_id: str, score: float, *, core: bool = True, rating: float | None = None
) -> Judgement:
    """A judgement whose score is `score` (all of it similarity, no coverage, no title bonus)."""
    hit = PaperHit(paper_id, f"FooNet paper {paper_id}", [], "", "", 0.0)
    return Judgement(hit, 0.0, score, core, rating=rating)


def ids(hits: list[PaperHit]) -> list[str]:
    return [h.paper_id for h in hits]


def test_contenders_pass_the_anchor_test_and_score_at_least_the_contender_bar() -> None:
    decision = TopicDecision(
        ["foonet"],
        "foonet",
        [
            judged("low", CONTENDER_SCORE - 0.01),
            judged("mid", CONTENDER_SCORE + 0.1),
            judged("top", THRESHOLD + 0.2),
            judged("unanchored", THRESHOLD + 0.3, core=False),
        ],
    )
    assert ids(decision.contenders) == ["mid", "top"]
    assert not decision.rated
    # Without ratings, the papers passing the score bar are the relevant ones.
    assert ids(decision.relevant) == ["top"]


def test_ratings_decide_which_papers_are_about_the_topic_best_rated_first() -> None:
    below = RATED_BAR - 0.05
    decision = TopicDecision(
        ["foonet"],
        "foonet",
        [
            judged("a", THRESHOLD + 0.5, rating=below),  # passes the score bar, rated low
            judged("b", CONTENDER_SCORE + 0.1, rating=RATED_BAR + 0.1),  # below it, rated high
            judged("c", THRESHOLD + 0.1, rating=RATED_BAR + 0.4),
            judged("d", CONTENDER_SCORE - 0.1),  # not a contender: never rated
        ],
    )
    assert decision.rated
    assert ids(decision.relevant) == ["c", "b"]
    # When no contender reaches the bar, the best rated stands for a topic some paper passes
    # the score bar on (a listing never refuses when a paper matches)...
    low = TopicDecision(
        ["foonet"],
        "foonet",
        [judged("a", THRESHOLD + 0.1, rating=below), judged("b", THRESHOLD, rating=below + 0.01)],
    )
    assert ids(low.relevant) == ["b"]


def test_only_a_topic_a_few_papers_pass_the_score_bar_on_is_rated() -> None:
    def decision(passing: int, contending: int) -> TopicDecision:
        papers = [judged(f"p{i}", THRESHOLD + 0.1) for i in range(passing)]
        papers += [judged(f"c{i}", CONTENDER_SCORE) for i in range(contending)]
        return TopicDecision(["foonet"], "foonet", papers)

    # Contenders of a topic no paper passes the bar on (a topic the collection does not hold)
    # are not rated: none is about it, however they stand among themselves.
    assert not rate_contenders(decision(0, 3), {}, {}).rated
    assert rate_contenders(decision(0, 3), {}, {}).relevant == []
    assert rate_contenders(decision(1, 3), {}, {}).rated
    assert rate_contenders(decision(MAX_RATED, 0), {}, {}).rated
    # A broader topic than the model was fitted on keeps the score bar: all its papers count.
    broad = rate_contenders(decision(MAX_RATED + 1, 3), {}, {})
    assert not broad.rated and len(broad.relevant) == MAX_RATED + 1
    # A reworded decision is rated on its own.
    rated = rate_contenders(replace(decision(0, 3), reworded=decision(2, 1)), {}, {})
    assert not rated.rated and rated.reworded is not None and rated.reworded.rated


def test_contender_features_place_each_paper_among_the_contenders() -> None:
    decision = TopicDecision(
        ["foonet"],
        "foonet",
        [
            judged("second", THRESHOLD),
            judged("first", THRESHOLD + 0.3),
            judged("third", CONTENDER_SCORE),
            judged("out", CONTENDER_SCORE - 0.2),
        ],
    )
    titles = {"first": 0.7, "second": 0.4, "third": 0.1}
    east, west = np.array([1.0, 0.0]), np.array([0.0, 1.0])
    vectors = {"first": east, "second": east}  # "third" has no vector
    contenders, rows = contender_features(decision, titles, vectors)
    assert [j.hit.paper_id for j in contenders] == ["first", "second", "third"]
    column = {name: rows[:, i] for i, name in enumerate(CONTENDER_FEATURES)}
    assert rows.shape == (3, len(CONTENDER_FEATURES))
    assert column["score_below_best"] == pytest.approx(
        [0.0, -0.3, CONTENDER_SCORE - THRESHOLD - 0.3]
    )
    assert column["title_similarity_below_best"] == pytest.approx([0.0, -0.3, -0.6])
    assert column["rank_share"] == pytest.approx([0.0, 1 / 3, 2 / 3])
    assert column["core_resemblance"] == pytest.approx([1.0, 1.0, CORE_SIMILARITY])
    assert column["passes_bar"].tolist() == [1.0, 1.0, 0.0]
    assert column["log_passing"] == pytest.approx([np.log1p(2)] * 3)
    # A paper unlike the core's other papers resembles it less (the core: the first
    # CORE_PAPERS contenders, here all three).
    _, apart = contender_features(decision, titles, {"first": east, "second": east, "third": west})
    resemblance = apart[:, CONTENDER_FEATURES.index("core_resemblance")]
    assert resemblance == pytest.approx([2 / np.sqrt(5)] * 2 + [1 / np.sqrt(5)])


def test_rating_follows_the_weights_and_a_title_unlike_the_topic_is_left_out(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # A model that reads only how far a title falls below the best title.
    weights = [0.0] * len(CONTENDER_FEATURES)
    weights[CONTENDER_FEATURES.index("title_similarity_below_best")] = 10.0
    monkeypatch.setattr(relevance, "CONTENDER_WEIGHTS", tuple(weights))
    monkeypatch.setattr(relevance, "CONTENDER_INTERCEPT", 0.0)
    decision = TopicDecision(
        ["foonet"],
        "foonet",
        [judged("a", THRESHOLD + 0.1), judged("b", THRESHOLD + 0.2), judged("c", 0.2)],
    )
    rated = rate_contenders(decision, {"a": 0.8, "b": 0.2}, {})
    ratings = {j.hit.paper_id: j.rating for j in rated.judged}
    assert ratings["a"] == pytest.approx(0.5)  # the best title: logit 0
    assert ratings["b"] == pytest.approx(1 / (1 + np.exp(6.0)))
    assert ratings["c"] is None  # not a contender
    assert ids(rated.relevant) == ["a"]  # "b" scores higher, but its title is far from the topic


def test_the_shipped_model_prefers_papers_that_stand_out() -> None:
    # The fitted weights rank a paper like the topic in title and meaning above one that only
    # passes the score bar, other features equal.
    decision = TopicDecision(
        ["foonet"],
        "foonet",
        [judged(p, THRESHOLD + 0.1) for p in ("close", "far")],
    )
    east, west = np.array([1.0, 0.0]), np.array([0.0, 1.0])
    rated = rate_contenders(decision, {"close": 0.7, "far": 0.1}, {"close": east, "far": west})
    ratings = {j.hit.paper_id: j.rating or 0.0 for j in rated.judged}
    assert ratings["close"] > ratings["far"]
    assert ids(rated.relevant)[0] == "close"


def test_on_all_papers_a_narrow_topic_is_rated_and_a_broad_one_counted_by_the_bar(
    full_home, onnx_cache
) -> None:  # type: ignore[no-untyped-def]
    from rag.answer.chain import Answerer
    from rag.settings import Settings

    full = Answerer(Settings(home=full_home, cache_dir=onnx_cache), llm_spec="extractive")
    topic = "cardinality estimation"
    decision = full.judge_papers(topic, full.searcher.search(topic, 40))
    assert decision.rated
    ranked = sorted(
        (j for j in decision.judged if j.rating is not None), key=lambda j: -(j.rating or 0.0)
    )
    assert {j.hit.paper_id for j in ranked} == set(ids(decision.contenders))
    assert ids(decision.relevant) == [
        j.hit.paper_id for j in ranked if (j.rating or 0) >= RATED_BAR
    ]
    assert "Cardinality" in decision.relevant[0].title
    # The list answer cites the rated papers, best first.
    listed = full.answer(f"Which papers work on {topic}?")
    assert not listed.refused and "stands out among the candidates" in listed.answer
    assert list(dict.fromkeys(listed.cited_paper_ids)) == ids(decision.relevant)
    # A topic hundreds of papers pass the bar on is broader than the model was fitted on: it
    # keeps the score bar, and a count counts all of them.
    broad = full.judge_papers("diffusion models", full.searcher.search("diffusion models", 40))
    assert not broad.rated and len(broad.relevant) > 4 * MAX_RATED
    assert "stands out" not in broad.rule()
    counted = full.answer("How many papers study diffusion models?")
    found = re.match(r"(\d+) papers of the collection match", counted.answer)
    assert found and int(found.group(1)) > 4 * MAX_RATED
