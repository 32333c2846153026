"""The UI's pure rendering: answers → chat messages, citations → source cards (no server)."""

from __future__ import annotations

import re
from datetime import UTC, datetime

from rag.answer.refusal import CANNOT_ANSWER
from rag.ingest.loaders import Problem
from rag.ingest.pipeline import IngestReport
from rag.records import Answer, AnswerSentence, Citation, PaperHit, Passage
from rag.retrieve.hybrid import SearchFilters
from ui import render
from ui.session import Conversation

XSS = "<img src=x onerror=alert(1)>"
ABSTRACT = (
    "Long contexts are slow to prefill. "  # 0-34
    "Cake loads part of the KV cache from disk and computes the rest. "  # 35-99
    "It balances both with a bidirectional schedule. "  # 100-147
    "Cake achieves on average 2.6x reduction in time to first token."  # 148-211
)


def _span(sentence: str) -> tuple[int, int]:
    start = ABSTRACT.index(sentence)
    return start, start + len(sentence)


S1 = "Cake loads part of the KV cache from disk and computes the rest."
S2 = "Cake achieves on average 2.6x reduction in time to first token."


def cake_citation(**overrides: object) -> Citation:
    values: dict[str, object] = {
        "n": 1,
        "paper_id": "WOyOtaO6lQ",
        "title": "Compute or Load KV Cache? Why Not Both?",
        "authors": ["Shuowei Jin", "Xueshen Liu", "Qingzhao Zhang", "Zhuoqing Mao"],
        "url": "https://openreview.net/forum?id=WOyOtaO6lQ",
        "passage": f"{S1} {S2}",
        "attributed": False,
        "status": "poster",
        "pmlr_url": "https://proceedings.mlr.press/v267/jin25a.html",
        "spans": [_span(S1), _span(S2)],
        "supporting": ["Cake achieves on average 2.6x reduction in time to first token."],
    }
    values.update(overrides)
    return Citation(**values)  # type: ignore[arg-type]


def hit(title: str = "Compute or Load KV Cache? Why Not Both?", **overrides: object) -> PaperHit:
    values: dict[str, object] = {
        "paper_id": "WOyOtaO6lQ",
        "title": title,
        "authors": ["Shuowei Jin"],
        "url": "https://openreview.net/forum?id=WOyOtaO6lQ",
        "status": "poster",
        "score": 0.5,
        "passages": [Passage("c0", S1, 35, 99)],
    }
    values.update(overrides)
    return PaperHit(**values)  # type: ignore[arg-type]


def ask_answer(**overrides: object) -> Answer:
    values: dict[str, object] = {
        "question": "How much does Cake reduce time to first token?",
        "answer": "Cake achieves on average 2.6x reduction in time to first token [1].",
        "mode": "ask",
        "llm": "extractive",
        "refused": False,
        "citations": [cake_citation()],
        "sentences": [AnswerSentence(S2, [1], "supported")],
        "timings_ms": {"total": 1234.0},
        "extractive": True,
    }
    values.update(overrides)
    return Answer(**values)  # type: ignore[arg-type]


def conversation_with(*answers: Answer) -> Conversation:
    conversation = Conversation()
    for answer in answers:
        turn = conversation.start(answer.question, answer.mode)
        turn.answer = answer
    return conversation


# Escaping ----------------------------------------------------------------------------------
def test_html_in_a_title_is_text_in_cards_chat_and_lists() -> None:
    citation = cake_citation(title=XSS, authors=["<b>Eve</b>"], passage=f"{XSS} is bad.")
    card = render.source_card(citation, turn=1)
    assert "<img" not in card and "<b>" not in card
    assert "&lt;img src=x onerror=alert(1)&gt;" in card and "&lt;b&gt;Eve&lt;/b&gt;" in card

    refused = ask_answer(refused=True, answer=CANNOT_ANSWER, citations=[], related=[hit(XSS)])
    for text in (render.answer_markdown(refused, 1), render.turn_sources(_turn(refused))):
        assert "<img" not in text and "&lt;img" in text


def _turn(answer: Answer):  # type: ignore[no-untyped-def]
    return conversation_with(answer).turns[-1]


