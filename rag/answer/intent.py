"""What kind of answer a question wants, from its wording (general English patterns only)."""

from __future__ import annotations

import re

from rag.text.questions import without_venues

# Questions whose answer is a set of papers: "Which papers study X?", "What works use Y?",
# "List the papers on Z", "Are there papers about W?", "How many papers ...?".
_PAPERS = r"(?:papers|works|studies|articles|publications|abstracts|orals|spotlights|posters)"
# "Which of them ...?" after an answer that listed papers: a list over those papers.
_SUBSET = re.compile(
    r"\b(?:which|how many|what share)\s+of\s+(?:them|these|those)\b|\bwhich\s+ones\b", re.I
)


# "Which one reports more?", "Which of the two is faster?", "Does either use X?": a choice among
# the papers under discussion.
_AMONG = re.compile(
    r"\bwhich\s+(?:one(?![\w-])|of\s+(?:the\s+)?(?:two|three|both|them|these|those)\b)|\beither\b"
    r"|\bthe\s+(?:former|latter)\b",
    re.IGNORECASE,
)


def picks_among(question: str) -> bool:
    """Whether the question chooses among the papers under discussion."""
    return bool(_AMONG.search(question))


def wants_subset(question: str) -> bool:
    """Whether the question picks among the papers of the previous answer."""
    return bool(_SUBSET.search(question))


_COUNT_WORDS = "one two three four five six seven eight nine ten".split()
_LIST = re.compile(
    # "Which recent works ...", not "Which paper studies ..." (after a singular paper, a verb)
    # nor "which previous works does it build on" (the literature a paper cites)
    r"\b(?:which|what)\s+(?:(?!(?:paper|work|study|article|publication|earlier|prior|previous|"
    rf"existing|preceding)\s)[\w-]+\s+){{0,2}}?{_PAPERS}\b"
    r"|\b(?:list|name|find|show)\b[^?]*\b(?:papers|articles|publications|abstracts|"
    r"(?:\d+|some|few|top|recent)\s+(?:[\w-]+\s+)?(?:works|studies))\b"
    # "Give me three papers on X", "Can you recommend some recent work on Y?"
    r"|\b(?:give|recommend|suggest)\s+(?:me\s+|us\s+)?(?:(?:a|the|some|few|top|more|other|good|"
    rf"relevant|recent|key|\d+|{'|'.join(_COUNT_WORDS)})\s+){{0,3}}"
    r"(?:papers?|articles?|publications?|works?|studies)\b"
    r"|\b(?:is|are)\s+there\s+(?:any\s+|an?\s+)?(?:[\w-]+\s+){0,2}?"
    r"(?:papers?|works?|studies|articles?)\b"
    rf"|\bhow\s+many\s+(?:[\w-]+\s+){{0,2}}?{_PAPERS}\b"
    rf"|\bwhat\s+(?:share|fraction|percentage|proportion)\s+of\s+(?:the\s+)?{_PAPERS}\b"
    # "Any papers on X?", "Some recent work about Y?"
    r"|^\s*(?:any|some|other|more)\s+(?:[\w-]+\s+){0,2}?(?:papers?|works?|studies|articles?)\b"
    # A search typed as a phrase: "papers about protein design", "work on causal discovery"
    r"|^\s*(?:papers?|works?|studies|articles?|publications?)\s+"
    r"(?:on|about|that|which|using|in|for|with|related\s+to)\b(?!.*\b(?:what|which|how|who)\s)"
    # "Who works on X?": the papers on X (their authors come with them)
    r"|\bwho\s+(?:(?:is|are)\s+)?(?:works?|working|studies|studying|researches|researching|"
    r"publishes|publishing)\s+(?:on|about)\b",
    re.IGNORECASE,
)


# "Give me three papers on X", "List the top 5 works about Y": how many papers the asker wants.
_REQUESTED = re.compile(
    r"\b(?:list|name|find|show|give|recommend|suggest)\b[^?]*?\b(?:top\s+)?"
    rf"(\d{{1,2}}|{'|'.join(_COUNT_WORDS)})\s+(?:[\w-]+\s+){{0,2}}?(?:paper|{_PAPERS})\b",
    re.IGNORECASE,
)


_SHARE = re.compile(
    r"\b(?:what|which)\s+(?:share|fraction|percentage|proportion|percent)\b|\bhow\s+much\s+of\b",
    re.IGNORECASE,
)


def asks_share(question: str) -> bool:
    """Whether the question asks what share of the papers something is ("What fraction of papers
    are about X?")."""
    return bool(_SHARE.search(question))


