"""Half a character in JSON: a lone surrogate escape (`"\\ud83d"`, an emoji cut in half).

JSON allows the escape, and Python's json module reads it into a string that is not text:
nothing can print it, write it to the state or send it back as UTF-8. What the service answers
is read with each one made U+FFFD (`surveyctl.api.reading`); what a person's file holds is
refused with its line (`surveyctl.ops.uploads`). The json module pairs every two escapes that
make one character, so a surrogate left in a string is always alone.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

_LONE_SURROGATE = re.compile("[\ud800-\udfff]")


def holds_lone_surrogate(value: Any) -> bool:
    """Whether a string of the JSON `value` (a key included) holds a lone surrogate."""
    return any(_LONE_SURROGATE.search(text) for text in _strings(value))


def without_lone_surrogates(value: Any) -> Any:
    """The JSON `value` with every lone surrogate of its strings (keys included) made U+FFFD."""
    if isinstance(value, str):
        return _LONE_SURROGATE.sub("\ufffd", value)
    if isinstance(value, list):
        return [without_lone_surrogates(item) for item in value]
    if isinstance(value, dict):
        return {
            without_lone_surrogates(key): without_lone_surrogates(item)
            for key, item in value.items()
        }
    return value


def _strings(value: Any) -> Iterator[str]:
    if isinstance(value, str):
        yield value
    elif isinstance(value, list):
        for item in value:
            yield from _strings(item)
    elif isinstance(value, dict):
        for key, item in value.items():
            yield from _strings(key)
            yield from _strings(item)