def test_markdown_links_and_html_in_answers_and_questions_are_neutralised() -> None:
    sneaky = "See [this](javascript:alert(1)) <script>alert(2)</script> `code` *x*."
    answer = ask_answer(sentences=[AnswerSentence(sneaky, [1], "supported")])
    message = render.answer_markdown(answer, 1)
    assert "<script>" not in message and "](javascript:" not in message
    assert "&lt;script&gt;" in message and "&#91;this&#93;" in message

    conversation = Conversation()
    conversation.start(sneaky, "ask")
    user = render.chat_messages(conversation)[0]
    assert user["role"] == "user" and "<script>" not in user["content"]


def test_unsafe_urls_are_not_links() -> None:
    assert render.safe_url("javascript:alert(1)") is None
    assert render.safe_url("https://openreview.net/forum?id=x") is not None
    assert render.link('https://x.org/"onmouseover=alert(1)', "t") == "t"
    card = render.source_card(cake_citation(url="javascript:alert(1)", pmlr_url=""), 1)
    assert "javascript:" not in card and "href" not in card.split("pt-passage")[0]


# Chat messages -----------------------------------------------------------------------------
def test_citation_markers_become_links_to_the_turns_source_cards() -> None:
    message = render.answer_markdown(ask_answer(), turn=3)
    links = re.findall(r'<a class="pt-cite" href="#(pt-src-3-1)"', message)
    assert links == ["pt-src-3-1"]
    assert "2.6x reduction" in message and "&#91;1&#93;</a>." in message
    assert "extractive answer" in message and "1.2 s" in message
    card = render.source_card(cake_citation(), turn=3)
    assert 'id="pt-src-3-1"' in card


def test_unsupported_and_weak_sentences_are_visibly_marked() -> None:
    answer = ask_answer(
        sentences=[
            AnswerSentence(S2, [1], "supported"),
            AnswerSentence("Cake needs no GPU.", [1], "unsupported"),
            AnswerSentence("It is fast.", [], "weak"),
        ]
    )
    message = render.answer_markdown(answer, 1)
    assert '<span class="pt-unsupported"' in message and "⚠ Cake needs no GPU" in message
    assert '<span class="pt-weak"' in message
    assert "does not support" in message  # the legend


def test_refusal_lists_possibly_related_papers() -> None:
    refused = ask_answer(refused=True, answer=CANNOT_ANSWER, citations=[], related=[hit()])
    message = render.answer_markdown(refused, 1)
    assert message.startswith(render.escape_md(CANNOT_ANSWER))
    assert "Possibly related papers" in message and "Compute or Load KV Cache?" in message
    panel = render.turn_sources(_turn(refused))
    assert "possibly related" in panel and "pt-card-related" in panel


def test_refusal_shows_what_each_related_paper_says_closest() -> None:
    refused = ask_answer(
        refused=True,
        answer=CANNOT_ANSWER,
        citations=[],
        related=[hit()],
        refusal_reason="the abstract of Cake does not state 'learning rate'",
        closest={"WOyOtaO6lQ": S2},
    )
    message = render.answer_markdown(refused, 1)
    assert "does not state" in message and "learning rate" in message
    assert render.escape_md(S2) in message and "closest to the question" in message


def test_a_refusal_answers_the_parts_the_papers_do_state_with_citations() -> None:
    refused = ask_answer(
        refused=True,
        answer=CANNOT_ANSWER,
        refusal_reason="the abstract of Cake does not state 'learning rate'",
        partial=f"{S2} [1]",
    )
    message = render.answer_markdown(refused, 1)
    assert message.startswith(render.escape_md(CANNOT_ANSWER))
    assert render.PARTIAL_HEAD in message and "does not state" in message
    assert message.index("does not state") < message.index(render.PARTIAL_HEAD)
    assert render.cite_link(1, 1) in message  # the marker opens the cited card
    panel = render.turn_sources(_turn(refused))
    assert "1 cited paper" in panel and "possibly related" not in panel
    exported = render.conversation_markdown(conversation_with(refused))
    assert f"{render.PARTIAL_HEAD}:" in exported and "References:" in exported
    # Without a partial answer, no heading.
    plain = ask_answer(refused=True, answer=CANNOT_ANSWER, citations=[], sentences=[])
    assert render.PARTIAL_HEAD not in render.answer_markdown(plain, 1)


