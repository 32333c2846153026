"""PaperTalk as a set of typed calls: search, answer, compare, summarize, list, get, BibTeX.

One implementation of each tool that other programs use: the MCP server and the
OpenAI-compatible endpoint of `papertalk serve` (ui/mcp_server.py, ui/openai_api.py) call these
methods, and so can the CLI or the UI. Results are plain dicts (TypedDicts, JSON as they are):

    service = PaperTalkService(load_settings(llm="extractive"))
    result = service.ask("How much does Cake reduce time to first token?")
    result["answer"], [c["title"] for c in result["citations"]]

An answer's text carries `[n]` markers, and `citations` says which paper and passage each `n`
is. A refusal is the fixed phrase `rag.answer.refusal.CANNOT_ANSWER` with `refused` set and its
`refusal_reason`. Bad input (an empty question, an unknown paper id, a bad filter) raises
`PaperTalkError` with a one-line message; a failing LLM backend is reported in `error`, with the
papers retrieved before it failed in `related`.
"""

from __future__ import annotations

import re
import threading
from collections.abc import Callable, Iterator, Sequence
from typing import Annotated, Literal

from pydantic import Field
from typing_extensions import TypedDict

from rag.answer.bibtex import author_names
from rag.answer.bibtex import bibtex as make_bibtex
from rag.answer.chain import Answerer
from rag.answer.modes import MODES
from rag.answer.refusal import CANNOT_ANSWER
from rag.answer.safety import safe_title
from rag.errors import PaperTalkError
from rag.records import Answer, AnswerEvent, Citation
from rag.retrieve.hybrid import HybridSearcher, SearchFilters, open_searcher
from rag.settings import Settings
from rag.text.questions import MAX_QUESTION_CHARS, clean_question, tidy_question

Mode = Literal["ask", "list", "compare", "summarize"]
Status = Literal["oral", "spotlight", "poster"]
MAX_SEARCH_K = 50
MAX_IDS = 50  # papers per compare or bibtex call
_URL = re.compile(r"https?://[^\s)\]>\"'`]+")

# Parameter descriptions (the MCP tools' input schemas show them).
Question = Annotated[
    str,
    Field(
        max_length=MAX_QUESTION_CHARS,
        description="A question about the papers, in plain words (at most 2,000 characters).",
    ),
]
Topic = Annotated[
    str,
    Field(
        max_length=MAX_QUESTION_CHARS,
        description="A research topic, e.g. 'diffusion model alignment' or 'causal discovery'.",
    ),
]
PaperId = Annotated[
    str, Field(description="A paper id as returned by search_papers (its OpenReview id).")
]


class CitationInfo(TypedDict):
    """One reference `[n]` of an answer: the paper and the passage that supports it."""

    n: int
    paper_id: str
    title: str
    authors: list[str]
    url: str
    passage: str
    attributed: bool  # PaperTalk tied the sentence to this passage (the LLM cited nothing)
    status: str
    pmlr_url: str
    supporting: list[str]  # the answer's sentences that cite it


class PaperRef(TypedDict):
    paper_id: str
    title: str
    url: str


class AnswerResult(TypedDict):
    """A cited answer, or a refusal (`refused`, `answer` == CANNOT_ANSWER, `refusal_reason`)."""

    question: str
    mode: str
    answer: str
    refused: bool
    refusal_reason: str
    partial: str  # a refused question's parts the papers do state, answered ([n]: citations)
    citations: list[CitationInfo]
    related: list[PaperRef]  # possibly related papers (refusals, failed generations)
    llm: str
    error: str | None  # the LLM backend failed; `related` holds what was retrieved


class SearchHit(TypedDict):
    rank: int
    paper_id: str
    title: str
    authors: list[str]
    url: str
    status: str
    score: float
    passage: str  # the best-matching passage of the abstract


class SearchResult(TypedDict):
    query: str
    papers: list[SearchHit]


class PaperRecord(TypedDict):
    paper_id: str
    title: str
    authors: list[str]
    url: str
    pmlr_url: str
    status: str
    venue: str
    abstract: str


class BibtexResult(TypedDict):
    paper_ids: list[str]
    bibtex: str


