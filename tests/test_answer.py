"""The answering chain over the bundled corpus: extractive, a scripted fake LLM for edge cases,
and the real bundled SmolLM2 model."""

from __future__ import annotations

from typing import Any

import pytest
from langchain_core.language_models.fake_chat_models import FakeListChatModel

from rag.answer.chain import Answerer
from rag.answer.refusal import CANNOT_ANSWER
from rag.errors import PaperTalkError

from .conftest import CAKE_ID

CAKE_Q = "How much does Cake reduce time to first token?"
GPU_Q = "How many GPUs were used in Cake's experiments?"
JSON_KEYS = {
    "question",
    "refusal_reason",
    "partial",
    "removed",
    "answer",
    "mode",
    "llm",
    "refused",
    "citations",
    "sentences",
    "related",
    "timings_ms",
}


@pytest.fixture(scope="module")
def searcher(bundled_home, onnx_cache):  # type: ignore[no-untyped-def]
    from rag.retrieve.hybrid import open_searcher
    from rag.settings import Settings

    return open_searcher(Settings(home=bundled_home, cache_dir=onnx_cache))


def make(searcher: Any, llm: Any = None, spec: str = "extractive", **settings: Any) -> Answerer:
    return Answerer(
        searcher.settings.with_overrides(**settings), searcher=searcher, llm=llm, llm_spec=spec
    )


class RecordingFake(FakeListChatModel):
    """A scripted chat model that remembers the prompts it got."""

    prompts: list[str] = []  # noqa: RUF012 - pydantic field, copied per instance

    def _call(self, messages, stop=None, run_manager=None, **kwargs):  # type: ignore[no-untyped-def]
        self.prompts.append("\n".join(str(m.content) for m in messages))
        return super()._call(messages, stop, run_manager, **kwargs)

    def _stream(self, messages, stop=None, run_manager=None, **kwargs):  # type: ignore[no-untyped-def]
        self.prompts.append("\n".join(str(m.content) for m in messages))
        yield from super()._stream(messages, stop, run_manager, **kwargs)


def fake(*responses: str) -> RecordingFake:
    return RecordingFake(responses=list(responses), prompts=[])


# Extractive -------------------------------------------------------------------------------------
def test_extractive_cake_answer(searcher) -> None:  # type: ignore[no-untyped-def]
    answer = make(searcher).answer(CAKE_Q)
    assert not answer.refused and "2.6" in answer.answer
    assert answer.citations[0].paper_id == CAKE_ID and not answer.citations[0].attributed
    assert all(s.support == "supported" and s.citations for s in answer.sentences)
    payload = answer.to_json()
    assert set(payload) == JSON_KEYS and payload["llm"] == "extractive"
    assert set(payload["citations"][0]) == {
        "n",
        "paper_id",
        "title",
        "authors",
        "url",
        "passage",
        "attributed",
    }
    assert set(payload["timings_ms"]) == {"retrieve", "first_token", "total"}
    # The passage shown is the abstract's own text.
    assert "2.6" in answer.citations[0].passage


@pytest.mark.parametrize("question", [GPU_Q, "What is the boiling point of water on Mars?"])
def test_unanswerable_questions_are_refused_before_any_generation(searcher, question) -> None:  # type: ignore[no-untyped-def]
    model = fake("Cake used 8 A100 GPUs [1].")
    for answerer in (make(searcher), make(searcher, model, "openai:fake")):
        answer = answerer.answer(question)
        assert answer.refused and answer.answer == CANNOT_ANSWER
        assert answer.citations == [] and answer.sentences == []
        if "GPU" in question:
            assert CAKE_ID in [h.paper_id for h in answer.related]
    assert model.prompts == []


def test_followup_uses_the_history(searcher) -> None:  # type: ignore[no-untyped-def]
    history = [("What is Cake?", "Cake is a KV cache loading system [1].")]
    answer = make(searcher).answer("How much does it reduce time to first token?", history=history)
    assert CAKE_ID in answer.query or "Cake" in answer.query
    assert not answer.refused and answer.citations[0].paper_id == CAKE_ID
    assert "2.6" in answer.answer


