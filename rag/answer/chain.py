"""The answering chain, as a LangChain runnable.

    question -> [condense] -> retrieve -> context -> (refusal check) -> mode -> generate -> cite

`Answerer(settings).runnable` takes a question (a string, a dict or an `AnswerRequest`) and
streams `AnswerEvent`s: `retrieved` (the papers), `token` (answer text as it is written) and
`final` (the cited `Answer`). Each step is a child runnable (`retrieve` calls the
`PaperRetriever`, `generate` is `ChatPromptTemplate | llm`, `cite` resolves citations), so
callbacks, tracing and `astream_events` see every step. Defaults are built from settings only
when nothing is passed: `Answerer(settings, retriever=..., llm=...)` is how tests and users
plug in their own pieces.
"""

from __future__ import annotations

import re
from collections.abc import AsyncIterator, Callable, Collection, Iterator, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, cast

import numpy as np
from langchain_core.callbacks import AsyncCallbackManagerForChainRun
from langchain_core.language_models.chat_models import BaseChatModel
from langchain_core.output_parsers import StrOutputParser
from langchain_core.runnables import Runnable, RunnableConfig, RunnableLambda
from langchain_core.runnables.config import patch_config, run_in_executor

from rag.answer.bibtex import author_names
from rag.answer.citations import (
    EmbeddingSimilarity,
    checked_sentence,
    cite_answer,
    cite_prose,
    passage_slots,
)
from rag.answer.context import (
    ContextPassage,
    TermWeights,
    build_context,
    described_first,
    stands_out,
)
from rag.answer.conversation import (
    Turn,
    is_followup,
    names_nothing,
    resolve_ellipsis,
    rewrite_is_faithful,
    speaks_of_last_turn,
    standalone_query,
)
from rag.answer.intent import (
    asks_which_paper,
    author_asked,
    author_role_asked,
    bare_topic,
    compared_pair,
    compared_topic,
    open_request,
    others_topic,
    over_papers,
    picks_among,
    referenced_positions,
    refers_to_it,
    refers_to_them,
    requested_count,
    similar_asked,
    small_talk,
    source_asked,
    status_in,
    topic_of,
    wants_comparison,
    wants_papers,
    wants_ranking,
    wants_record,
    wants_subset,
    wants_summary,
    wants_topics,
)
from rag.answer.llm import (
    EXTRACTIVE,
    check_backend,
    describe_llm_error,
    make_chat_model,
    parse_llm_spec,
)
from rag.answer.modes import MODES, in_part
from rag.answer.modes.base import Clock, ModeInput
from rag.answer.modes.compare import MAX_COMPARED
from rag.answer.modes.extractive import about_one
from rag.answer.modes.listing import CLOSE_MEANING, MEANING_BAND
from rag.answer.prompts import chat_prompt
from rag.answer.refusal import (
    ACCLAIM_REASON,
    ASKING_WORDS,
    INSTITUTION_REASON,
    NO_SUBJECT_REASON,
    SMALL_TALK_REASON,
    USAGE_REASON,
    Answerability,
    affiliation_reason,
    asks_for_acclaim,
    asks_institutions,
    asks_usage_ranking,
    check_answerable,
    coverage,
    named_kinds,
    names_no_subject,
    unmentioned_name,
)
from rag.answer.relevance import (
    CANDIDATES,
    MAX_EXAMINED,
    NEAREST,
    UNUSED_TELLS,
    TopicDecision,
    judge_papers,
    rate_contenders,
    topical_anchors,
)
from rag.answer.safety import guard_generated, safe_title, strip_injection
from rag.embed.base import TokenCounter, resolve_model_dir
from rag.errors import PaperTalkError
from rag.explore.similar import similar_papers
from rag.explore.topics import TopicMap, topic_map
from rag.explore.vectors import PaperVectors, paper_vectors
from rag.records import Answer, AnswerEvent, AnswerSentence, PaperHit
from rag.retrieve.hybrid import HybridSearcher, SearchFilters, open_searcher
from rag.retrieve.retriever import PaperRetriever, document_to_hit
from rag.settings import Settings
from rag.text.names import query_names
from rag.text.questions import clean_question, without_venues
from rag.text.sentences import split_sentences
from rag.text.terms import FUNCTION_WORDS, tokenize

# Compare and summarize read several papers: at least this many are retrieved for them.
MIN_PAPERS_FOR_OVERVIEWS = 6
# Extractive answers and overviews quote whole sentences: their context is at least this large.
MIN_QUOTING_CONTEXT_TOKENS = 600
# An extractive answer chooses among this many best sentences of each retrieved paper.
EXTRACTIVE_SENTENCES = 12
EXTRACTIVE_CONTEXT_TOKENS = 2000
CONDENSE_MAX_TOKENS = 48
# Two words whose embeddings are at least this similar say the same thing ("big" and
# "large"). On the asked-for phrases the refusal gate rejected in bench/qa/tune.jsonl and
# tune2.jsonl, the answerable ones' missing words had a neighbour at 0.66 and above, or none
# above 0.45; not-stated ones none above 0.48. Over all tune splits (session 16) answerable
# questions' missing words also had neighbours at 0.57-0.58 ("clips"/"videos") and no
# not-stated question's deciding word fell between 0.56 and 0.60: 0.6 -> 0.56 took tune5's
# false refusals from 0.14 to 0.11 and changed nothing else. Over all 14 tune splits (session
# 26), 0.56 -> 0.50 answered 5 of 22 falsely refused questions and refused one fewer of 232
# unanswerable ones (a measure asked for, put as "performance": refusal.NEAR_MEASURE keeps it);
# 0.45 answered 4 more and refused 5 fewer.
NEAR_WORD = 0.50
_TEXT_WORD = re.compile(r"[A-Za-z][A-Za-z-]+")
# "Which paper does X?" is decided as a list of the papers on X would be (rag/answer/relevance.py)
# unless a paper is at least DESCRIBED_PAPER similar to the question: that paper is the one
# described, in the asker's words (which a decision by the topic's words may miss). On
# bench/qa/tune17.jsonl (36 answerable "which paper" questions, 24 on absent topics) the papers
# described were 0.40-0.82 similar (5 below 0.5), and no absent topic the decision refuses was
# above 0.48 (on tune to tune16, above 0.43).
DESCRIBED_PAPER = 0.5
MAX_CACHED_WORDS = 50_000  # word vectors kept between questions (~75 MB)
# A question that sets two things side by side, one of them named ("FooNet and the paper on
# tiling both ..."), names a paper by the other too: the paper retrieval ranks first for its
# words, when that paper's title and abstract hold at least DESCRIBED_COVERAGE of them
# (IDF-weighted). On the comparisons of bench/qa/tune*.jsonl, 28 of the 29 things no name picked
# out had their gold paper ranked first, 27 of them at 0.75 or more (one at 0.64); the one whose
# first paper was not gold scored 0. Names no abstract uses (40, from the tune splits'
# absent-name questions) and made-up descriptions of absent topics scored at most 0.58.
DESCRIBED_COVERAGE = 0.75
MAX_CACHED_DESCRIPTIONS = 1_000
# A title this long, written out in a conversation, names its paper.
MIN_QUOTED_TITLE_WORDS = 4
# A name shared by more papers than this (a field's acronym, not a method's) identifies none.
MAX_PAPERS_PER_NAME = 3
# A run of this many capitalised words or more that a title holds names its paper.
MIN_TITLE_PHRASE_WORDS = 3
_CAPITALISED_RUN = re.compile(r"\b[A-Z][\w-]*(?:\s+[A-Z][\w-]*){2,}")
_SENTENCE_OPENING = re.compile(r"(?:^|[.?!]\s+)\W*([A-Z][a-z]{2,})\b")
_QUESTION_OPENERS = frozenset(
    "What Which How Why When Where Who Does Do Did Is Are In On For".split()
)
# Of the papers one name picks out, those within this share of the best fit of the question's
# other words are meant.
NAME_FIT = 0.1
# A name more papers than this write is a field term, not a paper's own name. On the names of
# bench/qa/tune.jsonl, papers' own names are written by at most 5 papers, and field terms that
# some title carries (GPU, GNN, DPO) by 30 or more.
MAX_MENTIONS_OF_A_NAME = 8


