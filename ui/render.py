"""Pure rendering for the web UI: answers → chat messages, citations → source cards.

No gradio here: every function takes `rag` records and returns a string, so all of it is tested
without a server. Every piece of paper or user text goes through `escape`/`escape_md` before it
reaches the page: a title such as `<img src=x onerror=alert(1)>` is shown as text.

Anchors: the source card of reference [n] of turn t has the id `pt-src-t-n`; the chat's citation
links point to it (`#pt-src-t-n`) and the page's script (ui/assets.py) shows it on click.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from datetime import UTC, datetime
from typing import Any

from rag.answer.citations import UNSUPPORTED, WEAK, lexical_containment
from rag.answer.modes.extractive import EXTRACTIVE_LABEL
from rag.records import STATUSES, Answer, Citation, PaperHit
from rag.text.sentences import split_sentences
from ui.session import Conversation, Turn

# Characters that are HTML or Markdown syntax, as entities (one pass, so entities stay intact).
_HTML = {"&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;"}
_MD_INLINE = {"[": "&#91;", "]": "&#93;", "`": "&#96;", "\\": "&#92;", "$": "&#36;"}
_MD_FULL = {**_MD_INLINE, "*": "&#42;", "_": "&#95;", "#": "&#35;", "|": "&#124;", "~": "&#126;"}
_ESCAPE = str.maketrans(_HTML)
_ESCAPE_MD_INLINE = str.maketrans({**_HTML, **_MD_INLINE})
_ESCAPE_MD = str.maketrans({**_HTML, **_MD_FULL})
_SAFE_URL = re.compile(r"^https?://[^\s<>\"'`]+$", re.IGNORECASE)
_REF = re.compile(r"\[(\d{1,3})\]")
MAX_AUTHORS = 3
_ENDS = (".", "?", "!")
HIGHLIGHT_MIN = 0.3  # word containment for a passage sentence to count as the supporting one

PLACEHOLDER = (
    '<div class="pt-empty"><p><b>Sources</b></p><p>Each paper cited in an answer appears '
    "here: its title (linked to OpenReview), authors, status and the passage that supports the "
    "answer, with the supporting sentences highlighted. Click a citation number in the chat to "
    "jump to its source.</p></div>"
)


# Escaping -------------------------------------------------------------------------------------
def escape(text: str) -> str:
    """Text for an HTML context (element content or a quoted attribute)."""
    return str(text).translate(_ESCAPE)


def escape_md(text: str) -> str:
    """Text for a Markdown message: HTML-escaped, and no Markdown syntax left to interpret."""
    return str(text).translate(_ESCAPE_MD)


def _escape_md_inline(text: str) -> str:
    """Like `escape_md`, but keeps table pipes and emphasis (structure built by `rag.modes`)."""
    return str(text).translate(_ESCAPE_MD_INLINE)


def safe_url(url: str) -> str | None:
    """The URL if it is a plain http(s) URL, else None (never a javascript: or data: link)."""
    url = (url or "").strip()
    return url if _SAFE_URL.match(url) else None


def link(url: str, text: str, css_class: str = "") -> str:
    """An external link that opens in a new tab, or the escaped text when the URL is unsafe."""
    target = safe_url(url)
    label = escape(text)
    if target is None:
        return label
    cls = f' class="{css_class}"' if css_class else ""
    return f'<a{cls} href="{escape(target)}" target="_blank" rel="noopener noreferrer">{label}</a>'


def authors_short(authors: Sequence[str], limit: int = MAX_AUTHORS) -> str:
    if not authors:
        return "unknown authors"
    shown = ", ".join(authors[:limit])
    return shown + (" et al." if len(authors) > limit else "")


# Chat messages -------------------------------------------------------------------------------
def anchor_id(turn: int, ref: int) -> str:
    return f"pt-src-{turn}-{ref}"


def cite_link(turn: int, ref: int) -> str:
    """A clickable [n] that shows source n of this turn in the sources panel."""
    return (
        f'<a class="pt-cite" href="#{anchor_id(turn, ref)}" title="Show source {ref}">'
        f"&#91;{ref}&#93;</a>"
    )


def _link_markers(text: str, turn: int, refs: set[int], escaper: Any) -> str:
    """Escape `text`, turning each `[n]` whose n is a known reference into a citation link."""
    out: list[str] = []
    last = 0
    for match in _REF.finditer(text):
        n = int(match.group(1))
        if n not in refs:
            continue
        out.append(escaper(text[last : match.start()]))
        out.append(cite_link(turn, n))
        last = match.end()
    out.append(escaper(text[last:]))
    return "".join(out)


def _sentence_markdown(text: str, refs: Sequence[int], support: str, turn: int) -> str:
    body = escape_md(text)
    ending = ""
    if body and body[-1] in ".!?":
        body, ending = body[:-1], body[-1]
    links = "".join(cite_link(turn, n) for n in dict.fromkeys(refs))
    if links:
        body = f"{body} {links}"
    body += ending
    if support == UNSUPPORTED:
        return (
            f'<span class="pt-unsupported" title="Not supported by the cited passage">'
            f"⚠ {body}</span>"
        )
    if support == WEAK:
        title = "Only weakly supported by the cited passage"
        return f'<span class="pt-weak" title="{title}">{body}</span>'
    return body


def answer_markdown(answer: Answer, turn: int) -> str:
    """The final chat message for an answer: cited text with clickable markers, flags, notes."""
    if answer.error:
        return error_markdown(answer.error, answer.related)
    if answer.refused:
        return refusal_markdown(answer)
    refs = {c.n for c in answer.citations}
    if answer.mode == "ask" and answer.sentences:
        body = " ".join(
            _sentence_markdown(s.text, s.citations, s.support, turn) for s in answer.sentences
        )
    elif answer.mode == "summarize":
        body = _link_markers(_strip_bibliography(answer.answer), turn, refs, _escape_md_inline)
        body += "\n\n" + bibliography_markdown(answer.citations, turn)
    else:
        body = _link_markers(answer.answer, turn, refs, _escape_md_inline)
    notes: list[str] = []
    if any(s.support == UNSUPPORTED for s in answer.sentences):
        notes.append("⚠ marks a sentence the cited passage does not support")
    if any(s.support == WEAK for s in answer.sentences):
        notes.append("dotted underline: weakly supported")
    if answer.extractive:
        notes.append(EXTRACTIVE_LABEL.lower())
    footer = f"{answer.llm}" + (f" · {_seconds(answer)}" if answer.timings_ms else "")
    notes.append(footer)
    return f'{body}\n\n<span class="pt-note">{escape_md(" · ".join(notes))}</span>'


def _seconds(answer: Answer) -> str:
    total = answer.timings_ms.get("total") or max(answer.timings_ms.values(), default=0.0)
    return f"{total / 1000:.1f} s"


def _strip_bibliography(text: str) -> str:
    head, sep, _ = text.rpartition("\n\nReferences:\n")
    return head if sep else text


def bibliography_markdown(citations: Sequence[Citation], turn: int) -> str:
    entries = [
        f"{cite_link(turn, c.n)} {link(c.url, c.title)}{'' if c.title.endswith(_ENDS) else '.'} "
        f"{escape_md(authors_short(c.authors, 6))}. ICML 2025."
        for c in citations
    ]
    return "**References**\n\n" + "\n".join(entries)


def refusal_markdown(answer: Answer) -> str:
    text = escape_md(answer.answer)
    if not answer.related:
        return text
    items = "\n".join(f"- {_hit_line(h)}" for h in answer.related)
    return f"{text}\n\n**Possibly related papers:**\n\n{items}"


def error_markdown(error: str, hits: Sequence[PaperHit] = ()) -> str:
    text = f'<span class="pt-error">⚠ Error: {escape_md(error)}</span>'
    if hits:
        items = "\n".join(f"- {_hit_line(h)}" for h in hits)
        text += f"\n\n**Retrieved papers** (no answer was generated):\n\n{items}"
    return text


def _hit_line(hit: PaperHit) -> str:
    badge = f" · {escape_md(hit.status)}" if hit.status else ""
    return f"{link(hit.url, hit.title)} — {escape_md(authors_short(hit.authors))}{badge}"


def streaming_markdown(turn: Turn) -> str:
    """The message while an answer streams in."""
    if turn.partial:
        return escape_md(turn.partial) + " ▍"
    if turn.hits:
        n = len(turn.hits)
        return f"_Reading {n} retrieved paper{'s' if n != 1 else ''}…_"
    return "_Searching the papers…_"


def turn_message(turn: Turn) -> str:
    if turn.error is not None:
        return error_markdown(turn.error, turn.hits)
    if turn.answer is not None:
        return answer_markdown(turn.answer, turn.number)
    return streaming_markdown(turn)


def chat_messages(conversation: Conversation) -> list[dict[str, str]]:
    """The chatbot's value: user and assistant messages in order."""
    messages: list[dict[str, str]] = []
    for turn in conversation.turns:
        prefix = "" if turn.mode == "ask" else f"**{turn.mode.capitalize()}:** "
        messages.append({"role": "user", "content": prefix + escape_md(turn.question)})
        messages.append({"role": "assistant", "content": turn_message(turn)})
    return messages


