"""Pure rendering for the web UI: answers → chat messages, citations → source cards.

No gradio here: every function takes `rag` records and returns a string, so all of it is tested
without a server. Every piece of paper or user text goes through `escape`/`escape_md` before it
reaches the page: a title such as `<img src=x onerror=alert(1)>` is shown as text. Paper text
(titles, abstracts' sentences) first has its LaTeX shown as Unicode and its Markdown emphasis
as <strong>/<em> (`ui.text`), the same in the chat, the source cards and the exports.

Anchors: the source card of reference [n] of turn t has the id `pt-src-t-n`; the chat's citation
links point to it (`#pt-src-t-n`) and the page's script (ui/assets.py) shows it on click.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from rag.answer.citations import UNSUPPORTED, WEAK, lexical_containment
from rag.answer.modes.compare import NOT_STATED
from rag.answer.modes.extractive import EXTRACTIVE_LABEL
from rag.explore.similar import SimilarPaper
from rag.records import STATUSES, Answer, Citation, PaperHit
from rag.retrieve.hybrid import SearchFilters
from rag.text.latex import latex_to_text
from rag.text.names import method_name, short_names
from rag.text.sentences import split_sentences
from ui.session import Conversation, Turn
from ui.text import emphasis_spans, plain_text

# Characters that are HTML or Markdown syntax, as entities (one pass, so entities stay intact).
_HTML = {"&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;"}
_MD_INLINE = {"[": "&#91;", "]": "&#93;", "`": "&#96;", "\\": "&#92;", "$": "&#36;", "~": "&#126;"}
_MD_FULL = {**_MD_INLINE, "*": "&#42;", "_": "&#95;", "#": "&#35;", "|": "&#124;"}
_ESCAPE = str.maketrans(_HTML)
_ESCAPE_MD_INLINE = str.maketrans({**_HTML, **_MD_INLINE})
_ESCAPE_MD = str.maketrans({**_HTML, **_MD_FULL})
_SAFE_URL = re.compile(r"^https?://[^\s<>\"'`]+$", re.IGNORECASE)
_REF = re.compile(r"\[(\d{1,3})\]")
MAX_AUTHORS = 3
NAME_CHARS = 28  # a paper's name in a compare table: its method name, or its title cut short
CELL_WORDS = 12  # a compare table's cells show at most this many words (all of it on hover)
LEAD_WORDS = 5  # a lead-in clause ("To address this issue,") this short is left out of a cell
LIST_MODES = (
    "list",
    "authors",
    "topics",
    "ranked",
    "similar",
)  # answers that are a lead line and one "- " line per paper
ATTRIBUTED_NOTE = (
    "Source found by PaperTalk: the model's sentence named none, so it links to the passage "
    "that supports it best."
)
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


def paper_md(text: str) -> str:
    """Paper text for a chat message: LaTeX as Unicode, emphasis as tags, the rest escaped."""
    return _styled(latex_to_text(text), escape_md)


def paper_html(text: str) -> str:
    """Paper text for an HTML context (source cards): like `paper_md`."""
    return _styled(latex_to_text(text), escape)


def _styled(text: str, escaper: Any) -> str:
    """`text` escaped by `escaper`, with its Markdown emphasis shown as <strong>/<em>."""
    out = []
    for style, piece in emphasis_spans(text):
        body = escaper(piece)
        for tag in reversed(style.split()):
            body = f"<{tag}>{body}</{tag}>"
        out.append(body)
    return "".join(out)


def safe_url(url: str) -> str | None:
    """The URL if it is a plain http(s) URL, else None (never a javascript: or data: link)."""
    url = (url or "").strip()
    return url if _SAFE_URL.match(url) else None


def link(url: str, text: str, css_class: str = "", *, label_html: str | None = None) -> str:
    """An external link that opens in a new tab, or the escaped text when the URL is unsafe.
    `label_html` (already escaped) replaces the escaped `text` as the label."""
    target = safe_url(url)
    label = escape(text) if label_html is None else label_html
    if target is None:
        return label
    cls = f' class="{css_class}"' if css_class else ""
    return f'<a{cls} href="{escape(target)}" target="_blank" rel="noopener noreferrer">{label}</a>'


def title_link(url: str, title: str, css_class: str = "") -> str:
    """A paper's title (LaTeX and emphasis rendered) linked to its page."""
    return link(url, title, css_class, label_html=paper_html(title))