def test_a_follow_up_of_a_follow_up_still_searches_for_the_first_subject(searcher) -> None:  # type: ignore[no-untyped-def]
    from rag.answer.conversation import standalone_query

    history = [
        ("What is DreamDPO?", "A text-to-3D method [1]."),
        ("What is Cake?", "A KV cache loading system [1]."),
        ("How does it work?", "It computes and loads the cache in parallel [1]."),
    ]
    query = standalone_query("What does it improve?", history)
    assert query == "What is Cake? How does it work? What does it improve?"
    named = "What does DreamDPO optimise in text-to-3D generation?"
    assert standalone_query(named, history) == named
    answer = make(searcher).answer("How much does it reduce time to first token?", history=history)
    assert not answer.refused and answer.citations[0].paper_id == CAKE_ID


def test_who_wrote_a_paper_is_answered_from_its_metadata(searcher) -> None:  # type: ignore[no-untyped-def]
    for answerer in (
        make(searcher),
        make(searcher, fake("Invented Author wrote it [1]."), "openai:fake"),
    ):
        answer = answerer.answer("Who wrote Cake?")
        assert not answer.refused and [c.paper_id for c in answer.citations] == [CAKE_ID]
        authors = answer.citations[0].authors
        assert len(authors) >= 2 and all(name in answer.answer for name in authors)
        assert "Invented" not in answer.answer and answer.answer.endswith("[1]")
        assert [s.support for s in answer.sentences] == ["supported"]
    # a follow-up: "its" is the paper just discussed
    history = [("What is Cake?", "Cake is a KV cache loading system [1].")]
    answer = make(searcher).answer("Who are its authors?", history=history)
    assert [c.paper_id for c in answer.citations] == [CAKE_ID]
    # two named papers: one byline each
    both = make(searcher).answer("Who wrote Cake and DreamDPO?")
    assert len(both.citations) == 2 and CAKE_ID in [c.paper_id for c in both.citations]
    assert all(f"[{c.n}]" in both.answer and c.authors[0] in both.answer for c in both.citations)
    # a paper nobody wrote is still refused
    assert make(searcher).answer("Who wrote FooNet-7?").refused


def test_followup_keeps_the_cited_paper_even_with_vague_wording(searcher) -> None:  # type: ignore[no-untyped-def]
    answer = make(searcher).answer(
        "What does it keep that DPO training needs?",
        history=[("Tell me about a method", "It builds samples [1].")],
        history_papers=["WVlEwFiDGH"],
    )
    assert "WVlEwFiDGH" in [c.paper_id for c in answer.citations]


def test_compare_builds_a_cited_table(searcher) -> None:  # type: ignore[no-untyped-def]
    answer = make(searcher).answer("Compare D-Fusion and DreamDPO", mode="compare")
    assert not answer.refused
    lines = answer.answer.splitlines()
    assert lines[0].startswith("| paper | problem | approach | data/setting | key result |")
    rows = [line for line in lines[2:] if line.startswith("|")]
    assert len(rows) == 2
    cited = {c.paper_id for c in answer.citations}
    assert cited == {"WVlEwFiDGH", "WIIfdh0GJu"}
    for row in rows:
        cells = [c.strip() for c in row.strip("|").split("|")]
        ref = cells[0].rsplit("[", 1)[1].rstrip("]")
        assert all(c == "not stated" or c.endswith(f"[{ref}]") for c in cells[1:])


def test_summarize_has_themes_bibliography_and_bibtex(searcher) -> None:  # type: ignore[no-untyped-def]
    answer = make(searcher).answer("causal discovery and latent variables", mode="summarize")
    assert not answer.refused
    assert "References:" in answer.answer and "**" in answer.answer
    assert len(answer.citations) >= 2
    assert answer.bibtex.count("@inproceedings{") == len(answer.citations)
    assert "openreview.net/forum?id=" in answer.bibtex


