"""Tests for rag.corpus: every input format, every error path, and property tests on junk input."""

from __future__ import annotations

import csv
import importlib.util
import io
import json
import os
import re
import tempfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from rag.errors import CorpusError
from rag.ingest.loaders import (
    MAX_ABSTRACT_CHARS,
    LoadResult,
    Problem,
    derive_title,
    detect_format,
    load_many,
    load_papers,
    paper_id_for,
)
from rag.records import STATUSES, Paper

REPO = Path(__file__).resolve().parent.parent
BUNDLED = REPO / "data" / "papers.jsonl"
SHARED = REPO.parent / "shared"
SEEDS = sorted((SHARED / "seeds").glob("*.txt"))
SEED_TITLES = SHARED / "data" / "seed_titles.json"

# The 19 seed papers, in seed order (seed_titles.json's `seed_index` 0-18).
SEED_IDS = [
    "WVlEwFiDGH", "WUGrleBcYP", "WSUO2uRDPc", "WSGpXQRUtH", "WR0ahlhOoy", "WPeAraSKAK",
    "WOyOtaO6lQ", "WMIueIRcAm", "WMHNs2Necq", "WISfJyOA6M", "WIIfdh0GJu", "WHqSAEmvai",
    "WH3ZRH2jno", "WGejWCgrpD", "WGXb7UdvTX", "WFhQ9owxOH", "WFIMSlNS7C", "WDybFnCPaB",
    "WD2CKUrxmx",
]  # fmt: skip
# Titles derived from the method name each seed abstract introduces (None: first words + "…").
SEED_DERIVED_TITLES = [
    "D-Fusion", "SafetyAnalyst", None, "FIML", None, "SPACY", "Cake", None, None, "PhySpec",
    "DreamDPO", None, None, None, None, "LightningDrag", "LEVIS", None, None,
]  # fmt: skip

needs_shared = pytest.mark.skipif(not SEEDS or not SEED_TITLES.exists(), reason="no ../shared")

ABSTRACT = "We study things. We find results."
DEEP = "[" * 100_000
AUTHORS_REASON = "field 'authors' must be a list of strings or a ';'-separated string"


def write(tmp_path: Path, name: str, content: str | bytes) -> Path:
    path = tmp_path / name
    if isinstance(content, bytes):
        path.write_bytes(content)
    else:
        path.write_text(content, encoding="utf-8")
    return path


def jsonl(*records: object) -> str:
    return "".join(
        (r if isinstance(r, str) else json.dumps(r, ensure_ascii=False)) + "\n" for r in records
    )


def rec(**fields: object) -> dict[str, object]:
    base: dict[str, object] = {"id": "AbCdEfGhIj", "title": "A Title", "abstract": ABSTRACT}
    base.update(fields)
    return {k: v for k, v in base.items() if v is not ...}


def check_papers(result: LoadResult) -> None:
    """Invariants every successful load keeps."""
    ids = [paper.id for paper in result.papers]
    assert len(ids) == len(set(ids))
    for paper in result.papers:
        assert isinstance(paper, Paper)
        assert paper.abstract and paper.abstract == paper.abstract.strip()
        assert paper.id and not re.search(r"\s", paper.id)
        assert paper.title
        assert "\x00" not in paper.abstract + paper.title + "".join(paper.authors)
        assert len(paper.abstract) <= MAX_ABSTRACT_CHARS
        assert paper.status in ("", *STATUSES)
        assert all(paper.authors)


# ---------------------------------------------------------------------------------------------
# Bundled corpus and the real seed list


def test_bundled_corpus_has_the_19_seed_papers() -> None:
    result = load_papers(BUNDLED)
    assert result.skipped == [] and result.warnings == []
    assert [p.id for p in result.papers] == SEED_IDS
    check_papers(result)
    for paper in result.papers:
        assert not paper.title_derived
        assert paper.url == f"https://openreview.net/forum?id={paper.id}"
        assert paper.status in STATUSES
        assert paper.authors
        assert paper.pmlr_url.startswith("https://proceedings.mlr.press/v267/") or (
            paper.id == "WISfJyOA6M" and paper.pmlr_url == ""  # PhySpec has no PMLR entry
        )
    assert result.papers[0].title.startswith("D-Fusion:")