# A question that names nothing stays with the paper under discussion when retrieval ranks that
# paper among this many for it.
STILL_DISCUSSED = 5


@dataclass(frozen=True)
class AnswerRequest:
    question: str
    mode: str = "ask"
    history: tuple[Turn, ...] = ()
    history_papers: tuple[str, ...] = ()
    filters: SearchFilters | None = None

    @classmethod
    def coerce(cls, value: AnswerRequest | Mapping[str, Any] | str) -> AnswerRequest:
        if isinstance(value, AnswerRequest):
            return value
        if isinstance(value, str):
            return cls(value)
        data = dict(value)
        data["history"] = tuple(tuple(t) for t in data.get("history", ()))
        data["history_papers"] = tuple(data.get("history_papers", ()))
        return cls(**data)


@dataclass(frozen=True)
class _Retrieval:
    question: str
    query: str
    mode: str
    history: tuple[Turn, ...] = ()
    history_papers: tuple[str, ...] = ()
    filters: SearchFilters | None = None
    followup: bool = False  # it leans on the last turn


@dataclass(frozen=True)
class Refusal:
    """Why the papers do not answer a question, and the question asking only the parts of it
    they do answer ("" when they answer none)."""

    reason: str
    answered: str = ""


@dataclass
class _Citing:
    result: Answer
    raw: str
    passages: Sequence[ContextPassage] = field(default_factory=list)
    asked_papers: Collection[str] = ()