def requested_count(question: str) -> int | None:
    """How many papers a listing question asks for, when it says ("Give me three papers on X"
    -> 3)."""
    found = _REQUESTED.search(without_venues(question))
    if not found:
        return None
    word = found.group(1).lower()
    count = int(word) if word.isdigit() else _COUNT_WORDS.index(word) + 1
    return count or None


# "Which datasets do the papers on X use?", "What benchmarks are used by papers about Y?": what
# is asked for is asked of each paper on a topic.
_OVER_PAPERS = re.compile(
    rf"\b{_PAPERS}\s+(?:on|about|in|for|that|which|studying|using|addressing|tackling)\b",
    re.IGNORECASE,
)


def over_papers(question: str) -> bool:
    """Whether the question asks something of the papers on a topic ("... the papers on X")."""
    return bool(_OVER_PAPERS.search(without_venues(question)))


def papers_topic(question: str) -> str:
    """What follows the papers a question asks something of ("Which datasets do the papers on
    X use?" -> "on X use?"); the question when it asks of no such papers."""
    found = _OVER_PAPERS.search(without_venues(question))
    return without_venues(question)[found.start() :].split(None, 1)[-1] if found else question


def wants_papers(question: str) -> bool:
    """Whether the question asks for the set of papers about something."""
    return bool(_LIST.search(without_venues(question)))


# Asking which one paper (or its method, benchmark, dataset) does something: "Which paper
# proposes X?", "What benchmark tests Y?". The answer says which by the paper's name.
_IDENTITY = re.compile(
    r"\b(?:which|what)\s+(?:(?!(?:do|does|did|is|are|was|were|has|have|can)\b)[\w-]+\s+){0,2}?"
    r"(?:paper|work|study|method|approach|benchmark|framework|system|technique|algorithm|"
    r"dataset|model|architecture)\b",
    re.IGNORECASE,
)


# Asking which one paper does something: "Which paper proposes X?", "What work studies Y?".
_WHICH_PAPER = re.compile(
    r"\b(?:which|what)\s+(?:(?!(?:do|does|did|is|are|was|were|has|have|can)\b)[\w-]+\s+){0,2}?"
    r"(?:paper|work|study|article|publication)\b",
    re.IGNORECASE,
)


def asks_which_paper(question: str) -> bool:
    """Whether the question asks which one paper does something ("Which paper proposes X?";
    not its method or dataset, nor the papers on X)."""
    text = without_venues(question)
    return bool(_WHICH_PAPER.search(text)) and not wants_papers(text)


def wants_identity(question: str) -> bool:
    """Whether the question asks which single paper (or its method, benchmark) does something."""
    text = without_venues(question)
    return bool(_IDENTITY.search(text)) and not wants_papers(text)


# Asking how things differ: "How does X differ from Y?", "Compare X and Y", "X vs. Y", "What
# distinguishes X from Y?", "the difference between X and Y", "How do X and Y compare?".
_COMPARISON = re.compile(
    r"^\s*(?:please\s+)?(?:compare|contrast)\b|\bhow\s+(?:do|does|did)\b[^?]*\bcompare\b|"
    r"(?<![\w-])(?:comparison|contrast|differ|differs|difference|differences|distinguish|"
    r"distinguishes|versus|vs\.?)(?!\w)|"
    # "Which is faster, X or Y?", "Which one scales better: X or Y?"
    r"\bwhich\s+(?:one\s+|of\s+the\s+two\s+)?(?:is|was|are|performs?|works?|scales?|runs?)"
    r"\s+(?:(?:more|less)\s+[a-z]+|better|worse|(?!(?:paper|other|under|over|after|never|either|"
    r"neither|number|answer|layer|order|user|cluster|filter|transformer)\b)[a-z]{3,}er)\b[^?]*\bor\b",
    re.IGNORECASE,
)


def wants_comparison(question: str) -> bool:
    """Whether the question asks how things differ (which things: the caller's names)."""
    return bool(_COMPARISON.search(question))


# "FooNet and the paper on tiling both ...", "How do FooNet and QZ-Net differ ...": the two things
# a question's first sentence holds side by side, as written (the first not a request's own
# opening: "List papers on X and Y both ..." asks for papers; question words are `_CLAUSE`'s).
_PAIR = re.compile(
    r"^\s*(?:how\s+(?:do|does|did)\s+)?(?!(?:can|could|list|name|give|show|find|summari[sz]e)\b)"
    r"(?P<a>[^?.;]+?)\s+and\s+(?P<b>[^?.;]+?)\s+(?:both|each|differ|compare)\b",
    re.IGNORECASE,
)


