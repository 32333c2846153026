"""Hybrid retrieval over the bundled corpus in a real store, and the LangChain retriever."""

from __future__ import annotations

import json

import pytest

from rag.errors import PaperTalkError
from rag.retrieve.hybrid import SearchFilters, open_searcher
from rag.text.names import NameIndex, query_names, short_names

from .conftest import BUNDLED, CAKE_ID, DEV_QA


@pytest.fixture(scope="module")
def searcher(bundled_home, onnx_cache):  # type: ignore[no-untyped-def]
    from rag.settings import Settings

    return open_searcher(Settings(home=bundled_home, cache_dir=onnx_cache))


def test_cake_ranks_first(searcher) -> None:  # type: ignore[no-untyped-def]
    hits = searcher.search("compute or load KV cache", 5)
    assert hits[0].paper_id == CAKE_ID
    assert hits[0].passages and hits[0].passages[0].text
    scores = [h.score for h in hits]
    assert scores == sorted(scores, reverse=True)
    assert len({h.paper_id for h in hits}) == len(hits)  # one hit per paper


def test_passages_carry_offsets_into_the_abstract(searcher) -> None:  # type: ignore[no-untyped-def]
    abstracts = {
        json.loads(line)["id"]: json.loads(line)["abstract"]
        for line in BUNDLED.read_text().splitlines()
    }
    for hit in searcher.search("diffusion models preference optimization", 5):
        for passage in hit.passages:
            assert abstracts[hit.paper_id][passage.start : passage.end] == passage.text


def test_filters(searcher) -> None:  # type: ignore[no-untyped-def]
    statuses = {h.status for h in searcher.search("learning", 19, SearchFilters(status="oral"))}
    assert statuses <= {"oral"}
    by_author = searcher.search("learning", 19, SearchFilters(author="yejin choi"))
    assert [h.title.split(":")[0] for h in by_author] == ["SafetyAnalyst"]
    by_title = searcher.search("attention", 19, SearchFilters(title="cache"))
    assert [h.paper_id for h in by_title] == [CAKE_ID]
    assert searcher.search("attention", 5, SearchFilters(author="nobody-at-all")) == []
    with pytest.raises(PaperTalkError, match="unknown status"):
        SearchFilters(status="workshop")


def test_a_papers_vector_is_the_normalised_mean_of_its_chunks(searcher) -> None:  # type: ignore[no-untyped-def]
    import numpy as np

    vectors = searcher.paper_vectors([CAKE_ID, "no-such-paper"])
    assert list(vectors) == [CAKE_ID]  # a paper with no stored chunk is left out
    rows = searcher.lexical.rows_of(CAKE_ID)
    chunks = searcher.store.vectors([searcher.lexical.table.ids[i] for i in rows])
    mean = np.mean(list(chunks.values()), axis=0)
    assert np.allclose(vectors[CAKE_ID], mean / np.linalg.norm(mean), atol=1e-5)
    # Unlike a query's best chunk, the paper's vector is close to, not equal to, any one chunk
    # when the abstract has several.
    assert abs(float(np.linalg.norm(vectors[CAKE_ID])) - 1.0) < 1e-5


def test_empty_query_is_an_error(searcher) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(PaperTalkError, match="empty query"):
        searcher.search("   \n ")


def test_dev_questions_find_their_papers(searcher) -> None:  # type: ignore[no-untyped-def]
    """Regression gate on the bundled corpus (the full-corpus figures live in bench/)."""
    if not DEV_QA.exists():
        pytest.skip("../shared/eval/dev_qa.jsonl is absent")
    bundled_ids = {json.loads(line)["id"] for line in BUNDLED.read_text().splitlines()}
    found = total = 0
    for line in DEV_QA.read_text().splitlines():
        item = json.loads(line)
        if not item["gold"] or item["history"] or not set(item["gold"]) <= bundled_ids:
            continue
        ranked = [h.paper_id for h in searcher.search(item["question"], 5)]
        found += sum(1 for g in item["gold"] if g in ranked)
        total += len(item["gold"])
    assert total > 20
    assert found / total >= 0.9  # measured 32/34 = 0.94 (a summary question misses 2)


def test_langchain_retriever_returns_one_document_per_paper(searcher) -> None:  # type: ignore[no-untyped-def]
    from langchain_core.retrievers import BaseRetriever

    from rag.retrieve.retriever import PaperRetriever

    retriever = PaperRetriever(searcher=searcher, k=3)
    assert isinstance(retriever, BaseRetriever)
    docs = retriever.invoke("How much does Cake reduce time to first token?")
    assert len(docs) == 3
    assert docs[0].metadata["paper_id"] == CAKE_ID
    assert docs[0].page_content and docs[0].metadata["passages"]