# Scripted fake LLM: parsing and control-flow edge cases -----------------------------------------
def test_fake_llm_markers_are_cleaned_and_mapped(searcher) -> None:  # type: ignore[no-untyped-def]
    model = fake("Cake achieves a 2.6x reduction in time to first token [1][7]. [3]")
    answer = make(searcher, model, "openai:fake").answer(CAKE_Q)
    assert not answer.refused
    assert "[7]" not in answer.answer
    retrieved = {h.paper_id for h in make(searcher).searcher.search(answer.query, 5)}
    assert {c.paper_id for c in answer.citations} <= retrieved
    assert answer.citations[0].paper_id == CAKE_ID and answer.citations[0].n == 1
    assert answer.sentences[0].support == "supported"
    # Retrieved text is delimited data in the prompt, with the fixed instructions first.
    prompt = model.prompts[0]
    assert prompt.startswith("You answer questions about research papers.")
    assert '[1] "' in prompt and "Question: " + CAKE_Q in prompt


def test_fake_llm_without_citations_gets_attributed_ones(searcher) -> None:  # type: ignore[no-untyped-def]
    model = fake("Cake achieves on average 2.6x reduction in Time to First Token.")
    answer = make(searcher, model, "openai:fake").answer(CAKE_Q)
    assert answer.citations and answer.citations[0].paper_id == CAKE_ID
    assert answer.citations[0].attributed and answer.to_json()["citations"][0]["attributed"]


def test_a_model_declining_what_the_passages_state_is_overruled_by_quotes(searcher) -> None:  # type: ignore[no-untyped-def]
    # The gates found the asked amount in Cake's abstract: a model that declines, or says
    # nothing, adds nothing, and the abstract is quoted instead of refusing.
    for said in ("The papers do not say.", " "):
        answer = make(searcher, fake(said), "openai:fake").answer(CAKE_Q)
        assert not answer.refused and answer.answer != CANNOT_ANSWER
        assert answer.extractive and answer.llm == "openai:fake (extractive fallback)"
        assert "2.6" in answer.answer and "do not say" not in answer.answer
        assert answer.citations[0].paper_id == CAKE_ID
        streamed = make(searcher, fake(said), "openai:fake").stream(CAKE_Q)
        assert "do not say" not in "".join(e.text for e in streamed if e.kind == "token")


def test_a_model_declining_an_unanswerable_question_is_never_asked(searcher) -> None:  # type: ignore[no-untyped-def]
    # A detail no abstract states is refused by the gates, before any model is asked.
    model = fake("The papers do not say.")
    answer = make(searcher, model, "openai:fake").answer("What learning rate does Cake use?")
    assert answer.refused and answer.answer == CANNOT_ANSWER and answer.related
    assert model.prompts == []


def test_fake_llm_invented_number_is_flagged(searcher) -> None:  # type: ignore[no-untyped-def]
    answer = make(
        searcher, fake("Cake cuts time to first token by 9.9x [1]."), "openai:fake"
    ).answer(CAKE_Q)
    assert "9.9" not in answer.answer  # removed, and the answer quotes the abstract instead
    assert answer.removed == [
        'Removed "Cake cuts time to first token by 9.9x.": the cited passage does not state 9.9×.'
    ]
    assert "2.6" in answer.answer and answer.llm.endswith("(extractive fallback)")


def test_unsupported_model_answer_falls_back_to_quotes(searcher) -> None:  # type: ignore[no-untyped-def]
    answer = make(
        searcher, fake("Bananas grow on tall plants in warm places [1]."), "openai:fake"
    ).answer(CAKE_Q)
    assert not answer.refused and answer.extractive
    assert answer.llm == "openai:fake (extractive fallback)"
    assert "Bananas" not in answer.answer and "2.6" in answer.answer
    assert answer.citations[0].paper_id == CAKE_ID
    assert all(s.support == "supported" for s in answer.sentences)


def test_backend_failure_keeps_the_retrieved_papers(searcher) -> None:  # type: ignore[no-untyped-def]
    class Broken(FakeListChatModel):
        def _stream(self, *args, **kwargs):  # type: ignore[no-untyped-def]
            raise ConnectionError("Connection refused")
            yield  # pragma: no cover

    answer = make(searcher, Broken(responses=["x"]), "openai:fake").answer(CAKE_Q)
    assert answer.error and "unreachable" in answer.error
    assert CAKE_ID in [h.paper_id for h in answer.related]


