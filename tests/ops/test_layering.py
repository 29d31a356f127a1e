"""The operations (surveyctl/ops) stand beside the reconciler, not on it: the fieldwork view
and the adjustments read the API themselves, so a change of the plan's machinery cannot
change what an operations command sends or shows."""

from __future__ import annotations

import ast
from pathlib import Path

import surveyctl

OPS = Path(surveyctl.__file__).parent / "ops"


def _imported(path: Path) -> set[str]:
    names: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module:
            names.add(node.module)
    return names


def test_operations_do_not_import_the_reconciler():
    found = sorted(
        f"{path.name} imports {name}"
        for path in sorted(OPS.glob("*.py"))
        for name in _imported(path)
        if name == "surveyctl.reconcile" or name.startswith("surveyctl.reconcile.")
    )
    assert found == []