def test_bundled_corpus_is_plain_utf8_jsonl() -> None:
    raw = BUNDLED.read_bytes()
    assert not raw.startswith(b"\xef\xbb\xbf")
    text = raw.decode("utf-8")
    lines = text.splitlines()
    assert len(lines) == 19 and text.endswith("\n")
    assert "’" in text  # ensure_ascii=False: non-ASCII kept as is
    keys = ["id", "title", "abstract", "authors", "url", "pmlr_url", "status", "venue"]
    assert all(list(json.loads(line)) == keys for line in lines)


@needs_shared
def test_bundled_corpus_matches_seed_titles() -> None:
    entries = sorted(json.loads(SEED_TITLES.read_text("utf-8")), key=lambda e: e["seed_index"])
    assert [e["id"] for e in entries] == SEED_IDS
    papers = load_papers(BUNDLED).papers
    for entry, paper in zip(entries, papers, strict=True):
        assert (paper.id, paper.title, list(paper.authors)) == (
            entry["id"],
            entry["title"],
            entry["authors"],
        )


@needs_shared
def test_seed_text_file_loads_19_papers_with_derived_titles() -> None:
    result = load_papers(SEEDS[0])
    check_papers(result)
    assert result.skipped == [] and result.warnings == []
    assert len(result.papers) == 19
    assert all(p.title_derived for p in result.papers)
    assert all(p.id.startswith("h-") and p.url == "" for p in result.papers)
    for paper, expected in zip(result.papers, SEED_DERIVED_TITLES, strict=True):
        if expected is None:
            assert paper.title.endswith("…")
            assert paper.abstract.startswith(paper.title[:-1])
        else:
            assert paper.title == expected
    # the same abstracts, in the same order, as the bundled corpus
    bundled = load_papers(BUNDLED).papers
    assert [p.abstract for p in result.papers] == [p.abstract for p in bundled]


@needs_shared
def test_build_script_output_is_up_to_date(capsys: pytest.CaptureFixture[str]) -> None:
    spec = importlib.util.spec_from_file_location("build_seed", REPO / "data/build_seed_corpus.py")
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    assert module.main(["--check", "--shared", str(SHARED), "--out", str(BUNDLED)]) == 0


# ---------------------------------------------------------------------------------------------
# Formats


def test_jsonl_fields_are_normalised(tmp_path: Path) -> None:
    path = write(
        tmp_path,
        "p.jsonl",
        jsonl(
            {
                "id": "  AbCdEfGhIj ",
                "title": "  A   Title\n with\tspaces ",
                "abstract": "\n  First   sentence.\n\nSecond.  ",
                "authors": ["  Ada   Lovelace ", "", "Alan\tTuring"],
                "status": " Oral ",
                "pmlr_url": " https://proceedings.mlr.press/v267/x.html ",
                "extra": {"ignored": True},
            }
        )
        + "\n   \n",
    )
    result = load_papers(path)
    assert result.skipped == [] and result.warnings == []
    assert result.papers == [
        Paper(
            id="AbCdEfGhIj",
            title="A Title with spaces",
            abstract="First sentence. Second.",
            authors=("Ada Lovelace", "Alan Turing"),
            url="https://openreview.net/forum?id=AbCdEfGhIj",
            pmlr_url="https://proceedings.mlr.press/v267/x.html",
            status="oral",
        )
    ]


@pytest.mark.parametrize(
    ("abstract", "cleaned"),
    [
        ("We propose ***F**oo **N**et* (FN).", "We propose Foo Net (FN)."),
        ("A *very* good and **bold** idea.", "A very good and bold idea."),
        # around numbers, parentheses, quotations, after math and before dashes
        ("Up **66.8%** and **+1.7%** faster.", "Up 66.8% and +1.7% faster."),
        ('A **(FN)** fix, the **"big"** one, safe*—here.', 'A (FN) fix, the "big" one, safe—here.'),
        ("We scale $\\mu$**Foo** up.", "We scale $\\mu$Foo up."),
        (
            "Its optimum $x^*$ and $a * b$ and $Q^{*}$ stay.",
            "Its optimum $x^*$ and $a * b$ and $Q^{*}$ stay.",
        ),
    ],
)
def test_markdown_emphasis_is_taken_out_of_abstracts(
    tmp_path: Path, abstract: str, cleaned: str
) -> None:
    path = write(tmp_path, "p.jsonl", jsonl({"id": "x1", "title": "T", "abstract": abstract}))
    assert load_papers(path).papers[0].abstract == cleaned


def test_jsonl_round_trips_paper_to_json(tmp_path: Path) -> None:
    paper = Paper("id-1", "T", "An abstract.", ("A",), "u", "p", "poster", title_derived=True)
    path = write(tmp_path, "p.jsonl", jsonl(paper.to_json()))
    assert load_papers(path).papers == [paper]