# Source cards ---------------------------------------------------------------------------------
def passage_sentences(citation: Citation) -> list[tuple[str, bool]]:
    """The passage's sentences with a flag for "a gap in the abstract comes before it".

    `citation.spans` are the sentences' offsets in the abstract and the passage is those
    sentences joined by spaces; when they don't line up, the passage is split afresh.
    """
    passage = citation.passage
    out: list[tuple[str, bool]] = []
    pos = 0
    previous_end: int | None = None
    for start, end in citation.spans:
        length = end - start
        piece = passage[pos : pos + length]
        if length <= 0 or len(piece) != length:
            break
        gap = start > 0 if previous_end is None else start > previous_end + 2
        out.append((piece, gap))
        pos += length + 1
        previous_end = end
    else:
        if out and pos - 1 == len(passage):
            return out
    return [(passage[s.start : s.end], False) for s in split_sentences(passage)]


def highlighted(sentences: Sequence[str], supporting: Sequence[str]) -> set[int]:
    """Indexes of the passage sentences that support the answer's sentences (best word match)."""
    marked: set[int] = set()
    for claim in supporting:
        scores = [lexical_containment(claim, [s]) for s in sentences]
        if not scores:
            continue
        best = max(range(len(scores)), key=lambda i: scores[i])
        if scores[best] >= HIGHLIGHT_MIN:
            marked.add(best)
    return marked


