"""The answering chain is a LangChain runnable: its steps are child runs that callbacks and
`astream_events` see, it takes a user's retriever and chat model, and modes share one registry."""

from __future__ import annotations

import asyncio
import inspect
from typing import Any

from langchain_core.callbacks import BaseCallbackHandler
from langchain_core.language_models.fake_chat_models import FakeListChatModel
from langchain_core.retrievers import BaseRetriever

from rag.answer.chain import Answerer, AnswerRequest
from rag.answer.modes import MODES, ask, compare, listing, ranked, similar, summarize, topics
from rag.records import AnswerEvent
from rag.retrieve.retriever import PaperRetriever, document_to_hit, hit_to_document, open_retriever

from .conftest import CAKE_ID

QUESTION = "How much does Cake reduce time to first token?"
STEPS = {"retrieve", "context", "generate", "cite"}


class StepNames(BaseCallbackHandler):
    def __init__(self) -> None:
        self.chains: list[str] = []
        self.retrievers: list[str] = []
        self.prompts: list[str] = []

    def on_chain_start(self, serialized: Any, inputs: Any, **kwargs: Any) -> None:
        self.chains.append(kwargs.get("name") or "")

    def on_retriever_start(self, serialized: Any, query: str, **kwargs: Any) -> None:
        self.retrievers.append(query)

    def on_chat_model_start(self, serialized: Any, messages: Any, **kwargs: Any) -> None:
        self.prompts.append(str(messages[0][-1].content))


def _fake(reply: str) -> FakeListChatModel:
    return FakeListChatModel(responses=[reply] * 5)


def test_callbacks_see_every_step(bundled_settings) -> None:  # type: ignore[no-untyped-def]
    answerer = Answerer(bundled_settings, llm=_fake("Cake cuts time to first token by 2.6× [1]."))
    steps = StepNames()
    final = answerer.answer(QUESTION, config={"callbacks": [steps]})
    assert set(steps.chains) >= STEPS and "papertalk" in steps.chains
    assert steps.retrievers == [QUESTION]  # the chain retrieves through the BaseRetriever
    assert QUESTION in steps.prompts[0] and "<passages>" in steps.prompts[0]
    assert not final.refused and final.citations[0].paper_id == CAKE_ID
    assert "[1]" in final.answer


def test_astream_events_sees_the_steps_and_streams_the_answer(bundled_settings) -> None:  # type: ignore[no-untyped-def]
    answerer = Answerer(bundled_settings, llm=_fake("Cake cuts time to first token by 2.6× [1]."))

    async def collect() -> tuple[list[str], list[AnswerEvent]]:
        names: list[str] = []
        streamed: list[AnswerEvent] = []
        request = {"question": QUESTION, "mode": "ask"}
        async for event in answerer.runnable.astream_events(request, version="v2"):
            if event["event"].endswith("_start"):
                names.append(event["name"])
            if event["event"] == "on_chain_stream" and event["name"] == "papertalk":
                streamed.append(event["data"]["chunk"])
        return names, streamed

    names, streamed = asyncio.run(collect())
    assert set(names) >= STEPS and "PaperRetriever" in names
    assert names.index("retrieve") < names.index("context") < names.index("generate")
    assert names.index("generate") < names.index("cite")
    kinds = [e.kind for e in streamed]
    assert kinds[0] == "retrieved" and "token" in kinds and kinds[-1] == "final"
    assert streamed[-1].answer is not None and "2.6" in streamed[-1].answer.answer


def test_runnable_composes_with_user_code(bundled_settings) -> None:  # type: ignore[no-untyped-def]
    retriever = open_retriever(bundled_settings, k=3)
    assert isinstance(retriever, BaseRetriever)
    documents = retriever.invoke("KV cache loading")
    assert len(documents) == 3 and documents[0].metadata["paper_id"] == CAKE_ID
    hit = document_to_hit(documents[0])
    assert hit_to_document(hit) == documents[0]  # the round trip keeps every field
    answerer = Answerer(bundled_settings, retriever=retriever, llm_spec="extractive")
    text = (answerer.runnable | (lambda event: event.answer.answer)).invoke(QUESTION)
    assert "2.6" in text and "[1]" in text
    final = answerer.runnable.invoke(AnswerRequest(QUESTION)).answer
    assert final is not None and final.answer == text


def test_per_call_k_and_filters_reach_the_retriever(bundled_settings) -> None:  # type: ignore[no-untyped-def]
    from rag.retrieve.hybrid import SearchFilters

    retriever = open_retriever(bundled_settings)
    assert isinstance(retriever, PaperRetriever)
    assert len(retriever.invoke("diffusion", k=2)) == 2
    only = SearchFilters(paper_ids=frozenset({CAKE_ID}))
    assert [d.metadata["paper_id"] for d in retriever.invoke("diffusion", filters=only)] == [
        CAKE_ID
    ]


def test_modes_share_one_signature_and_one_registry() -> None:
    expected = {"ask": ask.run, "list": listing.run, "authors": listing.run_author}
    expected["compare"] = compare.run
    expected["ranked"], expected["similar"] = ranked.run, similar.run
    assert {**expected, "summarize": summarize.run, "topics": topics.run} == MODES
    signatures = {str(inspect.signature(mode)) for mode in MODES.values()}
    assert len(signatures) == 1


def test_an_unknown_mode_is_one_clear_error(bundled_settings) -> None:  # type: ignore[no-untyped-def]
    import pytest

    from rag.errors import PaperTalkError

    answerer = Answerer(bundled_settings, llm_spec="extractive")
    with pytest.raises(PaperTalkError, match="unknown mode 'poem'"):
        answerer.answer(QUESTION, mode="poem")