def test_removed_sentences_are_noted_with_their_reason() -> None:
    note = 'Removed "Cake cuts TTFT by 2.6%.": the cited passage does not state 2.6%.'
    answer = ask_answer(removed=[note])
    message = render.answer_markdown(answer, 1)
    assert "1 generated sentence removed" in message
    assert "<details>" in message and render.escape_md(note) in message
    assert "removed" not in render.answer_markdown(ask_answer(), 1)


def test_api_error_lists_the_retrieved_papers() -> None:
    message = render.api_error_message("the LLM backend openai:x is unreachable", [hit()])
    assert message.startswith("the LLM backend openai:x is unreachable. Retrieved papers: [1] ")
    assert "Compute or Load KV Cache?" in message and "openreview.net" in message
    assert render.api_error_message("empty question", []) == "empty question"


def test_generation_error_keeps_the_retrieved_papers() -> None:
    failed = ask_answer(
        error="the LLM backend openai:x is unreachable", citations=[], related=[hit()]
    )
    message = render.answer_markdown(failed, 1)
    assert "Error: the LLM backend openai:x is unreachable" in message
    assert "Retrieved papers" in message and "Compute or Load KV Cache?" in message
    assert "Generation failed" in render.turn_sources(_turn(failed))


def test_compare_table_keeps_its_structure_and_links_markers() -> None:
    table = (
        "| paper | approach |\n|---|---|\n| Cake [1] | loads <b>and</b> computes [1] |\n"
        "| D-Fusion [2] | builds samples [2] |\n\nThey differ [3]."
    )
    answer = ask_answer(
        mode="compare",
        answer=table,
        citations=[cake_citation(), cake_citation(n=2, title="D-Fusion")],
    )
    message = render.answer_markdown(answer, 5)
    assert message.startswith('<div class="pt-table-wrap"><table class="pt-compare">')
    assert message.count("<tr>") == 3 and '<th scope="col">approach</th>' in message
    assert "#pt-src-5-1" in message and "#pt-src-5-2" in message
    assert "&#91;3&#93;" in message  # no source 3: left as text, not a link
    assert "<b>" not in message and "&lt;b&gt;and&lt;/b&gt;" in message
    assert "\n\n" not in message.split("</table></div>")[0]  # one HTML block for Markdown


DREAM_TITLE = (
    "DreamDPO: Aligning Text-to-3D Generation with Human Preferences via Direct Preference "
    "Optimization"
)
LONG_TITLE = "Compute or Load KV Cache? Why Not Both? A Study of Prefill Scheduling at Scale"
PROBLEM = (
    "However, existing methods often struggle to align generated content with human "
    "preferences, limiting their applicability and flexibility."
)
APPROACH = (
    "To address these limitations, in this paper, we propose DreamDPO, an optimization-based "
    "framework that integrates human preferences into the 3D generation process."
)
RESULT = "Cake speeds up prefill by $3.31\\times$ and uses 40\\% less memory."


def compare_answer() -> Answer:
    table = "\n".join(
        [
            "| paper | problem | approach | data/setting | key result |",
            "|---|---|---|---|---|",
            f"| DreamDPO [1] | {PROBLEM} [1] | {APPROACH} [1] | — | {PROBLEM} [1] |",
            f"| Compute or Load KV Cache? Why [2] | — | Cake loads caches [2] | — | {RESULT} [2] |",
        ]
    )
    dream = cake_citation(
        title=DREAM_TITLE,
        passage=f"{PROBLEM} {APPROACH} {PROBLEM}",
        spans=[],
        supporting=[PROBLEM, APPROACH, PROBLEM],
    )
    cake = cake_citation(
        n=2,
        title=LONG_TITLE,
        passage=f"We present Cake, a KV cache loader. {RESULT}",
        spans=[],
        supporting=["Cake loads caches", RESULT],
    )
    return ask_answer(
        mode="compare",
        answer=table + "\n\nThey differ [1] [2].",
        citations=[dream, cake],
        sentences=[AnswerSentence(PROBLEM, [1], "supported")],
    )