def authors_short(authors: Sequence[str], limit: int = MAX_AUTHORS) -> str:
    if not authors:
        return "unknown authors"
    shown = ", ".join(authors[:limit])
    return shown + (" et al." if len(authors) > limit else "")


# Chat messages -------------------------------------------------------------------------------
def anchor_id(turn: int, ref: int) -> str:
    return f"pt-src-{turn}-{ref}"


def cite_link(turn: int, ref: int, *, found: bool = False) -> str:
    """A clickable [n] that shows source n of this turn in the sources panel (`found`: the
    model cited nothing there, PaperTalk found the source)."""
    title = f"Show source {ref}" + (" (found by PaperTalk)" if found else "")
    return f'<a class="pt-cite" href="#{anchor_id(turn, ref)}" title="{title}">&#91;{ref}&#93;</a>'


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


def _sentence_markdown(
    text: str, refs: Sequence[int], support: str, turn: int, found: set[int] | None = None
) -> str:
    body = paper_md(text)
    ending = ""
    if body and body[-1] in ".!?":
        body, ending = body[:-1], body[-1]
    found = found or set()
    links = "".join(cite_link(turn, n, found=n in found) for n in dict.fromkeys(refs))
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


# Above the answer to the parts of a refused question that the papers do state.
PARTIAL_HEAD = "What the papers do state of the rest of the question"


def answer_markdown(answer: Answer, turn: int) -> str:
    """The final chat message for an answer: cited text with clickable markers, flags, notes."""
    if answer.error:
        return error_markdown(answer.error, answer.related)
    refs = {c.n for c in answer.citations}
    found = {c.n for c in answer.citations if c.attributed}
    if answer.refused:
        text = refusal_markdown(answer)
        if answer.partial:  # the parts of the question the papers do state, answered
            stated = " ".join(
                _sentence_markdown(s.text, s.citations, s.support, turn, found)
                for s in answer.sentences
            ) or _link_markers(answer.partial, turn, refs, _inline_md)
            text += f"\n\n**{PARTIAL_HEAD}**\n\n{stated}"
        return f'{text}\n\n<span class="pt-note">{_footer(answer)}</span>'
    if answer.mode == "ask" and answer.sentences:
        body = " ".join(
            _sentence_markdown(s.text, s.citations, s.support, turn, found)
            for s in answer.sentences
        )
    elif answer.mode == "summarize":
        body = _link_markers(_strip_bibliography(answer.answer), turn, refs, _inline_md)
        body += "\n\n" + bibliography_markdown(answer.citations, turn)
    elif answer.mode == "compare" and compare_table(answer.answer)[0]:
        unsupported = {s.text for s in answer.sentences if s.support == UNSUPPORTED}
        body = compare_markdown(answer.answer, turn, answer.citations, unsupported)
    elif answer.mode in LIST_MODES or any(
        line.startswith("- ") for line in answer.answer.split("\n")
    ):
        body = list_markdown(answer, turn)
    else:
        body = _link_markers(answer.answer, turn, refs, _inline_md)
    notes: list[str] = []
    if any(s.support == UNSUPPORTED for s in answer.sentences):
        notes.append("⚠ marks a sentence the cited passage does not support")
    if any(s.support == WEAK for s in answer.sentences) and answer.mode == "ask":
        notes.append("dotted underline: weakly supported")
    if answer.removed:
        n = len(answer.removed)
        notes.append(f"{n} generated sentence{'s' if n > 1 else ''} removed (unsupported)")
    if answer.extractive:
        notes.append(escape_md(EXTRACTIVE_LABEL.lower()))
    notes.append(_footer(answer))
    removed = "".join(f"\n- {escape_md(r)}" for r in answer.removed)
    details = (
        f"\n\n<details><summary>Removed sentences</summary>\n{removed}\n</details>"
        if removed
        else ""
    )
    return f'{body}\n\n<span class="pt-note">{" · ".join(notes)}</span>{details}'


def _footer(answer: Answer) -> str:
    """Which backend answered, and how long it took (escaped)."""
    return escape_md(answer.llm + (f" · {_seconds(answer)}" if answer.timings_ms else ""))


