"""Saved plans: `plan --out FILE` writes one, `apply FILE` reads it back.

The file is JSON: the Plan itself plus a checksum over it, so a file edited by hand or cut
short is refused rather than half-applied. It carries no API key.
"""

from __future__ import annotations

import json
from pathlib import Path

from surveyctl.errors import SurveyctlError
from surveyctl.files import write_atomically
from surveyctl.reconcile.plan import FORMAT_VERSION, Plan
from surveyctl.state import fingerprint

MAGIC = "surveyctl-plan"


class PlanFileError(SurveyctlError):
    """A saved plan that cannot be used."""


def save_plan(plan: Plan, path: Path) -> None:
    """Writes the plan atomically (temp file + rename)."""
    data = plan.to_dict()
    document = {"kind": MAGIC, "checksum": fingerprint(data), "plan": data}
    write_atomically(path, json.dumps(document, indent=1, sort_keys=True))


def load_plan(path: Path) -> Plan:
    """Reads a saved plan; PlanFileError when it is not one, is damaged or too new."""
    try:
        with open(path, encoding="utf-8") as handle:
            document = json.load(handle)
    except FileNotFoundError as exc:
        raise PlanFileError(f"{path}: no such plan file") from exc
    except (ValueError, UnicodeDecodeError) as exc:
        raise PlanFileError(f"{path}: not a surveyctl plan file (not JSON)") from exc
    if not isinstance(document, dict) or document.get("kind") != MAGIC:
        raise PlanFileError(f"{path}: not a surveyctl plan file")
    data = document.get("plan")
    if not isinstance(data, dict) or document.get("checksum") != fingerprint(data):
        raise PlanFileError(f"{path}: the plan file is damaged or was edited; make a new plan")
    if data.get("format_version") != FORMAT_VERSION:
        raise PlanFileError(
            f"{path}: plan format {data.get('format_version')} is not supported by this "
            f"surveyctl (it reads format {FORMAT_VERSION})"
        )
    try:
        return Plan.from_dict(data)
    except TypeError as exc:
        raise PlanFileError(f"{path}: the plan file is not complete: {exc}") from exc
