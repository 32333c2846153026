"""Search terms: lower-cased, stop-word-free, stemmed tokens (documents and queries alike)."""

from __future__ import annotations

import re
from functools import cache


@cache
def _stemmer():  # type: ignore[no-untyped-def]
    import Stemmer  # deferred: a C extension only the lexical path needs

    return Stemmer.Stemmer("english")


_WORD = re.compile(r"(?u)\b\w\w+\b")
# A single letter hyphenated to a word is one term ("e-values", "k-means", "Q-learning", as
# abstracts also write it: "$k$-means", "Q -Learning"): alone, its word ("values", "learning")
# says little, and the letter is too short to be a term.
_LETTER_COMPOUND = re.compile(r"(?<![\w\\-])\$?([A-Za-z])\$? ?-(?=[A-Za-z]{2})")


def letter_compounds_joined(text: str, joint: str = "-") -> str:
    """`text` with each single letter hyphenated to a word written as one word, the letter and
    the word joined by `joint` ("$k$-means" and "k -means" -> "k-means")."""
    return _LETTER_COMPOUND.sub(lambda m: m.group(1) + joint, text)


@cache
def _stopwords() -> frozenset[str]:
    from bm25s.stopwords import STOPWORDS_EN  # deferred: bm25s imports scipy (slow start)

    return frozenset(STOPWORDS_EN)


def tokenize(texts: list[str]) -> list[list[str]]:
    """Lower-cased, stop-word-free, stemmed tokens (the same for documents and queries).

    The same rules as `bm25s.tokenize(stopwords="en", stemmer=...)`, without its per-call
    overhead (a few ms per query).
    """
    stop = _stopwords()
    stemmer = _stemmer()
    out = []
    for text in texts:
        # Joined with "_", which no ordinary word holds: "e-values" is not "evaluate".
        lowered = letter_compounds_joined(text.lower(), "_")
        words = [w for w in _WORD.findall(lowered) if w not in stop]
        out.append(stemmer.stemWords(words) if words else [])
    return out


# English function words: the Glasgow Information Retrieval Group's stop list (as shipped by
# scikit-learn, 318 words) plus the auxiliary forms it lacks. What a question is made of besides
# its content. The index keeps most of them (BM25 weighs them down by itself); deciding what a
# question asks about needs them gone.
FUNCTION_WORDS = frozenset(
    """
    a about above across after afterwards again against all almost alone along already also
    although always am among amongst amoungst amount an and another any anyhow anyone
    anything anyway anywhere are around as at back be became because become becomes becoming
    been before beforehand behind being below beside besides between beyond bill both bottom
    but by call can cannot cant co con could couldnt cry de describe detail did do does
    doing done down due during each eg eight either eleven else elsewhere empty enough etc
    even ever every everyone everything everywhere except few fifteen fifty fill find fire
    first five for former formerly forty found four from front full further get give go had
    has hasnt have having he hence her here hereafter hereby herein hereupon hers herself
    him himself his how however hundred i ie if in inc indeed interest into is it its itself
    keep last latter latterly least less ltd made many may me meanwhile might mill mine more
    moreover most mostly move much must my myself name namely neither never nevertheless
    next nine no nobody none noone nor not nothing now nowhere of off often on once one only
    onto or other others otherwise our ours ourselves out over own part per perhaps please
    put rather re same see seem seemed seeming seems serious several she should show side
    since sincere six sixty so some somehow someone something sometime sometimes somewhere
    still such system take ten than that the their them themselves then thence there
    thereafter thereby therefore therein thereupon these they thick thin third this those
    though three through throughout thru thus to together too top toward towards twelve
    twenty two un under until up upon us very via was we well were what whatever when whence
    whenever where whereafter whereas whereby wherein whereupon wherever whether which while
    whither who whoever whole whom whose why will with within without would yet you your
    yours yourself yourselves
    """.split()
)
