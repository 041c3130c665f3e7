"""The checks a reviewer makes of the CLI's structure: its packages (cli, stack, store, evidence,
archive, tools and the shared modules) import each other without cycles, every import counted,
those inside functions too (docs/architecture.md, "Where the code lives")."""

from __future__ import annotations

import ast

from auditpipe import paths

ROOT = paths.REPO / "cli" / "auditpipe"


def unit_of(module: str) -> str:
    """auditpipe.stack.components.flink -> stack; auditpipe.config -> config."""
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
