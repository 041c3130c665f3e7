"""The checks a reviewer makes of the CLI's structure: its packages (cli, stack, store, evidence,
archive, tools and the shared modules) import each other without cycles, and so do its files, every
import counted, those inside functions too: an import moved into a function to dodge a circle is
still one (docs/architecture.md, "Where the code lives")."""

from __future__ import annotations

import ast
from pathlib import Path

from auditpipe import paths

ROOT = paths.REPO / "cli" / "auditpipe"


def unit_of(module: str) -> str:
    """auditpipe.stack.flink.job -> stack; auditpipe.config -> config."""
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else "auditpipe"


def dependencies() -> dict[str, set[str]]:
    edges: dict[str, set[str]] = {}
    for f in ROOT.rglob("*.py"):
        module = ".".join(("auditpipe", *f.relative_to(ROOT).with_suffix("").parts)).removesuffix(".__init__")
        source = unit_of(module)
        for node in ast.walk(ast.parse(f.read_text())):
            targets = []
            if isinstance(node, ast.ImportFrom) and node.module and node.module.split(".")[0] == "auditpipe":
                targets = [f"auditpipe.{a.name}" for a in node.names] if node.module == "auditpipe" else [node.module]
            elif isinstance(node, ast.Import):
                targets = [a.name for a in node.names if a.name.split(".")[0] == "auditpipe"]
            for t in targets:
                if unit_of(t) not in (source, "__version__"):
                    edges.setdefault(source, set()).add(unit_of(t))
    return edges


def modules(root: Path = ROOT, package: str = "auditpipe") -> dict[str, Path]:
    """Every module under ``root``, by dotted name (a package by its ``__init__``'s)."""
    return {".".join((package, *f.relative_to(root).with_suffix("").parts)).removesuffix(".__init__"): f
            for f in root.rglob("*.py")}


def module_dependencies(root: Path = ROOT, package: str = "auditpipe") -> dict[str, set[str]]:
    """Which module imports which, file by file: ``from a.b import c`` is ``a.b.c`` where that is a
    module, else ``a.b``."""
    found = modules(root, package)
    edges: dict[str, set[str]] = {}
    for name, f in found.items():
        for node in ast.walk(ast.parse(f.read_text())):
            targets = []
            if isinstance(node, ast.ImportFrom) and node.module and node.module.split(".")[0] == package:
                targets = [f"{node.module}.{a.name}" if f"{node.module}.{a.name}" in found else node.module
                           for a in node.names]
            elif isinstance(node, ast.Import):
                targets = [a.name for a in node.names if a.name.split(".")[0] == package]
            edges.setdefault(name, set()).update(t for t in targets if t != name and t in found)
    return edges


def cycle(edges: dict[str, set[str]]) -> list[str] | None:
    state: dict[str, int] = {}

    def visit(node: str, path: list[str]) -> list[str] | None:
        state[node] = 1
        for nxt in sorted(edges.get(node, ())):
            if state.get(nxt) == 1:
                return path + [node, nxt]
            if nxt not in state and (found := visit(nxt, path + [node])):
                return found
        state[node] = 2
        return None

    for node in sorted(edges):
        if node not in state and (found := visit(node, [])):
            return found
    return None


def test_the_clis_packages_import_each_other_without_cycles():
    assert cycle(dependencies()) is None


def test_the_clis_files_import_each_other_without_circles():
    found = cycle(module_dependencies())
    assert found is None, " -> ".join(found or [])


def test_the_check_finds_a_circle_between_files_also_through_an_import_inside_a_function(tmp_path):
    pkg = tmp_path / "shop"
    (pkg / "orders").mkdir(parents=True)
    (pkg / "__init__.py").write_text("")
    (pkg / "orders" / "__init__.py").write_text("from shop.orders.base import Order\n")
    (pkg / "orders" / "base.py").write_text("class Order:\n    pass\n")
    (pkg / "orders" / "tax.py").write_text("from shop.orders import base\n")
    assert cycle(module_dependencies(pkg, "shop")) is None
    (pkg / "orders" / "base.py").write_text("def total():\n    from shop.orders import tax\n    return tax\n")
    found = cycle(module_dependencies(pkg, "shop"))
    assert found is not None and found[-2:] in (["shop.orders.base", "shop.orders.tax"],
                                                 ["shop.orders.tax", "shop.orders.base"]), found


def test_the_check_finds_a_cycle():
    assert cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) is not None
    assert cycle({"a": {"b"}, "b": {"c"}}) is None


def test_only_the_command_groups_and_the_demo_reach_across_the_domain():
    """The domain packages stand alone: evidence, archive and store know nothing of the stack or the
    commands, and nothing but the commands knows the commands."""
    edges = dependencies()
    for unit in ("evidence", "archive", "store", "tools"):
        assert not edges.get(unit, set()) & {"stack", "cli", "demo"}, (unit, edges.get(unit))
    assert [u for u, deps in edges.items() if "cli" in deps and u not in ("__main__",)] == []