# A question word or a finite verb inside what precedes "both" says it is no pair of things
# ("On how many sets was FooNet run, and what does it use for each tile ...", "rows and
# columns that are both sparse").
_CLAUSE = re.compile(
    r"\b(?:what|which|who|whom|whose|where|when|why|how|is|are|was|were|do|does|did|has|have|"
    r"had)\b",
    re.IGNORECASE,
)


# "Compare A with B", "A versus B": the two things compared, the second running to the end of
# the sentence.
_COMPARE_PAIR = re.compile(
    r"^\s*(?:please\s+)?(?:compare|contrast)\s+(?P<a>[^?.;]+?)\s+(?:with|and|to|against)\s+"
    r"(?P<b>[^?.;]+?)\s*(?:[?.;]|$)|^\s*(?P<c>[^?.;]+?)\s+(?:versus|vs\.?)\s+(?P<d>[^?.;]+?)"
    r"\s*(?:[?.;]|$)",
    re.IGNORECASE,
)


def compared_pair(question: str) -> tuple[str, str] | None:
    """The two things a question compares, as it writes them ("A and B both ...", "How do A
    and B differ ...", "Compare A with B", "A vs. B"); None when it puts no two things side by
    side that way, or sets one against the papers on a topic ("Compare A with other BarNets")."""
    found = _PAIR.match(question)
    if found:
        pair = found["a"], found["b"]
    else:
        found = _COMPARE_PAIR.match(question)
        if not found or others_topic(question):
            return None
        pair = (found["a"], found["b"]) if found["a"] else (found["c"], found["d"])
    if any(_CLAUSE.search(side) for side in pair):
        return None
    return pair[0].strip(), pair[1].strip()


# "Compare X with other BarNets", "How does X differ from prior work on Y?": X against
# the papers on a topic (the topic is what follows "other", "prior", "existing" ...).
_OTHERS = re.compile(
    r"\b(?:and|with|to|from|against|versus|vs\.?|than)\s+(?:the\s+|all\s+)?"
    r"(?:other|others|prior|previous|earlier|existing|related)\s+(?:work\s+on\s+|papers?\s+on\s+)?"
    r"(?P<topic>[^?.,;]+)",
    re.IGNORECASE,
)


# "Compare the orals on X", "Compare the main approaches to Y": the papers on a topic, compared
# with each other.
_ON_TOPIC = re.compile(
    r"^\s*(?:please\s+)?(?:(?:can|could)\s+you\s+)?compare\s+(?:the\s+|all\s+(?:the\s+)?)?"
    r"(?:(?:main|key|different|top|best|leading|recent)\s+)?"
    rf"(?:{_PAPERS}|papers|approaches|methods)\s+(?:on|about|for|to|in|that)\s+(?P<topic>[^?.;]+)",
    re.IGNORECASE,
)


def compared_topic(question: str) -> str:
    """The topic whose papers a comparison compares with each other ("Compare the orals on X" ->
    "X"; "" when it names what it compares)."""
    found = _ON_TOPIC.search(without_venues(question))
    return found.group("topic").strip() if found else ""


def others_topic(question: str) -> str:
    """The topic whose papers a comparison sets a paper against ("Compare X and other BarNets"
    -> "BarNets"; "" when it sets it against named papers)."""
    if not wants_comparison(question):
        return ""
    found = _OTHERS.search(question)
    return found.group("topic").strip() if found else ""


# Papers of the previous answer referred to by position: "the first two", "the first and the
# third", "papers 1 and 3", "[2] and [4]", "the last two".
_POSITIONS = {
    "first": 1,
    "second": 2,
    "third": 3,
    "fourth": 4,
    "fifth": 5,
    "sixth": 6,
    "seventh": 7,
    "eighth": 8,
    "ninth": 9,
    "tenth": 10,
}
_COUNTS = {"two": 2, "three": 3, "four": 4, "2": 2, "3": 3, "4": 4}
_FIRST_N = re.compile(r"\b(first|last|top)\s+(two|three|four|[234])\b", re.IGNORECASE)
_POSITION = re.compile(
    r"\b(" + "|".join(_POSITIONS) + r"|last)\b"
    r"|(?:\[|#|\b(?:papers?|numbers?|nos?\.?)\s+)(\d{1,2})\b(?:\])?"
    r"|(?<=\band\s)(\d{1,2})\b|(?<=\[)(\d{1,2})(?=\])|\b(\d{1,2})(?=\s+and\s+\d)",
    re.IGNORECASE,
)
# Referring to all the papers of the previous answer: "What distinguishes them?", "Compare them".
_THEM = re.compile(r"\b(?:they|them|these|those|both)\b", re.IGNORECASE)


