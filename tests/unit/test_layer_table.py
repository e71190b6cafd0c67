"""The layer table (issue 30; docs/architecture.md, "Layers"): every module of the package belongs to
one layer, and a module imports only from its own layer or from those below it. Every import counts
(module level or deferred inside a function, not those under `if TYPE_CHECKING:`), and so do the
modules reached by name through the two import tables: the CLI's verb table
(`thresher.cli.VERB_MODULES`) and the package face's lazy exports (`thresher._EXPORTS`).

The imports that still point up are listed in ALLOWED_UPWARD, each with why; the list may only
shrink: a new upward import fails, and so does an entry that no longer exists (take it off the list).

Run `python tests/unit/test_layer_table.py` to print every import that crosses layers, upward first.
"""

from __future__ import annotations

import ast
import sys
from pathlib import Path

if __name__ == "__main__":  # run as a script: the repository root on the path, for `tests.`
    sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from tests.unit.test_import_cycles import import_graph, module_names

# Lowest first: (layer, the modules and packages in it). A package covers its submodules.
LAYERS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("core", (
        "thresher.version", "thresher.core", "thresher.registry", "thresher.compiled", "thresher.clusters",
        "thresher.decided", "thresher.stars", "thresher.mapped_file",
        "thresher.batching", "thresher.paths", "thresher.demo",
    )),
    ("stages", tuple(f"thresher.{p}" for p in (
        "read", "fetch", "extract", "normalize", "lang", "quality", "classify", "pii", "decontam", "dedup",
        "embed", "write", "pack", "consent", "select",
    ))),
    ("assembly", ("thresher.config", "thresher.exec_config", "thresher.pipeline", "thresher.stage_hooks",
                  "thresher.stage_cache", "thresher.replay_chain")),
    ("run", ("thresher.run",)),
    ("report", ("thresher.report",)),
    ("commands", ("thresher.commands",)),
    # the package face (`thresher/__init__.py`, the library API, lazily) and the command line
    ("entry", ("thresher", "thresher.cli", "thresher.__main__")),
)

# (importer, imported) pointing up the table, each still to move
ALLOWED_UPWARD: dict[tuple[str, str], str] = {
    ("thresher.exec_config", "thresher.run.engine_registry"):
        "exec.engine is checked against the engine registry, which lives in run/ beside the engines",
    ("thresher.pipeline", "thresher.run.deadline"):
        "the per-document time bound the pipeline arms around each document; belongs below the run layer",
    ("thresher.embed.dataset", "thresher.run.heap"):
        "returns a pool worker's freed heap after a vectors task; a process helper to move down to core",
    ("thresher.embed.phase", "thresher.run.cluster"):
        "semantic dedup's tasks are run-layer tasks kept in embed: they run the generic cluster phase",
    ("thresher.embed.phase", "thresher.run.records"):
        "semantic dedup's tasks read the run's key records (see embed.phase -> run.cluster)",
    ("thresher.embed.phase", "thresher.run.task"):
        "semantic dedup's tasks are run tasks (see embed.phase -> run.cluster)",
    ("thresher.embed.phase", "thresher.run.workdir"):
        "semantic dedup's tasks write in the run's work folder (see embed.phase -> run.cluster)",
    ("thresher.embed.rows", "thresher.run.workdir"):
        "the embed phases' work files are named inside the run's work folder",
    ("thresher.embed.semantic_phase", "thresher.run.task"):
        "semantic dedup's tasks are run tasks (see embed.phase -> run.cluster)",
    ("thresher.embed.semantic_phase", "thresher.run.workdir"):
        "semantic dedup's tasks write in the run's work folder (see embed.phase -> run.cluster)",
    ("thresher.embed.stage", "thresher.config"):
        "the semantic stage is built from the whole RunConfig (embed and dedup sections) by the stage table",
    ("thresher.run.finalize", "thresher.report.index"):
        "the build writes the document index `thresher explain` reads; the writer belongs with the run",
    ("thresher.run.observe", "thresher.report.sample"):
        "the build's bounded samples (BottomK) are shared with report/check/compare; a core helper to move",
}

# the tables that name modules to import (module, table name)
NAMED_IMPORT_TABLES = (("thresher.cli", "VERB_MODULES"), ("thresher", "_EXPORTS"))