def _inline_md(text: str) -> str:
    """Markdown built by `rag` (summaries): LaTeX shown as Unicode, emphasis and list
    structure kept for the Markdown renderer, everything else escaped."""
    return _escape_md_inline(latex_to_text(text))


# Compare tables and paper lists ----------------------------------------------------------------
_RULE = re.compile(r"\|(?:\s*:?-+:?\s*\|)+")
_TRAILING_REF = re.compile(r"\s*\[(\d{1,3})\]\s*$")
_LIST_ITEM = re.compile(r"^(?P<name>[^:\n]{1,120}?): (?P<quote>.+?)\s*\[(?P<n>\d{1,3})\]\s*$")


@dataclass(frozen=True)
class CompareRow:
    ref: int | None  # the row's reference number
    name: str  # the paper as the table names it
    cells: list[str]  # one per column, without the marker; "" for an empty cell


def compare_table(text: str) -> tuple[list[str], list[CompareRow], str]:
    """A compare answer's Markdown table as (column names, rows, the prose after it); no
    columns when `text` does not start with a table."""
    lines = text.split("\n")
    count = next((i for i, line in enumerate(lines) if not line.startswith("|")), len(lines))
    if count < 3 or not _RULE.fullmatch(lines[1].strip()):
        return [], [], text
    header = _split_row(lines[0])
    rows = []
    for line in lines[2:count]:
        cells = [_TRAILING_REF.sub("", c) for c in _split_row(line)]
        cells = ["" if c in ("—", "-", "", NOT_STATED) else c for c in cells]
        refs = _TRAILING_REF.search(_split_row(line)[0])
        rows.append(CompareRow(int(refs.group(1)) if refs else None, cells[0], cells[1:]))
    return header, rows, "\n".join(lines[count:]).strip()


def _split_row(line: str) -> list[str]:
    return [cell.strip() for cell in line.strip().strip("|").split("|")]


def paper_name(title: str, context: str = "") -> str:
    """A short name for a paper: the name before its title's colon ("DreamDPO: ..."), the
    method its abstract introduces ("we propose Cake, ..."), a name-like word of its title, or
    its title cut at a word."""
    title = " ".join(title.split())
    head, sep, _ = title.partition(":")
    if sep and 1 <= len(head.split()) <= 3:
        return head.strip()
    introduced = method_name(context) if context else ""
    if introduced:
        return introduced
    names = short_names(title)
    return names[0] if names else shorten_title(title)


def shorten_title(title: str, limit: int = NAME_CHARS) -> str:
    """`title` cut at a word boundary within `limit` characters (never inside a word)."""
    title = " ".join(latex_to_text(title).split())
    if len(title) <= limit:
        return title
    cut = title[: limit + 1].rsplit(" ", 1)[0] if " " in title[:limit] else title.split(" ")[0]
    return cut.rstrip(",;:-–—?.") + "…"


def short_cell(text: str, words: int = CELL_WORDS) -> str:
    """A table cell shortened: without a lead-in clause ("To address these limitations,"), and
    at most `words` words. The cell's full text stays on hover and in its source card."""
    parts = text.split()
    dropped = False
    for _ in range(2):
        comma = next((i for i, w in enumerate(parts[:LEAD_WORDS]) if w.endswith(",")), None)
        lead = parts[: comma + 1] if comma is not None else []
        # A lead-in is 2-5 words without a name in it; what follows must still say something.
        if not 2 <= len(lead) <= LEAD_WORDS or any(w[:1].isupper() for w in lead[1:]):
            break
        if len(parts) - len(lead) < 6:
            break
        parts, dropped = parts[len(lead) :], True
    cut = len(parts) > words
    if cut:
        parts = parts[:words]
        parts[-1] = parts[-1].rstrip(",;:.")
    if parts and parts[-1] == "…":
        parts, cut = parts[:-1], True
    return ("…" if dropped else "") + " ".join(parts) + ("…" if cut else "")


