"""Layers that only point down (issue 30): the run layer (driver, phases, engines, tasks) imports no
stage package, counting every import, lazy ones too. What it needs of the stages goes through the
stage table and hooks (`thresher.pipeline`, `thresher.stage_hooks`).

The imports still crossing are listed below with what replaces them; the list may only shrink:
a new crossing fails, and so does an entry that no longer crosses (take it off the list).
"""

from __future__ import annotations

from tests.unit.test_import_cycles import import_graph

RUN = "thresher.run"
STAGE_PACKAGES = ("embed", "dedup", "decontam", "pii", "classify", "lang", "quality", "extract", "consent")

# (importer, imported): still to move behind the corpus-stage protocol (issue 30)
STILL_CROSSING: set[tuple[str, str]] = set()


def crossings() -> set[tuple[str, str]]:
    graph = import_graph()
    stage_prefixes = tuple(f"thresher.{p}" for p in STAGE_PACKAGES)
    return {
        (module, target)
        for module, targets in graph.items()
        if module == RUN or module.startswith(RUN + ".")
        for target in targets
        if target in stage_prefixes or target.startswith(tuple(p + "." for p in stage_prefixes))
    }


def test_run_layer_imports_no_new_stage_package():
    new = crossings() - STILL_CROSSING
    assert not new, f"run/ imports a stage package (use thresher.pipeline or thresher.stage_hooks): {sorted(new)}"


def test_the_list_of_crossings_still_to_remove_is_current():
    gone = STILL_CROSSING - crossings()
    assert not gone, f"no longer crossing: remove from STILL_CROSSING: {sorted(gone)}"
