"""The "did you mean" of every message that names an unknown word: one spelling, one cutoff.

Used by the configuration, the manifest schema and rules, the state commands and `--target`.
The sandbox keeps its own (it imports nothing of the client's, as the real service would not).
"""

from __future__ import annotations

import difflib
from collections.abc import Iterable, Sequence

from surveyctl import __version__


def closest(word: str, choices: Iterable[str], abbreviated: bool = False) -> str | None:
    """The choice that "did you mean" would name for `word`, or None. With `abbreviated`, a
    word too short to be close to any choice (`prod`, `prd`) names the one choice it shortens:
    the only one that starts with its first letter and holds its letters in order."""
    choices = list(choices)
    close = difflib.get_close_matches(word, choices, n=1, cutoff=0.6)
    if close:
        return close[0]
    if abbreviated and word:
        shortened = [choice for choice in choices if _shortens(word, choice)]
        if len(shortened) == 1:
            return shortened[0]
    return None


def _shortens(word: str, choice: str) -> bool:
    """Whether `word` is `choice` with letters left out, its first letter kept."""
    if len(word) >= len(choice) or word[0] != choice[0]:
        return False
    letters = iter(choice)
    return all(letter in letters for letter in word)


def suggest(word: str, choices: Iterable[str], abbreviated: bool = False) -> str:
    """' (did you mean X?)' for the closest choice (see `closest`), or ''."""
    close = closest(word, choices, abbreviated)
    return f" (did you mean {close!r}?)" if close is not None else ""


def setting_hint(key: str, known: Sequence[str]) -> str:
    """What follows "unknown setting 'x'" in surveyctl.yaml: the closest known name (else every
    one), and what to do when a newer surveyctl added it. Such a setting is refused, never
    ignored: it may be a guard or a protection that an older surveyctl would apply without."""
    return (
        suggest(key, known) or f"; known: {', '.join(known)}"
    ) + f"; if a newer surveyctl than this one ({__version__}) added it, upgrade surveyctl here"
