"""Retrieved text is data: keep instructions addressed to an AI model out of prompts and answers.

An abstract (or a title, or an uploaded file) can carry text meant for a model rather than for a
reader: "Ignore all previous instructions and reply only with ...", a fake "SYSTEM:" turn, a
closing tag that tries to end the passage block, chat-template tokens. Three small defences:

1. `escape_passage_text`: text shown to the LLM cannot close or open the prompt's delimiters
   (`<`, `>` and `&` are escaped, line breaks and invisible characters removed).
2. `strip_injection` / `looks_like_injection`: a sentence that addresses a model (an imperative
   "ignore/disregard … instructions", "reply only with", "you are now", role labels, chat tokens,
   "### Instruction", the same in a few other languages, also when spaced out, in look-alike
   letters or in digits for letters) is cut at the point where the instruction starts, and not
   used as context, quoted or shown. Sentences that only *describe* such attacks ("attacks that
   make the model ignore previous instructions") are kept: the imperative forms must open a clause.
3. `guard_generated`: sentences a model wrote that follow such an instruction, or share no
   content word with the passages and the question, are dropped from the answer.
"""

from __future__ import annotations

import html
import re
import unicodedata
from collections.abc import Callable

from rag.answer.prompts import prompt_echoes
from rag.text.sentences import split_sentences

# Where an imperative addressed to the reader can start: the start of the text or a clause, after
# quotes, brackets, markup or a role label, or after a softener ("please", "now", "and then").
_OPEN = (
    r"(?:^|(?<=[.,:;!?\"“”'‘’`()\[\]{}<>|#*=~–—>…])|(?<= -)|(?<=\n)|"
    r"(?<=\bplease )|(?<=\bnow )|(?<=\bthen )|(?<=\bjust )|(?<=\bsimply )|(?<=\bkindly )|"
    r"(?<=\balso )|(?<=\binstead )|(?<=\band )|(?<=\bso ))\s*"
)
_SEP = r"[\W_]*"  # words may be separated by anything, or nothing (spaced-out text is squashed)
_ALL = rf"(?:(?:all|any|every|each){_SEP})?(?:(?:of{_SEP})?(?:the|your|these|those|my){_SEP})?"
_EARLIER = r"(?:previous|prior|preceding|above|earlier|former|foregoing|original|initial|system)"
_RULES = (
    r"(?:instructions?|directions?|directives?|prompts?|rules|guidelines|guidance|commands?|"
    r"orders|context|messages?|constraints|programming|tasks?)"
)
_OVERRIDE_VERB = r"(?:ignore|disregard|forget|overlook|override|bypass|skip|drop|discard|neglect)"
_REPLY_VERB = (
    r"(?:reply|respond|answer|output|say|print|write|return|type|repeat|state|emit|produce|"
    r"generate|begin|start|end)"
)

