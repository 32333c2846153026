"""rag.service: the tools other programs call (MCP, the OpenAI-compatible API), in process, on
the bundled corpus with the extractive backend."""

from __future__ import annotations

import bibtexparser
import pytest

from rag.answer.refusal import CANNOT_ANSWER
from rag.errors import PaperTalkError
from rag.service import PaperTalkService, failure_message

from .conftest import CAKE_ID

DFUSION, DREAMDPO = "WVlEwFiDGH", "WIIfdh0GJu"


@pytest.fixture(scope="module")
def service(bundled_home, onnx_cache) -> PaperTalkService:  # type: ignore[no-untyped-def]
    from rag.settings import Settings

    return PaperTalkService(Settings(home=bundled_home, cache_dir=onnx_cache, llm="extractive"))


def test_search_papers_with_filters(service: PaperTalkService) -> None:
    found = service.search_papers("compute or load KV cache", k=3)
    assert found["papers"][0]["paper_id"] == CAKE_ID and len(found["papers"]) == 3
    assert found["papers"][0]["passage"] and found["papers"][0]["rank"] == 1
    posters = service.search_papers("KV cache", k=10, status="poster")
    assert posters["papers"] and all(p["status"] == "poster" for p in posters["papers"])
    by_author = service.search_papers("KV cache", author="Shuowei Jin")
    assert [p["paper_id"] for p in by_author["papers"]] == [CAKE_ID]
    with pytest.raises(PaperTalkError, match="unknown status"):
        service.search_papers("KV cache", status="keynote")  # type: ignore[arg-type]
    with pytest.raises(PaperTalkError, match="empty query"):
        service.search_papers("  ")


def test_ask_cites_and_refuses_with_the_fixed_phrase(service: PaperTalkService) -> None:
    result = service.ask("How much does Cake reduce time to first token?")
    assert not result["refused"] and "2.6" in result["answer"] and "[1]" in result["answer"]
    cited = result["citations"][0]
    assert cited["paper_id"] == CAKE_ID and cited["n"] == 1 and cited["passage"]
    assert cited["url"].endswith(CAKE_ID) and cited["authors"] and cited["supporting"]
    refusal = service.ask("How many GPUs were used in Cake's experiments?")
    assert refusal["refused"] and refusal["answer"] == CANNOT_ANSWER
    assert refusal["refusal_reason"] and refusal["citations"] == [] and refusal["related"]
    with pytest.raises(PaperTalkError, match="unknown mode"):
        service.ask("What is Cake?", mode="debate")  # type: ignore[arg-type]


def test_compare_by_question_by_ids_and_by_names(service: PaperTalkService) -> None:
    for request in (
        "Compare D-Fusion and DreamDPO",
        [DFUSION, DREAMDPO],
        ["D-Fusion", "DreamDPO"],
    ):
        result = service.compare(request)
        assert result["answer"].startswith("| paper |"), request
        assert {c["paper_id"] for c in result["citations"]} == {DFUSION, DREAMDPO}
    with pytest.raises(PaperTalkError, match="at least two"):
        service.compare([DFUSION])


def test_summarize_and_list_papers(service: PaperTalkService) -> None:
    summary = service.summarize("preference optimization")
    assert summary["mode"] == "summarize" and not summary["refused"]
    assert {DFUSION, DREAMDPO} <= {c["paper_id"] for c in summary["citations"]}
    listing = service.list_papers("causal discovery")
    assert listing["mode"] == "list" and "match" in listing["answer"]
    assert len(listing["citations"]) >= 1


def test_get_paper_rebuilds_the_abstract(service: PaperTalkService) -> None:
    paper = service.get_paper(CAKE_ID)
    assert paper["title"] == "Compute or Load KV Cache? Why Not Both?"
    assert paper["abstract"].startswith("Large Language Models") and "2.6" in paper["abstract"]
    assert "  " not in paper["abstract"]
    with pytest.raises(PaperTalkError, match="no paper with id 'nope'"):
        service.get_paper("nope")


def test_bibtex_by_ids(service: PaperTalkService) -> None:
    result = service.bibtex([CAKE_ID, DREAMDPO, CAKE_ID])
    assert result["paper_ids"] == [CAKE_ID, DREAMDPO]
    library = bibtexparser.parse_string(result["bibtex"])
    assert len(library.entries) == 2 and not library.failed_blocks
    with pytest.raises(PaperTalkError, match="no paper with id"):
        service.bibtex([CAKE_ID, "missing"])
    with pytest.raises(PaperTalkError, match="at least one"):
        service.bibtex([" "])


def test_follow_ups_use_history_and_cited_papers(service: PaperTalkService) -> None:
    first = service.ask("What is Cake?")
    reply = first["answer"] + "\n" + "\n".join(c["url"] for c in first["citations"])
    papers = service.cited_papers(reply)
    assert papers == [CAKE_ID]
    follow_up = service.answer(
        "How much does it reduce time to first token?",
        history=[("What is Cake?", first["answer"])],
        history_papers=papers,
    )
    assert follow_up["citations"][0]["paper_id"] == CAKE_ID and "2.6" in follow_up["answer"]


def test_failure_message_names_the_retrieved_papers() -> None:
    result = {
        "error": "LLM backend unreachable",
        "related": [{"paper_id": CAKE_ID, "title": "Cake", "url": "https://x/y"}],
    }
    assert failure_message(result) == (  # type: ignore[arg-type]
        "LLM backend unreachable. Retrieved papers: Cake (https://x/y)"
    )