def test_compare_rows_are_short_names_with_the_title_on_hover() -> None:
    message = render.answer_markdown(compare_answer(), 2)
    names = re.findall(r'<span class="pt-paper" title="([^"]*)">(.*?)</span>', message)
    assert names == [(DREAM_TITLE, "DreamDPO"), (LONG_TITLE, "Cake")]  # method name from text
    assert "data/setting" not in message  # a column empty in every row is left out
    assert "3.31×" in message and "40%" in message and "\\times" not in message


def test_compare_cells_are_short_with_the_full_quote_on_hover() -> None:
    message = render.answer_markdown(compare_answer(), 2)
    cells = re.findall(r"<td>(?:⚠ )?<span(?: title=\"([^\"]*)\")?>(.*?)</span>", message)
    for full, shown in cells:
        assert len(shown.replace("…", " ").split()) <= render.CELL_WORDS
        assert not full or shown.strip("…").rstrip(",.") != full
    approach = next(shown for full, shown in cells if full == APPROACH)
    assert approach.startswith("…we propose DreamDPO")  # the lead-in clause left out
    assert render.short_cell("Cake, a KV cache loader, cuts the prefill time by half.") == (
        "Cake, a KV cache loader, cuts the prefill time by half."
    )
    assert render.short_cell("The Cake system, by Jin, cuts the prefill time by half.") == (
        "The Cake system, by Jin, cuts the prefill time by half."
    )


def test_paper_names_never_cut_a_word() -> None:
    assert render.paper_name(DREAM_TITLE) == "DreamDPO"
    assert render.paper_name("Discovering Latent Causal Graphs", "We present SPACY, a") == "SPACY"
    short = render.shorten_title("Discovering Latent Causal Graphs from Spatiotemporal Data")
    assert short == "Discovering Latent Causal…"
    assert render.shorten_title("Supercalifragilisticexpialidocious-Networks") == (
        "Supercalifragilisticexpialidocious-Networks…"
    )


def test_compare_card_quotes_each_sentence_once_under_its_columns() -> None:
    answer = compare_answer()
    panel = render.turn_sources(_turn(answer))
    card = panel.split('id="pt-src-1-2"')[0]
    assert card.count(render.escape(PROBLEM)) == 1  # in two cells, quoted once
    assert "<dt>problem · key result</dt>" in card and "<dt>approach</dt>" in card
    assert "<mark" not in card  # every line is a quote: nothing singled out
    assert "3.31×" in panel and "40%" in panel


def test_a_passage_repeating_a_sentence_shows_it_once() -> None:
    card = render.source_card(cake_citation(passage=f"{S1} {S2} {S2}", spans=[]), 1)
    assert card.count("2.6x reduction") == 1


def test_list_answers_are_markdown_lists_with_linked_citations() -> None:
    answer = ask_answer(
        mode="list",
        answer="2 papers of the collection match (a rule):\n"
        "- Compute or Load KV Cache?: Cake loads **part** of the cache [1]\n"
        "- D-Fusion: it builds $\\sim 1.3\\times$ more samples [2]",
        citations=[cake_citation(), cake_citation(n=2, title="D-Fusion")],
        sentences=[
            AnswerSentence("Cake loads **part** of the cache", [1], "supported"),
            AnswerSentence("it builds $\\sim 1.3\\times$ more samples", [2], "unsupported"),
        ],
    )
    message = render.answer_markdown(answer, 4)
    lines = message.split("\n")
    assert lines[0].startswith("2 papers of the collection match") and lines[1] == ""
    assert lines[2].startswith("- <strong>Compute or Load KV Cache?</strong>: Cake loads")
    assert "<strong>part</strong>" in lines[2] and lines[2].endswith(
        'href="#pt-src-4-1" title="Show source 1">&#91;1&#93;</a>'
    )
    assert lines[3].startswith("- ⚠ <strong>D-Fusion</strong>") and "&#126;1.3×" in lines[3]


def test_topics_answers_show_each_topic_with_its_cited_paper() -> None:
    answer = ask_answer(
        mode="topics",
        answer="The 19 papers fall into 2 topics (100% of them belong to one); the 2 largest:\n"
        "- cache, attention (12 papers; 1 oral, 11 poster): Compute or Load KV Cache?: Cake "
        "loads part of the cache [1]",
        citations=[cake_citation()],
        sentences=[AnswerSentence("Cake loads part of the cache", [1], "supported")],
    )
    lines = render.answer_markdown(answer, 3).split("\n")
    assert lines[0].startswith("The 19 papers fall into 2 topics") and lines[1] == ""
    assert lines[2].startswith(
        "- <strong>cache, attention (12 papers; 1 oral, 11 poster)</strong>: Compute or Load"
    )
    assert lines[2].endswith('href="#pt-src-3-1" title="Show source 1">&#91;1&#93;</a>')