def test_json_array_and_papers_object(tmp_path: Path) -> None:
    records = [rec(id="one"), rec(id="two", abstract="Other abstract.")]
    for name, document in [("a.json", records), ("b.json", {"papers": records, "meta": 1})]:
        path = write(tmp_path, name, json.dumps(records if name == "a.json" else document))
        result = load_papers(path)
        assert [p.id for p in result.papers] == ["one", "two"]
        assert result.papers[0].url == ""  # not an OpenReview-style id


def test_json_item_problems_are_numbered_as_items(tmp_path: Path) -> None:
    path = write(tmp_path, "p.json", json.dumps([rec(id="a"), 5, rec(id="b", abstract="")]))
    result = load_papers(path)
    assert [p.id for p in result.papers] == ["a"]
    assert [(p.line, p.unit) for p in result.skipped] == [(2, "item"), (3, "item")]
    assert str(result.skipped[0]) == f"{path}:item 2: item is not a JSON object (got number)"
    assert str(result.skipped[1]) == f"{path}:item 3: missing abstract"


def test_csv_with_quoting_case_insensitive_columns_and_extras(tmp_path: Path) -> None:
    buffer = io.StringIO()
    writer = csv.writer(buffer)
    writer.writerow(["ID", " Title ", "ABSTRACT", "Authors", "Status", "notes"])
    quoted = 'Commas, quotes "and"\nnew lines.'
    writer.writerow(["AbCdEfGhIj", "T1", quoted, "A B; C D", "POSTER", "x"])
    writer.writerow([])
    writer.writerow(["", "", "Second abstract, with a comma.", "", "", ""])
    writer.writerow(["k3", "T3", ""])  # short row, no abstract
    path = write(tmp_path, "p.csv", buffer.getvalue())
    result = load_papers(path)
    first, second = result.papers
    assert first == Paper(
        id="AbCdEfGhIj",
        title="T1",
        abstract='Commas, quotes "and" new lines.',
        authors=("A B", "C D"),
        url="https://openreview.net/forum?id=AbCdEfGhIj",
        status="poster",
    )
    assert second.id == paper_id_for("", "Second abstract, with a comma.")
    assert second.title_derived and second.title == "Second abstract, with a comma."
    assert second.authors == ()
    # row lines: header 1, first row 2-3 (quoted newline), blank 4, second row 5, short row 6
    assert [(w.line, w.reason.split(" (")[0]) for w in result.warnings] == [(5, "missing title")]
    assert [(s.line, s.reason) for s in result.skipped] == [(6, "missing abstract")]


def test_csv_with_bom_and_crlf(tmp_path: Path) -> None:
    content = '\ufeffabstract,title\r\n"A, b.",T\r\nSecond.,U\r\n'
    result = load_papers(write(tmp_path, "p.csv", content.encode("utf-8")))
    assert [(p.title, p.abstract) for p in result.papers] == [("T", "A, b."), ("U", "Second.")]


def test_text_paragraphs_header_and_lines(tmp_path: Path) -> None:
    content = (
        "My reading list\n\n"
        "First abstract line one\nline two. To address it, we propose FooNet, a model.\n"
        "\n  \n\n"
        "Another abstract that is long enough to need an ellipsis at the end.\n"
    )
    result = load_papers(write(tmp_path, "list.txt", content))
    first, second = result.papers
    assert first.title == "FooNet" and first.title_derived
    assert first.abstract == (
        "First abstract line one line two. To address it, we propose FooNet, a model."
    )
    assert second.title == "Another abstract that is long enough to need…"
    assert result.warnings == []


def test_text_first_paragraph_kept_when_it_looks_like_an_abstract(tmp_path: Path) -> None:
    long = " ".join(["word"] * 25) + "."
    result = load_papers(write(tmp_path, "list.md", f"{long}\n\nShort one.\n"))
    assert [p.abstract for p in result.papers] == [long, "Short one."]
    two_lines = "Header line\nsecond line.\n\nAbstract."
    assert len(load_papers(write(tmp_path, "b.txt", two_lines)).papers) == 2


def test_text_problems_carry_the_paragraph_start_line(tmp_path: Path) -> None:
    huge = "x" * (MAX_ABSTRACT_CHARS + 1)
    content = f"Header\n\nGood abstract.\n\n{huge}\n"
    result = load_papers(write(tmp_path, "list.txt", content))
    assert [p.abstract for p in result.papers] == ["Good abstract."]
    assert [(s.line, s.reason) for s in result.skipped] == [
        (
            5,
            f"abstract too long ({MAX_ABSTRACT_CHARS + 1:,} chars; "
            f"the limit is {MAX_ABSTRACT_CHARS:,})",
        )
    ]