class PaperTalkService:
    """The tools over one store. `searcher` (optional) returns the searcher to use: a server
    passes its own, so papers added through the page are seen at once; by default the store the
    settings point at is opened on first use. Safe to call from several threads."""

    def __init__(
        self,
        settings: Settings,
        *,
        searcher: Callable[[], HybridSearcher] | None = None,
    ) -> None:
        self.settings = settings
        self._provider = searcher
        self._lock = threading.Lock()
        self._searcher: HybridSearcher | None = None
        self._answerer: Answerer | None = None
        self._urls: tuple[HybridSearcher, dict[str, str]] | None = None

    # The pieces ---------------------------------------------------------------------------------
    def searcher(self) -> HybridSearcher:
        """The searcher (StoreError when there is no store yet)."""
        if self._provider is not None:
            return self._provider()
        with self._lock:
            if self._searcher is None:
                self._searcher = open_searcher(self.settings)
            return self._searcher

    def answerer(self) -> Answerer:
        """An Answerer over the current searcher (rebuilt when the searcher was reopened)."""
        searcher = self.searcher()
        with self._lock:
            if self._answerer is None or self._answerer.searcher is not searcher:
                self._answerer = Answerer(self.settings, searcher=searcher)
            return self._answerer

    # Searching and reading --------------------------------------------------------------------
    def search_papers(
        self,
        query: Annotated[
            str,
            Field(
                max_length=MAX_QUESTION_CHARS,
                description="What to look for: a topic, a method or a name.",
            ),
        ],
        k: Annotated[
            int, Field(ge=1, le=MAX_SEARCH_K, description="How many papers to return.")
        ] = 5,
        status: Annotated[
            Status | None, Field(description="Only papers presented as oral, spotlight or poster.")
        ] = None,
        author: Annotated[
            str | None,
            Field(description="Only papers with this author (accents and initials aside)."),
        ] = None,
    ) -> SearchResult:
        """Find papers by hybrid (dense + BM25) retrieval over their abstracts, best first, each
        with its best-matching passage. Use it to find paper ids; it does not answer questions."""
        query = clean_question(query, what="query")
        if not 1 <= k <= MAX_SEARCH_K:
            raise PaperTalkError(f"k must be between 1 and {MAX_SEARCH_K}")
        filters = _filters(status, author)
        hits = self.searcher().search(query, k, filters)
        return {
            "query": query,
            "papers": [
                {
                    "rank": rank,
                    "paper_id": h.paper_id,
                    "title": safe_title(h.title),
                    "authors": author_names(h.authors),
                    "url": h.url,
                    "status": h.status,
                    "score": round(h.score, 6),
                    "passage": h.passages[0].text if h.passages else "",
                }
                for rank, h in enumerate(hits, start=1)
            ],
        }

    def get_paper(self, id: PaperId) -> PaperRecord:
        """One paper's metadata and abstract, by id."""
        searcher = self.searcher()
        paper_id = id.strip()
        meta = searcher.lexical.table.papers.get(paper_id)
        if meta is None:
            raise PaperTalkError(f"no paper with id {paper_id!r}: find ids with search_papers")
        return {
            "paper_id": paper_id,
            "title": safe_title(meta["title"]),
            "authors": author_names(meta["authors"]),
            "url": meta["url"],
            "pmlr_url": meta.get("pmlr_url", ""),
            "status": meta["status"],
            "venue": meta.get("venue", ""),
            "abstract": _abstract(searcher.lexical.paper_chunks(paper_id)),
        }

    def bibtex(
        self,
        ids: Annotated[
            list[str],
            Field(min_length=1, max_length=MAX_IDS, description="Paper ids to cite."),
        ],
    ) -> BibtexResult:
        """BibTeX entries for papers, by id (for a reference manager or a LaTeX paper)."""
        paper_ids = _unique_ids(ids)
        papers = self.searcher().lexical.table.papers
        unknown = [pid for pid in paper_ids if pid not in papers]
        if unknown:
            raise PaperTalkError(f"no paper with id {', '.join(map(repr, unknown))}")
        citations = [
            Citation(
                n,
                pid,
                papers[pid]["title"],
                list(papers[pid]["authors"]),
                papers[pid]["url"],
                "",
                False,
                status=papers[pid]["status"],
                pmlr_url=papers[pid].get("pmlr_url", ""),
                venue=papers[pid].get("venue", ""),
            )
            for n, pid in enumerate(paper_ids, start=1)
        ]
        return {"paper_ids": paper_ids, "bibtex": make_bibtex(citations)}

    # Answering ----------------------------------------------------------------------------------
    def ask(
        self,
        question: Question,
        mode: Annotated[
            Mode,
            Field(
                description="'ask' (a short cited answer), 'list' (every matching paper), "
                "'compare' (a cited table of the papers named) or 'summarize' (a themed "
                "overview)."
            ),
        ] = "ask",
    ) -> AnswerResult:
        """Answer a question from the papers' abstracts only. Every claim carries an [n] marker
        that `citations` resolves to a paper and its supporting passage. When the papers do not
        answer, `answer` is the fixed phrase 'The retrieved papers do not answer this question.'
        with `refused` true and a `refusal_reason`."""
        return self.answer(question, mode=mode)

    def compare(
        self,
        papers_or_question: Annotated[
            str | list[str],
            Field(
                description="Either a question ('Compare D-Fusion and DreamDPO') or a list of "
                "two or more paper ids or paper names."
            ),
        ],
    ) -> AnswerResult:
        """Compare papers side by side: a cited table (problem, method, results), then a short
        cited summary of how they differ."""
        if isinstance(papers_or_question, str):
            return self.answer(papers_or_question, mode="compare")
        items = _unique_ids(papers_or_question)
        if len(items) < 2:
            raise PaperTalkError("compare needs at least two papers")
        papers = self.searcher().lexical.table.papers
        names = [safe_title(papers[i]["title"]) if i in papers else i for i in items]
        ids = [i for i in items if i in papers]
        # Papers given by id are the only ones retrieved; names are found by retrieval.
        only = SearchFilters(paper_ids=frozenset(ids)) if len(ids) == len(items) else None
        question = "Compare " + ", ".join(names[:-1]) + " and " + names[-1]
        return self.answer(question, mode="compare", filters=only)

    def summarize(self, topic: Topic) -> AnswerResult:
        """A themed overview of the papers on a topic, every line cited, with a bibliography of
        the papers it covers."""
        return self.answer(topic, mode="summarize")

    def list_papers(self, topic: Topic) -> AnswerResult:
        """Every paper of the collection that is about a topic (not only the top few), with how
        many there are and one cited line from each abstract."""
        return self.answer(topic, mode="list")

    def answer(
        self,
        question: str,
        *,
        mode: str = "ask",
        history: Sequence[tuple[str, str]] = (),
        history_papers: Sequence[str] = (),
        filters: SearchFilters | None = None,
    ) -> AnswerResult:
        """`ask` with a conversation: earlier (question, answer) pairs and the papers the last
        answer cited (follow-ups such as 'How does it work?' lean on them)."""
        final = None
        for event in self.stream(
            question, mode=mode, history=history, history_papers=history_papers, filters=filters
        ):
            if event.kind == "final":
                final = event.answer
        if final is None:
            raise PaperTalkError("no answer was produced")
        return answer_result(final)

    def stream(
        self,
        question: str,
        *,
        mode: str = "ask",
        history: Sequence[tuple[str, str]] = (),
        history_papers: Sequence[str] = (),
        filters: SearchFilters | None = None,
    ) -> Iterator[AnswerEvent]:
        """The answering chain's events (`retrieved`, `token` with the unchecked draft, `final`
        with the cited Answer). Bad input raises before anything is retrieved."""
        question = clean_question(question)
        if mode not in MODES:
            raise PaperTalkError(f"unknown mode {mode!r}: use one of {', '.join(MODES)}")
        answerer = self.answerer()
        return answerer.stream(
            question,
            mode=mode,
            history=[(tidy_question(q), a) for q, a in history if tidy_question(q)],
            history_papers=list(history_papers),
            filters=filters,
        )

    def cited_papers(self, text: str) -> list[str]:
        """Ids of the stored papers whose URL appears in `text` (an earlier reply's references),
        in order of first appearance."""
        searcher = self.searcher()
        with self._lock:
            if self._urls is None or self._urls[0] is not searcher:
                table = searcher.lexical.table.papers
                self._urls = (searcher, {m["url"]: pid for pid, m in table.items() if m["url"]})
            by_url = self._urls[1]
        found = [by_url.get(url.rstrip(".,;:")) for url in _URL.findall(text)]
        return list(dict.fromkeys(pid for pid in found if pid))