def test_fake_llm_condenses_followups(searcher) -> None:  # type: ignore[no-untyped-def]
    model = fake("How much does Cake reduce TTFT?", "Cake reduces TTFT by 2.6x [1].")
    answer = make(searcher, model, "openai:fake").answer(
        "How much does it reduce time to first token?",
        history=[("What is Cake?", "A KV cache loading system.")],
    )
    assert answer.query.startswith("How much does Cake reduce TTFT?")
    assert answer.citations[0].paper_id == CAKE_ID


def test_bad_questions_and_modes(searcher) -> None:  # type: ignore[no-untyped-def]
    answerer = make(searcher)
    with pytest.raises(PaperTalkError, match="empty question"):
        answerer.answer(" \x00\n ")
    with pytest.raises(PaperTalkError, match="unknown mode"):
        answerer.answer("x y z", mode="poem")
    long = answerer.answer("Cake " * 5000)
    assert len(long.question) <= 2000


# The real bundled model -------------------------------------------------------------------------
def test_local_model_answers_with_valid_citations_and_refuses(searcher) -> None:  # type: ignore[no-untyped-def]
    """The bundled model's answer keeps only sentences a cited passage supports, nothing else is
    ever streamed, and when it wrote nothing supported the answer quotes the abstract and says
    what was removed. A detail the abstract does not give is refused."""
    answerer = make(searcher, spec="local")
    events = list(answerer.stream(CAKE_Q))
    shown = "".join(e.text for e in events if e.kind == "token")
    final = events[-1].answer
    assert not final.refused and final.error is None
    assert final.cited_paper_ids == [CAKE_ID]
    assert final.sentences and all(s.support in ("supported", "weak") for s in final.sentences)
    assert final.timings_ms["first_token"] > 0
    assert "2.6" in final.answer
    if final.llm == "local":  # the model's own sentences, each shown only after its check
        assert shown and all(s.text in shown for s in final.sentences)
    else:  # nothing the model wrote held up: quotes instead, and why
        assert final.llm == "local (extractive fallback)"
        assert final.removed and not shown
    assert answerer.answer(GPU_Q).refused


@pytest.mark.parametrize(
    ("question", "leans_on_history"),
    [
        ("How does it work?", True),
        ("Why?", True),
        ("And the speed-up?", True),
        ("Summarize them", True),
        ("What is Cake?", False),
        ("Compare D-Fusion and DreamDPO", False),
        ("Which papers study causal discovery with latent confounders?", False),
        ("Which one is faster?", True),  # one of the papers just discussed
        ("How do the two differ in memory?", True),
        ("Does the other one need labels?", True),
        ("One paper sorts by quartz; what does it use?", True),
        ("One paper sorts by quartz. What data?", False),
        ("And how many target datasets?", True),  # carries on the last question
        ("What about the memory footprint?", True),
        ("How many target datasets are there?", False),
        ("And which papers study garment folding robots?", False),  # a new question
    ],
)
def test_what_counts_as_a_follow_up(question: str, leans_on_history: bool) -> None:
    from rag.answer.conversation import is_followup

    assert is_followup(question) is leans_on_history


@pytest.mark.parametrize(
    ("previous", "question", "full"),
    [
        ("What is the speed of FooNet?", "And BarNet?", "What is the speed of BarNet?"),
        ("What is the speed of FooNet?", "What about Quartz?", "What is the speed of Quartz?"),
        (
            "What else did the first author publish?",
            "And the last author?",
            "What else did the last author publish?",
        ),
        (
            "What accuracy does FooNet reach on FooSet?",
            "How about on BarSet?",
            "What accuracy does FooNet reach on BarSet?",
        ),
        # Which of two names it stands for is unclear; a phrase the question does not have.
        ("How does FooNet beat BarNet?", "And Quartz?", "And Quartz?"),
        ("What is the speed of FooNet?", "What about its memory?", "What about its memory?"),
        ("What is the speed of FooNet?", "And why?", "And why?"),
        # Not an ellipsis: a question of its own.
        ("What is the speed of FooNet?", "What is BarNet?", "What is BarNet?"),
    ],
)
def test_an_ellipsis_asks_the_previous_question_again(
    previous: str, question: str, full: str
) -> None:
    from rag.answer.conversation import resolve_ellipsis

    assert resolve_ellipsis(question, [(previous, "An answer [1].")]) == full
    assert resolve_ellipsis(question, []) == question


