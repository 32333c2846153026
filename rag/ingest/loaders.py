"""Load paper lists (JSONL, JSON, CSV or plain text) into `Paper` records.

Every loader reads the whole file, decodes it as UTF-8 (a BOM is accepted, NUL bytes are dropped)
and turns each record into a `Paper`, or into a `Problem` that says why the record was skipped.
Whole-input failures (missing or unreadable file, not UTF-8, not a JSON document, no records...)
raise `CorpusError` with a one-line message that names the file; nothing else escapes for bad
input. With `strict=True` the first skipped record raises `CorpusError` too.
"""

from __future__ import annotations

import csv
import hashlib
import io
import json
import re
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from rag.errors import CorpusError
from rag.records import STATUSES, Paper
from rag.text.latex import without_emphasis
from rag.text.names import method_name

Format = Literal["jsonl", "json", "csv", "text"]

MAX_ABSTRACT_CHARS = 100_000
"""Longer abstracts are skipped: they are not abstracts (a whole paper, a dump, a bad join)."""
MAX_ID_CHARS = 200
SNIFF_CHARS = 64 * 1024
"""How much of the text `detect_format` gets to look at."""
HEADER_MAX_WORDS = 20
"""A text file's first paragraph is a header when it is one line of fewer words than this, or
one line without a sentence-ending period."""
FALLBACK_TITLE_WORDS = 8

ID_KEYS = ("id", "paper_id", "openreview_id")
OPENREVIEW_URL = "https://openreview.net/forum?id={id}"
_OPENREVIEW_ID = re.compile(r"[A-Za-z0-9_-]{10}")
_WS = re.compile(r"\s+")
_BAD_ID_CHAR = re.compile(r"[\s\x00-\x1f\x7f]")
_BOM = b"\xef\xbb\xbf"
_AUTHORS_REASON = "field 'authors' must be a list of strings or a ';'-separated string"

_EXTENSIONS: dict[str, Format] = {
    ".jsonl": "jsonl",
    ".ndjson": "jsonl",
    ".json": "json",
    ".csv": "csv",
    ".txt": "text",
    ".md": "text",
}


@dataclass(frozen=True)
class Problem:
    """One skipped record or one warning about a record (or a whole file when `line` is None).

    `line` is 1-based: the JSONL line, the line a CSV row starts on, the line a text paragraph
    starts on; for a JSON document it is the array index + 1 and `unit` is "item".
    """

    source: str
    line: int | None
    reason: str
    unit: Literal["line", "item"] = "line"

    def __str__(self) -> str:
        if self.line is None:
            return f"{self.source}: {self.reason}"
        return f"{self.source}:{self.where}: {self.reason}"

    @property
    def where(self) -> str:
        """`12` for a line, `item 3` for a JSON array item, `` for the whole file."""
        if self.line is None:
            return ""
        return f"item {self.line}" if self.unit == "item" else str(self.line)


@dataclass
class LoadResult:
    """Papers in input order (a duplicate id keeps the first position and the later record's
    content), the records that were not loaded, and warnings about loaded records."""

    papers: list[Paper] = field(default_factory=list)
    skipped: list[Problem] = field(default_factory=list)
    warnings: list[Problem] = field(default_factory=list)


# ---------------------------------------------------------------------------------------------
# Public API


def load_papers(path: Path, *, strict: bool = False) -> LoadResult:
    """Load one file of papers; its format comes from `detect_format`."""
    return _load_file(Path(path), strict=strict).result()


def load_many(paths: Sequence[Path], *, strict: bool = False) -> LoadResult:
    """Load several files; a paper whose id was already loaded from an earlier file replaces it
    (keeping the earlier position), with a warning naming both places."""
    if not paths:
        raise CorpusError("no input files given")
    merged = _Collector(source="", strict=strict)
    for path in paths:
        loaded = _load_file(Path(path), strict=strict)
        merged.skipped.extend(loaded.skipped)
        merged.warnings.extend(loaded.warnings)
        for paper_id, paper in loaded.papers.items():
            merged.add(paper, loaded.where[paper_id])
    return merged.result()


def detect_format(path: Path, head: str) -> Format:
    """The format of a file: by its extension when it is a known one, else by sniffing `head`
    (the start of its decoded text)."""
    by_extension = _EXTENSIONS.get(Path(path).suffix.lower())
    if by_extension is not None:
        return by_extension
    text = head.lstrip("\ufeff \t\r\n")
    if text.startswith("["):
        return "json"
    if text.startswith("{"):
        first_line = text.split("\n", 1)[0]
        try:
            value = json.loads(first_line)
        except (ValueError, RecursionError):
            return "json"  # an object that spans lines: one (pretty-printed) JSON document
        if isinstance(value, dict) and isinstance(value.get("papers"), list):
            return "json"
        return "jsonl"
    first_line = text.split("\n", 1)[0]
    if "," in first_line:
        try:
            header = next(csv.reader([first_line]), [])
        except csv.Error:
            header = []
        if "abstract" in {name.strip().lower() for name in header}:
            return "csv"
    return "text"


