"""Exploring the whole conference: counting answers, author questions, the topic map and similar
papers, through the library and the `papertalk` command line (real store, bundled models)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from rag.answer.chain import Answerer
from rag.answer.intent import (
    author_asked,
    author_role_asked,
    author_topic,
    source_asked,
    status_in,
    wants_subset,
    wants_topics,
)
from rag.explore.similar import find_paper, similar_papers
from rag.explore.topics import load_topics, topic_map
from rag.explore.vectors import paper_vectors
from rag.retrieve.hybrid import SearchFilters, open_searcher
from rag.settings import Settings
from rag.text.authors import author_matches

from .conftest import CAKE_ID, run_cli

DFUSION_ID = "WVlEwFiDGH"
DREAMDPO_ID = "WIIfdh0GJu"


@pytest.fixture(scope="module")
def settings(bundled_home: Path, onnx_cache: Path) -> Settings:
    return Settings(home=bundled_home, cache_dir=onnx_cache)


@pytest.mark.parametrize(
    ("query", "author", "expected"),
    [
        ("Nunez", "José Núñez", True),
        ("J. Nunez", "José Núñez", True),
        ("Núñez, José", "Jose Nunez", True),
        ("jose nunez", "José Núñez", True),
        ("K. Nunez", "José Núñez", False),
        ("Jose", "José Núñez", False),
        ("van der Berg", "Anna van der Berg", True),
    ],
)
def test_author_names_match_by_normalised_name(query: str, author: str, expected: bool) -> None:
    assert author_matches(query, author) is expected


def test_question_intents_for_exploring() -> None:
    assert author_asked("What did Yoshua Bengio publish at ICML 2025?") == "Yoshua Bengio"
    assert author_asked("List the papers by J. Nunez") == "J. Nunez"
    assert author_asked("What does the method publish?") is None
    assert author_asked("Which papers did Quartz co-author?") == "Quartz"
    assert author_asked("Which papers have Ada Quartz as an author?") == "Ada Quartz"
    assert author_asked("What has Ada Quartz written?") == "Ada Quartz"
    assert author_asked("Which papers did FooNet improve on?") is None
    assert status_in("How many orals are about agents?") == "oral"
    assert status_in("How many papers are about agents?") is None
    assert wants_subset("Which of them use diffusion?")
    assert wants_subset("Which ones are orals?")
    assert not wants_subset("Which one-shot methods are orals?")


def test_counting_answers_give_the_count_the_rule_and_every_paper(settings: Settings) -> None:
    answer = Answerer(settings, llm_spec="extractive").answer(
        "How many papers use direct preference optimization?"
    )
    assert answer.mode == "list" and not answer.refused
    first = answer.answer.splitlines()[0]
    count = int(first.split()[0])
    assert count == len(answer.citations) >= 2
    assert "candidate papers examined" in first and "most distinctive words" in first
    assert {DFUSION_ID, DREAMDPO_ID} <= set(answer.cited_paper_ids)


def test_status_filters_apply_to_counts(settings: Settings) -> None:
    answerer = Answerer(settings, llm_spec="extractive")
    everything = answerer.answer("How many papers use direct preference optimization?")
    posters = answerer.answer(
        "How many papers use direct preference optimization?",
        filters=SearchFilters(status="poster"),
    )
    papers = answerer.searcher.lexical.table.papers
    assert all(papers[p]["status"] == "poster" for p in posters.cited_paper_ids)
    assert set(posters.cited_paper_ids) <= set(everything.cited_paper_ids)


def test_a_status_alone_lists_every_paper_with_it_and_narrows_a_follow_up(
    settings: Settings,
) -> None:
    answerer = Answerer(settings, llm_spec="extractive")
    papers = answerer.searcher.lexical.table.papers
    spotlights = sorted(p for p, meta in papers.items() if meta["status"] == "spotlight")
    answer = answerer.answer("How many spotlights are there?")
    assert answer.mode == "list" and not answer.refused
    share = f"{len(spotlights) / len(papers):.1%} of its {len(papers)}"
    assert answer.answer.startswith(
        f"{len(spotlights)} spotlight papers of the collection ({share}), by title:"
    )
    assert sorted(answer.cited_paper_ids) == spotlights
    listed = answerer.answer("How many papers use direct preference optimization?")
    history = [("How many papers use direct preference optimization?", listed.answer)]
    posters = answerer.answer(
        "Which of them are posters?", history=history, history_papers=listed.cited_paper_ids
    )
    assert not posters.refused and posters.cited_paper_ids
    assert set(posters.cited_paper_ids) == {
        p for p in listed.cited_paper_ids if papers[p]["status"] == "poster"
    }
    everything = answerer.answer("How many papers are there at ICML 2025?")
    assert everything.answer.startswith(f"{len(papers)} papers of the collection, by title:")
    assert sorted(everything.cited_paper_ids) == sorted(papers)
    # A topic that points back ("it") is not "no topic": not every paper.
    unnamed = answerer.answer("Which papers use it?")
    assert not unnamed.answer.startswith(f"{len(papers)} papers")
    oral = next(p for p, meta in papers.items() if meta["status"] == "oral")
    none = answerer.answer(
        "Which of them are orals?",
        history=history,
        history_papers=[p for p in listed.cited_paper_ids if p != oral],
    )
    assert none.refused and none.refusal_reason == "no paper of the papers discussed is oral"
    ones = answerer.answer(
        "Which ones are posters?", history=history, history_papers=listed.cited_paper_ids
    )
    assert ones.cited_paper_ids == posters.cited_paper_ids  # "which ones": of those discussed
    # No paper with the status on the topic: the refusal says which status it looked for.
    orals = answerer.answer("Are there papers on direct preference optimization? Which are orals?")
    assert orals.refused and (orals.refusal_reason or "").startswith("no oral paper is about this")
    # A summary of the papers with a status summarizes only those.
    summary = answerer.answer("Summarize the spotlight papers on robustness")
    assert summary.mode == "summarize" and summary.cited_paper_ids
    assert all(papers[p]["status"] == "spotlight" for p in summary.cited_paper_ids)
    everything_total = answerer.answer("How many papers are there in total?")
    assert everything_total.cited_paper_ids == everything.cited_paper_ids


def test_author_questions_and_follow_ups_over_their_papers(settings: Settings) -> None:
    answerer = Answerer(settings, llm_spec="extractive")
    papers = answerer.searcher.lexical.table.papers
    author = papers[CAKE_ID]["authors"][0]  # "Shuowei Jin"
    first, last = author.split()[0], author.split()[-1]
    answer = answerer.answer(f"What did {first[0]}. {last} publish at ICML 2025?")
    assert answer.mode == "authors" and answer.cited_paper_ids == [CAKE_ID]
    assert answer.answer.startswith("1 paper of the collection by")
    follow = answerer.answer(
        "Which of them are about KV cache loading?",
        history=[(f"What did {author} publish?", answer.answer)],
        history_papers=answer.cited_paper_ids,
    )
    assert follow.cited_paper_ids == [CAKE_ID]
    # An author of the paper under discussion, by place in its author list.
    about = answerer.answer("What is Cake?")
    turn = [("What is Cake?", about.answer)]
    for question, place in (
        ("What else did the first author publish?", 0),
        ("Which papers by its last author are there?", -1),
    ):
        by_place = answerer.answer(question, history=turn, history_papers=[CAKE_ID])
        name = papers[CAKE_ID]["authors"][place]
        assert by_place.mode == "authors" and CAKE_ID in by_place.cited_paper_ids
        assert by_place.answer.startswith("1 paper of the collection by " + name)
    # An author's papers on a topic: the same per-paper decision, among that author's papers.
    on_topic = answerer.answer(f"Which papers by {author} are about KV cache loading?")
    assert on_topic.mode == "authors" and on_topic.cited_paper_ids == [CAKE_ID]
    assert on_topic.answer.startswith(f"1 of {author}'s 1 paper in the collection is about KV")
    off_topic = answerer.answer(f"What did {author} publish on protein folding?")
    assert off_topic.refused and "protein folding" in (off_topic.refusal_reason or "")
    assert author_topic(f"Which papers by {author} are about KV cache loading?") == (
        "KV cache loading"
    )
    assert author_topic(f"What did {author} publish at ICML 2025?") == ""
    assert author_role_asked("What else did the senior author publish?") == -1
    assert author_role_asked("Who is the first author?") is None  # the byline answers it
    # An author's papers with a status: the status filters them (Cake is a poster).
    posters = answerer.answer(f"What posters did {author} publish?")
    assert posters.mode == "authors" and posters.cited_paper_ids == [CAKE_ID]
    assert posters.answer.startswith(f"1 poster paper of the collection by {author}")
    orals = answerer.answer(f"Which papers by {author} are orals?")
    assert (
        orals.refused and orals.refusal_reason == f"no paper of the collection by {author} is oral"
    )
    # "Summarize it" after a question about one paper: that paper, no theme heading.
    summary = answerer.answer("Summarize it", history=turn, history_papers=[CAKE_ID])
    assert summary.mode == "summarize" and summary.cited_paper_ids == [CAKE_ID]
    assert "No paper covers" not in summary.answer and "**" not in summary.answer
    # Papers "from" somebody: an author's papers; from an institution, refused with why.
    from_author = answerer.answer(f"Which papers are from {author}?")
    assert from_author.mode == "authors" and from_author.cited_paper_ids == [CAKE_ID]
    institution = answerer.answer("Which papers come from the Quartz Institute of Sorting?")
    assert institution.refused and "not their affiliations" in (institution.refusal_reason or "")
    assert source_asked("Which papers are from Quartz Labs?") == "Quartz Labs"
    assert source_asked("Which papers learn from human feedback?") is None
    nobody = answerer.answer("What did Zzyzx Qwerty publish?")
    assert nobody.refused and "Zzyzx Qwerty" in nobody.refusal_reason


def test_similar_papers_exclude_the_paper_and_rank_by_similarity(settings: Settings) -> None:
    searcher = open_searcher(settings)
    vectors = paper_vectors(searcher)
    assert len(vectors.paper_ids) == 19
    assert find_paper(searcher, "compute or load kv cache? why not both?") == CAKE_ID
    assert find_paper(searcher, CAKE_ID) == CAKE_ID
    found = similar_papers(searcher, vectors, DFUSION_ID, k=3)
    assert DREAMDPO_ID in {s.paper_id for s in found}  # the other DPO-for-generation paper
    assert DFUSION_ID not in {s.paper_id for s in found} and len(found) == 3
    assert [s.similarity for s in found] == sorted((s.similarity for s in found), reverse=True)


def test_topic_map_is_kept_and_reused(settings: Settings, tmp_path: Path) -> None:
    searcher = open_searcher(settings)
    built = topic_map(tmp_path, searcher)
    assert set(built.assignment) == set(searcher.lexical.table.papers)
    assert set(built.coords) == set(built.assignment)
    assert sum(t.size for t in built.topics) == sum(1 for t in built.assignment.values() if t >= 0)
    kept = load_topics(tmp_path, searcher)
    assert kept is not None and kept.to_json() == built.to_json()


def test_cli_topics_similar_and_author_search(bundled_home: Path) -> None:
    env = {"PAPERTALK_HOME": str(bundled_home)}
    topics = run_cli("topics", "--json", env=env, timeout=600)
    assert topics.returncode == 0, topics.stderr
    payload = json.loads(topics.stdout)
    assert len(payload["papers"]) == 19 and payload["topics"]
    similar = run_cli("similar", "D-Fusion", "-k", "2", "--json", env=env)
    assert similar.returncode == 0, similar.stderr
    data = json.loads(similar.stdout)
    assert data["paper_id"] == DFUSION_ID and len(data["similar"]) == 2
    missing = run_cli("similar", "no such paper at all", env=env)
    assert missing.returncode != 0 and "no paper with id or title" in missing.stderr
    assert "Traceback" not in missing.stderr
    by_author = run_cli("search", "cache", "--author", "S. Jin", "--json", env=env)
    assert [r["paper_id"] for r in json.loads(by_author.stdout)["results"]] == [CAKE_ID]


def test_clustering_is_deterministic_and_finds_planted_topics() -> None:
    """Papers drawn around four well-separated directions: the same map twice, four topics, and
    each topic's label comes from its papers' own words."""
    from rag.explore.topics import cluster_papers

    rng = np.random.default_rng(0)
    words = ["protein folding", "graph networks", "speculative decoding", "auction design"]
    centres = rng.normal(size=(4, 32))
    ids, docs, rows, statuses = [], [], [], []
    for n in range(160):
        group = n % 4
        ids.append(f"p{n}")
        docs.append(f"A study of {words[group]} number {n}. More on {words[group]}.")
        rows.append(centres[group] + rng.normal(0, 0.05, 32))
        statuses.append("poster" if n % 5 else "oral")
    matrix = np.asarray(rows, dtype=np.float32)
    matrix /= np.linalg.norm(matrix, axis=1, keepdims=True)
    first = cluster_papers(ids, docs, matrix, statuses)
    second = cluster_papers(ids, docs, matrix, statuses)
    assert first.assignment == second.assignment and first.coords == second.coords
    assert len(first.topics) == 4 and first.assigned_share > 0.9
    for topic in first.topics:
        members = [int(p[1:]) % 4 for p in first.papers_in(topic.id)]
        assert len(set(members)) == 1  # one planted group per topic
        assert any(w in topic.label for w in words[members[0]].split())
        assert sum(topic.statuses.values()) == topic.size


@pytest.mark.parametrize(
    ("question", "topics"),
    [
        ("What are the main topics at ICML 2025?", True),
        ("Which topics have the most papers?", True),
        ("What research areas does the conference cover?", True),
        ("What are the main topics in reinforcement learning?", False),  # a field's: a summary
        ("Which topics does FooNet address?", False),
        ("What is the most common topic?", True),
        ("What is the topic of FooNet?", False),
        ("Which area does BarNet work in?", False),
        ("Which topic has the most orals?", True),
        ("Which topic has the most orals on diffusion?", False),  # orals on a topic: a count
        # An overview of the whole collection is its topics.
        ("Tell me about ICML 2025", True),
        ("Give me an overview of the conference", True),
        ("Summarize all the papers", True),
        ("Summarize ICML 2025.", True),
        ("Tell me about diffusion models at ICML 2025", False),  # a topic's: a summary
        ("Summarize the papers", False),  # the papers of an earlier answer, or none
        ("Summarize them", False),
        ("Tell me about FooNet", False),
    ],
)
def test_questions_about_the_collections_topics(question: str, topics: bool) -> None:
    assert wants_topics(question) is topics


def test_the_main_topics_come_from_the_topic_map_largest_first(
    settings: Settings, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from rag.explore.topics import Topic, TopicMap

    answerer = Answerer(settings, llm_spec="extractive")
    papers = sorted(answerer.searcher.lexical.table.papers)
    small = [p for p in papers if p != CAKE_ID][:4]
    large = [p for p in papers if p not in small]
    planted = TopicMap(
        "",
        [
            Topic(0, "preference, diffusion", len(small), {"poster": len(small)}, small),
            Topic(1, "cache, attention", len(large), {"oral": 1, "poster": 2}, [CAKE_ID]),
        ],
        {**dict.fromkeys(small, 0), **dict.fromkeys(large, 1)},
        dict.fromkeys(papers, (0.0, 0.0)),
    )
    monkeypatch.setattr(answerer, "topic_map", lambda: planted)
    answer = answerer.answer("What are the main topics at ICML 2025?")
    assert answer.mode == "topics" and not answer.refused
    lines = answer.answer.splitlines()
    assert lines[0].startswith("The 19 papers fall into 2 topics (100% of them")
    assert lines[1].startswith(f"- cache, attention ({len(large)} papers; 1 oral, 2 poster): ")
    assert lines[2].startswith(
        f"- preference, diffusion ({len(small)} papers; {len(small)} poster)"
    )
    assert answer.cited_paper_ids == [CAKE_ID, small[0]]  # each topic's central paper
    assert all(s.support == "supported" for s in answer.sentences)
    # An overview of the whole conference is the same map, not a summary of some topic.
    overview = answerer.answer("Tell me about ICML 2025")
    assert overview.mode == "topics" and overview.answer == answer.answer
    # Ranked by a status: the small topic has more posters than the large one.
    posters = answerer.answer("Which topic has the most posters?")
    assert posters.mode == "topics" and "the 2 with the most poster papers" in posters.answer
    assert posters.cited_paper_ids == [small[0], CAKE_ID]
    # Too few papers to cluster: one topic, and the answer says so.
    monkeypatch.setattr(answerer, "topic_map", lambda: topic_map(tmp_path, answerer.searcher))
    few = answerer.answer("Which topics have the most papers?")
    assert few.refused and few.refusal_reason == "the 19 papers are too few to fall into topics"


def test_a_count_agrees_with_the_listing_of_the_same_topic(settings: Settings) -> None:
    answerer = Answerer(settings, llm_spec="extractive")
    count = answerer.answer("How many papers use direct preference optimization?")
    listing = answerer.answer("Which papers use direct preference optimization?")
    assert count.cited_paper_ids == listing.cited_paper_ids
    assert int(count.answer.split()[0]) == len(listing.citations)


def test_cli_errors_for_empty_stores_and_unknown_papers(bundled_home: Path, tmp_path: Path) -> None:
    empty = {"PAPERTALK_HOME": str(tmp_path / "empty")}
    commands = (
        ("topics", "--json"),
        ("similar", "anything", "--json"),
        ("ask", "How many papers use X?", "--llm", "extractive", "--json"),
    )
    for args in commands:
        done = run_cli(*args, env=empty)
        assert done.returncode == 2, done.stderr
        assert done.stderr.count("\n") == 1 and "no papers ingested yet" in done.stderr
    unknown = run_cli("similar", "ZZZZZZZZZZ", env={"PAPERTALK_HOME": str(bundled_home)})
    assert unknown.returncode == 2 and "no paper with id or title 'ZZZZZZZZZZ'" in unknown.stderr


@pytest.mark.server
def test_topics_similar_and_counts_over_a_chroma_server(
    chroma_server: str, tmp_path: Path, onnx_cache: Path
) -> None:
    from rag.ingest.pipeline import run_ingest

    settings = Settings(home=tmp_path / "home", cache_dir=onnx_cache, chroma_url=chroma_server)
    run_ingest(settings, [], progress=False)
    env = {"PAPERTALK_HOME": str(settings.home), "PAPERTALK_CHROMA_URL": chroma_server}
    similar = run_cli("similar", "D-Fusion", "-k", "3", "--json", env=env)
    assert similar.returncode == 0, similar.stderr
    assert DREAMDPO_ID in {s["paper_id"] for s in json.loads(similar.stdout)["similar"]}
    topics = run_cli("topics", "--json", env=env, timeout=600)
    assert topics.returncode == 0 and len(json.loads(topics.stdout)["papers"]) == 19
    counted = run_cli(
        "ask",
        "How many papers use direct preference optimization?",
        "--llm",
        "extractive",
        "--json",
        env=env,
    )
    payload = json.loads(counted.stdout)
    assert payload["mode"] == "list" and {DFUSION_ID, DREAMDPO_ID} <= {
        c["paper_id"] for c in payload["citations"]
    }