def passage_html(citation: Citation) -> str:
    pieces = passage_sentences(citation)
    marked = highlighted([p for p, _ in pieces], citation.supporting)
    parts: list[str] = []
    for i, (text, gap) in enumerate(pieces):
        if gap:
            parts.append('<span class="pt-gap">…</span>')
        body = escape(text)
        parts.append(f'<mark class="pt-support">{body}</mark>' if i in marked else body)
    return " ".join(parts)


def status_badge(status: str) -> str:
    status = (status or "").lower()
    if status not in STATUSES:
        return ""
    return f'<span class="pt-badge pt-badge-{status}">{status}</span>'


def source_card(citation: Citation, turn: int) -> str:
    extra = []
    if safe_url(citation.pmlr_url):
        extra.append(link(citation.pmlr_url, "PMLR"))
    if citation.attributed:
        extra.append("cited by PaperTalk (the model gave no marker)")
    footer = f'<div class="pt-card-foot">{" · ".join(extra)}</div>' if extra else ""
    return (
        f'<article class="pt-card" id="{anchor_id(turn, citation.n)}" data-ref="{citation.n}">'
        f'<div class="pt-card-head"><span class="pt-num">{citation.n}</span>'
        f"{link(citation.url, citation.title, 'pt-title')}</div>"
        f'<div class="pt-meta">{status_badge(citation.status)}'
        f'<span class="pt-authors">{escape(authors_short(citation.authors))}</span></div>'
        f'<blockquote class="pt-passage">{passage_html(citation)}</blockquote>'
        f"{footer}</article>"
    )