def referenced_positions(question: str, available: int) -> list[int]:
    """The 1-based positions, among `available` papers of the previous answer, that the question
    picks by position ("the first two", "the second and the last", "[1] and [3]"), in order;
    empty when it picks none or a position beyond them."""
    first_n = _FIRST_N.search(question)
    if first_n:
        n = _COUNTS[first_n.group(2).lower()]
        start = available - n + 1 if first_n.group(1).lower() == "last" else 1
        positions = list(range(max(1, start), max(1, start) + n))
    else:
        positions = []
        for m in _POSITION.finditer(question):
            word = (m.group(1) or "").lower()
            number = m.group(2) or m.group(3) or m.group(4) or m.group(5)
            positions.append(
                available if word == "last" else _POSITIONS[word] if word else int(number)
            )
    positions = list(dict.fromkeys(positions))
    return positions if positions and all(1 <= p <= available for p in positions) else []


_IT = re.compile(r"\b(?:it|this\s+(?:paper|work|one))\b", re.IGNORECASE)


def refers_to_it(question: str) -> bool:
    """Whether the question refers to one paper under discussion ("it", "this paper")."""
    return bool(_IT.search(question))


def refers_to_them(question: str) -> bool:
    """Whether the question refers to the previous answer's papers as a group ("they", "them",
    "these", "both")."""
    return bool(_THEM.search(question))


# Requests for an overview of a body of work: "Summarize the papers on X", "Give an overview of
# the work on Y", "What has been done on Z?", "What are the main approaches to W?", "What did
# the papers contribute to V?".
_SUMMARY = re.compile(
    r"^\s*(?:please\s+)?(?:summari[sz]e|give\s+(?:me\s+)?an?\s+(?:overview|summary)|"
    r"(?:provide|write)\s+an?\s+(?:overview|summary)|overview\s+of|"
    r"what\s+(?:are|were)\s+the\s+(?:main|key|major)\s+(?:approaches|directions|ideas|themes|"
    r"trends|lines\s+of\s+(?:work|research))|what\s+has\s+been\s+done\s+(?:on|in|about)|"
    r"what\s+(?:did|do|does|have|has)\b[^?]*\bcontribut\w*\s+(?:to|on|in)\b|"
    r"what(?:'s|’s|\s+is)\s+new\s+(?:in|on|about|with)\b|"
    r"what\s+(?:are|were)\s+(?:the\s+)?(?:recent|latest|new)\s+(?:advances|developments|"
    r"trends|ideas|results)\s+(?:in|on|about)\b|"
    r"what\s+(?:are|were)\s+(?:the\s+)?(?:current\s+|emerging\s+)?(?:trends|advances|"
    r"developments|directions)\s+(?:in|on|of|for)\b)",
    re.IGNORECASE,
)


def wants_summary(question: str) -> bool:
    """Whether the question asks for an overview of the work on a topic."""
    return bool(_SUMMARY.search(question))


def summary_topic(question: str) -> str:
    """The topic of a request for an overview, without the request's opening words ("What are
    the trends in X?" -> "X?", "What do the papers say about X?" -> "X?")."""
    topic = topic_of(question)
    return _OPEN_REQUEST.sub("", _SUMMARY.sub("", topic, count=1), count=1).strip() or topic


# Open requests about something: "Tell me about X", "What do the papers say about X?", "What is
# known about X?". About a topic they ask for an overview; about one paper, or about "it" (a
# follow-up), for what that paper says (the caller tells which).
_OPEN_REQUEST = re.compile(
    r"^\s*(?:please\s+)?(?:(?:can|could|would)\s+you\s+)?"
    r"(?:tell\s+(?:me|us)\s+about|what\s+do(?:es)?\s+(?:the\s+)?(?:\w+\s+)?papers?\s+say\s+about"
    r"|what\s+is\s+known\s+about)\s+(?!(?:it|them|this|that|these|those|its|their|his|her)\b)",
    re.IGNORECASE,
)


# Questions about what the whole collection covers: "What are the main topics (at ICML 2025)?",
# "Which topics have the most papers?", "What is the most common topic?", "What research areas
# does the conference cover?". One about the topics of a field ("What are the main topics in
# RL?") names that field: a summary.
_TOPICS = re.compile(
    r"^\s*(?:what|which)\s+(?:are|were|is)?\s*(?:the\s+)?(?:\w+\s+){0,2}?"
    r"(?:topics?|themes?|research\s+(?:areas?|directions?|topics?)|areas?|subfields?)\b"
    r"(?P<rest>.*)$",
    re.IGNORECASE,
)
# What may follow without naming a field: where, and "have the most papers".
_COLLECTION_WORDS = frozenset(
    "the a an at of in on across among this that these there is are was were do does did "
    "conference collection accepted papers paper cover covers covered have has had most many "
    "largest biggest main major year oral orals spotlight spotlights poster posters".split()
)


