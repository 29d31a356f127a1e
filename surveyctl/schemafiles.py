"""Finds the files shipped beside the code: the JSON Schemas of `schemas/`.

In a checkout (and an editable install) they are at the repository root; a built wheel carries
them inside the package as `surveyctl/_schemas`.
"""

from __future__ import annotations

import json
from functools import cache
from pathlib import Path

_PACKAGE = Path(__file__).resolve().parent


def schemas_dir() -> Path:
    """The folder that holds `manifest.schema.json` and `api/`."""
    for candidate in (_PACKAGE / "_schemas", _PACKAGE.parent / "schemas"):
        if candidate.is_dir():
            return candidate
    raise FileNotFoundError("surveyctl's schemas/ folder is missing from this installation")


@cache
def load_schema(relative: str) -> dict:
    """The parsed JSON Schema at `relative` (for example `api/survey-create.request.json`)."""
    with open(schemas_dir() / relative, encoding="utf-8") as handle:
        return json.load(handle)