@pytest.mark.parametrize(
    ("name", "head", "expected"),
    [
        ("a.jsonl", "", "jsonl"),
        ("a.NDJSON", "", "jsonl"),
        ("a.json", "{}", "json"),
        ("a.csv", "", "csv"),
        ("a.txt", "[1]", "text"),
        ("a.md", "", "text"),
        ("a", '[{"abstract": "x"}]', "json"),
        ("a.dat", '\n {"abstract": "x"}\n{"abstract": "y"}', "jsonl"),
        ("a", '{"papers": [{"abstract": "x"}]}', "json"),
        ("a", '{\n  "papers": []\n}', "json"),
        ("a.tsv", "id,Abstract,title\n1,x,y", "csv"),
        ("a", "Hello, world\n\nAn abstract.", "text"),
        ("a", "", "text"),
    ],
)
def test_detect_format(name: str, head: str, expected: str) -> None:
    assert detect_format(Path(name), head) == expected


def test_unknown_extension_is_sniffed(tmp_path: Path) -> None:
    path = write(tmp_path, "papers.data", jsonl(rec(id="x1")))
    assert [p.id for p in load_papers(path).papers] == ["x1"]


# ---------------------------------------------------------------------------------------------
# Field rules


def test_paper_id_for() -> None:
    pid = paper_id_for("T", "Some  abstract.")
    assert re.fullmatch(r"h-[0-9a-f]{12}", pid)
    assert pid == paper_id_for("Other title", " some abstract. ")  # case and spaces ignored
    assert pid != paper_id_for("T", "Some other abstract.")


@pytest.mark.parametrize("key", ["id", "paper_id", "openreview_id"])
def test_id_keys(tmp_path: Path, key: str) -> None:
    record = {key: "AbCdEfGhIj", "title": "T", "abstract": ABSTRACT}
    paper = load_papers(write(tmp_path, "p.jsonl", jsonl(record))).papers[0]
    assert paper.id == "AbCdEfGhIj"
    assert paper.url == "https://openreview.net/forum?id=AbCdEfGhIj"


def test_missing_id_is_hashed_without_warning(tmp_path: Path) -> None:
    result = load_papers(write(tmp_path, "p.jsonl", jsonl(rec(id=...))))
    assert result.papers[0].id == paper_id_for("A Title", ABSTRACT)
    assert result.papers[0].url == ""
    assert result.warnings == []


def test_numeric_id_and_given_url(tmp_path: Path) -> None:
    path = write(tmp_path, "p.jsonl", jsonl(rec(id=42, url=" https://example.org/p ")))
    paper = load_papers(path).papers[0]
    assert (paper.id, paper.url) == ("42", "https://example.org/p")


@pytest.mark.parametrize(
    ("authors", "expected"),
    [
        ("Ada Lovelace; Alan Turing ;", ("Ada Lovelace", "Alan Turing")),
        ("Ada Lovelace, Alan Turing and Grace Hopper", ("Ada Lovelace", "Alan Turing",
                                                        "Grace Hopper")),
        ("Ada Lovelace and Alan Turing", ("Ada Lovelace", "Alan Turing")),
        ("Smith, J.; Doe, A.", ("Smith, J.", "Doe, A.")),
        ("", ()),
        (None, ()),
        ([], ()),
    ],
)  # fmt: skip
def test_authors(tmp_path: Path, authors: object, expected: tuple[str, ...]) -> None:
    paper = load_papers(write(tmp_path, "p.jsonl", jsonl(rec(authors=authors)))).papers[0]
    assert paper.authors == expected


def test_status_is_lower_cased_and_unknown_values_dropped(tmp_path: Path) -> None:
    path = write(
        tmp_path,
        "p.jsonl",
        jsonl(
            rec(id="a", status="Spotlight"),
            rec(id="b", status="workshop"),
            rec(id="c", status=3),
            rec(id="d", status=""),
        ),
    )
    result = load_papers(path)
    assert [p.status for p in result.papers] == ["spotlight", "", "", ""]
    assert [(w.line, w.reason.split(" (")[0]) for w in result.warnings] == [
        (2, "unknown status 'workshop'"),
        (3, "field 'status' must be a string"),
    ]