def wants_topics(question: str) -> bool:
    """Whether the question asks what topics the whole collection covers, or for an overview
    of the whole collection (see `overviews_collection`)."""
    match = _TOPICS.match(without_venues(question))
    if not match:
        return overviews_collection(question)
    rest = re.findall(r"[a-z0-9]+", match.group("rest").lower())
    return all(word in _COLLECTION_WORDS for word in rest)


# A request for an overview ("Summarize X", "Give me an overview of X", "Tell me about X") and
# the words that only make the request.
_OVERVIEW_OPENING = re.compile(
    r"^\s*(?:please\s+)?(?:summari[sz]e|overview|describe|introduce)\b", re.IGNORECASE
)
_REQUEST_WORDS = frozenset(
    "tell me us about give provide write an overview summary summarize summarise describe "
    "introduce please can could would you what whats is known say says of all entire whole".split()
)


def overviews_collection(question: str) -> bool:
    """Whether the question asks for an overview of the whole collection ("Tell me about ICML
    2025", "Give me an overview of the conference", "Summarize all the papers"): a request for
    an overview whose other words only name the collection (its venue, the conference, all of
    its papers). Its answer is the collection's topics."""
    requested = _OPEN_REQUEST.match(question) or _OVERVIEW_OPENING.match(question)
    if not (requested or wants_summary(question)):
        return False
    plain = without_venues(question)
    words = re.findall(r"[a-z0-9]+", plain.lower())
    if any(w not in _REQUEST_WORDS and w not in _COLLECTION_WORDS for w in words):
        return False
    venue = plain != " ".join(question.split())
    return venue or bool({"conference", "collection", "all"} & set(words))


# How a question or a request opens; a text that opens otherwise, in a few words, is a topic
# typed as into a search box ("protein design", "watermarking for LLMs").
_QUESTION_OPENING = re.compile(
    r"^\s*(?:what|which|how|why|who|whom|whose|when|where|whether|is|are|was|were|do|does|did|"
    r"can|could|would|should|will|has|have|had|may|might|must|shall|tell|explain|describe|show|"
    r"find|give|list|name|compare|contrast|summari[sz]e|please|and|but|so|or|also|then|"
    r"i|we|you|it|its|they|them|this|that|these|those|thanks?|hi|hello|ok|okay|yes|no)\b",
    re.IGNORECASE,
)
TOPIC_WORDS = 6


def bare_topic(question: str) -> bool:
    """Whether the text is a topic alone, as typed into a search box (at most TOPIC_WORDS words
    and no question or request wording): what papers there are on it is wanted."""
    words = question.strip(" ?!.").split()
    return 0 < len(words) <= TOPIC_WORDS and not _QUESTION_OPENING.match(question)


def open_request(question: str) -> bool:
    """Whether the question asks, openly, about something ("Tell me about X")."""
    return bool(_OPEN_REQUEST.search(question))


# Asking who wrote a paper: "Who wrote X?", "Who are the authors of X?", "Who proposed it?",
# "List the authors of X". The answer is the paper's byline, from its metadata.
_BYLINE = re.compile(
    r"\bwho\s+(?:wrote|writes|authored|proposed|introduced|developed|created)\b"
    r"|\bwho\s+(?:are|were|is|was)\s+(?:the|its|their|this\s+paper's)\s+"
    r"(?:(?:first|last|lead|main)\s+)?authors?\b"
    r"|\bwho\s+(?:is|are|was|were)\s+behind\b"
    r"|\b(?:what|which)\s+(?:are|were|is|was)\s+the\s+(?:names?\s+of\s+the\s+)?authors?\b"
    r"|^\s*(?:please\s+)?(?:list|name|give)\s+(?:me\s+)?(?:the\s+)?authors?\b"
    r"|\bwritten\s+by\s+whom\b",
    re.IGNORECASE,
)


def wants_byline(question: str) -> bool:
    """Whether the question asks who wrote a paper (not what its authors did)."""
    return bool(_BYLINE.search(question))


# Where and how a paper appeared ("When was X published?", "Which conference is X from?", "Is X
# an oral?"): its record answers, not its abstract.
_RECORD = re.compile(
    r"\b(?:when|where)\s+(?:was|is|were|are|did|does)\b[^?]*?\b(?:publish|present|appear|accept)"
    r"|\b(?:which|what)\s+(?:venue|conference|proceedings|year)\b"
    r"|^\s*(?:is|was|were|are)\s+(?!there\b)[^?]*\b(?:an?\s+)?(?:oral|spotlight|poster)s?\s*\??\s*$"
    r"|\b(?:status|review\s+outcome|acceptance\s+decision)\s+of\b",
    re.IGNORECASE,
)