@pytest.mark.parametrize(
    ("question", "leans"),
    [
        ("Which GPU was used to measure the latency?", True),  # "the latency" was just said
        ("How large are these speed-ups?", True),  # said in the answer
        ("Which GPU was used to measure the throughput?", False),  # not said
        ("What is the state of the art?", False),
    ],
)
def test_a_definite_description_of_what_was_just_said_leans_on_the_last_turn(
    question: str, leans: bool
) -> None:
    from rag.answer.conversation import speaks_of_last_turn

    history = [("What limits FooNet's inference latency?", "Its layers give 60% speed-ups [1].")]
    assert speaks_of_last_turn(question, history) is leans
    assert not speaks_of_last_turn(question, [])


def test_a_question_about_what_was_just_said_stays_with_its_paper(searcher) -> None:  # type: ignore[no-untyped-def]
    answerer = make(searcher)
    first = answerer.answer("How much does Cake cut time to first token?")
    answer = answerer.answer(
        "Which datasets show the reduction?",  # names nothing; "the reduction" was just said
        history=[(first.question, first.answer)],
        history_papers=[CAKE_ID],
    )
    assert answer.refused or answer.cited_paper_ids == [CAKE_ID]


def test_an_ellipsis_after_an_ellipsis_keeps_the_first_question() -> None:
    from rag.answer.conversation import resolve_ellipsis

    history = [("What is the speed of FooNet?", "Fast [1]."), ("And BarNet?", "Slow [1].")]
    assert resolve_ellipsis("And Quartz?", history) == "What is the speed of Quartz?"


def test_an_ellipsis_is_answered_as_the_full_question(searcher) -> None:  # type: ignore[no-untyped-def]
    answerer = make(searcher)
    first = answerer.answer("Who wrote DreamDPO?")
    history = [(first.question, first.answer)]
    papers = [c.paper_id for c in first.citations]
    first_author = answerer.answer(
        "What else did the first author publish?", history=history, history_papers=papers
    )
    last_author = answerer.answer(
        "And the last author?",
        history=[*history, ("What else did the first author publish?", first_author.answer)],
        history_papers=papers,
    )
    assert first_author.mode == last_author.mode == "authors"
    assert "Zhenglin Zhou" in first_author.answer and "Tat-Seng Chua" in last_author.answer
    # "And DreamDPO?" asks how much DreamDPO cuts time to first token: it does not say.
    cake = answerer.answer("How much does Cake cut time to first token?")
    other = answerer.answer("And DreamDPO?", history=[(cake.question, cake.answer)])
    assert other.refused and other.refusal_reason == "no passage states the asked-for amount"


def test_a_model_rewrite_that_invents_a_topic_is_not_searched() -> None:
    from rag.answer.conversation import rewrite_is_faithful

    history = [("What is Cake?", "Cake is a KV cache loading system [1]. It is fast [1].")]
    assert rewrite_is_faithful("How does Cake work?", "How does it work?", history)
    invented = "Cake is a light-weight data processing system for image editing applications."
    assert not rewrite_is_faithful(invented, "How does it work?", history)
    assert not rewrite_is_faithful("Yes.", "How does it work?", history)


def test_a_follow_up_about_it_keeps_to_the_paper_just_discussed(searcher) -> None:  # type: ignore[no-untyped-def]
    from rag.answer.conversation import is_about_the_last_paper

    assert is_about_the_last_paper("How does it work?")
    assert not is_about_the_last_paper("How does it compare to DreamDPO?")
    assert not is_about_the_last_paper("What do they have in common?")
    answer = make(searcher).answer(
        "How does it work?",
        history=[("What is Cake?", "A KV cache loading system [1].")],
        history_papers=[CAKE_ID],
    )
    assert [h.paper_id for h in answer.related] in ([], [CAKE_ID])
    assert answer.cited_paper_ids == [CAKE_ID]