def test_ranked_authors_show_each_name_count_and_every_cited_paper_linked() -> None:
    second = cake_citation(n=2, paper_id="WVlEwFiDGH", title="D-Fusion")
    answer = ask_answer(
        mode="ranked",
        answer="The authors with the most papers among the 19 papers of the collection:\n"
        "- Shuowei Jin: 2 papers: Compute or Load KV Cache? [1]; D-Fusion [2]\n"
        "- Zhuoqing Mao: 5 papers: Compute or Load KV Cache? [1] (and 4 more)",
        citations=[cake_citation(), second],
        sentences=[AnswerSentence("Shuowei Jin: 2 papers.", [1, 2], "supported")],
    )
    lines = render.answer_markdown(answer, 5).split("\n")
    assert lines[0].startswith("The authors with the most papers") and lines[1] == ""
    assert lines[2].startswith("- <strong>Shuowei Jin</strong>: 2 papers: Compute or Load KV")
    assert 'href="#pt-src-5-1"' in lines[2] and 'href="#pt-src-5-2"' in lines[2]
    assert lines[3].endswith("(and 4 more)") and 'href="#pt-src-5-1"' in lines[3]


def test_summarize_shows_a_linked_bibliography() -> None:
    body = "**KV caches**\n- Compute or Load KV Cache?: Cake loads and computes [1]"
    answer = ask_answer(
        mode="summarize",
        answer=f"{body}\n\nReferences:\n[1] Compute or Load KV Cache? Why Not Both?. ICML 2025.",
        bibtex="@inproceedings{jin2025compute, ...}",
    )
    message = render.answer_markdown(answer, 2)
    assert "**KV caches**" in message and "**References**" in message
    assert message.count("References") == 1
    assert 'href="https://openreview.net/forum?id=WOyOtaO6lQ"' in message


def test_streaming_message_shows_progress_then_text() -> None:
    conversation = Conversation()
    turn = conversation.start("q", "ask")
    assert "Searching" in render.streaming_markdown(turn)
    turn.hits = [hit()]
    assert "Reading 1 retrieved paper" in render.streaming_markdown(turn)
    turn.partial = "Cake <i>is</i> fast"
    assert render.streaming_markdown(turn).startswith("Cake &lt;i&gt;is&lt;/i&gt; fast")


def test_chat_messages_alternate_user_and_assistant() -> None:
    conversation = conversation_with(ask_answer(), ask_answer(mode="compare"))
    messages = render.chat_messages(conversation)
    assert [m["role"] for m in messages] == ["user", "assistant"] * 2
    assert messages[2]["content"].startswith("**Compare:**")
    assert "#pt-src-2-1" in messages[3]["content"]


# Source cards ------------------------------------------------------------------------------
def test_passage_sentences_follow_the_spans_and_mark_gaps() -> None:
    pieces = render.passage_sentences(cake_citation())
    assert pieces == [(S1, True), (S2, True)]  # S1 is not the abstract's start; S2 skips one


def test_passage_falls_back_to_splitting_when_spans_do_not_fit() -> None:
    pieces = render.passage_sentences(cake_citation(spans=[(0, 5)]))
    assert [p for p, _ in pieces] == [S1, S2]
    assert render.passage_sentences(cake_citation(spans=[])) == [(S1, False), (S2, False)]


def test_card_highlights_the_supporting_sentence() -> None:
    card = render.source_card(cake_citation(), turn=1)
    marked = re.findall(r'<mark class="pt-support">(.*?)</mark>', card)
    assert marked == [S2]
    assert "Shuowei Jin, Xueshen Liu, Qingzhao Zhang et al." in card
    assert 'class="pt-badge pt-badge-poster"' in card and ">PMLR<" in card
    assert 'href="https://openreview.net/forum?id=WOyOtaO6lQ" target="_blank"' in card


