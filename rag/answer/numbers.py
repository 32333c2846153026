"""Numbers a sentence states, with their units, and whether a passage states the same.

A generated sentence may only state a number its cited passage states, and with the same kind
of unit: "2.6×" and "2.6%" are different claims, so is "1.2 points" and "1.2%". A number the
sentence writes without a unit only has to occur in the passage.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass

# Unit words and signs, by the kind of quantity they make of a number.
_UNITS: dict[str, str] = {
    "×": "times",
    "x": "times",
    "times": "times",
    "fold": "times",
    "%": "percent",
    "percent": "percent",
    "per cent": "percent",
    "percentage points": "points",
    "percentage point": "points",
    "points": "points",
    "point": "points",
    "pp": "points",
    "pts": "points",
}
_UNIT_PATTERN = "|".join(re.escape(u) for u in sorted(_UNITS, key=len, reverse=True))
# A number (1,000 / 2.6 / 50.00), then optionally a unit: signs directly or after a space or
# LaTeX escape ("50\%", "2.6$\times$"), words after a space or hyphen ("3-fold").
_QUANTITY = re.compile(
    r"(?<![\w.])(\d{1,3}(?:,\d{3})+|\d+(?:\.\d+)?)"
    r"(?:\s*(?:\\?\$?\\times\$?|\\%)|\s?-?\s?(" + _UNIT_PATTERN + r")(?![\w]))?",
    re.IGNORECASE,
)


@dataclass(frozen=True)
class Quantity:
    value: str  # normalised: no thousands separators, no trailing zeros after a point
    unit: str  # "times", "percent", "points" or "" (none written)


def _normal(number: str) -> str:
    number = number.replace(",", "")
    if "." in number:
        number = number.rstrip("0").rstrip(".")
    return number


def quantities(text: str) -> list[Quantity]:
    """The numbers of `text` with the kind of unit written after each."""
    found: list[Quantity] = []
    for match in _QUANTITY.finditer(text):
        raw_unit = match.group(2)
        tail = match.group(0)[len(match.group(1)) :]
        if raw_unit:
            unit = _UNITS[raw_unit.lower()]
        elif "times" in tail:
            unit = "times"
        elif "%" in tail:
            unit = "percent"
        else:
            unit = ""
        found.append(Quantity(_normal(match.group(1)), unit))
    return found


def unstated_numbers(sentence: str, passage_sentences: Iterable[str]) -> list[str]:
    """The numbers of `sentence` that the passage does not state, or states with another unit
    ("2.6%" where the passage has only "2.6×"), as written in the sentence."""
    stated: dict[str, set[str]] = {}
    for passage in passage_sentences:
        for q in quantities(passage):
            stated.setdefault(q.value, set()).add(q.unit)
    missing: list[str] = []
    for q in quantities(sentence):
        units = stated.get(q.value)
        if units is None or (q.unit and q.unit not in units):
            missing.append(f"{q.value}{_SHOWN[q.unit]}")
    return missing


_SHOWN = {"times": "×", "percent": "%", "points": " points", "": ""}
