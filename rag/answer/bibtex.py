"""References of an answer: a plain bibliography for the text, BibTeX for reference managers.

BibTeX is written by bibtexparser (v2): its LaTeX-encoding middleware escapes `& % _ $ { }` and
non-ASCII characters, and titles are brace-protected so styles keep their capitals.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Sequence

import bibtexparser
from bibtexparser.library import Library
from bibtexparser.middlewares import LatexEncodingMiddleware
from bibtexparser.model import Entry, Field

from rag.answer.safety import looks_like_injection, safe_title
from rag.records import Citation

_YEAR = re.compile(r"\b(19|20)\d{2}\b")


def author_names(authors: Sequence[str]) -> list[str]:
    """Author entries as answers show them: an 'author' that addresses an AI model is dropped."""
    return [a for a in authors if not looks_like_injection(a)]


def short_authors(authors: Sequence[str], limit: int = 6) -> str:
    names = author_names(authors)
    return ", ".join(names[:limit]) + (" et al." if len(names) > limit else "")


def format_bibliography(citations: Sequence[Citation]) -> str:
    """`References:` then one line per citation: `[n] Title. Authors. Venue. URL`."""
    lines = ["References:"]
    for c in citations:
        parts = [safe_title(c.title), short_authors(c.authors), c.venue]
        text = " ".join(_sentence(p) for p in parts if p.strip())
        lines.append(f"[{c.n}] {text} {c.url}".rstrip())
    return "\n".join(lines)


def _sentence(text: str) -> str:
    text = text.strip()
    return text if text.endswith((".", "?", "!")) else text + "."


def bibtex(citations: Sequence[Citation]) -> str:
    """One BibTeX entry per citation: `@inproceedings` when the paper's venue is known, else
    `@misc`; keys are unique (`surname` + year + first title word, then a, b, ...)."""
    library = Library()
    used: set[str] = set()
    for c in citations:
        authors, title = author_names(c.authors), safe_title(c.title)
        year_match = _YEAR.search(c.venue)
        year = year_match.group(0) if year_match else ""
        key = _unique_key(_base_key(authors, year, title), used)
        fields = [Field("title", title), Field("author", " and ".join(authors))]
        if c.venue:
            fields.append(Field("booktitle", c.venue))
        if year:
            fields.append(Field("year", year))
        library.add(Entry("inproceedings" if c.venue else "misc", key, fields))
    library = LatexEncodingMiddleware(keep_math=False).transform(library)
    for entry, c in zip(library.entries, citations, strict=True):
        entry.fields_dict["title"].value = "{" + entry.fields_dict["title"].value + "}"
        # URLs are verbatim in BibTeX (the url package reads them): added after encoding.
        if c.url:
            entry.set_field(Field("url", c.url))
        if c.pmlr_url:
            entry.set_field(Field("note", "PMLR: \\url{" + c.pmlr_url + "}"))
    return bibtexparser.write_string(library).strip()


def _ascii_word(text: str) -> str:
    folded = unicodedata.normalize("NFKD", text).encode("ascii", "ignore").decode()
    return re.sub(r"[^a-z0-9]", "", folded.lower())


def _base_key(authors: Sequence[str], year: str, title: str) -> str:
    surname = _ascii_word(authors[0].split()[-1]) if authors and authors[0].split() else ""
    words = [_ascii_word(w) for w in title.split()]
    first = next((w for w in words if w), "paper")
    return f"{surname or 'anon'}{year}{first}"


def _unique_key(key: str, used: set[str]) -> str:
    candidate, n = key, 0
    while candidate in used:
        candidate = key + chr(ord("a") + n % 26) + ("" if n < 26 else str(n // 26))
        n += 1
    used.add(candidate)
    return candidate
