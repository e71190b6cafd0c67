"""Corpus stages with phases of their own: the protocol a stage implements to decide over the whole
corpus after clustering (semantic dedup, a plugin's corpus-wide rule), and what the build's runner
gives it.

The key-based corpus stages (`thresher.core.stages.CorpusStage`: exact and near dedup) share the
scan, group, verify and cluster phases. A **phased stage** plans and runs tasks of its own over the
documents kept so far, in phases it declares (`StagePhase`: a name, an importable task function and
the type its completion markers decode to), through the `PhaseDriver` the runner hands it. It
writes its drops per partition into the work dir's decisions file for it
(`WorkDir.stage_decisions(name, p)`: one `clusters.Decision` JSON line per dropped document,
in ordinal order), and the write task applies every stage's decisions after the cluster phase's,
in table order, without knowing what the stages are. After the shards are written it may add files
beside them and a section to the manifest (`after_write`).

The runner (`thresher.run.phases.phased_stages`) knows none of them by name: they come from the
stage table (`thresher.pipeline.PHASED_STAGES`, a registry with entry-point plugins in the group
`thresher.corpus_stages`).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable


@dataclass(frozen=True, slots=True)
class StagePhase:
    """One phase a phased stage adds to the build. `task(ctx, *args)` must be importable by name
    (pool and Ray workers receive it by reference) and return a `result`, which must have
    `to_json()` and `from_json(data)` (its completion marker). `memory_mib` and `gpu(config)` are
    what each task declares to a scheduler that places tasks by resources (Ray)."""

    name: str
    task: Callable[..., Any]
    result: type
    memory_mib: int = 512
    gpu: Callable[[Any], bool] | None = None


class PhaseDriver(Protocol):
    """What a phased stage sees of the build's phase runner."""

    @property
    def config(self) -> Any: ...  # the build's RunConfig

    def call(self, phase: str, task_id: str, *args: Any, weight: float | None = None) -> Any:
        """A task of `phase` with its arguments (after the task context), for `phase`'s list."""
        ...

    def phase(self, name: str, calls: list[Any]) -> list[Any]:
        """Run a phase's tasks (resumable: a task with a completion marker is not run again) and
        return their results in the order of `calls`."""
        ...


@dataclass(frozen=True, slots=True)
class KeptCorpus:
    """The documents a phased stage decides over: per input partition (by index, in order), how
    many documents are kept so far, after the cluster phase and the phased stages `decided_by` (in
    order; their decisions files apply: `thresher.run.cluster.iter_kept` reads what is left). A
    stage must drop only documents kept so far: the write task counts every stage's drops."""

    partitions: tuple[int, ...]
    kept: tuple[int, ...]
    decided_by: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class StageOutcome:
    """What a phased stage decided: per partition, how many documents it dropped (the lines of its
    decisions file for that partition), and whatever it keeps for `after_write`."""

    dropped: dict[int, int]
    state: Any = None


@dataclass(frozen=True, slots=True)
class AddedFile:
    """A file a phased stage wrote beside the shards (listed, checksummed and published like them)."""

    path: str  # relative to the output folder
    records: int
    bytes: int
    sha256: str


@dataclass(frozen=True, slots=True)
class AfterWrite:
    """What a phased stage adds to the dataset once its shards are assembled."""

    files: list[AddedFile] = field(default_factory=list)
    section: dict[str, Any] | None = None  # the manifest's entry under the stage's `section` key


@runtime_checkable
class PhasedStage(Protocol):
    """A corpus stage that runs phases of its own after clustering (see the module docstring)."""

    name: str  # names its decisions files and its tasks
    section: str  # the manifest key of its `AfterWrite.section`
    phases: Sequence[StagePhase]

    def run(self, driver: PhaseDriver, corpus: KeptCorpus) -> StageOutcome: ...

    def after_write(
        self, driver: PhaseDriver, corpus: KeptCorpus, shards: Sequence[Any], outcome: StageOutcome
    ) -> AfterWrite:
        """`shards`: the assembled shards in order (each with `path` and `records`); `corpus`: the
        documents kept once every stage decided, per partition, in the shards' order."""
        ...