def test_paraphrased_support_highlights_the_best_matching_sentence() -> None:
    card = render.source_card(
        cake_citation(supporting=["Cake cuts the time to first token 2.6x on average."]), 1
    )
    assert re.findall(r"<mark[^>]*>(.*?)</mark>", card) == [S2]
    unrelated = render.source_card(cake_citation(supporting=["Penguins swim."]), 1)
    assert "<mark" not in unrelated


def test_attributed_citation_is_explained_in_words() -> None:
    card = render.source_card(cake_citation(attributed=True), 1)
    assert "Source found by PaperTalk: the model&#39;s sentence named none" in card
    assert "marker" not in card
    message = render.answer_markdown(ask_answer(citations=[cake_citation(attributed=True)]), 1)
    assert 'title="Show source 1 (found by PaperTalk)"' in message
    assert "PaperTalk" not in render.source_card(cake_citation(), 1)


# Paper text: LaTeX, Markdown and HTML from abstracts ----------------------------------------
LATEX = (
    "Cake is $3.31\\times$ faster, within $\\sim 1.3\\times$ of optimal, using 40\\% less memory."
)
MARKED = "We propose **Cake**, a *bidirectional* loader <script>alert(5)</script>."


def latex_citation() -> Citation:
    passage = f"{MARKED} {LATEX}"
    return cake_citation(
        title="Cake: $\\alpha$-Loading", passage=passage, spans=[], supporting=[LATEX]
    )


def test_latex_and_emphasis_render_in_answers() -> None:
    answer = ask_answer(
        citations=[latex_citation()],
        sentences=[
            AnswerSentence(LATEX, [1], "supported"),
            AnswerSentence(MARKED, [1], "supported"),
        ],
    )
    message = render.answer_markdown(answer, 1)
    assert "3.31× faster, within &#126;1.3× of optimal, using 40% less memory" in message
    assert "$" not in message and "&#36;" not in message and "&#92;" not in message
    assert "<strong>Cake</strong>" in message and "<em>bidirectional</em>" in message
    assert "&#42;" not in message and "**" not in message
    assert "<script>" not in message and "&lt;script&gt;alert(5)&lt;/script&gt;" in message


def test_latex_and_emphasis_render_in_source_cards() -> None:
    card = render.source_card(latex_citation(), 1)
    assert "Cake: α-Loading" in card
    marked = re.findall(r'<mark class="pt-support">(.*?)</mark>', card)
    assert marked == ["Cake is 3.31× faster, within ~1.3× of optimal, using 40% less memory."]
    assert "<strong>Cake</strong>" in card and "<em>bidirectional</em>" in card
    assert "<script>" not in card and "&lt;script&gt;" in card
    related = render.hit_card(hit("$\\alpha$-Cake", passages=[Passage("c", LATEX, 0, 9)]))
    assert "α-Cake" in related and "3.31×" in related and "$" not in related


def test_latex_renders_in_the_export_and_html_is_not_live() -> None:
    answer = ask_answer(
        answer=f"{LATEX} [1] {MARKED} [1]",
        citations=[latex_citation()],
        sentences=[AnswerSentence(LATEX, [1], "unsupported")],
    )
    text = render.conversation_markdown(conversation_with(answer))
    assert "Cake is 3.31× faster, within ~1.3× of optimal, using 40% less memory. [1]" in text
    assert "**Cake**" in text  # Markdown emphasis stays Markdown
    assert "<script>" not in text and "&lt;script>alert(5)&lt;/script>" in text
    assert "> Not supported by the cited passage: Cake is 3.31×" in text
    assert "[1] Cake: α-Loading." in text


# Refusals, filters, header ------------------------------------------------------------------
def test_a_refusal_says_why_in_the_chat_and_the_export() -> None:
    refused = ask_answer(
        refused=True,
        answer=CANNOT_ANSWER,
        citations=[],
        related=[hit()],
        refusal_reason="the papers never mention <GPUs>",
    )
    message = render.answer_markdown(refused, 1)
    assert message.startswith(render.escape_md(CANNOT_ANSWER) + "\n\n")
    assert '<span class="pt-reason">Why: the papers never mention &lt;GPUs&gt;.</span>' in message
    assert message.index("Why:") < message.index("Possibly related")
    assert 'class="pt-note"' in message  # the footer marks the answer as complete
    text = render.conversation_markdown(conversation_with(refused))
    assert f"{CANNOT_ANSWER}\n\nWhy: the papers never mention &lt;GPUs>." in text
    assert "Why" not in render.answer_markdown(ask_answer(refused=True, answer=CANNOT_ANSWER), 1)


