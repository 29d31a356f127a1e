"""How a number the service (or a manifest) writes as text is read: one rule for every reader.

The service sends some numbers as text ("5", "1.30", "" for not set; docs/api-assumptions.md).
The planner's comparison, the client's counts, discovery's list, the status report, the text
check and the conformance checks all read them by this rule, so two of them never disagree
about whether "5.0", "nan" or "1e999" is a number. (Ids and status codes, which are compared
with integers, are read by the stricter `surveyctl.api.reading.as_int`: whole numbers only.)
"""

from __future__ import annotations

import math
import re
from typing import Any

# ASCII digits only: "²" or "٣" are not numbers a service writes, and float() would read some.
_NUMBER_TEXT = re.compile(r"^\s*-?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?\s*$", re.ASCII)
# orjson, which writes every body, refuses integers past 64 bits: larger ones stay floats.
_INT_LIMIT = 2**63


def as_number(value: Any) -> Any:
    """A number written as text read as a number ("5" is 5, "1.30" is 1.3, "5.0" is 5); "" (or
    blanks) is None; anything else, including "nan", "inf" and numbers too large for a float,
    as it came."""
    if not isinstance(value, str):
        return value
    if not value.strip():
        return None
    if not _NUMBER_TEXT.match(value):
        return value
    number = float(value)
    if not math.isfinite(number):
        return value
    return int(number) if number.is_integer() and abs(number) < _INT_LIMIT else number