def compare_markdown(
    text: str,
    turn: int,
    citations: Sequence[Citation] = (),
    unsupported: set[str] | frozenset[str] = frozenset(),
) -> str:
    """A compare answer: its table as a scrollable HTML table (rows named by short paper names,
    full titles on hover; cells shortened, full text on hover; columns empty in every row left
    out; ⚠ on a cell its abstract does not support), then its prose."""
    header, rows, rest = compare_table(text)
    by_ref = {c.n: c for c in citations}
    used = [i for i in range(len(header) - 1) if any(_cell(r, i) for r in rows)]
    head = "".join(
        f'<th scope="col">{escape(h)}</th>' for h in [header[0]] + [header[i + 1] for i in used]
    )
    body = []
    for row in rows:
        citation = by_ref.get(row.ref) if row.ref is not None else None
        if citation is not None:
            title = citation.title
            name = paper_name(title, " ".join([citation.passage, *citation.supporting]))
            marker = " " + cite_link(turn, citation.n)
        else:
            title, name = row.name, row.name.rstrip("…")
            marker = f" &#91;{row.ref}&#93;" if row.ref is not None else ""
        tip = escape(" ".join(plain_text(title).split()))
        cells = [
            f'<th scope="row"><span class="pt-paper" title="{tip}">'
            f"{paper_html(name)}</span>{marker}</th>"
        ]
        for i in used:
            cell = _cell(row, i)
            if not cell:
                cells.append(f'<td class="pt-none">{NOT_STATED}</td>')
                continue
            short = short_cell(cell)
            full = f' title="{escape(plain_text(cell))}"' if short != cell else ""
            flag = "⚠ " if cell in unsupported else ""
            cells.append(f"<td>{flag}<span{full}>{paper_html(short)}</span>{marker}</td>")
        body.append(f"<tr>{''.join(cells)}</tr>")
    table = (
        f'<div class="pt-table-wrap"><table class="pt-compare"><thead><tr>{head}</tr></thead>'
        f"<tbody>{''.join(body)}</tbody></table></div>"
    )
    if rest:
        refs = set(by_ref)
        table += "\n\n" + _link_markers(rest, turn, refs, _inline_md)
    return table


def _cell(row: CompareRow, i: int) -> str:
    return row.cells[i] if i < len(row.cells) else ""


def compare_quotes(answer: Answer) -> dict[int, list[tuple[str, str]]]:
    """For each reference of a compare answer: (columns, quoted sentence) pairs from its row,
    each sentence once (columns joined with " · " if it fills more than one)."""
    header, rows, _ = compare_table(answer.answer)
    quotes: dict[int, list[tuple[str, str]]] = {}
    for row in rows:
        if row.ref is None:
            continue
        seen: dict[str, list[str]] = {}
        for column, cell in zip(header[1:], row.cells, strict=False):
            if cell:
                seen.setdefault(cell, []).append(column)
        quotes[row.ref] = [(" · ".join(columns), cell) for cell, columns in seen.items()]
    return quotes


def list_markdown(answer: Answer, turn: int) -> str:
    """A list answer: its lead line, then one item per paper (name, quoted line, citation)."""
    by_ref = {c.n: c for c in answer.citations}
    unsupported = [s.text for s in answer.sentences if s.support == UNSUPPORTED]
    out: list[str] = []
    for line in answer.answer.split("\n"):
        if not line.startswith("- "):
            out.append(_link_markers(line, turn, set(by_ref), paper_md))
            continue
        item = line[2:]
        flag = "⚠ " if any(text and text in item for text in unsupported) else ""
        match = _LIST_ITEM.match(item)
        if match and int(match.group("n")) in by_ref:
            n = int(match.group("n"))
            name = f"<strong>{paper_md(match.group('name'))}</strong>"
            quote = _link_markers(match.group("quote"), turn, set(by_ref), paper_md)
            item_md = f"{name}: {quote} {cite_link(turn, n)}"
        else:
            item_md = _link_markers(item, turn, set(by_ref), paper_md)
        if out and not out[-1].startswith("- ") and out[-1] != "":
            out.append("")  # a list after a paragraph line
        out.append(f"- {flag}{item_md}")
    return "\n".join(out)


def _seconds(answer: Answer) -> str:
    total = answer.timings_ms.get("total") or max(answer.timings_ms.values(), default=0.0)
    return f"{total / 1000:.1f} s"


def _strip_bibliography(text: str) -> str:
    head, sep, _ = text.rpartition("\n\nReferences:\n")
    return head if sep else text