def hit_card(hit: PaperHit) -> str:
    passage = hit.passages[0].text if hit.passages else ""
    short = passage if len(passage) <= 360 else passage[:359].rsplit(" ", 1)[0] + " …"
    return (
        f'<article class="pt-card pt-card-related">'
        f'<div class="pt-card-head">{link(hit.url, hit.title, "pt-title")}</div>'
        f'<div class="pt-meta">{status_badge(hit.status)}'
        f'<span class="pt-authors">{escape(authors_short(hit.authors))}</span></div>'
        + (f'<blockquote class="pt-passage">{escape(short)}</blockquote>' if short else "")
        + "</article>"
    )


def turn_sources(turn: Turn) -> str:
    """The sources section of one turn (cards, related papers, or retrieved papers)."""
    answer = turn.answer
    if answer is not None and not answer.error and not answer.refused and answer.citations:
        label = f"{len(answer.citations)} cited paper{'s' if len(answer.citations) != 1 else ''}"
        cards = "".join(source_card(c, turn.number) for c in answer.citations)
    elif answer is not None and answer.refused:
        label = "No answer in the papers · possibly related"
        cards = "".join(hit_card(h) for h in answer.related)
    elif turn.failed:
        hits = answer.related if answer is not None else turn.hits
        label = "Generation failed · retrieved papers" if hits else "Error"
        cards = "".join(hit_card(h) for h in hits)
    elif turn.hits:
        label = f"Retrieved {len(turn.hits)} papers…"
        cards = "".join(hit_card(h) for h in turn.hits)
    else:
        label, cards = "Searching…", ""
    return (
        f'<div class="pt-turn-head"><span class="pt-turn-label">{escape(label)}</span>'
        f'<span class="pt-turn-q">{escape(turn.question)}</span></div>{cards}'
    )


def sources_html(conversation: Conversation) -> str:
    """The sources panel: one section per turn, the latest one shown (citation clicks show
    an older one)."""
    if not conversation.turns:
        return f'<div class="pt-sources">{PLACEHOLDER}</div>'
    sections = []
    last = conversation.turns[-1].number
    for turn in conversation.turns:
        hidden = "" if turn.number == last else " pt-hidden"
        sections.append(
            f'<section class="pt-turn{hidden}" id="pt-turn-{turn.number}" '
            f'data-turn="{turn.number}">{turn_sources(turn)}</section>'
        )
    return f'<div class="pt-sources">{"".join(sections)}</div>'


# Programs and exports ------------------------------------------------------------------------
def api_error_message(error: str, hits: Sequence[PaperHit] = ()) -> str:
    """The `/ask` error text: the error, then the papers retrieved before generation failed."""
    if not hits:
        return error
    papers = "; ".join(f"[{n}] {hit.title} ({hit.url})" for n, hit in enumerate(hits, start=1))
    return f"{error}. Retrieved papers: {papers}"


def citations_json(answer: Answer) -> list[dict[str, Any]]:
    """The citations as plain JSON (for the `/ask` API)."""
    return [
        {**c.to_json(), "status": c.status, "pmlr_url": c.pmlr_url, "supporting": c.supporting}
        for c in answer.citations
    ]