def layer_of(module: str) -> str | None:
    """The layer whose longest listed name is `module` or a package above it (None: in no layer). The
    package root `thresher` stands for its `__init__.py` alone."""
    best: tuple[int, str] | None = None
    for layer, members in LAYERS:
        for member in members:
            covers = module == member or (member != "thresher" and module.startswith(member + "."))
            if covers and (best is None or len(member) > best[0]):
                best = (len(member), layer)
    return best[1] if best else None


RANK = {layer: rank for rank, (layer, _) in enumerate(LAYERS)}


def named_imports() -> dict[str, set[str]]:
    """module -> the modules its import tables name (the values of a dict literal, "module" strings)."""
    names = module_names()
    found: dict[str, set[str]] = {}
    for module, table in NAMED_IMPORT_TABLES:
        tree = ast.parse(names[module].read_text(encoding="utf-8"))
        for node in tree.body:
            if isinstance(node, ast.AnnAssign):
                target, value = node.target, node.value
            elif isinstance(node, ast.Assign) and len(node.targets) == 1:
                target, value = node.targets[0], node.value
            else:
                continue
            if isinstance(target, ast.Name) and target.id == table and value is not None:
                found.setdefault(module, set()).update(ast.literal_eval(value).values())
        assert module in found, f"{module}.{table} is not a dict literal any more: update NAMED_IMPORT_TABLES"
    return found


def full_graph() -> dict[str, set[str]]:
    graph = import_graph()
    for module, targets in named_imports().items():
        graph[module] |= targets
    return graph


def crossings(graph: dict[str, set[str]]) -> tuple[set[tuple[str, str]], set[tuple[str, str]]]:
    """(upward, downward) imports between different layers."""
    up, down = set(), set()
    for module, targets in graph.items():
        for target in targets:
            a, b = layer_of(module), layer_of(target)
            if a is None or b is None or a == b:
                continue
            (up if RANK[a] < RANK[b] else down).add((module, target))
    return up, down


def test_every_module_has_a_layer() -> None:
    graph = full_graph()
    assert len(graph) > 50  # the whole package was read
    unplaced = sorted(m for m in graph if layer_of(m) is None)
    assert not unplaced, f"modules in no layer: add them to LAYERS (and docs/architecture.md): {unplaced}"


def test_verb_table_names_command_modules() -> None:
    names = module_names()
    for module in named_imports()["thresher.cli"]:
        assert module in names and layer_of(module) == "commands", module


def test_no_new_upward_import() -> None:
    up, _ = crossings(full_graph())
    new = sorted(up - ALLOWED_UPWARD.keys())
    assert not new, f"imports pointing up the layer table (docs/architecture.md, Layers): {new}"


def test_the_allowed_upward_imports_are_current() -> None:
    up, _ = crossings(full_graph())
    gone = sorted(ALLOWED_UPWARD.keys() - up)
    assert not gone, f"no longer imported upward: remove from ALLOWED_UPWARD: {gone}"


def test_the_firm_rules_have_no_exceptions() -> None:
    """Whatever else is allowed: no command imports the CLI, and core imports no stage package."""
    for importer, imported in ALLOWED_UPWARD:
        assert not (layer_of(importer) == "commands" and layer_of(imported) == "entry"), (importer, imported)
        assert layer_of(importer) != "core", (importer, imported)
    graph = full_graph()
    assert not any(t == "thresher.cli" or t.startswith("thresher.cli.") for m, ts in graph.items()
                   if layer_of(m) == "commands" for t in ts)


def test_a_planted_upward_import_is_found() -> None:
    up, down = crossings({"thresher.core.errors": {"thresher.run.task"}, "thresher.cli": {"thresher.core.errors"}})
    assert up == {("thresher.core.errors", "thresher.run.task")}
    assert down == {("thresher.cli", "thresher.core.errors")}


if __name__ == "__main__":
    upward, downward = crossings(full_graph())
    for importer, imported in sorted(upward):
        print(f"UP   {layer_of(importer)} -> {layer_of(imported)}: {importer} -> {imported}")
    for importer, imported in sorted(downward):
        print(f"down {layer_of(importer)} -> {layer_of(imported)}: {importer} -> {imported}")