def bibliography_markdown(citations: Sequence[Citation], turn: int) -> str:
    entries = [
        f"{cite_link(turn, c.n)} {title_link(c.url, c.title)}"
        f"{'' if c.title.endswith(_ENDS) else '.'} "
        f"{escape_md(authors_short(c.authors, 6))}. ICML 2025."
        for c in citations
    ]
    return "**References**\n\n" + "\n".join(entries)


def refusal_markdown(answer: Answer) -> str:
    """The fixed refusal phrase, why the papers don't answer, and the possibly related papers."""
    text = escape_md(answer.answer)
    if answer.refusal_reason:
        text += f'\n\n<span class="pt-reason">{escape_md(refusal_reason(answer))}</span>'
    if not answer.related:
        return text
    items = "\n".join(
        f"- {_hit_line(h)}"
        + (
            f"<br>“{escape_md(answer.closest[h.paper_id])}”"
            if answer.closest.get(h.paper_id)
            else ""
        )
        for h in answer.related
    )
    head = "**Possibly related papers** (what each says closest to the question):"
    return f"{text}\n\n{head}\n\n{items}"


def refusal_reason(answer: Answer) -> str:
    """ "Why: ..." for a refusal with a reason, else ""."""
    reason = " ".join(answer.refusal_reason.split())
    if not reason:
        return ""
    return f"Why: {reason}" + ("" if reason.endswith(_ENDS) else ".")


def error_markdown(error: str, hits: Sequence[PaperHit] = ()) -> str:
    text = f'<span class="pt-error">⚠ Error: {escape_md(error)}</span>'
    if hits:
        items = "\n".join(f"- {_hit_line(h)}" for h in hits)
        text += f"\n\n**Retrieved papers** (no answer was generated):\n\n{items}"
    return text


def _hit_line(hit: PaperHit) -> str:
    badge = f" · {escape_md(hit.status)}" if hit.status else ""
    return f"{title_link(hit.url, hit.title)} — {escape_md(authors_short(hit.authors))}{badge}"


def streaming_markdown(turn: Turn) -> str:
    """The message while an answer streams in."""
    if turn.partial and turn.mode == "compare" and compare_table(turn.partial)[0]:
        return compare_markdown(turn.partial, turn.number) + " ▍"
    if turn.partial:
        return paper_md(turn.partial) + " ▍"
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
        question = prefix + escape_md(turn.question)
        if filters_text(turn.filters, turn.scope):
            label = escape_md(filters_text(turn.filters, turn.scope))
            question += f'<br><span class="pt-filters">{label}</span>'
        messages.append({"role": "user", "content": question})
        messages.append({"role": "assistant", "content": turn_message(turn)})
    return messages


def filters_text(filters: SearchFilters | None, scope: str = "") -> str:
    """The filters a question was asked with, in words ("" when none); `scope` names the topic
    its papers were restricted to."""
    if filters is None:
        return ""
    parts = []
    if filters.paper_ids is not None:
        parts.append(f"topic “{scope}”" if scope else f"{len(filters.paper_ids)} chosen papers")
    if filters.status:
        parts.append(f"status {filters.status.lower()}")
    if filters.author:
        parts.append(f"author “{filters.author}”")
    if filters.title:
        parts.append(f"title contains “{filters.title}”")
    return "Filters: " + ", ".join(parts) if parts else ""


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
    """The passage, each sentence once, the ones that support the answer highlighted."""
    pieces: list[tuple[str, bool]] = []
    for text, gap in passage_sentences(citation):
        if any(text == seen for seen, _ in pieces):
            continue
        pieces.append((text, gap))
    marked = highlighted([p for p, _ in pieces], citation.supporting)
    parts: list[str] = []
    for i, (text, gap) in enumerate(pieces):
        if gap:
            parts.append('<span class="pt-gap">…</span>')
        body = paper_html(text)
        parts.append(f'<mark class="pt-support">{body}</mark>' if i in marked else body)
    return " ".join(parts)


def quotes_html(quotes: Sequence[tuple[str, str]]) -> str:
    """A compare card's body: each sentence its row quotes, under the columns it fills."""
    items = "".join(
        f"<dt>{escape(columns)}</dt><dd>{paper_html(text)}</dd>" for columns, text in quotes
    )
    return f'<dl class="pt-quotes">{items}</dl>'


