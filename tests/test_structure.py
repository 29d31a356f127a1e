"""The layering the design promises, checked on the source: the core reads no environment
variable and imports neither click nor rich, no two modules import each other (directly or
round a longer circle), and loading manifests does not load the HTTP stack."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import surveyctl

PACKAGE = Path(surveyctl.__file__).parent
# The sandbox is a separate program served beside surveyctl; it is not part of the core.
OUTSIDE_CORE = ("cli", "sandbox")


def _modules() -> dict[str, Path]:
    found = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
        name = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
        found[name] = path
    return found


def _core(name: str) -> bool:
    parts = name.split(".")
    return len(parts) < 2 or parts[1] not in OUTSIDE_CORE


def _imports(path: Path, module: str) -> set[str]:
    """Modules `path` imports, at the top or inside functions (not for type checking only)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            node.body = []
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                base = ".".join(package.split(".")[: len(package.split(".")) - node.level + 1])
                base = f"{base}.{node.module}" if node.module else base
            names.add(base)
            names.update(f"{base}.{alias.name}" for alias in node.names)
    return names


# The configuration (surveyctl.yaml, and the environment's key read from the variable it
# names) and the module of surveyctl's own variables: the only readers of os.environ.
CONFIGURATION = (
    "surveyctl.config",
    "surveyctl.environments",
    "surveyctl.variables",
    "surveyctl.__main__",
)


def test_the_core_reads_no_environment_variable():
    readers = [
        name
        for name, path in _modules().items()
        if _core(name)
        and name not in CONFIGURATION
        and "os.environ" in path.read_text(encoding="utf-8")
    ]
    assert readers == []


def test_only_the_cli_imports_click_or_rich():
    found = [
        name
        for name, path in _modules().items()
        if _core(name) and any(i.split(".")[0] in ("click", "rich") for i in _imports(path, name))
    ]
    assert found == []


def test_the_sandbox_shares_no_code_with_the_client_but_the_contracts_loader():
    # A rule both sides import would agree with itself: the sandbox could not catch the
    # client's mistake in it (design: only the contract in schemas/ is shared).
    shared = {
        (name, imported)
        for name, path in _modules().items()
        if name.startswith("surveyctl.sandbox")
        for imported in _imports(path, name)
        if imported.startswith("surveyctl.")
        and not imported.startswith(("surveyctl.sandbox", "surveyctl.schemafiles"))
        and imported != "surveyctl.__version__"  # the version it reports, not a rule
    }
    assert shared == set()


def test_no_modules_import_each_other_in_a_circle():
    modules = _modules()
    graph = {
        name: {i for i in _imports(path, name) if i in modules and i != name}
        for name, path in modules.items()
    }
    # A package importing its own modules to register them is not a circle of design.
    graph = {
        name: {i for i in deps if not i.startswith(name + ".")} for name, deps in graph.items()
    }
    circles = []
    for start in graph:
        stack, seen = [(start, [start])], set()
        while stack:
            node, trail = stack.pop()
            for nxt in graph[node]:
                if nxt == start:
                    circles.append(" -> ".join([*trail, start]))
                elif nxt not in seen:
                    seen.add(nxt)
                    stack.append((nxt, [*trail, nxt]))
    assert circles == []


def test_loading_manifests_does_not_load_the_http_stack(tmp_path):
    manifest = Path(__file__).parent / "manifests" / "data" / "every-field.yaml"
    code = (
        "import sys; from surveyctl.manifests import load_manifests; "
        f"load_manifests([{str(manifest)!r}]); "
        "print(sorted(m for m in sys.modules if m.split('.')[0] in ('requests', 'urllib3')))"
    )
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert run.stdout.splitlines()[-1] == "[]"


def test_data_flows_one_way_the_manifests_import_nothing_that_comes_after_them():
    # manifests -> model -> plan -> apply/render: what reads the manifests knows nothing of
    # planning, state, the API client or output.
    later = ("reconcile", "state", "api", "render", "cli")
    found = sorted(
        f"{name} imports {imported}"
        for name, path in _modules().items()
        if name.startswith("surveyctl.manifests")
        for imported in _imports(path, name)
        if imported.split(".")[:2] in (["surveyctl", step] for step in later)
    )
    assert found == []