def paper_id_for(title: str, abstract: str) -> str:
    """A content-hash id for a paper that has none: "h-" + 12 hex digits of the SHA-256 of its
    normalised abstract (case-folded, whitespace collapsed). The title does not take part, so a
    derived or corrected title never changes the id."""
    del title  # part of the signature so callers need not know what the hash covers
    normalised = _collapse(abstract).casefold()
    return "h-" + hashlib.sha256(normalised.encode("utf-8")).hexdigest()[:12]


def derive_title(abstract: str) -> str:
    """A title for an abstract that has none: the method name it introduces ("we propose X,",
    "introduces X,", "called X", "termed ... (X)", ...), else its first words + "…"."""
    abstract = _collapse(abstract)
    name = method_name(abstract)
    if name:
        return name
    words = abstract.split(" ")
    if len(words) <= FALLBACK_TITLE_WORDS:
        return abstract
    return " ".join(words[:FALLBACK_TITLE_WORDS]).rstrip(",;:-–—") + "…"


# ---------------------------------------------------------------------------------------------
# Reading files


def _load_file(path: Path, *, strict: bool) -> _Collector:
    source = str(path)
    text = _read_text(path, source)
    collector = _Collector(source=source, strict=strict)
    if "\x00" in text:
        collector.warnings.append(
            Problem(source, None, f"removed {text.count(chr(0))} NUL characters")
        )
        text = text.replace("\x00", "")
    fmt = detect_format(path, text[:SNIFF_CHARS])
    records = {
        "jsonl": _jsonl_records,
        "json": _json_records,
        "csv": _csv_records,
        "text": _text_records,
    }[fmt](text, source)
    count = 0
    for record in records:
        count += 1
        collector.take(record)
    if count == 0:
        raise _error(f"{source}: no records found (empty {fmt} file)")
    if not collector.papers:
        first = collector.skipped[0]
        where = f"{first.unit} {first.line}" if first.line else "file"
        raise _error(
            f"{source}: none of its {count} records could be loaded "
            f"(first problem, {where}: {first.reason})"
        )
    return collector


def _read_text(path: Path, source: str) -> str:
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        raise _error(f"file not found: {source}") from None
    except IsADirectoryError:
        raise _error(f"{source} is a directory, not a file") from None
    except OSError as exc:
        if path.is_dir():
            raise _error(f"{source} is a directory, not a file") from None
        raise _error(f"cannot read {source}: {exc.strerror or exc}") from None
    offset = len(_BOM) if data.startswith(_BOM) else 0
    try:
        return data[offset:].decode("utf-8")
    except UnicodeDecodeError as exc:
        position = offset + exc.start
        raise _error(
            f"{source} is not UTF-8 text (byte 0x{data[position]:02x} at offset {position})"
        ) from None


@dataclass
class _Record:
    """One raw record: where it is, and either its value or why it could not be parsed."""

    line: int
    value: object = None
    error: str = ""
    unit: Literal["line", "item"] = "line"
    text_paragraph: bool = False


def _jsonl_records(text: str, source: str) -> Iterator[_Record]:
    for number, line in enumerate(_lines(text), start=1):
        if not line.strip():
            continue
        try:
            yield _Record(number, json.loads(line))
        except json.JSONDecodeError as exc:
            yield _Record(number, error=f"malformed JSON: {exc.msg} (column {exc.colno})")
        except (ValueError, RecursionError) as exc:
            yield _Record(number, error=f"malformed JSON: {_reason(exc)}")


def _json_records(text: str, source: str) -> Iterator[_Record]:
    try:
        document = json.loads(text)
    except json.JSONDecodeError as exc:
        hint = " (one object per line? name the file .jsonl)" if exc.msg == "Extra data" else ""
        raise _error(
            f"{source} is not a valid JSON document: {exc.msg} "
            f"(line {exc.lineno}, column {exc.colno}){hint}"
        ) from None
    except (ValueError, RecursionError) as exc:
        raise _error(f"{source} is not a valid JSON document: {_reason(exc)}") from None
    if isinstance(document, dict) and isinstance(document.get("papers"), list):
        document = document["papers"]
    if not isinstance(document, list):
        raise _error(
            f"{source}: the JSON top level must be an array of paper objects or an object with "
            f'a "papers" array, not {_json_type(document)}'
            + (" without one" if isinstance(document, dict) else "")
        )
    for index, value in enumerate(document):
        yield _Record(index + 1, value, unit="item")