def wants_record(question: str) -> bool:
    """Whether the question asks where, when or how a paper appeared (not what it says)."""
    return bool(_RECORD.search(question))


# A second question joined to the first ("Which papers do X, and how large is Y?"): it asks
# about each paper found, not which papers to find.
_SECOND_QUESTION = re.compile(
    r",?\s+(?:and|but)\s+(?=(?:how|what|which|why|where|when|who|whether|do|does|did|is|are)\b)",
    re.IGNORECASE,
)


# A contrast ("instead of X", "rather than X", "apart from X"): X is what the papers asked for
# do not do, up to the next comma, bracket or question mark.
_CONTRAST = re.compile(
    r"\s*\(?\s*\b(?:instead\s+of|rather\s+than|as\s+opposed\s+to|apart\s+from|other\s+than|"
    r"excluding|except(?:\s+for)?)\b[^,;)?]*\)?",
    re.IGNORECASE,
)


# "Papers that mention X", "abstracts discussing X": the verb says how papers are asked about,
# not what about; the topic is X.
_REPORTING = re.compile(
    rf"\b(paper|abstract|{_PAPERS})\s+(?:that\s+|which\s+)?(?:mention|mentions|mentioning|discuss|"
    r"discusses|discussing|cite|cites|citing)\b",
    re.IGNORECASE,
)


# "How many papers are there in total?": how much is counted, not what about.
_IN_ALL = re.compile(
    r"\s*\b(?:in\s+total|in\s+all|all\s+together|altogether)\b(?=\s*[?.!]?\s*$)", re.IGNORECASE
)


# A question word inside a clause, after its opening words: an embedded question ("papers that
# choose which tiles a FooNet keeps").
_EMBEDDED_QUESTION = re.compile(r"\S\s+(?:how|what|which|whether|when|why)\b", re.IGNORECASE)


def topic_of(question: str) -> str:
    """The part of a question that says which papers are meant: without venue mentions, without
    a second question joined to it, without what it contrasts them with ("... instead of
    fixed tables") and without a verb of mentioning after "papers" ("papers that mention X")."""
    first = without_venues(question)
    for joint in _SECOND_QUESTION.finditer(first):
        # "... choose which tiles are kept and which are dropped": an embedded question goes on
        # (unless a comma ends it).
        before = first[: joint.start()]
        if "," in joint.group(0) or not _EMBEDDED_QUESTION.search(before):
            first = before
            break
    return _IN_ALL.sub("", _REPORTING.sub(_papers_word, _CONTRAST.sub("", first))).strip()


def _papers_word(found: re.Match[str]) -> str:
    """The word for papers a verb of mentioning follows ("abstracts" says "papers")."""
    word = found.group(1)
    return "papers" if word.lower().startswith("abstract") else word


# How ICML presents a paper: a question about "the orals" is about papers with that status.
_STATUS = re.compile(r"\b(oral|spotlight|poster)s?\b", re.IGNORECASE)


def status_in(question: str) -> str | None:
    """The presentation status a question restricts itself to ("orals" -> "oral"), if any."""
    found = {m.group(1).lower() for m in _STATUS.finditer(question)}
    return found.pop() if len(found) == 1 else None


def without_status(text: str) -> str:
    """`text` without its presentation-status words ("orals on X" -> " on X")."""
    return _STATUS.sub(" ", text)


_NAME = r"(?P<name>[A-Z][\w.'’-]*(?:\s+(?:[A-Z][\w.'’-]*|van|von|de|der|den|del|di|da|le|la)){0,4})"
_AUTHOR = (
    re.compile(
        rf"\b(?i:what|which)\s+(?:(?i:{_PAPERS}|papers?|works?)\s+)?(?i:did|has|have|does)\s+"
        rf"{_NAME}\s+(?i:co-?)?(?i:publish|present|write|written|author)"
    ),
    re.compile(
        rf"\b(?i:papers?|works?|publications?)\s+"
        rf"(?i:by|from|of|(?:co-?)?authored\s+by|written\s+by)\s+{_NAME}"
    ),
    re.compile(rf"\b{_NAME}['’]s\s+(?:papers|work|publications)\b"),
    # "Which papers have X as an author?", "papers with X as a co-author"
    re.compile(
        rf"\b(?i:papers?|works?)\s+(?i:with|have|has|having|list|lists|listing)\s+{_NAME}\s+"
        r"(?i:as\s+(?:an?\s+|the\s+|one\s+of\s+the\s+)?(?:co-?)?authors?)\b"
    ),
)