def answer_result(answer: Answer) -> AnswerResult:
    """An Answer as plain data (`AnswerResult`)."""
    refused = answer.refused and not answer.error
    return {
        "question": answer.question,
        "mode": answer.mode,
        "answer": CANNOT_ANSWER if refused else answer.answer,
        "refused": refused,
        "refusal_reason": answer.refusal_reason if refused else "",
        "partial": answer.partial if refused else "",
        "citations": [
            {
                "n": c.n,
                "paper_id": c.paper_id,
                "title": safe_title(c.title),
                "authors": author_names(c.authors),
                "url": c.url,
                "passage": c.passage,
                "attributed": c.attributed,
                "status": c.status,
                "pmlr_url": c.pmlr_url,
                "supporting": list(c.supporting),
            }
            for c in answer.citations
        ],
        "related": [
            {"paper_id": h.paper_id, "title": safe_title(h.title), "url": h.url}
            for h in answer.related
        ],
        "llm": answer.llm,
        "error": answer.error,
    }


def failure_message(result: AnswerResult) -> str:
    """A failed answer's error, with the papers retrieved before it failed."""
    papers = "; ".join(f"{p['title']} ({p['url']})" for p in result["related"])
    return f"{result['error']}. Retrieved papers: {papers}" if papers else f"{result['error']}"


def _filters(status: str | None, author: str | None) -> SearchFilters | None:
    author = " ".join((author or "").split()) or None
    status = (status or "").strip().lower() or None
    if status is None and author is None:
        return None
    return SearchFilters(status=status, author=author)


def _unique_ids(ids: Sequence[str]) -> list[str]:
    if isinstance(ids, str):
        ids = [ids]
    cleaned = list(dict.fromkeys(i.strip() for i in ids if i and i.strip()))
    if not cleaned:
        raise PaperTalkError("give at least one paper id")
    if len(cleaned) > MAX_IDS:
        raise PaperTalkError(f"at most {MAX_IDS} papers at a time")
    return cleaned


def _abstract(chunks: Sequence[tuple[int, str]]) -> str:
    """The abstract rebuilt from its stored chunks (offsets in the abstract; chunks may
    overlap by whole sentences)."""
    text = ""
    for start, chunk in sorted(chunks):
        end = start + len(chunk)
        if start >= len(text):
            text += " " * (start - len(text)) + chunk
        elif end > len(text):
            text += chunk[len(text) - start :]
    return text.strip()