def _csv_records(text: str, source: str) -> Iterator[_Record]:
    old_limit = csv.field_size_limit()
    csv.field_size_limit(max(old_limit, len(text) + 1))  # one huge field is a record problem
    try:
        reader = csv.reader(io.StringIO(text, newline=""), strict=False)
        start = 1
        header: list[str] | None = None
        for row in _csv_rows(reader, source):
            row_start, start = start, reader.line_num + 1
            if not any(cell.strip() for cell in row):
                continue
            if header is None:
                header = [cell.strip().lower() for cell in row]
                if "abstract" not in header:
                    columns = ", ".join(_short(name) for name in header[:12])
                    raise _error(f"{source}: CSV has no 'abstract' column (columns: {columns})")
                continue
            record: dict[str, str] = {}
            for name, cell in zip(header, row, strict=False):
                record.setdefault(name, cell)
            yield _Record(row_start, record)
    finally:
        csv.field_size_limit(old_limit)


def _csv_rows(reader: Iterator[list[str]], source: str) -> Iterator[list[str]]:
    try:
        yield from reader
    except csv.Error as exc:
        line = getattr(reader, "line_num", 0)
        raise _error(f"{source}:{line}: malformed CSV: {exc}") from None


def _text_records(text: str, source: str) -> Iterator[_Record]:
    paragraphs: list[tuple[int, list[str]]] = []
    current: list[str] = []
    for number, line in enumerate(_lines(text), start=1):
        if line.strip():
            if not current:
                paragraphs.append((number, current))
            current.append(line)
        else:
            current = []
    if paragraphs and _is_header(paragraphs[0][1]):
        paragraphs = paragraphs[1:]
    for number, lines in paragraphs:
        yield _Record(number, " ".join(lines), text_paragraph=True)


def _is_header(lines: list[str]) -> bool:
    if len(lines) != 1:
        return False
    line = lines[0].strip()
    ends_sentence = re.search(r"[.!?。！？][\"'”’)\]]*(?:\s|$)", line) is not None
    return len(line.split()) < HEADER_MAX_WORDS or not ends_sentence


# ---------------------------------------------------------------------------------------------
# Records to papers


class _Skip(Exception):
    """A record that cannot be loaded; its message is the reason."""


@dataclass
class _Collector:
    source: str
    strict: bool
    papers: dict[str, Paper] = field(default_factory=dict)
    where: dict[str, Problem] = field(default_factory=dict)  # id -> where its paper came from
    skipped: list[Problem] = field(default_factory=list)
    warnings: list[Problem] = field(default_factory=list)

    def take(self, record: _Record) -> None:
        warnings: list[str] = []
        try:
            if record.error:
                raise _Skip(record.error)
            if record.text_paragraph:
                paper = _paper_from_text(str(record.value))
            else:
                paper = _paper_from_object(record.value, record.unit, warnings)
        except _Skip as exc:
            problem = Problem(self.source, record.line, str(exc), record.unit)
            if self.strict:
                raise _error(str(problem)) from None
            self.skipped.append(problem)
            return
        here = Problem(self.source, record.line, "", record.unit)
        self.warnings.extend(
            Problem(self.source, record.line, text, record.unit) for text in warnings
        )
        self.add(paper, here)

    def add(self, paper: Paper, here: Problem) -> None:
        earlier = self.where.get(paper.id)
        if earlier is not None:
            if earlier.source == here.source:
                wins = f"{_unit_word(here)} wins over {_unit_word(earlier)}"
            else:
                wins = f"{_place(here)} wins over {_place(earlier)}"
            self.warnings.append(
                Problem(here.source, here.line, f"duplicate id {paper.id} ({wins})", here.unit)
            )
        self.papers[paper.id] = paper
        self.where[paper.id] = here

    def result(self) -> LoadResult:
        return LoadResult(list(self.papers.values()), list(self.skipped), list(self.warnings))


def _unit_word(where: Problem) -> str:
    return f"{where.unit} {where.line}"


def _place(where: Problem) -> str:
    return f"{where.source}:{where.where}"


def _paper_from_text(paragraph: str) -> Paper:
    abstract = _abstract(paragraph)
    title = derive_title(abstract)
    return Paper(
        id=paper_id_for(title, abstract), title=title, abstract=abstract, title_derived=True
    )


