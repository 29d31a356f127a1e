"""The open-ended response check of the sandbox (spec 4.7): deterministic, documented rules.

The real service uses models; the sandbox uses rules anyone can predict, so tests and users
can produce each flag on purpose (docs/operations.md lists them):

- duplicate: the normalised text (lower case, letters and digits only, spaces collapsed) was
  already checked in the same survey, earlier or earlier in the same call.
- language mismatch: the text has at least 3 words and its stop words point clearly to another
  language than the survey's (`survey_localization` before the underscore).
- incoherent: a curse word; or gibberish: fewer than half of the characters are letters, a
  letter repeated 5 times in a row, a keyboard run (asdf, qwerty...), or most words of 4+
  letters without a vowel.
- machine-generated: a phrase that gives an assistant away ("as an AI", "language model"), or
  two or more of the stock phrases of generated prose ("in conclusion", "it is important to
  note", "delve"...).
- check failed (coretext_api_fail): the text holds no letter at all (nothing to check).
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass

MAX_ANSWERS = 20

_WORD = re.compile(r"[^\W\d_]+", re.UNICODE)

STOP_WORDS: dict[str, frozenset[str]] = {
    "en": frozenset(
        "the and is are was were of to in it that this with for you my i have not but be "
        "they we very like would".split()
    ),
    "fr": frozenset(
        "le la les et est sont de des du un une je il elle nous vous pas que qui pour avec "
        "dans ce très mais".split()
    ),
    "de": frozenset(
        "der die das und ist sind ein eine ich nicht mit für zu den von auf es wir sie sehr "
        "aber auch".split()
    ),
    "es": frozenset(
        "el la los las y es son de un una yo no con para en que por muy pero lo".split()
    ),
    "it": frozenset("il lo la gli le e è sono di un una io non con per che molto ma".split()),
    "nl": frozenset("de het een en is zijn ik niet met voor van op dat wij zeer maar".split()),
}

CURSE_WORDS = frozenset(
    "fuck fucking shit bullshit bitch bastard asshole crap dick merde putain connard "
    "scheisse scheiße arschloch mierda".split()
)
KEYBOARD_RUNS = ("asdf", "sdfg", "qwer", "wert", "zxcv", "hjkl", "jkl;", "uiop", "yxcv", "azer")
ASSISTANT_MARKERS = ("as an ai", "language model", "i cannot provide", "i don't have personal")
STOCK_PHRASES = (
    "in conclusion",
    "it is important to note",
    "it's important to note",
    "overall,",
    "delve",
    "furthermore",
    "moreover",
    "in summary",
    "i hope this helps",
    "plays a crucial role",
    "a testament to",
)


@dataclass(frozen=True)
class Verdict:
    """The flags of one answer, with the service's field names."""

    coretext_api_fail: int = 0
    ai_generated_response: int = 0
    incoherent_response: int = 0
    duplicate_response: int = 0
    language_mismatch: int = 0

    def as_item(self, question_id: str) -> dict:
        return {"question_id": question_id, **self.__dict__}


def fingerprint(text: str) -> str:
    """The text as the duplicate rule compares it."""
    folded = unicodedata.normalize("NFKC", text).casefold()
    return " ".join(re.findall(r"\w+", folded))


def language_of(text: str) -> str | None:
    """The language whose stop words the text uses most, when it is clear; None otherwise."""
    words = [w.casefold() for w in _WORD.findall(text)]
    if len(words) < 3:
        return None
    hits = sorted(
        ((sum(w in stops for w in words), lang) for lang, stops in STOP_WORDS.items()),
        reverse=True,
    )
    (best, language), (second, _) = hits[0], hits[1]
    if best >= 2 and best > second:
        return language
    return None


def incoherent(text: str) -> bool:
    """Curse words or gibberish."""
    lowered = text.casefold()
    words = [w.casefold() for w in _WORD.findall(text)]
    if any(w in CURSE_WORDS for w in words):
        return True
    visible = [c for c in text if not c.isspace()]
    letters = [c for c in visible if c.isalpha()]
    if visible and len(letters) < len(visible) / 2:
        return True
    if re.search(r"([^\W\d_])\1{4,}", lowered):
        return True
    if any(run in lowered for run in KEYBOARD_RUNS):
        return True
    long_words = [w for w in words if len(w) >= 4]
    without_vowel = [w for w in long_words if not re.search(r"[aeiouyàâäéèêëïîôöùûüáíóúæœ]", w)]
    return bool(long_words) and len(without_vowel) * 2 > len(long_words)


def machine_generated(text: str) -> bool:
    """An assistant's tell, or two stock phrases of generated prose."""
    lowered = text.casefold()
    if any(marker in lowered for marker in ASSISTANT_MARKERS):
        return True
    return sum(phrase in lowered for phrase in STOCK_PHRASES) >= 2


def check(text: str, survey_language: str, seen: set[str]) -> Verdict:
    """The verdict on one answer; `seen` holds the fingerprints already checked in the survey
    and gains this one."""
    if not any(c.isalpha() for c in text):
        return Verdict(coretext_api_fail=1)
    mark = fingerprint(text)
    duplicate = mark in seen
    seen.add(mark)
    detected = language_of(text)
    return Verdict(
        ai_generated_response=int(machine_generated(text)),
        incoherent_response=int(incoherent(text)),
        duplicate_response=int(duplicate),
        language_mismatch=int(detected is not None and detected != survey_language),
    )
