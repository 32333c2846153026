"""Paper text as it reads: the LaTeX that abstracts use, as Unicode; and as people type it.

Abstracts are written for OpenReview, which renders `$3.31\\times$`, `$\\sim 1.3\\times$` and
`40\\%`. `latex_to_text` turns that markup into what it means ("3.31×", "~1.3×", "40%"), for the
page, the exports and the cards (ui/text.py adds Markdown emphasis). `as_typed` goes one step
further, for matching what a user types against the papers: names written with math
(`$\\mu$FooNet`, `$K^2$Bar`) or emphasis (`\\textbf{S}parse`) read as they are typed
("muFooNet", "K2Bar", "Sparse"). `without_emphasis` takes Markdown emphasis out of words.
Pure functions.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterator

# fmt: off
# Symbols: `\name` -> text. Relations get spaces around them (as TeX typesets them).
_GREEK: dict[str, str] = {
    "alpha": "α", "beta": "β", "gamma": "γ", "delta": "δ", "epsilon": "ε", "varepsilon": "ε",
    "zeta": "ζ", "eta": "η", "theta": "θ", "vartheta": "ϑ", "iota": "ι", "kappa": "κ",
    "lambda": "λ", "mu": "μ", "nu": "ν", "xi": "ξ", "pi": "π", "varpi": "ϖ", "rho": "ρ",
    "varrho": "ϱ", "sigma": "σ", "varsigma": "ς", "tau": "τ", "upsilon": "υ", "phi": "ϕ",
    "varphi": "φ", "chi": "χ", "psi": "ψ", "omega": "ω", "Gamma": "Γ", "Delta": "Δ",
    "Theta": "Θ", "Lambda": "Λ", "Xi": "Ξ", "Pi": "Π", "Sigma": "Σ", "Upsilon": "Υ",
    "Phi": "Φ", "Psi": "Ψ", "Omega": "Ω",
}
_SYMBOLS: dict[str, str] = {
    **_GREEK,
    # operators and other symbols
    "times": "×", "cdot": "·", "div": "÷", "pm": "±", "mp": "∓", "ast": "∗", "star": "⋆",
    "circ": "∘", "bullet": "•", "infty": "∞", "ell": "ℓ", "partial": "∂", "nabla": "∇",
    "sum": "∑", "prod": "∏", "int": "∫", "emptyset": "∅", "varnothing": "∅",
    "top": "⊤", "bot": "⊥", "dagger": "†", "prime": "′", "degree": "°", "forall": "∀",
    "exists": "∃", "neg": "¬", "lnot": "¬", "wedge": "∧", "land": "∧", "vee": "∨", "lor": "∨",
    "cap": "∩", "cup": "∪", "setminus": "∖", "oplus": "⊕", "otimes": "⊗", "odot": "⊙",
    "ldots": "…", "cdots": "⋯", "dots": "…", "vdots": "⋮", "ddots": "⋱", "hbar": "ℏ",
    "lfloor": "⌊", "rfloor": "⌋", "lceil": "⌈", "rceil": "⌉", "langle": "⟨", "rangle": "⟩",
    "lvert": "|", "rvert": "|", "vert": "|", "Vert": "‖", "lVert": "‖", "rVert": "‖",
    "uparrow": "↑", "downarrow": "↓", "checkmark": "✓", "S": "§", "textdegree": "°",
    "textasciitilde": "~", "textbackslash": "\\",
}
_RELATIONS: dict[str, str] = {
    "leq": "≤", "le": "≤", "leqslant": "≤", "geq": "≥", "ge": "≥", "geqslant": "≥",
    "neq": "≠", "ne": "≠", "approx": "≈",
    "sim": "~", "simeq": "≃", "cong": "≅", "equiv": "≡", "propto": "∝", "ll": "≪", "gg": "≫",
    "in": "∈", "notin": "∉", "ni": "∋", "subset": "⊂", "subseteq": "⊆", "supset": "⊃",
    "supseteq": "⊇", "to": "→", "rightarrow": "→", "leftarrow": "←", "gets": "←",
    "leftrightarrow": "↔", "Rightarrow": "⇒", "Leftarrow": "⇐", "Leftrightarrow": "⇔",
    "implies": "⇒", "iff": "⇔", "mapsto": "↦", "mid": "|", "perp": "⊥", "models": "⊨",
    "vdash": "⊢", "coloneqq": "≔", "triangleq": "≜",
}
_FUNCTIONS = frozenset(
    "log ln exp lg max min sup inf arg argmax argmin lim det dim sin cos tan tanh sinh cosh "
    "exp Pr deg gcd ker rank tr Tr diag softmax poly polylog".split()
)
# Commands whose argument is shown as it is (fonts, text, boxes).
_KEEP_ARGUMENT = frozenset(
    "text textrm textnormal textsf texttt textup mathrm mathsf mathtt mathit mathnormal "
    "mathbf boldsymbol bm textbf textit emph textsl mbox hbox operatorname underline "
    "mathring pmb".split()
)
# Font switches without an argument ({\bf x}) and sizing/spacing words: dropped.
_DROPPED = frozenset(
    "bf it rm sf tt em sl displaystyle textstyle scriptstyle left right big Big bigg Bigg "
    "bigl bigr Bigl Bigr biggl biggr middle limits nolimits nonumber notag centering "
    "quad qquad".split()
)
_ACCENTS = {  # combining characters
    "tilde": "\u0303", "widetilde": "\u0303", "hat": "\u0302", "widehat": "\u0302",
    "bar": "\u0304", "overline": "\u0305", "vec": "\u20d7", "dot": "\u0307", "ddot": "\u0308",
    "acute": "\u0301", "grave": "\u0300", "breve": "\u0306", "check": "\u030c",
}
_SCRIPT = dict(zip("ABCDEFGHIJKLMNOPQRSTUVWXYZ", "𝒜ℬ𝒞𝒟ℰℱ𝒢ℋℐ𝒥𝒦ℒℳ𝒩𝒪𝒫𝒬ℛ𝒮𝒯𝒰𝒱𝒲𝒳𝒴𝒵", strict=True))
_DOUBLE = dict(zip("ABCDEFGHIJKLMNOPQRSTUVWXYZ", "𝔸𝔹ℂ𝔻𝔼𝔽𝔾ℍ𝕀𝕁𝕂𝕃𝕄ℕ𝕆ℙℚℝ𝕊𝕋𝕌𝕍𝕎𝕏𝕐ℤ", strict=True))
_ALPHABETS = {"mathcal": _SCRIPT, "mathscr": _SCRIPT, "mathbb": _DOUBLE}
_SUPER = dict(zip("0123456789+-−=()abcdefghijklmnoprstuvwxyzABDEGHIJKLMNOPRTUVWβγδθιφχ*′⊤",
                  "⁰¹²³⁴⁵⁶⁷⁸⁹⁺⁻⁻⁼⁽⁾ᵃᵇᶜᵈᵉᶠᵍʰⁱʲᵏˡᵐⁿᵒᵖʳˢᵗᵘᵛʷˣʸᶻᴬᴮᴰᴱᴳᴴᴵᴶᴷᴸᴹᴺᴼᴾᴿᵀᵁⱽᵂᵝᵞᵟᶿᶥᵠᵡ*′ᵀ",
                  strict=True))
_SUB = dict(zip("0123456789+-−=()aehijklmnoprstuvxβγρφχ",
                "₀₁₂₃₄₅₆₇₈₉₊₋₋₌₍₎ₐₑₕᵢⱼₖₗₘₙₒₚᵣₛₜᵤᵥₓᵦᵧᵨᵩᵪ", strict=True))
# fmt: on

# Inline math: $...$, \(...\), and display math $$...$$ or \[...\]. A `$...$` pair is math
# when its content has TeX symbols; otherwise only when it is one token or has no word of three
# letters, and does not close right before a digit ("from $50 to $300" is money).
_MATH = re.compile(
    r"\$\$(?P<display>[^$]+?)\$\$"
    r"|(?<![\\])\$(?P<inline>[^$\n]{1,300}?)(?<!\\)\$"
    r"|\\\((?P<paren>.{1,300}?)\\\)"
    r"|\\\[(?P<bracket>.{1,300}?)\\\]",
    re.DOTALL,
)
_SYMBOLIC = re.compile(r"[\\^_{}=<>]")
_WORD = re.compile(r"[A-Za-z]{3,}")
_TEXT_ESCAPE = re.compile(r"\\+([%&_#${}])")  # "\%", and "\\$" as some abstracts write it
_TEXT_STYLE = re.compile(r"\{\\(it|em|sl|bf|sc|rm|tt|sf)\s+([^{}]*)\}")  # {\it words}
_TEXT_HREF = re.compile(r"\\href\{([^{}]*)\}\{([^{}]*)\}")
_TEXT_COMMAND = re.compile(r"\\([A-Za-z]+)(?![A-Za-z])(?:\{([^{}]*)\})?")
_STRONG_COMMANDS = frozenset({"textbf", "bf"})
_EM_COMMANDS = frozenset({"textit", "emph", "it", "em", "sl", "textsl"})


def latex_to_text(text: str) -> str:
    """`text` with its LaTeX shown as Unicode: math between `$`s (and `\\(...\\)`); outside
    math, the escapes (`\\%`, `\\&`, `\\_`), symbol commands (`\\times`), and commands with a
    text argument (`\\url{...}`, `\\textsc{...}`; `\\textbf{x}` and `\\emph{x}` become
    Markdown emphasis). Text without LaTeX comes back unchanged."""
    if "$" not in text and "\\" not in text:
        return text
    out: list[str] = []
    last = 0
    for start, end, body in _math_spans(text):
        out.append(text[last:start])
        out.append(math_to_text(body))
        last = end
    out.append(text[last:])
    return unicodedata.normalize("NFC", _text_part("".join(out)))


def without_math(text: str) -> str:
    """`text` with each math span replaced by a space: the letters of a formula ("$dH^2K$")
    are symbols, not words or names."""
    if "$" not in text and "\\" not in text:
        return text
    out: list[str] = []
    last = 0
    for start, end, _ in _math_spans(text):
        out.append(text[last:start] + " ")
        last = end
    out.append(text[last:])
    return "".join(out)


def _math_spans(text: str) -> Iterator[tuple[int, int, str]]:
    """Each math span of `text`: its start, end and body (see _MATH)."""
    last = 0
    while (match := _MATH.search(text, last)) is not None:
        body = next(g for g in match.groups() if g is not None)
        if match.group("inline") is not None and not _is_math(body, text[match.end() :]):
            last = match.end() - 1  # its closing `$` may open the next pair
            continue
        yield match.start(), match.end(), body
        last = match.end()


def _is_math(body: str, after: str) -> bool:
    if _SYMBOLIC.search(body):
        return True
    if after[:1].isdigit():
        return False
    return len(body.split()) == 1 or not _WORD.search(body)


def _text_part(text: str) -> str:
    """Outside math: escapes, symbol commands, and commands around text."""
    if "\\" not in text:
        return text
    text = _TEXT_ESCAPE.sub(lambda m: m.group(1), text)
    text = _TEXT_STYLE.sub(lambda m: _styled(m.group(1), m.group(2)), text)
    text = _TEXT_HREF.sub(lambda m: m.group(2).strip() or m.group(1), text)

    def command(match: re.Match[str]) -> str:
        name, argument = match.group(1), match.group(2)
        if argument is not None:
            if name in _ACCENTS:
                return argument + _ACCENTS[name] if len(argument) == 1 else argument
            if name == "footnote":
                return f" ({argument})"
            return _styled(name, _alphabet(name, argument))
        symbol = _SYMBOLS.get(name) or _RELATIONS.get(name)
        if symbol is not None:
            return symbol
        if name in _FUNCTIONS:
            return name
        return match.group(0)  # not LaTeX we know: leave it (it may be a Windows path)

    for _ in range(3):  # nested commands, innermost first: \\textbf{\\textit{x}}
        changed = _TEXT_COMMAND.sub(command, text)
        if changed == text:
            break
        text = changed
    return text


def _styled(command: str, text: str) -> str:
    text = text.strip().strip("*")  # one emphasis for nested commands
    if not text:
        return ""
    if command in _STRONG_COMMANDS:
        return f"**{text}**"
    if command in _EM_COMMANDS:
        return f"*{text}*"
    return text


def math_to_text(math: str) -> str:
    """One math expression as Unicode: `O(\\epsilon^{-4p})` -> `O(ϵ⁻⁴ᵖ)`."""
    result = unicodedata.normalize("NFC", _Math(math).run())
    result = re.sub(r"[ \t\n]+", " ", result).strip()
    # A leading "~", "≈", "<", "≤" before a number reads as "about 1.3", not "~ 1.3".
    return re.sub(r"^([~≈<>≤≥]) (?=[\d.])", r"\1", result)


class _Math:
    """A small recursive reader of TeX math: groups, commands, scripts."""

    def __init__(self, source: str) -> None:
        self.s = source
        self.i = 0

    def run(self) -> str:
        return self._until(None)

    def _until(self, closing: str | None) -> str:
        out: list[str] = []
        while self.i < len(self.s):
            c = self.s[self.i]
            if closing is not None and c == closing:
                self.i += 1
                return "".join(out)
            if c == "{":
                self.i += 1
                out.append(self._until("}"))
            elif c == "\\":
                out.append(self._command())
            elif c in "^_":
                self.i += 1
                out.append(_script(self._argument(), superscript=c == "^"))
            elif c == "~":
                self.i += 1
                out.append(" ")
            else:
                self.i += 1
                out.append(c)
        return "".join(out)

    def _argument(self) -> str:
        """The next argument: a {group}, a command, or one character."""
        while self.i < len(self.s) and self.s[self.i] == " ":
            self.i += 1
        if self.i >= len(self.s):
            return ""
        c = self.s[self.i]
        if c == "{":
            self.i += 1
            return self._until("}")
        if c == "\\":
            return self._command().strip()
        self.i += 1
        return c

    def _command(self) -> str:
        match = re.compile(r"\\([A-Za-z]+|.)").match(self.s, self.i)
        if match is None:  # a lone backslash at the end
            self.i += 1
            return ""
        self.i = match.end()
        name = match.group(1)
        if not name.isalpha():  # \, \; \! \  \{ \} \% \\ ...
            return {"{": "{", "}": "}", "%": "%", "&": "&", "_": "_", "#": "#", "$": "$",
                    "|": "‖", "\\": " "}.get(name, " ")  # fmt: skip
        if name in _SYMBOLS:
            return _SYMBOLS[name]
        if name in _RELATIONS:
            return f" {_RELATIONS[name]} "
        if name in _FUNCTIONS:  # "log n", but "max_x"
            return name if self.s[self.i : self.i + 1] in ("^", "_") else f"{name} "
        if name in _ACCENTS:
            argument = self._argument()
            return argument + _ACCENTS[name] if len(argument) == 1 else argument
        if name in _ALPHABETS:
            return _alphabet(name, self._argument())
        if name in _KEEP_ARGUMENT:
            return self._argument()
        if name in ("frac", "dfrac", "tfrac"):
            top, bottom = self._argument(), self._argument()
            return f"{_grouped(top)}/{_grouped(bottom)}"
        if name == "sqrt":
            return "√" + _grouped(self._argument())
        if name in _DROPPED:
            return " " if name in ("quad", "qquad") else ""
        return name  # unknown: its name without the backslash


def _alphabet(name: str, argument: str) -> str:
    letters = _ALPHABETS.get(name)
    if letters is None:
        return argument
    return "".join(letters.get(c, c) for c in argument)


def _grouped(text: str) -> str:
    text = text.strip()
    return text if len(text) <= 1 or text.isalnum() else f"({text})"


def _script(argument: str, *, superscript: bool) -> str:
    argument = argument.strip()
    table = _SUPER if superscript else _SUB
    if argument and all(c in table for c in argument):
        return "".join(table[c] for c in argument)
    mark = "^" if superscript else "_"
    return mark + (argument if len(argument) <= 1 or argument.isalnum() else f"({argument})")


# Greek letters spelled as people type them in names ("muFooNet", "alpha-BarNet"): the first name of
# each letter in _GREEK ("epsilon", not "varepsilon").
_GREEK_NAMES = {letter: name for name, letter in reversed(_GREEK.items())}
_DIGITS = {
    **{v: k for k, v in _SUPER.items() if k.isdigit()},
    **{v: k for k, v in _SUB.items() if k.isdigit()},
}


# Markdown emphasis around or inside words ("**S**parse **A**ttention", "*not*"): formatting, not
# text; left in, it splits words ("S", "parse") for every index and for the names an abstract
# defines. Asterisks in formulas ("$x^*$", "$a * b$") touch no letter on the side that matters
# and stay.
_EMPHASIS = re.compile(
    r"(?<=[A-Za-z])\*{1,3}(?=[A-Za-z])"  # inside a word
    # opening a word, a number, a parenthesis or a quotation ("**(H-LoRA)", ",**Cognac")
    r"|(?:(?<=^)|(?<=[\s(\[\"'“‘/,$—–-]))\*{1,3}(?=[A-Za-z0-9(\"'“‘$\\+])"
    # closing one, after a letter, digit, percent sign, punctuation or math ("26.9%**", "$**")
    r"|(?<=[A-Za-z0-9.)?!%:;,\"'”’$}\]])\*{1,3}(?=$|[\s).,;:!?\"'”’/—–-])"
)


def without_emphasis(text: str) -> str:
    """`text` without Markdown emphasis markers around or inside its words."""
    return _EMPHASIS.sub("", text)


def as_typed(text: str) -> str:
    """`text` as a user types it, for matching names: LaTeX as Unicode (`latex_to_text`) without
    emphasis, Greek letters spelled out ("μFooNet" -> "muFooNet") and raised or lowered digits
    as digits ("K²Bar" -> "K2Bar")."""
    if "$" in text or "\\" in text:  # "\\textbf{S}parse" reads "Sparse", not "**S**parse"
        text = without_emphasis(latex_to_text(text))
    if text.isascii():
        return text
    return "".join(_GREEK_NAMES.get(c) or _DIGITS.get(c) or c for c in text)