def test_filters_are_shown_with_the_question_and_exported() -> None:
    conversation = conversation_with(ask_answer())
    conversation.turns[0].filters = SearchFilters(status="oral", author="Jin", title="<cache>")
    user = render.chat_messages(conversation)[0]["content"]
    assert user.startswith("How much does Cake reduce time to first token?<br>")
    assert (
        '<span class="pt-filters">Filters: status oral, author “Jin”, title contains '
        "“&lt;cache&gt;”</span>"
    ) in user
    text = render.conversation_markdown(conversation)
    assert "*Filters: status oral, author “Jin”, title contains “&lt;cache>”*" in text
    plain = conversation_with(ask_answer())
    assert "Filters" not in render.chat_messages(plain)[0]["content"]
    assert "Filters" not in render.conversation_markdown(plain)


def test_header_names_the_backend_it_is_given() -> None:
    assert render.header_markdown(19, "extractive").endswith(
        "19 papers in the store. LLM: extractive."
    )
    assert "LLM: local." in render.header_markdown(None, "local")


def test_sources_panel_shows_the_latest_turn_and_keeps_older_ones() -> None:
    assert "pt-empty" in render.sources_html(Conversation())
    conversation = conversation_with(ask_answer(), ask_answer())
    panel = render.sources_html(conversation)
    assert panel.count('class="pt-turn pt-hidden"') == 1
    assert 'id="pt-src-1-1"' in panel and 'id="pt-src-2-1"' in panel
    assert re.search(r'<section class="pt-turn" id="pt-turn-2"', panel)


def test_status_badge_only_for_known_statuses() -> None:
    assert "pt-badge-oral" in render.status_badge("Oral")
    assert render.status_badge("<script>") == ""


# Programs and exports ----------------------------------------------------------------------
def test_citations_json_for_the_api() -> None:
    [entry] = render.citations_json(ask_answer())
    assert entry["n"] == 1 and entry["paper_id"] == "WOyOtaO6lQ"
    assert entry["status"] == "poster" and entry["supporting"]
    assert set(entry) >= {"title", "authors", "url", "passage", "attributed", "pmlr_url"}


def test_conversation_export_has_answers_and_references() -> None:
    refused = ask_answer(
        question="How many GPUs?", refused=True, answer=CANNOT_ANSWER, citations=[], related=[hit()]
    )
    conversation = conversation_with(ask_answer(), refused)
    text = render.conversation_markdown(conversation, now=datetime(2025, 7, 1, tzinfo=UTC))
    assert text.startswith("# PaperTalk conversation\n")
    assert "## 1. How much does Cake reduce time to first token?" in text
    assert "2.6x reduction in time to first token [1]." in text
    assert (
        "[1] Compute or Load KV Cache? Why Not Both? Shuowei Jin, Xueshen Liu, Qingzhao Zhang, "
        "Zhuoqing Mao. ICML 2025. https://openreview.net/forum?id=WOyOtaO6lQ"
    ) in text
    assert "## 2. How many GPUs?" in text and "Possibly related:" in text


def test_ingest_report_lists_counts_and_problems() -> None:
    report = IngestReport(added=2, updated=1, unchanged=3, chunks_embedded=4, seconds=1.5)
    report.skipped = [Problem("/tmp/gradio/abc/papers.jsonl", 3, "no abstract <b>")]
    report.warnings = [Problem("/tmp/gradio/abc/papers.jsonl", 2, "odd status", unit="item")]
    text = render.ingest_report_markdown(report, "papers<1>.jsonl", papers_total=25)
    assert "2 added, 1 updated, 3 unchanged, 1 skipped" in text
    assert "papers&lt;1&gt;.jsonl" in text and "25 papers" in text
    assert "- Skipped: line 3: no abstract &lt;b&gt;" in text
    assert "- Warning: item 2: odd status" in text and "/tmp/gradio" not in text