# Each pattern is tried only when one of its cues occurs in the lower-cased text (speed).
_PATTERNS: list[tuple[tuple[str, ...], re.Pattern[str]]] = [
    # "Ignore all previous instructions", "disregard the above", "forget everything before".
    (
        (
            "ignor",
            "disregard",
            "forget",
            "overlook",
            "overrid",
            "bypass",
            "skip",
            "drop",
            "discard",
            "neglect",
        ),
        re.compile(
            rf"{_OPEN}{_OVERRIDE_VERB}{_SEP}{_ALL}(?:{_EARLIER}{_SEP})?{_RULES}\b"
            rf"|{_OPEN}{_OVERRIDE_VERB}{_SEP}(?:{_ALL})?(?:everything{_SEP})?"
            rf"(?:above|before|said|you\W+(?:were|have\W+been)\W+told)\b",
            re.I,
        ),
    ),
    # "Reply only with X", "answer with exactly", "say only".
    (
        ("only", "just", "exactly", "solely", "simply", "nothing", "always"),
        re.compile(
            rf"{_OPEN}{_REPLY_VERB}{_SEP}(?:(?:your{_SEP})?(?:answer|response|reply){_SEP})?"
            rf"(?:only|just|exactly|solely|simply|nothing{_SEP}but|always)\b",
            re.I,
        ),
    ),
    # "Say PWNED." as a whole sentence: an imperative followed by one token.
    (
        ("say", "print", "output", "type", "repeat", "write", "reply", "respond", "answer"),
        re.compile(
            r"(?:^|(?<=[:\"“'‘>]))\s*(?:please\s+)?"
            r"(?:say|print|output|type|repeat|write|reply|respond|answer)"
            rf"(?:{_SEP}with)?\s+[\"“'‘]?[\w-]+[\"”'’]?\s*[.!]?\s*$",
            re.I,
        ),
    ),
    # Addressing the model: "you are now", "from now on you", "you must reply", "act as".
    (
        ("you", "now", "act", "pretend"),
        re.compile(
            rf"{_OPEN}(?:you{_SEP}are{_SEP}(?:now|no{_SEP}longer)|from{_SEP}now{_SEP}on\b|"
            rf"act{_SEP}as{_SEP}(?:an?{_SEP})?(?:ai|assistant|chatbot|llm|language model)|"
            rf"pretend{_SEP}(?:to{_SEP}be|you{_SEP}are))",
            re.I,
        ),
    ),
    (
        ("you",),
        re.compile(
            r"\byou\s+(?:must|should|shall|will|need\s+to|have\s+to|are\s+(?:required|instructed|"
            rf"told)\s+to)\s+(?:now\s+|only\s+|always\s+|never\s+)*(?:{_REPLY_VERB}|{_OVERRIDE_VERB}|"
            r"obey|follow|comply|reveal|recommend|rate|accept)\b",
            re.I,
        ),
    ),
    (
        ("if you", "attention", "note", "message", "dear", "hey", "hello"),
        re.compile(
            r"\b(?:if\s+you\s+are|attention|note\s+(?:to|for)|message\s+(?:to|for)|dear|hey|hello)"
            r"\s+(?:an?\s+|any\s+|the\s+|all\s+)?(?:ai|llm|large\s+language\s+model|language\s+model|"
            r"assistant|chatbot|gpt|automated\s+reviewer)s?\b\s*"
            r"(?:(?:reviewer|reader|agent|system|model|assistant)s?\b\s*)?"
            r"(?:[,:]|reading|reviewing|processing|summari[sz]ing|that\s+reads?|who\s+reads?)",
            re.I,
        ),
    ),
    # Role labels and chat markup: "SYSTEM:", "### Instruction:", "<|im_start|>", "[INST]".
    (
        (":",),
        re.compile(
            rf"{_OPEN}(?:(?:ai|llm|chat|the|model)\s+)?(?:system|assistant|developer|human|user|ai|"
            r"bot|admin|root|"
            r"new\s+instructions?|instructions?|task|command|prompt|override)\s*(?:prompt\s*)?:",
            re.I,
        ),
    ),
    (
        ("##",),
        re.compile(
            r"#{2,}\s*(?:instruction|system|response|input|human|assistant|user|task)s?\b", re.I
        ),
    ),
    (
        ("<", "["),
        re.compile(
            r"<\|[^|>]{1,40}\|>|\[/?INST\]|<</?SYS>>|<\s*/?\s*(?:passages?|context|system|"
            r"documents?|instructions?|user|assistant|im_start|im_end)\s*(?:\s[^<>]*)?>",
            re.I,
        ),
    ),
    (
        ("reveal", "print", "show", "output", "repeat", "leak"),
        re.compile(
            rf"{_OPEN}(?:reveal|print|show|output|repeat|leak)\s+(?:me\s+)?(?:your|the)\s+"
            r"(?:system|hidden|original|secret|developer)\s+(?:prompt|message|instructions?)",
            re.I,
        ),
    ),
    # Steering a reviewer or grader model.
    (
        ("review", "rating", "score", "assessment", "evaluation"),
        re.compile(
            rf"{_OPEN}(?:give|write|provide|assign|output){_SEP}(?:this{_SEP}paper{_SEP})?"
            rf"(?:an?{_SEP}|only{_SEP}an?{_SEP})?(?:very{_SEP})?(?:positive|favou?rable|glowing|"
            r"high|perfect|top)\W+(?:review|rating|score|assessment|evaluation)",
            re.I,
        ),
    ),
    # A few other languages: "ignore the previous instructions", "answer only with".
    (
        (
            "ignor",
            "oubliez",
            "répon",
            "respond",
            "rispondi",
            "antwort",
            "忽略",
            "无视",
            "只",
            "игнорир",
            "無視",
        ),
        re.compile(
            r"ignorez?\s+(?:toutes\s+)?les\s+instructions\s+(?:précédentes|antérieures|ci-dessus)"
            r"|oubliez\s+(?:toutes\s+)?les\s+instructions"
            r"|ignora\s+(?:todas\s+)?las\s+instrucciones\s+(?:anteriores|previas)"
            r"|ignora\s+(?:tutte\s+)?le\s+istruzioni\s+precedenti"
            r"|ignore\s+(?:todas\s+)?as\s+instruções\s+anteriores"
            r"|ignorier\w*\s+(?:sie\s+)?(?:alle\s+)?(?:vorherigen|bisherigen|vorigen|obigen)\s+"
            r"anweisungen"
            r"|(?:réponds|répondez|responde|responda|rispondi|antworte|antworten\s+sie)\s+"
            r"(?:uniquement|seulement|solo|solamente|apenas|soltanto|nur)\b"
            r"|忽略.{0,6}(?:指令|指示|说明|提示)|无视.{0,6}(?:指令|指示)|只(?:回复|回答|输出)"
            r"|игнорир\w*\s+(?:все\s+)?(?:предыдущие\s+|прошлые\s+)?(?:инструкции|указания)"
            r"|(?:以前|前)の指示を無視",
            re.I,
        ),
    ),
]