def conversation_markdown(conversation: Conversation, now: datetime | None = None) -> str:
    """The conversation as a Markdown document, each answer followed by its references."""
    stamp = (now or datetime.now(UTC)).strftime("%Y-%m-%d %H:%M UTC")
    lines = [
        "# PaperTalk conversation",
        "",
        f"Exported {stamp}. Answers cite ICML 2025 papers.",
        "",
    ]
    for i, turn in enumerate(conversation.turns, start=1):
        mode = "" if turn.mode == "ask" else f" ({turn.mode})"
        lines += [f"## {i}. {_one_line(turn.question)}{mode}", ""]
        answer = turn.answer
        if turn.error is not None or (answer is not None and answer.error):
            lines += [f"Error: {turn.error or (answer.error if answer else '')}", ""]
            continue
        if answer is None:
            lines += ["(no answer)", ""]
            continue
        text = _strip_bibliography(answer.answer) if answer.mode == "summarize" else answer.answer
        lines += [text, ""]
        flagged = [s.text for s in answer.sentences if s.support == UNSUPPORTED]
        for sentence in flagged:
            lines.append(f"> Not supported by the cited passage: {sentence}")
        if flagged:
            lines.append("")
        if answer.refused and answer.related:
            lines += ["Possibly related:", ""]
            lines += [
                f"- {_sentence(h.title)} {authors_short(h.authors)}. {h.url}"
                for h in answer.related
            ]
            lines.append("")
        if answer.citations:
            lines += ["References:", ""]
            for c in answer.citations:
                lines.append(
                    f"[{c.n}] {_sentence(c.title)} {authors_short(c.authors, 6)}. ICML 2025. "
                    f"{c.url}"
                )
            lines.append("")
    return "\n".join(lines).rstrip() + "\n"


def _sentence(title: str) -> str:
    """A title as a sentence: 'Why Not Both?' stays, 'Cake' becomes 'Cake.'"""
    title = _one_line(title)
    return title if title.endswith((".", "?", "!")) else f"{title}."


def _one_line(text: str) -> str:
    return " ".join(text.split())


def ingest_report_markdown(report: Any, filename: str, papers_total: int | None = None) -> str:
    """What an upload did: added / updated / unchanged / skipped, with the first problems."""
    lines = [
        f"**{escape_md(filename)}**: {report.added} added, {report.updated} updated, "
        f"{report.unchanged} unchanged, {len(report.skipped)} skipped "
        f"({report.chunks_embedded} chunks embedded in {report.seconds:.1f} s)."
    ]
    if papers_total is not None:
        lines.append(f"The store now holds {papers_total} papers.")
    for label, problems in (("Skipped", report.skipped), ("Warning", report.warnings)):
        for problem in problems[:10]:
            lines.append(f"- {label}: {escape_md(_problem(problem))}")
        if len(problems) > 10:
            lines.append(f"- … and {len(problems) - 10} more")
    return "\n".join(lines)


def _problem(problem: Any) -> str:
    """'line 3: no abstract' (the file is named above; the server's path is not shown)."""
    where = getattr(problem, "where", None)
    reason = getattr(problem, "reason", None)
    if reason is None:
        return str(problem)
    if not where:
        return str(reason)
    return f"{where if str(where).startswith('item') else 'line ' + str(where)}: {reason}"


def ingest_error_markdown(message: str) -> str:
    return f'<span class="pt-error">⚠ Upload failed: {escape_md(message)}</span>'


def header_markdown(paper_count: int | None, llm: str, *, loaded: bool = True) -> str:
    """The page title and what is being served (`paper_count` None: no store yet)."""
    line = "Ask about ICML 2025 papers: every answer cites the abstracts it comes from."
    if loaded and paper_count is None:
        line += " No papers yet: add a paper list under *Add papers* (or run `papertalk ingest`)."
    elif loaded:
        line += f" {paper_count} papers in the store."
    return f"# PaperTalk\n{line} LLM: {escape_md(llm)}."


def backends_markdown(statuses: Sequence[Any], configured: str) -> str:
    """One line per backend: whether it can answer now and why."""
    lines = []
    for status in statuses:
        mark = "✓ ready" if status.ok else "⚠ unavailable"
        note = " (configured)" if status.spec == configured else ""
        lines.append(f"- **{escape_md(status.spec)}**{note}: {mark}, {escape_md(status.detail)}")
    return "\n".join(lines)