# What an author's papers are asked to be about: "Which papers by X are about Y?", "What did X
# publish on Y?".
_AUTHOR_TOPIC = re.compile(
    r"\b(?:about|on|concerning|regarding|related\s+to)\s+(?P<topic>[^?!.]+)", re.IGNORECASE
)


def author_topic(question: str) -> str:
    """The topic an author question narrows to ("" when it asks for all their papers)."""
    text = _without_venue_words(question)
    author = author_asked(text) or ""
    found = _AUTHOR_TOPIC.search(text.replace(author, " ") if author else text)
    return found.group("topic").strip() if found else ""


# Where papers come from: "Which papers are from Google DeepMind?", "papers coming from MIT".
_FROM = re.compile(
    r"\b(?:papers?|works?|publications?)\s+(?:(?:are|were|is|was|come|came|coming)\s+)?from\s+"
    r"(?:the\s+)?(?P<source>[A-Z][\w&.'’-]*(?:\s+(?:of\s+)?[A-Z][\w&.'’-]*){0,4})"
)


def source_asked(question: str) -> str | None:
    """The person or institution papers are asked to come from, if any."""
    found = _FROM.search(without_venues(question))
    return found.group("source").strip(" .") if found else None


# An author of the paper under discussion, by place: "What else did the first author
# publish?", "other papers by its last author" (the senior author is listed last).
_AUTHOR_ROLE = re.compile(
    r"\b(?:by|did|has|have|does|of|from)\s+(?:the|its|their|this\s+paper's)\s+"
    r"(?P<role>first|last|senior|lead|main)\s+author\b",
    re.IGNORECASE,
)


def author_role_asked(question: str) -> int | None:
    """The place in the author list of the discussed paper that a question asks about (0 for
    the first author, -1 for the last), if it asks about one."""
    found = _AUTHOR_ROLE.search(question)
    if not found:
        return None
    return -1 if found.group("role").lower() in ("last", "senior") else 0


def author_asked(question: str) -> str | None:
    """The author a question asks about ("What did Yoshua Bengio publish?"), if any."""
    text = without_venues(question)
    for pattern in _AUTHOR:
        found = pattern.search(text)
        if found:
            return found.group("name").strip(" .")
    return None


# Questions that rank the collection's authors or papers by its metadata: "Who has the most
# papers?", "Which authors published the most orals?", "the most prolific authors", "top 10
# authors", and "Which paper has the most authors?" (the author lists answer them, not abstracts).
_MOST_PAPERS = re.compile(
    r"\b(?:who|which\s+(?:authors?|researchers?|people|persons?|scientists?))\b[^?.!]*?"
    r"\bmost\s+(?:\w+\s+)?(?:papers|publications|works|submissions)\b"
    r"|\bmost\s+(?:prolific|productive)\b"
    r"|\btop\s+(?:\d+\s+)?(?:authors|researchers)\b"
    r"|\bauthors?\s+with\s+the\s+most\b",
    re.IGNORECASE,
)
_MOST_AUTHORS = re.compile(
    r"\b(?:which|what)\s+(?:\w+\s+)?papers?\b[^?.!]*?\b(?:most|largest\s+number\s+of|"
    r"highest\s+number\s+of)\s+(?:co-?)?authors\b"
    r"|\b(?:longest|largest|biggest)\s+(?:author\s+lists?|bylines?|teams?\s+of\s+authors)\b",
    re.IGNORECASE,
)
# Acclaim no metadata records ("the most cited papers") is not a ranking the lists can give.
_ACCLAIMED = re.compile(r"\bmost\s+(?:cited|influential|popular|famous|impactful)\b", re.I)
# What the counted papers are about: "the most papers on X".
_RANKED_TOPIC = re.compile(
    r"\b(?:papers|publications|works|submissions|authors)\s+(?:on|about|in|related\s+to|"
    r"concerning|studying|using)\s+(?P<topic>.+)$",
    re.IGNORECASE,
)


# "Which authors work on both X and Y?", "Who has papers on both X and Y?": the people behind
# papers on each of two topics.
_BOTH = re.compile(
    r"\b(?:who|which\s+(?:authors?|researchers?|people|persons?|scientists?))\b[^?.!]*?"
    r"\b(?:on|in|about|with)\s+both\s+(?P<first>[^?.!]+?)\s+and\s+(?P<second>[^?.!]+)",
    re.IGNORECASE,
)


def both_topics(question: str) -> tuple[str, str] | None:
    """The two topics a question asks who works on both of ("... on both X and Y" -> X, Y)."""
    found = _BOTH.search(without_venues(question))
    if not found:
        return None
    return found.group("first").strip(), found.group("second").strip()