class Answerer:
    """The answering chain for one settings object: a retriever, an LLM (none for
    `extractive`), the modes; `runnable` is the chain, `stream` and `answer` call it."""

    def __init__(
        self,
        settings: Settings,
        *,
        retriever: PaperRetriever | None = None,
        searcher: HybridSearcher | None = None,
        llm: BaseChatModel | None = None,
        llm_spec: str | None = None,
    ) -> None:
        self._settings = settings
        if retriever is None:
            retriever = PaperRetriever(
                searcher=searcher or open_searcher(settings), k=settings.passages
            )
        self.retriever = retriever
        self.searcher: HybridSearcher = retriever.searcher
        self.spec = parse_llm_spec(llm_spec or settings.llm)
        if llm is None:
            check_backend(self.spec)
        self._llm = llm
        self._llm_ready = llm is not None or self.spec.kind == EXTRACTIVE
        self.count_tokens = TokenCounter(resolve_model_dir(settings.embedding_model))
        self._writers_of: dict[tuple[str, bool], tuple[str, ...]] = {}
        self._titles_of: tuple[object, tuple[tuple[str, str], ...]] = (None, ())
        self._short_titles_of: tuple[object, tuple[tuple[str, str], ...]] = (None, ())
        self._word_vectors: dict[str, np.ndarray] = {}
        # Papers described by phrases (see DESCRIBED_COVERAGE), for the current index.
        self._described: tuple[object, dict[str, str | None]] = (None, {})
        self._vectors: tuple[object, PaperVectors | None] = (None, None)
        # Generator functions are how RunnableLambda streams (its stubs expect plain returns).
        self.runnable: Runnable[Any, AnswerEvent] = RunnableLambda(
            cast(Any, self._events), afunc=cast(Any, self._aevents), name="papertalk"
        )
        self._retrieve_step = RunnableLambda(self._retrieve, name="retrieve")
        self._context_step = RunnableLambda(self._context, name="context")
        self._cite_step = RunnableLambda(self._cite, name="cite")
        self._judge_step = RunnableLambda(self._judge, name="judge")

    # ModeTools ---------------------------------------------------------------------------------
    @property
    def settings(self) -> Settings:
        return self._settings

    @property
    def is_extractive(self) -> bool:
        return self.spec.kind == EXTRACTIVE and self._llm is None

    @property
    def llm_label(self) -> str:
        return self.spec.label

    @property
    def llm(self) -> BaseChatModel | None:
        if not self._llm_ready:
            self._llm = make_chat_model(self.spec, self._settings)
            self._llm_ready = True
        return self._llm

    def weights(self) -> TermWeights:
        index = self.searcher.lexical
        return TermWeights(tokenize, index.df, len(index.table))

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        return np.asarray(self.searcher.embedder.embed_documents(list(texts)))

    def paper_vectors(self, paper_ids: Sequence[str]) -> dict[str, np.ndarray]:
        return self.searcher.paper_vectors(paper_ids)

    def abstract_sentences(self, paper_id: str) -> list[str]:
        """The sentences of a paper's stored abstract; instructions to a model are cut out
        (they are never quoted in a table or summary)."""
        sentences: list[str] = []
        for _, text in self.searcher.lexical.paper_chunks(paper_id):
            for span in split_sentences(text):
                sentence = strip_injection(text[span.start : span.end])
                if sentence and sentence not in sentences:
                    sentences.append(sentence)
        return sentences

    def generate(
        self,
        prompt: str,
        values: Mapping[str, str],
        config: RunnableConfig | None = None,
        *,
        max_tokens: int | None = None,
    ) -> Iterator[str]:
        """Stream text from `chat_prompt(prompt) | llm`; backend failures become one-line
        PaperTalkErrors."""
        llm: Runnable[Any, Any] | None = self.llm
        if llm is None:
            raise PaperTalkError("the extractive backend does not generate text")
        if max_tokens is not None:
            bound: dict[str, Any] = {"max_tokens": max_tokens}
            if self.spec.kind == "openai":  # llama.cpp's server reads only this one
                bound["extra_body"] = {"max_tokens": max_tokens}
            llm = llm.bind(**bound)
        chain = (chat_prompt(prompt) | llm | StrOutputParser()).with_config(run_name="generate")
        try:
            for text in chain.stream(dict(values), config):
                if text:
                    yield text
        except PaperTalkError:
            raise
        except Exception as exc:
            raise PaperTalkError(describe_llm_error(self.llm_label, exc)) from exc

    def topic_map(self) -> TopicMap:
        """The collection's topic map, kept beside the store (built the first time: about a
        minute for all ICML 2025 papers)."""
        return topic_map(self._settings.home, self.searcher)

    def similar_to(self, paper_id: str, k: int) -> list[tuple[str, float]]:
        papers = self.searcher.lexical.table.papers
        if self._vectors[0] is not papers:  # every paper's vector, read once per index
            self._vectors = (papers, paper_vectors(self.searcher))
        vectors = self._vectors[1]
        if vectors is None or paper_id not in vectors.paper_ids:
            return []
        return [
            (s.paper_id, s.similarity) for s in similar_papers(self.searcher, vectors, paper_id, k)
        ]

    def papers_by(self, filters: SearchFilters | None) -> list[PaperHit]:
        papers = self.searcher.lexical.table.papers
        chosen = [pid for pid, p in papers.items() if filters is None or filters.allows(p, pid)]
        hits = [self.searcher.paper_hit(pid) for pid in chosen]
        return sorted(hits, key=lambda h: h.title.lower())

    def judge_papers(
        self,
        topic: str,
        hits: Sequence[PaperHit],
        config: RunnableConfig | None = None,
        filters: SearchFilters | None = None,
    ) -> TopicDecision:
        step = {"topic": topic, "hits": hits, "filters": filters}
        result: TopicDecision = self._judge_step.invoke(step, config)
        return result

    def _judge(self, step: Mapping[str, Any], config: RunnableConfig) -> TopicDecision:
        hits: list[PaperHit] = list(step["hits"])
        topic = without_venues(step["topic"])
        weights = self.weights()
        lexical = self.searcher.lexical
        df = lexical.df.get
        # Every paper that uses an anchor term is examined too: a count covers the collection
        # (anchors are words at most MAX_ANCHOR_SHARE of it uses).
        seen = {h.paper_id for h in hits}
        allowed = step.get("filters")
        n_papers = len(lexical.table.papers)
        # Similar to what is asked about, not to how it is asked ("how many" or "which").
        asking = ASKING_WORDS | FUNCTION_WORDS
        about = " ".join(w for w in topic.split() if w.lower().strip("?,.") not in asking) or topic
        similarities = self.searcher.paper_similarities(about, [h.paper_id for h in hits])

        def paper_text(paper_id: str) -> str:
            return " ".join(text for _, text in lexical.paper_chunks(paper_id))

        pool, near_similarities = hits, similarities
        if allowed is not None and allowed.active:
            # A topic's distinctive words are the collection's, whatever the filters keep (the
            # orals nearest to a topic may be few, and about something else).
            pool = self.searcher.search(about, CANDIDATES)
            near_similarities = self.searcher.paper_similarities(about, [h.paper_id for h in pool])
        nearest = sorted(pool, key=lambda h: -near_similarities.get(h.paper_id, 0.0))[:NEAREST]
        anchors = topical_anchors(
            topic,
            weights,
            lexical.document_frequency,
            [f"{h.title} {paper_text(h.paper_id)}" for h in nearest],
            n_papers,
        )
        for term in anchors:
            using = lexical.papers_with(term)
            for paper_id in sorted(using - seen):
                if len(hits) >= MAX_EXAMINED:
                    break
                meta = lexical.table.papers[paper_id]
                if allowed is None or allowed.allows(meta, paper_id):
                    hits.append(self.searcher.paper_hit(paper_id))
                    seen.add(paper_id)
        added = [h.paper_id for h in hits if h.paper_id not in similarities]
        similarities |= self.searcher.paper_similarities(about, added) if added else {}
        decision = judge_papers(
            topic,
            hits,
            weights,
            paper_text,
            similarities,
            lambda term: df(term, 0),
            anchors,
            n_papers,
        )
        if n_papers < UNUSED_TELLS:  # the contenders' model was fitted on a large collection
            return decision
        # Only decisions the model applies to need their contenders' titles embedded (a broad
        # topic has hundreds).
        contenders = {
            h.paper_id: h
            for d in (decision, decision.reworded)
            if d is not None and d.ratable
            for h in d.contenders
        }
        if not contenders:
            return decision
        topic_vector = np.asarray(self.searcher.embedder.embed_query(about))
        titles = self.embed([h.title for h in contenders.values()]) @ topic_vector
        title_similarity = dict(zip(contenders, map(float, titles), strict=True))
        return rate_contenders(decision, title_similarity, self.paper_vectors(list(contenders)))

    def cite(
        self,
        result: Answer,
        raw: str,
        passages: Sequence[ContextPassage],
        config: RunnableConfig | None = None,
        asked_papers: Collection[str] = (),
    ) -> None:
        self._cite_step.invoke(_Citing(result, raw, passages, asked_papers), config)

    def cite_prose(
        self, raw: str, passages: Sequence[ContextPassage]
    ) -> tuple[str, list[AnswerSentence], list[str]]:
        return cite_prose(raw, passages, EmbeddingSimilarity(self.embed))

    def guard(self, text: str, passages: Sequence[ContextPassage], *questions: str) -> str:
        """Generated text without sentences that follow an instruction or are not about the
        passages or the question (rag/answer/safety.py); empty when nothing is left."""
        return guard_generated(text, self.weights().terms, self._known(passages, questions))

    def _known(self, passages: Sequence[ContextPassage], questions: Sequence[str]) -> set[str]:
        """The content terms of the passages (titles included) and the questions."""
        shown = [safe_title(p.title) + " " + p.text for p in passages]
        return self.weights().terms(" ".join([*shown, *questions]))

    def sentence_check(
        self,
        passages: Sequence[ContextPassage],
        *questions: str,
        numbered: bool = False,
        asked_papers: Collection[str] = (),
    ) -> Callable[[str], str]:
        texts, papers = passage_slots(passages, numbered=numbered)
        similarity = EmbeddingSimilarity(self.embed)
        terms, known = self.weights().terms, self._known(passages, questions)  # once per answer
        said: set[str] = set()

        def check(sentence: str) -> str:
            guarded = guard_generated(sentence, terms, known, said)
            if not guarded:
                return ""
            return checked_sentence(guarded, texts, papers, similarity, asked_papers)

        return check

    # Calling the chain -------------------------------------------------------------------------
    def stream(
        self,
        question: str,
        *,
        mode: str = "ask",
        history: Sequence[Turn] = (),
        history_papers: Sequence[str] = (),
        filters: SearchFilters | None = None,
        config: RunnableConfig | None = None,
    ) -> Iterator[AnswerEvent]:
        request = AnswerRequest(question, mode, tuple(history), tuple(history_papers), filters)
        return self.runnable.stream(request, config)

    def answer(self, question: str, **kwargs: Any) -> Answer:
        final = None
        for event in self.stream(question, **kwargs):
            if event.kind == "final":
                final = event.answer
        assert final is not None
        return final

    # The chain's body ---------------------------------------------------------------------------
    def _events(self, request: Any, config: RunnableConfig) -> Iterator[AnswerEvent]:
        request = AnswerRequest.coerce(request)
        clock = Clock()
        # "And BarNet?" after "What is the speed of FooNet?" asks that of BarNet
        question = resolve_ellipsis(clean_question(request.question), request.history)
        if request.mode not in MODES:
            raise PaperTalkError(f"unknown mode {request.mode!r}: use one of {', '.join(MODES)}")
        mode = request.mode
        if small_talk(question):  # "Thanks!": nothing to look up, whatever came before
            yield self._refused_unsearched(question, mode, clock, config, SMALL_TALK_REASON)
            return
        # Papers of the previous answer a comparison or summary picks ("Compare the first two",
        # "Summarize them").
        picked = self._picked(question, request) if mode in ("ask", "compare", "summarize") else []
        author = author_asked(question) if mode == "ask" else None
        if mode == "ask" and author is None and request.history:
            author = self._author_by_place(question, request)
        source = source_asked(question) if mode in ("ask", "list") and not author else None
        if source and self.papers_by(SearchFilters(author=source)):
            author, mode = source, "ask"  # "papers from <an author>": that author's papers
        elif source:
            # "Which papers are from Google DeepMind?": no field records where papers come from
            why = affiliation_reason(source)
            yield self._refused_unsearched(question, mode, clock, config, why)
            return
        if author and not (request.filters and request.filters.author):
            # "What did <author> publish?": that author's papers
            mode = "authors"
            base = request.filters or SearchFilters()
            request = replace(request, filters=replace(base, author=author))
        elif (
            mode == "ask"
            and len(request.history_papers) > 1
            and named_kinds(question)
            and refers_to_them(question)
            and not self._subject_papers(question)
        ):
            # "Which datasets do they use?" after a list: asked of each paper discussed
            mode = "list"
            base = request.filters or SearchFilters()
            only = frozenset(request.history_papers)
            request = replace(request, filters=replace(base, paper_ids=only))
        elif mode == "ask" and request.history_papers and wants_subset(question):
            # "Which of them ...": a list over the papers of the previous answer
            mode = "list"
            base = request.filters or SearchFilters()
            only = frozenset(request.history_papers)
            request = replace(request, filters=replace(base, paper_ids=only))
        elif mode == "ask" and wants_topics(question):
            mode = "topics"  # "What are the main topics?": the collection's topic map
        elif mode == "ask" and wants_ranking(question):
            mode = "ranked"  # "Who has the most papers?": counted from the author lists
        elif mode == "ask" and self._names_one_paper(similar_asked(question)):
            mode = "similar"  # "Papers similar to X", X one paper: nearest by paper vector
        elif mode == "ask" and wants_comparison(question) and picked:
            # "Compare the first two", "What distinguishes them?": papers of the previous answer
            mode = "compare"
            picked = picked[:MAX_COMPARED]  # the first ones, when more were listed
            base = request.filters or SearchFilters()
            request = replace(request, filters=replace(base, paper_ids=frozenset(picked)))
        elif mode == "ask" and (against := self._against_others(question, config)):
            # "Compare X and other BarNets": X and the papers most about the topic
            mode, picked = "compare", against
            base = request.filters or SearchFilters()
            request = replace(request, filters=replace(base, paper_ids=frozenset(picked)))
        elif mode == "ask" and wants_comparison(question) and self._compared(question):
            mode = "compare"  # "How does X differ from Y?" gets the table of X and Y
        elif mode == "ask" and (on_topic := self._on_topic(question, config)):
            # "Compare the orals on X": the papers most about X, side by side
            mode, picked = "compare", on_topic
            base = request.filters or SearchFilters()
            request = replace(request, filters=replace(base, paper_ids=frozenset(picked)))
        elif mode == "ask" and wants_summary(question):
            mode = "summarize"  # "Summarize the work on X" gets the themed overview
        elif mode == "ask" and open_request(question) and not self._subject_papers(question):
            mode = "summarize"  # "Tell me about X", X a topic, not a paper
        elif mode == "ask" and wants_papers(question):
            mode = "list"  # "Which papers ...?" is answered with every matching paper
        elif mode == "ask" and over_papers(question) and named_kinds(question):
            mode = "list"  # "Which datasets do the papers on X use?": paper by paper
        elif (
            mode == "ask"
            and not request.history
            and bare_topic(question)
            and not self._subject_papers(question)
        ):
            mode = "list"  # "protein design", typed as a search: the papers on it
        if (
            mode == "summarize"
            and not picked
            and len(request.history_papers) == 1
            and refers_to_it(question)
            and not self._subject_papers(question)
        ):
            picked = list(request.history_papers)  # "Summarize it": the paper just discussed
        if mode == "summarize" and picked and not wants_comparison(question):
            # "Summarize them": the papers of the previous answer
            base = request.filters or SearchFilters()
            request = replace(request, filters=replace(base, paper_ids=frozenset(picked)))
        elif mode != "compare":
            picked = []
        if (
            mode in ("list", "ranked", "authors", "summarize")
            and not picked
            and status_in(question)
            and not (request.filters and request.filters.status)
        ):
            # "How many orals ...": the papers with that status
            base = request.filters or SearchFilters()
            request = replace(request, filters=replace(base, status=status_in(question)))
        request = replace(request, mode=mode)
        result = Answer(question, "", mode, self.llm_label, False, extractive=self.is_extractive)
        # A question leans on the last turn when it reads as a follow-up; an ask-mode one also
        # when it speaks of something just said with a definite article ("the latency").
        followup = bool(request.history) and (
            is_followup(question)
            or (
                mode == "ask"
                and speaks_of_last_turn(question, request.history)
                and not self._subject_papers(question)
            )
        )
        query = self._retrieval_query(question, request.history, config, followup)
        result.query = query
        hits: list[PaperHit] = self._retrieve_step.invoke(
            _Retrieval(
                question,
                query,
                request.mode,
                request.history,
                request.history_papers,
                request.filters,
                followup,
            ),
            config,
        )
        if picked:  # those papers, in the order the question picks them
            found = {h.paper_id: h for h in hits}
            hits = [found.get(pid) or self.searcher.paper_hit(pid) for pid in picked]
        clock.mark("retrieve")
        yield AnswerEvent("retrieved", hits=hits)
        passages: list[ContextPassage] = self._context_step.invoke(
            {"query": query, "hits": hits, "mode": request.mode, "first": not request.history},
            config,
        )
        named = tuple(self._subject_papers(question))
        inp = ModeInput(
            question,
            query,
            hits,
            passages,
            result,
            clock,
            config,
            request.filters,
            named,
            compared=len(named) >= 2 and self._compared(question),
            picked=bool(picked),
        )
        refusal = None
        if (
            request.mode in ("ask", "summarize", "compare")
            and not request.history
            and not request.history_papers
            and not (request.filters and request.filters.active)
            # "Which data do they release with FooNet?": a paper it names is its subject,
            # whatever its pronouns.
            and not named
            # "Which is the best paper?" names nothing, and asks for what no record holds: why
            # it cannot be answered is the latter.
            and self._unrecorded(question, request.mode) is None
            and names_no_subject(
                question,
                self.weights(),
                lambda term: self.searcher.lexical.df.get(term, 0),
                len(self.searcher.lexical.table.papers),
            )
        ):
            # "What does it do?" as a first question: there is nothing for "it" to be
            yield inp.refuse(NO_SUBJECT_REASON, [])
            return
        if not picked:  # papers the user picked are compared however the question is put
            refusal = self._refusal(
                question,
                query,
                hits,
                passages,
                request.mode,
                followup,
                filters=request.filters,
                config=config,
            )
        if refusal is not None:
            # A question that names a paper is about that paper: it alone is related (others
            # the search found are not what was asked about); otherwise the three first found.
            related = [h for h in hits if h.paper_id in named] or hits[:3]
            if refusal.answered:  # what the papers do state of it is answered below
                yield from self._in_part(inp, refusal, request, followup, related, config)
                return
            yield inp.refuse(refusal.reason, related)
            return
        yield from MODES[request.mode](inp, self)

    def _refused_unsearched(
        self, question: str, mode: str, clock: Clock, config: RunnableConfig, reason: str
    ) -> AnswerEvent:
        """The refusal of a question decided before any search (no related papers)."""
        result = Answer(question, "", mode, self.llm_label, False, extractive=self.is_extractive)
        inp = ModeInput(question, question, [], [], result, clock, config, None)
        return inp.refuse(reason, [])

    async def _aevents(
        self,
        request: Any,
        config: RunnableConfig,
        run_manager: AsyncCallbackManagerForChainRun,
    ) -> AsyncIterator[AnswerEvent]:
        # The steps are synchronous (llama.cpp, Chroma, onnxruntime): run them in a worker
        # thread and relay their events, with callbacks that report to this run.
        sync_config = patch_config(config, callbacks=run_manager.get_sync().get_child())
        events = self._events(request, sync_config)
        while True:
            event: AnswerEvent | None = await run_in_executor(config, next, events, None)
            if event is None:
                return
            yield event

    def _in_part(
        self,
        inp: ModeInput,
        refusal: Refusal,
        request: AnswerRequest,
        followup: bool,
        related: Sequence[PaperHit],
        config: RunnableConfig,
    ) -> Iterator[AnswerEvent]:
        """The refusal of `inp`'s question, with the answer to the parts `refusal` says the
        papers state. Its context is chosen for those parts, not for the whole question, and
        they are about the papers the question names, whichever part names them."""
        unnamed = [n for n in self._named_in(inp.question) if n not in refusal.answered]
        answered = " ".join([refusal.answered, *(f"({n})" for n in unnamed)])
        context = self._context_step.invoke(
            {
                "query": _standalone(answered, request.history, followup),
                "hits": inp.hits,
                "mode": request.mode,
                "first": not request.history,
            },
            config,
        )
        yield from in_part.run(inp, self, refusal.reason, answered, context, related)

    def _retrieval_query(
        self, question: str, history: Sequence[Turn], config: RunnableConfig, followup: bool
    ) -> str:
        query = _standalone(question, history, followup)
        if history and followup and not self.is_extractive and self._settings.condense:
            condensed = self._condense(question, history, config)
            if condensed and condensed.lower() != question.lower():
                query = f"{condensed} {query}"
        return query

    def _condense(self, question: str, history: Sequence[Turn], config: RunnableConfig) -> str:
        lines = "\n".join(f"User: {q}\nAssistant: {a}" for q, a in history[-2:])
        values = {"history": lines, "question": question}
        try:
            text = "".join(
                self.generate("condense", values, config, max_tokens=CONDENSE_MAX_TOKENS)
            )
        except PaperTalkError:
            return ""
        text = text.strip().splitlines()[0].strip() if text.strip() else ""
        if not 3 <= len(text) <= 300 or not rewrite_is_faithful(text, question, history[-2:]):
            return ""
        return text

    def _search(
        self, query: str, k: int, filters: SearchFilters | None, config: RunnableConfig
    ) -> list[PaperHit]:
        documents = self.retriever.invoke(query, config, k=k, filters=filters)
        return [document_to_hit(d) for d in documents]

    def _retrieve(self, step: _Retrieval, config: RunnableConfig) -> list[PaperHit]:
        settings = self._settings
        k = (
            settings.passages
            if step.mode == "ask"
            else max(settings.passages, MIN_PAPERS_FOR_OVERVIEWS)
        )
        if step.mode in ("list", "summarize", "ranked"):  # every paper on the topic, not a few
            k = max(k, CANDIDATES)
        hits = self._search(step.query, k, step.filters, config)
        if step.mode == "ask":
            # A paper the question names is always among the papers it is answered from.
            missing = set(self._subject_papers(step.question)) - {h.paper_id for h in hits}
            if missing:
                only = replace(step.filters or SearchFilters(), paper_ids=frozenset(missing))
                hits = (self._search(step.query, len(missing), only, config) + hits)[:k]
        if step.mode == "compare":
            named = self._subject_papers(step.question)
            if len(named) >= 2:
                only = SearchFilters(paper_ids=frozenset(named))
                return self._search(step.query, len(named), only, config)
        if step.history and step.followup:
            last = step.history[-1:]
            remembered = list(step.history_papers) or self.previous_papers(last)
            asked_about = set(self._subject_papers(step.question))
            if asked_about and not asked_about & set(remembered):
                return hits  # "How does Satori train its model?" is about Satori, named
            if remembered:
                only = SearchFilters(paper_ids=frozenset(remembered))
                boosted = self._search(step.query, len(remembered), only, config)
                # One paper under discussion and a follow-up naming nothing else ("it", "they"
                # for its authors): other papers' passages would only invite conflation.
                if boosted and len(remembered) == 1 and names_nothing(step.question):
                    return boosted
                # "Which one reports more?": a choice among the papers under discussion.
                if boosted and picks_among(step.question) and not asked_about:
                    return boosted
                boosted_ids = {h.paper_id for h in boosted}
                hits = boosted + [h for h in hits if h.paper_id not in boosted_ids]
                hits = hits[:k]
        elif step.history and step.mode == "ask" and names_nothing(step.question):
            # A question after a turn that names nothing and does not point back ("Which kind
            # stays hard?") is still about the paper under discussion when retrieval ranks that
            # paper among its first few for it too: it goes first.
            under_discussion = step.history_papers or self.previous_papers(step.history[-1:])
            first = [h for h in hits[:STILL_DISCUSSED] if h.paper_id in under_discussion]
            moved = {h.paper_id for h in first}
            hits = first + [h for h in hits if h.paper_id not in moved]
        return hits

    def near_words(self, words: Sequence[str], text: str, bar: float | None = None) -> set[str]:
        """Those of `words` for which `text` has a word of the same meaning: cosine similarity
        of their embeddings at least `bar`, NEAR_WORD by default (word vectors are cached)."""
        bar = NEAR_WORD if bar is None else bar
        words = [w.lower() for w in words if w.lower() not in FUNCTION_WORDS]
        vocabulary = sorted(
            {w.lower() for w in _TEXT_WORD.findall(text)} - FUNCTION_WORDS - set(words)
        )
        if not words or not vocabulary:
            return set()
        missing = [w for w in dict.fromkeys(words + vocabulary) if w not in self._word_vectors]
        if len(self._word_vectors) + len(missing) > MAX_CACHED_WORDS:
            self._word_vectors.clear()
            missing = list(dict.fromkeys(words + vocabulary))
        if missing:
            # One word per call: an int8 embedding depends on the other texts of its batch,
            # and a word's vector must not depend on which words earlier questions cached.
            vectors = np.vstack([self.embed([word]) for word in missing])
            vectors = vectors / np.maximum(np.linalg.norm(vectors, axis=1, keepdims=True), 1e-9)
            self._word_vectors.update(zip(missing, vectors, strict=True))
        table = np.stack([self._word_vectors[w] for w in vocabulary])
        return {w for w in words if float((table @ self._word_vectors[w]).max()) >= bar}

    def previous_papers(self, turns: Sequence[Turn]) -> list[str]:
        """The papers earlier turns were about, when the caller did not keep them (an API client
        sends only messages): a title quoted in them, else the papers their own names pick out
        (a name few papers write), questions first."""
        titled, _ = self._titles_in(" ".join(f"{q} {a}" for q, a in turns))
        if titled:
            return list(titled)
        questions = " ".join(q for q, _ in turns)
        answers = " ".join(a for _, a in turns)
        return self._subject_papers(questions) or self._subject_papers(answers)

    def _subjects(self, text: str) -> list[str]:
        """The titles written out in `text` and the names in the rest of it that pick out a
        paper or a few (see `_papers_of`)."""
        return list(self._named_in(text))

    def _author_by_place(self, question: str, request: AnswerRequest) -> str | None:
        """The author a follow-up names by place ("the first author") in the author list of the
        paper under discussion (the first of the previous answer's papers)."""
        place = author_role_asked(question)
        papers = list(request.history_papers) or self.previous_papers(request.history[-1:])
        table = self.searcher.lexical.table.papers
        if place is None or not papers or papers[0] not in table:
            return None
        authors = author_names(table[papers[0]]["authors"])
        return authors[place] if authors else None

    def _names_one_paper(self, text: str | None) -> bool:
        """Whether `text` names exactly one paper of the collection (by title or name)."""
        return bool(text) and len(self._subject_papers(text or "")) == 1

    def _subject_papers(self, text: str) -> list[str]:
        """The papers the titles and subject names of `text` pick out, in order of mention."""
        return list(dict.fromkeys(p for papers in self._named_in(text).values() for p in papers))

    def _named_in(self, text: str) -> dict[str, list[str]]:
        """Each title written out in `text` and each name in the rest of it that picks out a
        paper or a few, with the papers it picks out."""
        titled, rest = self._titles_in(text)
        named: dict[str, list[str]] = {}
        # A capitalised word opening a sentence ("Quartz and BarNet both ...") is a name when it is
        # a paper's own (see `_papers_of`): every sentence's first word is capitalised.
        for first in _SENTENCE_OPENING.findall(rest):
            if first not in _QUESTION_OPENERS and first not in titled.values():
                own, _ = self._papers_of(first)
                if own:
                    named.setdefault(first, own)
        for paper_id, title in titled.items():
            named.setdefault(title, []).append(paper_id)
        for name, papers in self.searcher.lexical.names.written_names_in(rest).items():
            if len(papers) <= MAX_PAPERS_PER_NAME:  # a name of several words: "Covered Forest"
                named.setdefault(name, papers)
        for run in _CAPITALISED_RUN.findall(rest):
            # Three or more capitalised words a title holds ("the Randomized Subspace
            # Optimization method"): a reader names a paper by its title's distinctive phrase.
            words = [w for w in run.split() if w not in _QUESTION_OPENERS]
            written = " ".join(words)
            phrase = written.lower()
            if len(words) >= MIN_TITLE_PHRASE_WORDS and phrase not in named:
                papers = list(dict.fromkeys(p for p, t in self._long_titles() if phrase in t))
                # Or a few abstracts write it, and write it as written ("we propose Sparse Quartz
                # Tiling"); a field's term is written by many ("message passing neural networks"),
                # whichever case one of them uses.
                if not papers and len(self._writers(written, any_case=True)) <= MAX_PAPERS_PER_NAME:
                    papers = list(self._writers(written))
                if 0 < len(papers) <= MAX_PAPERS_PER_NAME:
                    named.setdefault(written, papers)
        written_once: dict[str, list[str]] = {}
        for name in query_names(rest):
            own, writer = self._papers_of(name)
            if own:
                named.setdefault(name, own)
            elif writer:
                written_once.setdefault(name, writer)
        others = bool(named)
        for name, papers in written_once.items():
            # A term one abstract writes is that paper's name when the question names nothing
            # else, or when the abstract writes it again: a term it writes once beside another
            # paper's name is something it mentions (a metric: "What PSNR does FooNet reach?").
            if not others or self._written_again(name, papers[0]):
                named.setdefault(name, papers)
        # A name written only inside a longer one ("QZ" in "Continuous QZ") is that name's part.
        for name in [n for n in named if _inside_longer(n, named, text)]:
            del named[name]
        for name, papers in named.items():
            if len(papers) > 1:  # "CAT" for two papers: the one the rest of the question fits
                named[name] = self._fitting(text, papers, list(named))
        # Of two things compared, one named: the other names or describes a paper too.
        pair = compared_pair(text) or ()
        unnamed = [t for t in pair if not any(n.lower() in t.lower() for n in named)]
        if len(unnamed) == 1:
            paper = self._paper_described(unnamed[0])
            if paper is not None:
                named[unnamed[0]] = [paper]
        return named

    def _paper_described(self, phrase: str) -> str | None:
        """The paper a phrase that stands for one paper describes or names ("the paper on tiling
        inputs", a name the index has no entry for): the one retrieval ranks first for it, when
        it holds enough of the phrase's words (see DESCRIBED_COVERAGE)."""
        papers = self.searcher.lexical.table.papers
        if self._described[0] is not papers or len(self._described[1]) >= MAX_CACHED_DESCRIPTIONS:
            self._described = (papers, {})
        described = self._described[1]
        if phrase not in described:
            first = self.searcher.search(phrase, 1)[:1]
            text = " ".join(
                f"{h.title} {' '.join(self.abstract_sentences(h.paper_id))}" for h in first
            )
            enough = bool(first) and coverage(phrase, text, self.weights()) >= DESCRIBED_COVERAGE
            described[phrase] = first[0].paper_id if enough else None
        return described[phrase]

    def _fitting(self, text: str, papers: Sequence[str], names: Sequence[str]) -> list[str]:
        """Of several papers one name picks out, those whose title and abstract hold the rest of
        `text` best (within NAME_FIT of the best share)."""
        weights = self.weights()
        share = {
            p: coverage(
                text,
                f"{self.searcher.lexical.table.papers[p].get('title', '')} "
                + " ".join(self.abstract_sentences(p)),
                weights,
                names,
            )
            for p in papers
        }
        best = max(share.values())
        return [p for p in papers if share[p] >= best - NAME_FIT]

    def _titles_in(self, text: str) -> tuple[dict[str, str], str]:
        """The papers whose titles (of at least MIN_QUOTED_TITLE_WORDS words) `text` writes out
        in any case (paper id -> the title as written), and `text` without them: a title names
        its paper, and its capitalised words are not names of their own."""
        lowered = text.lower()
        found: dict[str, str] = {}
        for paper_id, title in self._long_titles():
            start = lowered.find(title)
            if start >= 0:
                found.setdefault(paper_id, text[start : start + len(title)])
        # A shorter title counts written as the title writes it, capitals and all ("Flow
        # Q-Learning"), as whole words.
        for paper_id, title in self._short_titles():
            if paper_id not in found and re.search(rf"(?<![\w-]){re.escape(title)}(?![\w-])", text):
                found[paper_id] = title
        for title in sorted(set(found.values()), key=len, reverse=True):
            text = text.replace(title, " ")
        return found, text

    def _short_titles(self) -> tuple[tuple[str, str], ...]:
        """(paper id, title as written) of every title, or part before its colon, of two words
        or more but fewer than MIN_QUOTED_TITLE_WORDS, with a capital letter in each word; kept
        for the current index."""
        papers = self.searcher.lexical.table.papers
        if self._short_titles_of[0] is not papers:
            titles = tuple(
                (pid, title)
                for pid, meta in papers.items()
                for title in {meta["title"].rstrip("."), meta["title"].partition(":")[0].strip()}
                if 2 <= len(title.split()) < MIN_QUOTED_TITLE_WORDS
                and all(any(c.isupper() for c in w) for w in title.split())
            )
            self._short_titles_of = (papers, titles)
        return self._short_titles_of[1]

    def _long_titles(self) -> tuple[tuple[str, str], ...]:
        """(paper id, lowercased title without its final period) of every title of at least
        MIN_QUOTED_TITLE_WORDS words, then of every title's part before its colon that long
        (users quote "The Hidden X of Y" for "The Hidden X of Y: A Study of Z"); kept for the
        current index."""
        papers = self.searcher.lexical.table.papers
        if self._titles_of[0] is not papers:
            whole = [(pid, meta["title"].lower().rstrip(".")) for pid, meta in papers.items()]
            heads = [(pid, title.partition(":")[0].strip()) for pid, title in whole if ":" in title]
            titles = tuple(
                (pid, title)
                for pid, title in whole + heads
                if len(title.split()) >= MIN_QUOTED_TITLE_WORDS
            )
            self._titles_of = (papers, titles)
        return self._titles_of[1]

    def _papers_of(self, name: str) -> tuple[list[str], list[str]]:
        """The papers whose own name `name` is (title or method name), and else the one paper
        that writes it at all (a term only one abstract uses, a metric's short form as well as
        a name, picks out that paper when the question names nothing else); neither for a field
        term that many abstracts write (GPU, ReLU), even if a few titles carry it."""
        writers = self._writers(name)
        if len(writers) > MAX_MENTIONS_OF_A_NAME:
            return [], []
        named = self.named_papers(name)
        if 0 < len(named) <= MAX_PAPERS_PER_NAME:
            return named, []
        # A word in title case that many abstracts write in lowercase is an ordinary word
        # ("Challenge", which one abstract capitalises inside a long name): no paper's term.
        if name.istitle() and len(self._writers(name, any_case=True)) > MAX_MENTIONS_OF_A_NAME:
            return [], []
        return [], list(writers) if len(writers) == 1 else []

    def _written_again(self, name: str, paper_id: str) -> bool:
        """Whether the paper's title and abstract write `name` at least twice."""
        title = self.searcher.lexical.table.papers[paper_id].get("title", "")
        text = " ".join([str(title), *self.abstract_sentences(paper_id)])
        return len(re.findall(rf"(?<![\w-]){re.escape(name)}(?![\w-])", text)) >= 2

    def _writers(self, name: str, any_case: bool = False) -> tuple[str, ...]:
        """The papers that write `name` (as a word, case as given unless `any_case`), in
        collection order."""
        key = (name.lower() if any_case else name, any_case)
        if key not in self._writers_of:
            lexical = self.searcher.lexical
            table = lexical.table
            # Only papers whose index has every term of the name can write it: the lexical
            # index narrows the scan (a question's names are looked up on every answer).
            terms = tokenize([name])[0]
            within = set.intersection(*(lexical.papers_with(t) for t in terms)) if terms else None
            pattern = re.compile(
                rf"(?<![\w-]){re.escape(name)}(?![\w-])", re.IGNORECASE if any_case else 0
            )
            found = [
                p
                for p, t in zip(table.paper_ids, table.texts, strict=True)
                if (within is None or p in within) and pattern.search(t)
            ]
            self._writers_of[key] = tuple(dict.fromkeys(found))
        return self._writers_of[key]

    def _picked(self, question: str, request: AnswerRequest) -> list[str]:
        """The papers of the previous answer a comparison or summary picks: by position ("the
        first two", "[1] and [3]"), or all of them, in order, when it says "they" / "them"; none
        when it names a paper."""
        earlier = list(request.history_papers)
        if len(earlier) < 2 or self._subject_papers(question):
            return []
        positions = referenced_positions(question, len(earlier))
        if len(positions) >= 2:
            return [earlier[p - 1] for p in positions]
        if not positions and refers_to_them(question):
            return earlier
        return []

    def _against_others(self, question: str, config: RunnableConfig) -> list[str]:
        """The paper a comparison names and the papers it is set against, when it sets it
        against the papers on a topic ("Compare X with other BarNets"): those the
        per-paper decision finds most about the topic (at most MAX_COMPARED papers in all)."""
        topic = others_topic(question)
        named = self._subject_papers(question) if topic else []
        if len(named) != 1:
            return []
        hits = self._search(topic, CANDIDATES, None, config)
        decision = self.judge_papers(topic, hits, config)
        others = [h.paper_id for h in decision.relevant if h.paper_id != named[0]]
        return [named[0], *others[: MAX_COMPARED - 1]] if others else []

    def _on_topic(self, question: str, config: RunnableConfig) -> list[str]:
        """The papers a comparison of a topic's papers compares ("Compare the orals on X"): the
        MAX_COMPARED the per-paper decision finds most about X (with the status asked for)."""
        topic = compared_topic(question)
        if not topic:
            return []
        status = status_in(question)
        filters = SearchFilters(status=status) if status else None
        hits = self._search(topic, CANDIDATES, filters, config)
        decision = self.judge_papers(topic, hits, config, filters)
        compared = [h.paper_id for h in decision.relevant[:MAX_COMPARED]]
        return compared if len(compared) >= 2 else []  # one paper is compared with nothing

    def _compared(self, text: str) -> bool:
        """Whether `text` names two or more papers, and not only things one paper talks about
        (a paper that compares itself with a named baseline is asked about alone)."""
        names = self._subjects(text)
        per_name = [set(self.named_papers(n)) for n in names]
        if len(per_name) < 2 or set.intersection(*per_name):
            return False
        for paper_id in set.union(*per_name):
            abstract = " ".join(self.abstract_sentences(paper_id))
            if all(re.search(rf"(?<!\w){re.escape(n)}(?!\w)", abstract) for n in names):
                return False
        return True

    def named_papers(self, text: str) -> list[str]:
        """Papers whose short name (title before ':' or a method name) the text mentions."""
        return self.searcher.lexical.names.papers_named_in(text)

    def _context(self, step: Mapping[str, Any], config: RunnableConfig) -> list[ContextPassage]:
        mode = step["mode"]
        hits: list[PaperHit] = list(step["hits"])
        if mode == "ask":
            # A question that names papers is answered from those papers alone, when their
            # abstracts hold what it asks (it may also describe another paper), or when it sets
            # two of them side by side ("A and B both ...": what each does is asked, in the
            # asker's words). Names shared by many papers (LLM, PDE) are topics, not papers.
            subjects = self._named_in(step["query"])
            names = list(subjects)
            named = {p for papers in subjects.values() for p in papers}
            if named:
                own = [h for h in hits if h.paper_id in named]
                text = " ".join(" ".join(self.abstract_sentences(h.paper_id)) for h in own)
                if own and (
                    (len(own) >= 2 and compared_pair(step["query"]) is not None)
                    or coverage(step["query"], text, self.weights(), names)
                    >= self._settings.min_coverage
                ):
                    hits = own
            elif stands_out([h.dense_similarity for h in hits]):
                # A question that describes one paper in its own words ("one paper shrinks SAT
                # instances before solving them: ...") is answered from that paper alone; after
                # earlier turns, only when retrieval, which puts the paper under discussion
                # first, ranks it first too.
                closest = max(hits, key=lambda h: h.dense_similarity)
                if step.get("first") or closest is hits[0]:
                    hits = [closest]
            # A first question about one paper is answered from the paper it describes best;
            # after earlier turns, retrieval's order carries the paper under discussion.
            if len(hits) > 1 and step.get("first") and about_one(step["query"]):
                hits = self._described_first(step["query"], hits)
        budget = self._settings.context_tokens
        per_paper = 2 if mode == "ask" else 3
        if self.is_extractive or mode != "ask":
            budget = max(budget, MIN_QUOTING_CONTEXT_TOKENS)
        if self.is_extractive and mode == "ask":
            # Quoting costs no model time: every sentence of the papers' abstracts may answer.
            hits = [replace(h, passages=self.searcher.paper_hit(h.paper_id).passages) for h in hits]
            budget, per_paper = max(budget, EXTRACTIVE_CONTEXT_TOKENS), EXTRACTIVE_SENTENCES
        return build_context(
            step["query"],
            hits,
            self.weights(),
            self.count_tokens,
            budget_tokens=budget,
            max_sentences_per_paper=per_paper,
            unmatched=self.is_extractive and mode == "ask",
        )

    def _described_first(self, query: str, hits: Sequence[PaperHit]) -> list[PaperHit]:
        """The hits of a question about one paper, the paper it describes best first (see
        `described_first`)."""
        similarity = self.searcher.paper_similarities(query, [h.paper_id for h in hits])
        weights = self.weights()
        word_share = {
            h.paper_id: coverage(
                query, " ".join([h.title, *self.abstract_sentences(h.paper_id)]), weights
            )
            for h in hits
        }
        return described_first(hits, similarity, word_share)

    @staticmethod
    def _unrecorded(question: str, mode: str) -> str | None:
        """Why the question asks for what neither the abstracts nor the metadata record (awards,
        usage, institutions), if it does."""
        # "List the top 3 papers on X" asks for the most relevant three, not for acclaim.
        if mode in ("ask", "list") and asks_for_acclaim(question) and not requested_count(question):
            return ACCLAIM_REASON
        if mode in ("ask", "list") and asks_usage_ranking(question):
            return USAGE_REASON
        if mode in ("ask", "list", "ranked") and asks_institutions(question):
            return INSTITUTION_REASON
        return None

    def _refusal(
        self,
        question: str,
        query: str,
        hits: Sequence[PaperHit],
        passages: Sequence[ContextPassage],
        mode: str,
        followup: bool = False,
        *,
        filters: SearchFilters | None = None,
        config: RunnableConfig | None = None,
    ) -> Refusal | None:
        """Why the papers do not answer the question, and what of it they do answer (None
        when they may answer all of it)."""
        unrecorded = self._unrecorded(question, mode)
        if unrecorded is not None:
            return Refusal(unrecorded)
        if mode in ("authors", "list", "topics", "ranked", "similar"):
            return None  # decided paper by paper (by name, rag/answer/relevance.py, the map)
        if not hits or not passages:
            return Refusal("nothing was retrieved")
        # Papers the question names are answered, compared or summarized however it is asked
        # ("Compare QZR and FooNet": two acronyms are little to be similar to).
        named = self._named_in(query)
        subject = list(named)
        subject_papers = list(dict.fromkeys(p for papers in named.values() for p in papers))
        if (
            max(h.dense_similarity for h in hits) < self._settings.min_similarity
            and not subject_papers  # a paper the question names is there, however it is asked
        ):
            return Refusal("no paper is close enough to the question")
        if mode in ("compare", "summarize"):
            # "How do BazDet and FooNet compare?": what no retrieved paper mentions is not there
            # to compare or summarize (ask mode checks this with the other gates).
            text = " ".join(
                f"{h.title} {' '.join(self.abstract_sentences(h.paper_id))}" for h in hits
            )
            missing = unmentioned_name(without_venues(question), text)
            if missing is not None:
                return Refusal(f"the papers never mention {missing}")
        if mode != "ask":
            return None
        if wants_record(question) and (subject_papers or followup):
            return None  # "What venue is X from?": the record answers (rag/answer/modes/record.py)
        known = [*(p.paper_id for p in passages), *subject_papers]
        if not set(known) <= set(subject_papers):
            # Every retrieved paper's abstract, not only those the context has room for: the
            # decision must not depend on the backend's context budget (a question answered
            # from the papers it names is judged by those papers alone).
            known += [h.paper_id for h in hits]
        abstracts = {pid: " ".join(self.abstract_sentences(pid)) for pid in dict.fromkeys(known)}

        def verdict_on(asked: str) -> Answerability:
            return check_answerable(
                query,
                passages,
                self.weights(),
                min_coverage=self._settings.min_coverage,
                subject_names=subject,
                abstracts=abstracts,
                subject_papers=subject_papers,
                asked=asked,
                near=self.near_words,
                followup=followup,
            )

        verdict = verdict_on(question)
        if not verdict.answerable:
            # The parts the papers do state are answered when the gates let them through asked
            # alone; only of a paper the question names or the one under discussion (without
            # one, the paper that states the other parts may not be the one asked about).
            answered = verdict.answered if subject_papers or followup else ""
            if answered and not verdict_on(answered).answerable:
                answered = ""
            return Refusal(verdict.reason, answered)
        if (
            asks_which_paper(question)
            and not subject_papers
            and not followup
            and max(h.dense_similarity for h in hits) < DESCRIBED_PAPER
        ):
            why = self._no_paper_about(topic_of(question), filters, config or {})
            return Refusal(why) if why is not None else None
        return None

    def _no_paper_about(
        self, topic: str, filters: SearchFilters | None, config: RunnableConfig
    ) -> str | None:
        """Why no paper is about `topic`, decided paper by paper as a list of the papers on it
        is ("Which paper does X?" asks for a paper about X; the gates above only check that the
        passages hold the question's words); None when one is, or may be."""
        hits = self._search(topic, CANDIDATES, filters, config)
        decision = self.judge_papers(topic, hits, config, filters).settled
        if (
            decision.relevant
            or not decision.core  # no word of the topic picks out papers: the gates decide
            or decision.nearest_in_meaning(CLOSE_MEANING, MEANING_BAND)
        ):
            return None
        return f"no paper is about this ({decision.rule()})"

    def _cite(self, step: _Citing, config: RunnableConfig) -> Answer:
        cite_answer(
            step.result,
            step.raw,
            step.passages,
            EmbeddingSimilarity(self.embed),
            asked_papers=step.asked_papers,
        )
        return step.result


def _standalone(question: str, history: Sequence[Turn], followup: bool) -> str:
    """The question with the earlier questions it leans on, without venue mentions ("ICML 2025"
    names the collection, not a topic)."""
    query = standalone_query(question, history, followup=followup)
    return without_venues(query) or query


def _inside_longer(name: str, names: Collection[str], text: str) -> bool:
    """Whether every time `text` writes `name` it is part of a longer name of `names`."""

    def word(written: str) -> str:
        return rf"(?<![\w-]){re.escape(written)}(?![\w-])"

    times = len(re.findall(word(name), text))
    longer = [n for n in names if n != name and re.search(word(name), n)]
    return bool(times and longer) and times <= sum(len(re.findall(word(n), text)) for n in longer)