def test_missing_title_is_derived_with_a_warning(tmp_path: Path) -> None:
    abstract = "In this paper, we introduce GraphX, a method for graphs."
    content = jsonl(rec(title=..., abstract=abstract), rec(id="b", title="  "))
    path = write(tmp_path, "p.jsonl", content)
    result = load_papers(path)
    assert [(p.title, p.title_derived) for p in result.papers] == [
        ("GraphX", True),
        ("We study things. We find results.", True),
    ]
    assert [str(w) for w in result.warnings] == [
        f"{path}:1: missing title (derived: 'GraphX')",
        f"{path}:2: missing title (derived: 'We study things. We find results.')",
    ]


@pytest.mark.parametrize(
    ("abstract", "title"),
    [
        ("To address this, we present SafetyAnalyst, a framework.", "SafetyAnalyst"),
        ("This paper introduces D-Fusion, a method.", "D-Fusion"),
        ("We propose a novel framework, **LEVIS**, comprising parts.", "LEVIS"),
        ("We present SPACY (SPAtiotemporal Causal discoverY), a framework.", "SPACY"),
        ("A method, termed Fast Thing by Anchors (FTA), where stuff.", "FTA"),
        ("We use a system called Orca. It works.", "Orca"),
        ("We release a model named mPLUG-Owl, which is big.", "mPLUG-Owl"),
        ("We introduce Cake", "Cake"),
        ("We propose a novel method for graphs that works well in practice.", None),
        ("Pan et al. introduced a drag-based framework using GANs. More.", None),
        ("We introduce the two-sufficient measurement condition, a more general one.", None),
        ("Short abstract.", "Short abstract."),
    ],
)
def test_derive_title(abstract: str, title: str | None) -> None:
    derived = derive_title(abstract)
    if title is None:
        assert derived.endswith("…") and len(derived.split()) == 8
    else:
        assert derived == title


# ---------------------------------------------------------------------------------------------
# Skipped records


@pytest.mark.parametrize(
    ("record", "reason"),
    [
        (rec(abstract=...), "missing abstract"),
        (rec(abstract=None), "missing abstract"),
        (rec(abstract=" \n\t "), "missing abstract"),
        (rec(abstract=["a"]), "field 'abstract' must be a string (got array)"),
        (rec(title=12), "field 'title' must be a string (got number)"),
        (rec(authors=5), AUTHORS_REASON),
        (rec(authors=["a", 1]), AUTHORS_REASON),
        (rec(authors={"a": "b"}), AUTHORS_REASON),
        (rec(url=1), "field 'url' must be a string (got number)"),
        (rec(id=True), "field 'id' must be a string (got boolean)"),
        (rec(id="has space"), "field 'id' is not a usable id"),
        (rec(abstract="y" * (MAX_ABSTRACT_CHARS + 5)), "abstract too long (100,005 chars"),
        ([1, 2], "record is not a JSON object (got array)"),
        ("\"text\"", "record is not a JSON object (got string)"),
        ("null", "record is not a JSON object (got null)"),
        ('{"abstract": "x",}', "malformed JSON: "),  # wording varies by Python version
        ('{"abstract": "x" "title": "t"}', "malformed JSON: Expecting ',' delimiter (column 18)"),
        pytest.param(DEEP, "malformed JSON: nested too deeply", id="deep-nesting"),
        pytest.param("1" * 5000, "malformed JSON: Exceeds the limit", id="huge-int"),
    ],
)  # fmt: skip
def test_skipped_record_reasons(tmp_path: Path, record: object, reason: str) -> None:
    path = write(tmp_path, "papers.jsonl", jsonl(rec(id="ok"), "", record, rec(id="ok2")))
    result = load_papers(path)
    assert [p.id for p in result.papers] == ["ok", "ok2"]
    assert len(result.skipped) == 1
    problem = result.skipped[0]
    assert (problem.source, problem.line) == (str(path), 3)
    assert problem.reason.startswith(reason), problem.reason
    assert str(problem).startswith(f"{path}:3: {reason}")


def test_strict_mode_raises_at_the_first_problem(tmp_path: Path) -> None:
    bad = '{"abstract": "x" "t": 1}'
    content = jsonl(rec(id="a"), rec(id="b", title=...), bad, rec(abstract=""))
    path = write(tmp_path, "papers.jsonl", content)
    with pytest.raises(CorpusError) as info:
        load_papers(path, strict=True)
    assert str(info.value) == f"{path}:3: malformed JSON: Expecting ',' delimiter (column 18)"
    lenient = load_papers(path)  # the same file without strict: 2 papers, 2 skipped, 1 warning
    assert (len(lenient.papers), len(lenient.skipped), len(lenient.warnings)) == (2, 2, 1)