def status_badge(status: str) -> str:
    status = (status or "").lower()
    if status not in STATUSES:
        return ""
    return f'<span class="pt-badge pt-badge-{status}">{status}</span>'


def source_card(
    citation: Citation, turn: int, quotes: Sequence[tuple[str, str]] | None = None
) -> str:
    """The card of reference n: title, authors, status, and the passage the answer rests on
    (`quotes`: a compare table's cells from this paper, shown under their columns)."""
    extra = [similar_button(citation.paper_id)]
    if safe_url(citation.pmlr_url):
        extra.append(link(citation.pmlr_url, "PMLR"))
    if citation.attributed:
        extra.append(escape(ATTRIBUTED_NOTE))
    footer = f'<div class="pt-card-foot">{" · ".join(extra)}</div>' if extra else ""
    body = quotes_html(quotes) if quotes else passage_html(citation)
    return (
        f'<article class="pt-card" id="{anchor_id(turn, citation.n)}" data-ref="{citation.n}">'
        f'<div class="pt-card-head"><span class="pt-num">{citation.n}</span>'
        f"{title_link(citation.url, citation.title, 'pt-title')}</div>"
        f'<div class="pt-meta">{status_badge(citation.status)}'
        f'<span class="pt-authors">{escape(authors_short(citation.authors))}</span></div>'
        f'<blockquote class="pt-passage">{body}</blockquote>'
        f"{footer}</article>"
    )


def hit_card(hit: PaperHit) -> str:
    passage = hit.passages[0].text if hit.passages else ""
    return paper_card(hit.paper_id, hit.title, hit.url, hit.status, hit.authors, passage)


def paper_card(
    paper_id: str,
    title: str,
    url: str,
    status: str,
    authors: Sequence[str],
    passage: str,
    *,
    topic: str | None = None,
) -> str:
    """A paper's card outside an answer (retrieved papers, a point of the map): title, status,
    authors, its topic when known, the start of its passage, and the similar-papers action."""
    passage = latex_to_text(passage)
    short = passage if len(passage) <= 360 else passage[:359].rsplit(" ", 1)[0] + " …"
    topic_html = f'<span class="pt-topic">{escape(topic)}</span>' if topic else ""
    return (
        f'<article class="pt-card pt-card-related" data-paper="{escape(paper_id)}">'
        f'<div class="pt-card-head">{title_link(url, title, "pt-title")}</div>'
        f'<div class="pt-meta">{status_badge(status)}'
        f'<span class="pt-authors">{escape(authors_short(authors))}</span>{topic_html}</div>'
        + (f'<blockquote class="pt-passage">{paper_html(short)}</blockquote>' if short else "")
        + f'<div class="pt-card-foot">{similar_button(paper_id)}</div></article>'
    )


def similar_button(paper_id: str) -> str:
    """The card's "Similar papers" action (ui/assets.py's script sends it to the page)."""
    return (
        f'<button type="button" class="pt-similar-btn" data-paper="{escape(paper_id)}">'
        "Similar papers</button>"
    )


def similar_html(
    title: str,
    similar: Sequence[tuple[SimilarPaper, str | None]],
    topic: str | None,
    *,
    have_map: bool,
) -> str:
    """The papers nearest to one paper (`title`, in `topic`): each with its similarity and its
    topic ("same topic" when shared); without a kept map, no topics."""
    items = []
    for paper, other in similar:
        shared = have_map and other is not None and other == topic
        topic_html = (
            f'<span class="pt-topic{" pt-same" if shared else ""}">'
            f"{'same topic: ' if shared else ''}{escape(other)}</span>"
            if have_map and other
            else ""
        )
        items.append(
            f'<li data-paper="{escape(paper.paper_id)}">'
            f"{title_link(paper.url, paper.title, 'pt-title')}"
            f'<div class="pt-meta"><span class="pt-score">similarity {paper.similarity:.2f}</span>'
            f"{topic_html}</div></li>"
        )
    note = "" if have_map else '<div class="pt-note">Topics show once the topic map is built.</div>'
    own = f'<span class="pt-topic">{escape(topic)}</span>' if have_map and topic else ""
    return (
        f'<section class="pt-similar"><div class="pt-turn-head"><span class="pt-turn-label">'
        f'Papers like this one</span><span class="pt-turn-q">{paper_html(title)}</span>{own}'
        f'</div><ol class="pt-similar-list">{"".join(items)}</ol>{note}</section>'
    )


