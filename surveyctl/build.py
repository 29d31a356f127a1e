"""Which surveyctl this is: its version, and a digest of its code that tells builds apart.

The version alone does not: a checkout of the repository, or a release branch, plans with code
that says the same version but is not the same. What a saved plan was made with decides what
it means (surveyctl.reconcile.planfile), so a plan records both, and is applied only by the
surveyctl whose code made it.
"""

from __future__ import annotations

import hashlib
from functools import cache
from pathlib import Path

from surveyctl import __version__

BUILD_DIGITS = 12  # 48 bits: two builds a team runs side by side never share one


@cache
def build() -> str:
    """A digest of this surveyctl's own code: every module of the package, by name and content
    (a few milliseconds, once a process)."""
    root = Path(__file__).parent
    digest = hashlib.sha256()
    for path in sorted(root.rglob("*.py")):
        digest.update(path.relative_to(root).as_posix().encode("utf-8") + b"\0")
        digest.update(path.read_bytes())
    return digest.hexdigest()[:BUILD_DIGITS]


def made_by() -> dict[str, str]:
    """What a file this surveyctl writes records of it: its version and its build."""
    return {"surveyctl": __version__, "build": build()}
