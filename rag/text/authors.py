"""Author names matched the way people write them: accents, case, initials and order aside.

"José Núñez", "Jose Nunez", "J. Nunez", "Nunez, J." and "Núñez" all name the same author;
"Jose" alone (a given name) names nobody.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass

_PARTICLES = frozenset("van von der den de del della di da du le la dos das ter ten".split())


def fold(text: str) -> str:
    """Lower case, accents removed, punctuation turned into spaces."""
    decomposed = unicodedata.normalize("NFKD", text)
    ascii_only = "".join(c for c in decomposed if not unicodedata.combining(c))
    return " ".join(re.sub(r"[^a-z0-9]+", " ", ascii_only.lower()).split())


@dataclass(frozen=True)
class PersonName:
    surname: str  # folded; particles kept ("van der berg")
    given: tuple[str, ...]  # folded given names or initials, in order

    @classmethod
    def parse(cls, name: str) -> PersonName:
        """'Given Middle Surname' or 'Surname, Given' (a particle joins the surname)."""
        if "," in name:
            surname, _, given = name.partition(",")
            return cls(fold(surname), tuple(fold(given).split()))
        words = fold(name).split()
        if not words:
            return cls("", ())
        start = len(words) - 1
        while start > 0 and words[start - 1] in _PARTICLES:
            start -= 1
        return cls(" ".join(words[start:]), tuple(words[:start]))

    def matches(self, author: PersonName) -> bool:
        """Whether this (a query) names `author`: same surname, and each given name of the
        query agrees with the author's given name at that place (an initial agrees with any
        name that starts with it). A query without given names matches by surname."""
        if not self.surname or self.surname != author.surname:
            return False
        for mine, theirs in zip(self.given, author.given, strict=False):
            short, long = sorted((mine, theirs), key=len)
            if not long.startswith(short):
                return False
        return True


def author_matches(query: str, author: str) -> bool:
    """Whether the query ('Nunez', 'J. Nunez', 'Núñez, José') names this author."""
    wanted, candidate = PersonName.parse(query), PersonName.parse(author)
    if wanted.matches(candidate):
        return True
    # A one-word query may also be a given name written last ("Nunez José" order) or a
    # surname with particles written differently: compare against every word of the author.
    words = fold(query).split()
    return len(words) == 1 and not wanted.given and words[0] == candidate.surname.split()[-1]