def topic_html(label: str, size: int, statuses: dict[str, int], top: Sequence[str]) -> str:
    """A topic's summary on the map: label, size, statuses, its most central papers."""
    counts = " · ".join(f"{n} {s}" for s, n in statuses.items() if n)
    papers = "".join(f"<li>{paper_html(t)}</li>" for t in top)
    return (
        f'<div class="pt-topic-info"><div class="pt-turn-label">Topic · {size} papers</div>'
        f"<strong>{escape(label)}</strong>"
        + (f'<div class="pt-note">{escape(counts)}</div>' if counts else "")
        + (f'<ol class="pt-top-papers">{papers}</ol>' if papers else "")
        + "</div>"
    )


def turn_sources(turn: Turn) -> str:
    """The sources section of one turn (cards, related papers, or retrieved papers)."""
    answer = turn.answer
    if answer is not None and not answer.error and answer.citations:
        label = f"{len(answer.citations)} cited paper{'s' if len(answer.citations) != 1 else ''}"
        quotes = compare_quotes(answer) if answer.mode == "compare" else {}
        cards = "".join(source_card(c, turn.number, quotes.get(c.n)) for c in answer.citations)
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


_TAG_START = re.compile(r"<(?=[A-Za-z/!?])")


def export_text(text: str) -> str:
    """Paper or user text for the Markdown export: LaTeX as Unicode (emphasis stays Markdown),
    and no HTML tag a Markdown viewer would run ("<script>" is written "&lt;script>")."""
    return _TAG_START.sub("&lt;", latex_to_text(text))


def conversation_markdown(conversation: Conversation, now: datetime | None = None) -> str:
    """The conversation as a Markdown document: each question with the filters it was asked
    with, its answer (or the refusal and why), then its references."""
    stamp = (now or datetime.now(UTC)).strftime("%Y-%m-%d %H:%M UTC")
    lines = [
        "# PaperTalk conversation",
        "",
        f"Exported {stamp}. Answers cite ICML 2025 papers.",
        "",
    ]
    for i, turn in enumerate(conversation.turns, start=1):
        mode = "" if turn.mode == "ask" else f" ({turn.mode})"
        lines += [f"## {i}. {_TAG_START.sub('&lt;', _one_line(turn.question))}{mode}", ""]
        if filters_text(turn.filters, turn.scope):
            lines += [f"*{export_text(filters_text(turn.filters, turn.scope))}*", ""]
        answer = turn.answer
        if turn.error is not None or (answer is not None and answer.error):
            lines += [f"Error: {turn.error or (answer.error if answer else '')}", ""]
            continue
        if answer is None:
            lines += ["(no answer)", ""]
            continue
        text = _strip_bibliography(answer.answer) if answer.mode == "summarize" else answer.answer
        lines += [export_text(text), ""]
        if answer.refused and refusal_reason(answer):
            lines += [export_text(refusal_reason(answer)), ""]
        if answer.refused and answer.partial:
            lines += [f"{PARTIAL_HEAD}:", "", export_text(answer.partial), ""]
        flagged = [s.text for s in answer.sentences if s.support == UNSUPPORTED]
        for sentence in flagged:
            lines.append(f"> Not supported by the cited passage: {export_text(sentence)}")
        if flagged:
            lines.append("")
        if answer.refused and answer.related:
            lines += ["Possibly related:", ""]
            lines += [
                f"- {_sentence(h.title)} {export_text(authors_short(h.authors))}. {h.url}"
                for h in answer.related
            ]
            lines.append("")
        if answer.citations:
            lines += ["References:", ""]
            for c in answer.citations:
                lines.append(
                    f"[{c.n}] {_sentence(c.title)} {export_text(authors_short(c.authors, 6))}. "
                    "ICML 2025. "
                    f"{c.url}"
                )
            lines.append("")
    return "\n".join(lines).rstrip() + "\n"


def _sentence(title: str) -> str:
    """A title as a sentence: 'Why Not Both?' stays, 'Cake' becomes 'Cake.'"""
    title = export_text(_one_line(title))
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