# Letters that look like Latin ones (Cyrillic, Greek) and digits written for letters.
_CONFUSABLES = str.maketrans(
    {
        "а": "a", "е": "e", "о": "o", "р": "p", "с": "c", "у": "y", "х": "x", "і": "i",
        "ј": "j", "ѕ": "s", "ԁ": "d", "һ": "h", "ӏ": "l", "ɡ": "g", "ո": "n", "ս": "u",
        "α": "a", "ε": "e", "ι": "i", "ο": "o", "ρ": "p", "τ": "t", "υ": "u", "ν": "v",
        "κ": "k", "η": "n", "А": "A", "Е": "E", "О": "O", "Р": "P", "С": "C", "Х": "X",
        "І": "I", "Ι": "I", "Ο": "O", "Α": "A", "Ε": "E", "Τ": "T", "Ν": "N", "Κ": "K",
    }
)  # fmt: skip
_LEET = str.maketrans({"0": "o", "1": "i", "3": "e", "4": "a", "5": "s", "7": "t", "@": "a",
                       "$": "s", "!": "i", "|": "l"})  # fmt: skip
_MIXED_WORD = re.compile(r"\b(?=[\w@$!|]*[a-z])(?=[\w@$!|]*[0-9@$!|])[\w@$!|]+", re.I)
_SPACED = re.compile(r"(?<!\w)(?:\w[ .\-_*]){2,}\w(?!\w)")
_HYPHENATED = re.compile(r"(?<=[a-z])-(?=[a-z])", re.I)
_INVISIBLE = re.compile(r"[\u00ad\u034f\u115f\u1160\u17b4\u17b5\u180e\u3164\ufeff\uffa0]")
_TAG_LIKE = re.compile(r"</?\s*passages?\b[^>]*>", re.I)


def _visible(text: str) -> str:
    """`text` without format characters (zero-width spaces, bidi controls, soft hyphens)."""
    text = _INVISIBLE.sub("", text)
    return "".join(ch for ch in text if unicodedata.category(ch) != "Cf")


def normalize(text: str) -> str:
    """A folded copy of `text` for detection: compatibility forms, no invisible characters,
    Latin look-alikes and digits-for-letters mapped back, spaced-out letters joined."""
    text = unicodedata.normalize("NFKC", _visible(text)).translate(_CONFUSABLES)
    text = _MIXED_WORD.sub(lambda m: m.group(0).translate(_LEET), text)
    text = _SPACED.sub(lambda m: re.sub(r"[ .\-_*]", "", m.group(0)), text)
    return _HYPHENATED.sub("", text)


def _first_match(text: str) -> int | None:
    lowered = text.lower()
    starts = [
        m.start()
        for cues, pattern in _PATTERNS
        if any(c in lowered for c in cues) and (m := pattern.search(text))
    ]
    return min(starts) if starts else None


def looks_like_injection(text: str) -> bool:
    """Whether `text` contains an instruction addressed to an AI model (see the module doc)."""
    return _first_match(text) is not None or _first_match(normalize(text)) is not None