def test_strict_mode_allows_warnings(tmp_path: Path) -> None:
    path = write(tmp_path, "p.jsonl", jsonl(rec(title=..., status="keynote"), rec(status="poster")))
    result = load_papers(path, strict=True)
    assert len(result.papers) == 1 and len(result.warnings) == 3  # title, status, duplicate


def test_strict_json_items(tmp_path: Path) -> None:
    path = write(tmp_path, "p.json", json.dumps([rec(), {"title": "no abstract"}]))
    with pytest.raises(CorpusError, match=r"p\.json:item 2: missing abstract$"):
        load_papers(path, strict=True)


# ---------------------------------------------------------------------------------------------
# Duplicates


def test_duplicate_ids_in_one_file_later_wins(tmp_path: Path) -> None:
    content = jsonl(
        rec(id="a", title="Old"), rec(id="b"), rec(id="a", title="New"), rec(id="a", title="Newest")
    )
    path = write(tmp_path, "p.jsonl", content)
    result = load_papers(path)
    assert [(p.id, p.title) for p in result.papers] == [("a", "Newest"), ("b", "A Title")]
    assert [str(w) for w in result.warnings] == [
        f"{path}:3: duplicate id a (line 3 wins over line 1)",
        f"{path}:4: duplicate id a (line 4 wins over line 3)",
    ]


def test_duplicate_hash_ids_for_repeated_abstracts(tmp_path: Path) -> None:
    path = write(tmp_path, "p.txt", "Header\n\nSame abstract here.\n\nSame  abstract here.\n")
    result = load_papers(path)
    assert len(result.papers) == 1
    assert result.warnings[0].reason.endswith("(line 5 wins over line 3)")


def test_load_many_later_files_win(tmp_path: Path) -> None:
    a = write(tmp_path, "a.jsonl", jsonl(rec(id="x", title="From A"), rec(id="y")))
    b = write(tmp_path, "b.json", json.dumps([rec(id="z"), rec(id="x", title="From B")]))
    result = load_many([a, b])
    assert [(p.id, p.title) for p in result.papers] == [
        ("x", "From B"),
        ("y", "A Title"),
        ("z", "A Title"),
    ]
    assert [str(w) for w in result.warnings] == [
        f"{b}:item 2: duplicate id x ({b}:item 2 wins over {a}:1)"
    ]


def test_load_many_collects_problems_and_propagates_errors(tmp_path: Path) -> None:
    a = write(tmp_path, "a.jsonl", jsonl(rec(id="x"), "oops"))
    b = write(tmp_path, "b.csv", "abstract,title\nText.,\n")
    result = load_many([a, b])
    assert [s.source for s in result.skipped] == [str(a)]
    assert [w.source for w in result.warnings] == [str(b)]
    with pytest.raises(CorpusError, match="file not found"):
        load_many([a, tmp_path / "missing.jsonl"])
    with pytest.raises(CorpusError, match="no input files"):
        load_many([])
    with pytest.raises(CorpusError, match=r"c\.csv:2: missing abstract$"):
        load_many([b, write(tmp_path, "c.csv", "abstract,title\n,T\nOk.,U\n")], strict=True)


# ---------------------------------------------------------------------------------------------
# Text hygiene: NUL bytes, encodings, line endings


def test_nul_bytes_are_removed(tmp_path: Path) -> None:
    content = jsonl(rec(id="a")).replace("We study", "We\x00 study") + jsonl(
        rec(id="b", title="Ti\u0000tle", abstract="\u0000")
    )
    path = write(tmp_path, "p.jsonl", content)
    result = load_papers(path)
    assert [p.abstract for p in result.papers] == [ABSTRACT]
    assert [(s.line, s.reason) for s in result.skipped] == [(2, "missing abstract")]
    assert [str(w) for w in result.warnings] == [f"{path}: removed 1 NUL characters"]


def test_nul_bytes_in_text_and_csv(tmp_path: Path) -> None:
    result = load_papers(write(tmp_path, "p.txt", "Head\n\nAn\x00 abstract.\n"))
    assert [p.abstract for p in result.papers] == ["An abstract."]
    result = load_papers(write(tmp_path, "p.csv", "abstract\nA\x00b.\n"))
    assert [p.abstract for p in result.papers] == ["Ab."]