def test_both_embedding_backends_rank_alike(tmp_path, onnx_cache) -> None:  # type: ignore[no-untyped-def]
    """The reference backend (sentence-transformers) and onnx fp32 rank identically; the int8
    export agrees on the top paper."""
    from rag.ingest.pipeline import run_ingest
    from rag.settings import Settings

    queries = (
        "compute or load KV cache",
        "causal discovery with latent variables",
        "aligning diffusion models with human preferences",
        "adversarial robustness of vision-language models",
    )
    rankings = {}
    for name, backend, quantize in (
        ("st", "sentence-transformers", False),
        ("fp32", "onnx", False),
        ("int8", "onnx", True),
    ):
        settings = Settings(
            home=tmp_path / name,
            cache_dir=onnx_cache,
            embedding_backend=backend,
            embedding_quantize=quantize,
            bm25_weight=0.0,
            name_weight=0.0,
        )
        run_ingest(settings, [], progress=False)
        searcher = open_searcher(settings)
        rankings[name] = [[h.paper_id for h in searcher.search(q, 5)] for q in queries]
    assert rankings["fp32"] == rankings["st"]
    assert [r[0] for r in rankings["int8"]] == [r[0] for r in rankings["st"]]


def test_papers_are_recognised_by_their_short_names(searcher) -> None:  # type: ignore[no-untyped-def]
    names = searcher.lexical.names
    found = names.papers_named_in("How do d-fusion and DreamDPO differ? And LEVIS?")
    assert found[:2] == ["WVlEwFiDGH", "WIIfdh0GJu"] and "WFIMSlNS7C" in found
    assert names.papers_named_in("nothing named here at all") == []


def test_a_name_written_with_math_is_found_as_users_type_it() -> None:
    # Abstracts write some names with TeX ("$\\mu$FooNet", "$K^2$Bar"); users type "muFooNet",
    # "μFooNet" or "K2Bar".
    papers = {"p1": {"title": "Fast Things"}, "p2": {"title": "$K^2$Bar: Slow Things"}}
    abstracts = {"p1": "We propose a simple approach, $\\mu$FooNet, that runs fast.", "p2": "Slow."}
    names = NameIndex(papers, abstracts)
    assert names.papers_named_in("How does muFooNet run?") == ["p1"]
    assert names.papers_named_in("How does μFooNet run?") == ["p1"]
    assert names.papers_named_in("What is K2Bar?") == ["p2"]
    assert names.papers_named_in("What is FooNet?") == []  # another name
    assert query_names("Does μFooNet beat K²Bar?") == ["muFooNet", "K2Bar"]


def test_a_paper_goes_by_its_titles_head_not_by_the_words_after_the_colon() -> None:
    # The head before the colon is the name; an acronym after it is what the paper works on.
    assert short_names("EasyFoo: Better DDIM Inversion") == ["EasyFoo"]
    assert short_names("Better DDIM Inversion for FooNet") == ["DDIM", "FooNet"]
    # Title case capitalises every compound; that makes no name ("Post-Training").
    assert short_names("Diffusion Adversarial Post-Training for Video") == []
    assert short_names("D-Fusion Improves PDE-Controller Training") == [
        "D-Fusion",
        "PDE-Controller",
    ]


def test_the_store_returns_the_exactly_nearest_chunks_best_first(searcher) -> None:  # type: ignore[no-untyped-def]
    import numpy as np

    ids = list(searcher.lexical.table.ids)
    stored = searcher.store.vectors(ids)
    query = np.asarray(searcher.embedder.embed_query("cache the keys and values"), np.float32)
    exact = sorted(((cid, float(v @ query)) for cid, v in stored.items()), key=lambda x: -x[1])
    found = searcher.store.query(query, 5)
    assert [cid for cid, _ in found] == [cid for cid, _ in exact[:5]]  # n asked, n returned
    assert [s for _, s in found] == pytest.approx([s for _, s in exact[:5]], abs=1e-5)


@pytest.mark.parametrize(
    ("text", "terms"),
    [
        # The letter and the word are one term, however the abstract typesets it.
        ("e-values", ["e_valu"]),
        ("$k$-means and k -Means", ["k_mean", "k_mean"]),
        ("Q-learning", ["q_learn"]),
        # No compound: a word before the letter, a longer first part, or math around it.
        ("LLM-as-a-judge", ["llm", "judg"]),
        ("self-attention", ["self", "attent"]),
        ("x - y", []),
    ],
)
def test_a_letter_hyphenated_to_a_word_is_one_term(text: str, terms: list[str]) -> None:
    from rag.text.terms import tokenize

    assert tokenize([text]) == [terms]
    # "e-values" is no more "values" than it is "evaluate".
    assert not {"valu", "evalu"} & set(tokenize(["e-values"])[0])


def test_a_name_written_as_one_paper_writes_it_picks_out_that_paper_alone() -> None:
    papers = {
        "p1": {"title": "FooMA: Diffusion for Quartz"},
        "p2": {"title": "FooMa: Hardness of Matching"},
    }
    index = NameIndex(papers)
    assert index.papers_named_in("Compare FooMA and BarNet") == ["p1"]
    assert index.papers_named_in("What does FooMa do?") == ["p2"]
    # Written as neither paper writes it, the name may be either's.
    assert index.papers_named_in("What does fooma do?") == ["p1", "p2"]