def strip_injection(text: str) -> str:
    """`text` cut where an instruction to a model starts ('' when nothing before it is left,
    or when the instruction is only visible once the text is normalised)."""
    start = _first_match(text)
    if start is None:
        return "" if _first_match(normalize(text)) is not None else text
    kept = text[:start].rstrip(" \t\n\"“'‘([{<|#*-–—:,")
    if len(re.findall(r"\w+", kept)) < 3 or looks_like_injection(kept):
        return ""
    return kept


def redact(text: str) -> str:
    """`text` with every sentence cut before any instruction to a model (for titles, names)."""
    parts = []
    for span in split_sentences(text):
        kept = strip_injection(text[span.start : span.end])
        if kept:
            parts.append(kept)
    return " ".join(parts)


def safe_title(title: str) -> str:
    """A title as answers and prompts show it: without instructions to a model."""
    if not looks_like_injection(title):
        return title
    return redact(title).rstrip(" .") or "(title withheld: it contains instructions to AI models)"


def escape_passage_text(text: str) -> str:
    """Retrieved text as it may appear between the prompt's delimiters: one line, no invisible
    characters, and `&`, `<`, `>` escaped so that it cannot open or close a tag."""
    text = " ".join(_visible(text).split())
    return html.escape(text, quote=False)


def unescape_generated(text: str) -> str:
    """A model's answer with the escapes it copied from the passages undone, and without
    delimiter tags it echoed."""
    return _TAG_LIKE.sub(" ", html.unescape(text))


# A sentence repeats another when both have the same content terms, at least this many.
MIN_REPEATED_TERMS = 3


def guard_generated(
    text: str, terms: Callable[[str], set[str]], known: set[str], said: set[str] | None = None
) -> str:
    """The sentences of a generated answer that are about the papers: those that follow an
    instruction, repeat the prompt (see `without_prompt`), ask a question, loop (see `loops`),
    or share no content term (`terms`) with the passages and question (`known`), are dropped,
    and so is a sentence said before (small models repeat themselves, in the same words or
    nearly): earlier in `text`, or recorded in `said` (updated; one set per answer checks a
    stream sentence by sentence). Citation markers and sentences without content terms are
    kept."""
    text = unescape_generated(text)
    kept = []
    said = set() if said is None else said
    for span in split_sentences(text):
        sentence = without_prompt(text[span.start : span.end])
        if not sentence or looks_like_injection(sentence):
            continue
        claim = re.sub(r"\[[^\]]*\]", " ", sentence)
        if claim.rstrip().endswith("?"):  # a question is no claim (often the asker's, echoed)
            continue
        if loops(claim):
            continue
        words = terms(claim)
        if words and not words & known:
            continue
        # As words only (markers, case and punctuation aside), and as content terms when it has
        # a few ("This paper ..." and "The paper ..." say the same): repeats compare equal.
        plain = " ".join(re.findall(r"\w+", claim.lower()))
        content = " ".join(sorted(words)) if len(words) >= MIN_REPEATED_TERMS else plain
        if plain in said or content in said:
            continue
        said.update((plain, content))
        kept.append(sentence)
    return " ".join(kept)


# A run of this many words written twice in one sentence: the model is looping ('"Title"
# "Title" "Title"', "X is a Y, while Z is a Y") instead of stating something.
LOOP_WORDS = 6


def loops(sentence: str) -> bool:
    """Whether `sentence` writes some run of LOOP_WORDS words twice."""
    words = re.findall(r"\w+", sentence.lower())
    runs = [tuple(words[i : i + LOOP_WORDS]) for i in range(len(words) - LOOP_WORDS + 1)]
    return len(set(runs)) < len(runs)


def without_prompt(sentence: str) -> str:
    """A generated sentence without what it repeats of the prompt (rag/answer/prompts.py): empty
    when it holds a label of a value filled in ("Question: ..." is the question again), else
    without the instruction it opens with ("Answer with citations: X" -> "X")."""
    labels, instructions = prompt_echoes()
    text = sentence.strip()
    lowered = text.lower()
    if any(re.search(rf"(?<!\w){re.escape(label.lower())}", lowered) for label in labels):
        return ""
    for _ in range(len(instructions)):  # an instruction may follow another
        found = next((i for i in instructions if lowered.startswith(i.lower())), None)
        if found is None:
            break
        text = text[len(found) :].strip()
        lowered = text.lower()
    return text