def test_utf8_bom_is_accepted(tmp_path: Path) -> None:
    for name, content in [
        ("p.jsonl", jsonl(rec())),
        ("p.json", json.dumps([rec()])),
        ("p.txt", "Header\n\nAn abstract.\n"),
        ("nosuffix", jsonl(rec())),
    ]:
        path = write(tmp_path, name, b"\xef\xbb\xbf" + content.encode("utf-8"))
        assert len(load_papers(path).papers) == 1, name


def test_non_utf8_is_rejected_with_byte_and_offset(tmp_path: Path) -> None:
    path = write(tmp_path, "p.jsonl", jsonl(rec(title="Caf\u00e9")).encode("latin-1"))
    offset = jsonl(rec(title="Caf\u00e9")).index("\u00e9")
    with pytest.raises(CorpusError) as info:
        load_papers(path)
    assert str(info.value) == f"{path} is not UTF-8 text (byte 0xe9 at offset {offset})"
    bom_path = write(tmp_path, "b.txt", b"\xef\xbb\xbfok\n\n\xff")
    with pytest.raises(CorpusError, match=r"byte 0xff at offset 7\)"):
        load_papers(bom_path)


def test_crlf_and_unicode_line_separators(tmp_path: Path) -> None:
    content = jsonl(rec(id="a", abstract="One\u2028two."), "oops", rec(id="b"))
    content = content.replace("\n", "\r\n")
    result = load_papers(write(tmp_path, "p.jsonl", content))
    assert [p.id for p in result.papers] == ["a", "b"]
    assert result.papers[0].abstract == "One two."
    assert [s.line for s in result.skipped] == [2]


# ---------------------------------------------------------------------------------------------
# Whole-input failures


def test_missing_file(tmp_path: Path) -> None:
    path = tmp_path / "nope.jsonl"
    with pytest.raises(CorpusError, match=r"^file not found: .*nope\.jsonl$"):
        load_papers(path)


def test_directory(tmp_path: Path) -> None:
    with pytest.raises(CorpusError, match="is a directory"):
        load_papers(tmp_path)


@pytest.mark.skipif(os.name != "posix" or os.geteuid() == 0, reason="root reads anything")
def test_unreadable_file(tmp_path: Path) -> None:
    path = write(tmp_path, "p.jsonl", jsonl(rec()))
    path.chmod(0)
    try:
        with pytest.raises(CorpusError, match="cannot read"):
            load_papers(path)
    finally:
        path.chmod(0o644)