def _paper_from_object(value: object, unit: str, warnings: list[str]) -> Paper:
    if not isinstance(value, dict):
        raise _Skip(
            f"{'item' if unit == 'item' else 'record'} is not a JSON object "
            f"(got {_json_type(value)})"
        )
    record: Mapping[str, object] = value
    abstract = _abstract(record.get("abstract"))

    raw_title = record.get("title")
    if raw_title is not None and not isinstance(raw_title, str):
        raise _Skip(f"field 'title' must be a string (got {_json_type(raw_title)})")
    title = _collapse(_clean(raw_title or ""))
    title_derived = record.get("title_derived") is True
    if not title:
        title = derive_title(abstract)
        title_derived = True
        warnings.append(f"missing title (derived: {title!r})")

    paper_id = _paper_id(record) or paper_id_for(title, abstract)
    authors = _authors(record.get("authors"))
    url = _optional_string(record, "url") or (
        OPENREVIEW_URL.format(id=paper_id) if _OPENREVIEW_ID.fullmatch(paper_id) else ""
    )
    pmlr_url = _optional_string(record, "pmlr_url")
    status = _status(record.get("status"), warnings)
    venue = _collapse(_optional_string(record, "venue"))
    return Paper(
        id=paper_id,
        title=title,
        abstract=abstract,
        authors=authors,
        url=url,
        pmlr_url=pmlr_url,
        status=status,
        title_derived=title_derived,
        venue=venue,
    )


def _abstract(value: object) -> str:
    if value is None:
        raise _Skip("missing abstract")
    if not isinstance(value, str):
        raise _Skip(f"field 'abstract' must be a string (got {_json_type(value)})")
    abstract = _collapse(without_emphasis(_clean(value)))
    if not abstract:
        raise _Skip("missing abstract")
    if len(abstract) > MAX_ABSTRACT_CHARS:
        raise _Skip(
            f"abstract too long ({len(abstract):,} chars; the limit is {MAX_ABSTRACT_CHARS:,})"
        )
    return abstract


def _paper_id(record: Mapping[str, object]) -> str:
    for key in ID_KEYS:
        value = record.get(key)
        if value is None or value == "":
            continue
        if isinstance(value, int) and not isinstance(value, bool):
            value = str(value)
        if not isinstance(value, str):
            raise _Skip(f"field '{key}' must be a string (got {_json_type(value)})")
        paper_id = _clean(value).strip()
        if not paper_id:
            continue
        if len(paper_id) > MAX_ID_CHARS or _BAD_ID_CHAR.search(paper_id):
            raise _Skip(
                f"field '{key}' is not a usable id (no spaces or control characters, "
                f"at most {MAX_ID_CHARS} chars): {_short(paper_id)!r}"
            )
        return paper_id
    return ""


def _authors(value: object) -> tuple[str, ...]:
    if value is None:
        return ()
    if isinstance(value, str):
        text = _clean(value)
        if ";" in text:
            parts = text.split(";")
        else:
            parts = [p for chunk in re.split(r"\s+and\s+", text) for p in chunk.split(",")]
    elif isinstance(value, list) and all(isinstance(item, str) for item in value):
        parts = [_clean(item) for item in value]
    else:
        raise _Skip(_AUTHORS_REASON)
    return tuple(name for name in (_collapse(part) for part in parts) if name)


def _optional_string(record: Mapping[str, object], key: str) -> str:
    value = record.get(key)
    if value is None:
        return ""
    if not isinstance(value, str):
        raise _Skip(f"field '{key}' must be a string (got {_json_type(value)})")
    return _collapse(_clean(value))


def _status(value: object, warnings: list[str]) -> str:
    if value is None:
        return ""
    if not isinstance(value, str):
        warnings.append(f"field 'status' must be a string (got {_json_type(value)}; kept as '')")
        return ""
    status = _collapse(_clean(value)).lower()
    if status and status not in STATUSES:
        known = ", ".join(STATUSES)
        warnings.append(f"unknown status {_short(status)!r} (kept as ''; known: {known})")
        return ""
    return status


# ---------------------------------------------------------------------------------------------
# Small helpers


def _lines(text: str) -> list[str]:
    """Lines as an editor numbers them: split on \\n, \\r\\n or \\r only (not on \\u2028 etc.,
    which may sit inside a JSON string)."""
    return text.replace("\r\n", "\n").replace("\r", "\n").split("\n")


def _clean(text: str) -> str:
    return text.replace("\x00", "")


def _collapse(text: str) -> str:
    return _WS.sub(" ", text).strip()


def _short(text: str, limit: int = 40) -> str:
    text = _collapse(text)
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _json_type(value: object) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int | float):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list):
        return "array"
    if isinstance(value, dict):
        return "object"
    return type(value).__name__


def _reason(exc: BaseException) -> str:
    if isinstance(exc, RecursionError):
        return "nested too deeply"
    return _short(str(exc), 120)


def _error(message: str) -> CorpusError:
    """A CorpusError whose message is guaranteed to be one line."""
    return CorpusError(" ".join(message.split()))