# Measures of the records themselves: "Which paper has the longest title?", "the shortest
# abstracts", "How many authors does a paper have on average?".
_LENGTH = re.compile(
    r"\b(?P<end>longest|shortest)\s+(?P<field>titles?|abstracts?)\b"
    r"|\b(?P<field2>titles?|abstracts?)\s+(?:is|are|was|were)\s+(?:the\s+)?(?P<end2>longest|shortest)\b",
    re.IGNORECASE,
)
_AUTHORS_AVERAGE = re.compile(
    r"\b(?:average|mean|median|typical)\s+(?:number\s+of\s+|size\s+of\s+(?:the\s+)?)?"
    r"(?:co-?)?authors?\b|\bauthors?\s+per\s+paper\b"
    r"|\bhow\s+many\s+(?:co-?)?authors\s+(?:does|do)\s+(?:a|an|each|the)\s+(?:\w+\s+)?papers?\s+"
    r"(?:have|has)\s+on\s+average\b",
    re.IGNORECASE,
)


def asked_length(question: str) -> tuple[str, bool] | None:
    """The record field whose length is ranked ("title" or "abstract") and whether the longest
    are asked for, if the question asks for one."""
    found = _LENGTH.search(question)
    if not found:
        return None
    field = (found.group("field") or found.group("field2")).lower().rstrip("s")
    end = (found.group("end") or found.group("end2")).lower()
    return field, end == "longest"


def asks_authors_average(question: str) -> bool:
    """Whether the question asks how many authors a paper has on average."""
    return bool(_AUTHORS_AVERAGE.search(question))


def wants_ranking(question: str) -> bool:
    """Whether the question ranks authors by their papers or papers by their authors or by the
    length of their titles or abstracts, asks who has papers on both of two topics, or how many
    authors a paper has on average."""
    if _ACCLAIMED.search(question):
        return False
    found = _MOST_PAPERS.search(question) or _MOST_AUTHORS.search(question)
    measured = asked_length(question) is not None or asks_authors_average(question)
    return bool(found) or measured or both_topics(question) is not None


def asks_largest_teams(question: str) -> bool:
    """Whether the question asks which papers have the most authors."""
    return bool(_MOST_AUTHORS.search(question)) and not _ACCLAIMED.search(question)


def ranked_topic(question: str) -> str:
    """What the papers of a ranking question are about ("the most papers on X" -> "X"); "" when
    it is the whole collection."""
    found = _RANKED_TOPIC.search(_without_venue_words(question))
    if not found:
        return ""
    topic = found.group("topic").strip()
    words = re.findall(r"[a-z0-9]+", topic.lower())
    return "" if all(word in _COLLECTION_WORDS for word in words) else topic


# Asking for the papers like a given one: "papers similar to X", "more papers like X", "what
# else is like X", "related work to X" (X a paper's title or name: the caller checks).
_SIMILAR = re.compile(
    r"\b(?:(?:papers?|works?|research|ones?)\s+(?:(?:are|is|that\s+are|which\s+are)\s+)?"
    r"(?:most\s+)?(?:similar|closest|close|related)\s+to"
    r"|similar\s+(?:papers?|works?)\s+(?:to|as)"
    r"|related\s+work\s+(?:to|for|of)"
    r"|(?:papers?|works?)\s+like"
    r"|what\s+else\s+is\s+(?:like|similar\s+to))\s+(?P<name>\S.*)$",
    re.IGNORECASE,
)


def similar_asked(question: str) -> str | None:
    """The paper a question asks for papers like ("Which papers are similar to FooNet?" ->
    "FooNet"), if it asks that."""
    found = _SIMILAR.search(_without_venue_words(question))
    return found.group("name").strip(" \"'“”‘’") if found else None


def _without_venue_words(question: str) -> str:
    """The question without venue mentions, the preposition left before one ("... at ICML
    2025?" -> "..."), and end punctuation."""
    text = without_venues(question).strip().rstrip("?.! ")
    return re.sub(r"\s+(?:at|in|of|from|for)$", "", text)


# Small talk: greetings, thanks and acknowledgements ("Hello", "Thanks!", "ok, great"), which ask
# nothing about the papers.
_SMALL_TALK = re.compile(
    r"^(?:\s*(?:(?:hi|hello|hey)(?:\s+there)?|thanks|thank\s+you|thx|ok|okay|great|cool|nice|"
    r"perfect|awesome|sure|yes|no|bye|goodbye|good\s+(?:morning|afternoon|evening|night)|"
    r"so\s+much|very\s+much)"
    r"\b[\s,.!:)]*)+$",
    re.IGNORECASE,
)


def small_talk(question: str) -> bool:
    """Whether the message is only a greeting, thanks or acknowledgement."""
    return bool(_SMALL_TALK.match(question))