def test_read_error_is_a_corpus_error(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = write(tmp_path, "p.jsonl", jsonl(rec()))

    def refuse(self: Path) -> bytes:
        raise PermissionError(13, "Permission denied")

    monkeypatch.setattr(Path, "read_bytes", refuse)
    with pytest.raises(CorpusError, match=r"^cannot read .*p\.jsonl: Permission denied$"):
        load_papers(path)


@pytest.mark.parametrize(
    ("name", "content", "message"),
    [
        ("p.json", '[{"abstract": "x"},', r"p\.json is not a valid JSON document: Expecting value"),
        ("p.json", jsonl(rec(), rec()), r"Extra data \(line 2, column 1\) \(one object per line\?"),
        pytest.param("p.json", DEEP, r"p\.json is not a valid JSON document: nested too deeply",
                     id="deep"),
        ("p.json", '"just a string"', r"JSON top level must be an array .* not string$"),
        ("p.json", '{"items": []}', r"not object without one$"),
        ("p.json", '{"papers": {}}', r"not object without one$"),
        ("p.csv", "title,authors\nT,A\n",
         r"p\.csv: CSV has no 'abstract' column \(columns: title, authors\)"),
        ("p.csv", "", r"p\.csv: no records found \(empty csv file\)"),
        ("p.csv", "Abstract,Title\n\n", r"no records found"),
        ("p.jsonl", "", r"p\.jsonl: no records found \(empty jsonl file\)"),
        ("p.jsonl", "\n \r\n\t\n", r"no records found"),
        ("p.json", "[]", r"no records found \(empty json file\)"),
        ("p.json", '{"papers": []}', r"no records found"),
        ("p.txt", "", r"no records found \(empty text file\)"),
        ("p.txt", "Just a header\n", r"no records found"),
        ("p.jsonl", jsonl({"title": "x"}, "oops"),
         r"none of its 2 records could be loaded \(first problem, line 1: missing abstract\)"),
    ],
)  # fmt: skip
def test_whole_file_errors(tmp_path: Path, name: str, content: str, message: str) -> None:
    path = write(tmp_path, name, content)
    with pytest.raises(CorpusError, match=message) as info:
        load_papers(path)
    text = str(info.value)
    assert "\n" not in text and str(path) in text


def test_csv_with_a_huge_field_is_skipped_not_fatal(tmp_path: Path) -> None:
    huge = "z" * 200_000
    path = write(tmp_path, "p.csv", f'abstract,title\n"{huge}",T\nFine.,U\n')
    result = load_papers(path)
    assert [p.title for p in result.papers] == ["U"]
    assert result.skipped[0].reason == "abstract too long (200,000 chars; the limit is 100,000)"
    assert csv.field_size_limit() == 131072  # the global limit is restored


def test_problem_str() -> None:
    assert str(Problem("p.jsonl", 12, "malformed JSON: x")) == "p.jsonl:12: malformed JSON: x"
    item = Problem("p.json", 3, "missing abstract", "item")
    assert str(item) == "p.json:item 3: missing abstract"
    whole = Problem("p.txt", None, "removed 2 NUL characters")
    assert str(whole) == "p.txt: removed 2 NUL characters"


# ---------------------------------------------------------------------------------------------
# Property tests: junk input never raises anything but CorpusError

PROPERTY_SETTINGS = settings(
    max_examples=60, deadline=None, database=None, suppress_health_check=[HealthCheck.too_slow]
)
SUFFIXES = ["p.jsonl", "p.json", "p.csv", "p.txt", "p.md", "noext", "p.bin"]


def load_or_corpus_error(name: str, content: bytes) -> None:
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / name
        path.write_bytes(content)
        try:
            result = load_papers(path)
        except CorpusError as exc:
            assert str(exc) and "\n" not in str(exc)
            return
        assert result.papers
        check_papers(result)
        for problem in result.skipped + result.warnings:
            assert problem.source == str(path) and problem.reason


@PROPERTY_SETTINGS
@given(name=st.sampled_from(SUFFIXES), content=st.binary(max_size=400))
def test_random_bytes(name: str, content: bytes) -> None:
    load_or_corpus_error(name, content)


@PROPERTY_SETTINGS
@given(
    name=st.sampled_from(SUFFIXES),
    text=st.text(st.characters(codec="utf-8"), max_size=300),
)
def test_random_text(name: str, text: str) -> None:
    load_or_corpus_error(name, text.encode("utf-8"))


json_scalars = st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=30)
json_values = st.recursive(
    json_scalars,
    lambda children: (
        st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=8), children, max_size=4)
    ),
    max_leaves=12,
)
field_names = st.sampled_from(
    ["id", "paper_id", "openreview_id", "title", "abstract", "authors", "url", "pmlr_url",
     "status", "title_derived", "papers", "other"]
)  # fmt: skip
paper_like = st.dictionaries(field_names, json_values | st.text(max_size=60), max_size=8)


@PROPERTY_SETTINGS
@given(document=json_values | st.lists(paper_like, max_size=5) | st.fixed_dictionaries(
    {"papers": st.lists(paper_like | json_values, max_size=5)}
))  # fmt: skip
def test_random_json_documents(document: object) -> None:
    load_or_corpus_error("p.json", json.dumps(document).encode("utf-8"))


@PROPERTY_SETTINGS
@given(
    lines=st.lists(paper_like | json_values, max_size=6),
    suffix=st.sampled_from(["p.jsonl", "x"]),
)
def test_random_jsonl_lines(lines: list[object], suffix: str) -> None:
    load_or_corpus_error(suffix, "".join(json.dumps(v) + "\n" for v in lines).encode("utf-8"))


@PROPERTY_SETTINGS
@given(rows=st.lists(st.lists(st.text(max_size=30), min_size=1, max_size=5), max_size=6))
def test_random_csv_rows(rows: list[list[str]]) -> None:
    buffer = io.StringIO()
    writer = csv.writer(buffer)
    writer.writerow(["id", "Abstract", "authors", "status", "title"])
    writer.writerows(rows)
    load_or_corpus_error("p.csv", buffer.getvalue().encode("utf-8"))


@PROPERTY_SETTINGS
@given(paragraphs=st.lists(st.text(min_size=1, max_size=80), min_size=1, max_size=6))
def test_random_text_paragraphs_get_titles(paragraphs: list[str]) -> None:
    content = "\n\n".join(paragraphs)
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "p.txt"
        path.write_text(content, encoding="utf-8")
        try:
            result = load_papers(path)
        except CorpusError:
            return
        check_papers(result)
        assert all(p.title_derived and p.title for p in result.papers)
