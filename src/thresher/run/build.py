"""`build`: plan a run, execute its phases on an engine, finalize the dataset.

The driver only plans, hands tasks to the engine and assembles results; it is split by job:
`thresher.run.output` (where the output and the stage folder are, publishing), `thresher.run.plan`
(the work plan and its resume check), `thresher.run.phases` (the phases in order), and
`thresher.run.finalize` (stats, rejects, card, manifest). The work itself is in the task modules
(`thresher.run.task` lists them).

Completion markers make a rerun of the same command resume where it stopped; the manifest is
removed first and written last, so an interrupted build never leaves a manifest that claims
completeness. The output may be a local folder or an fsspec URL (`s3://bucket/prefix`); see
`thresher.run.output`.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from thresher.config import RunConfig
from thresher.core.stats import Stats
from thresher.run import store_build
from thresher.run.finalize import Finished, finalize
from thresher.run.heap import trim_heap
from thresher.run.lifecycle import complete_finish, finish, plan_digest
from thresher.run.output import OutputPlace, check_output, claim_work_dir, place_output
from thresher.run.phases import (
    DEFAULT_TASKS,
    PhaseRunner,
    ProgressSink,
    TaskTable,
    after_write,
    cluster_phase,
    phased_stages,
    publish_phase,
    scan_and_group,
    signals_phase,
    write_phase,
)
from thresher.run.plan import prepare_workdir, work_plan
from thresher.run.preflight import preflight
from thresher.run.safety import (
    check_no_links,
    check_not_nested,
    listed_shards,
    own_manifest,
    remember_previous_shards,
    remove_own_card,
)
from thresher.run.task import TaskContext
from thresher.run.workdir import BuildLock
from thresher.stage_hooks import check_corpus_stages, needs_preparation, prepare_stages
from thresher.write.manifest import MANIFEST


@dataclass
class BuildResult:
    output: Path | str  # a folder, or the URL as given
    manifest: dict[str, Any]
    stats: Stats

    @property
    def ok(self) -> bool:
        return self.stats.reconciles()


@dataclass(frozen=True, slots=True, kw_only=True)
class BuildRequest:
    """One build, as `build` was asked for it."""

    inputs: list[str]
    place: OutputPlace
    config: RunConfig
    rejects: str | Path | None
    overwrite: bool
    on_progress: ProgressSink | None
    tasks: TaskTable
    carried: Stats | None = None
    published: RunConfig | None = None


def build(
    inputs: Sequence[str],
    output: str | Path,
    config: RunConfig | None = None,
    *,
    rejects: str | Path | None = None,
    overwrite: bool = False,
    on_progress: ProgressSink | None = None,
    tasks: TaskTable = DEFAULT_TASKS,
    carried: Stats | None = None,
    published: RunConfig | None = None,
) -> BuildResult:
    """Build a dataset from `inputs` into `output`, a folder or an fsspec URL. See the module
    docstring for the guarantees. `tasks` replaces the functions phases run (fault injection in
    tests; see `thresher.run.phases.TaskTable`). `carried`: counts added to the build's own (a
    replay's, of what its input no longer holds: `thresher.run.replay`). `published`: the config the
    manifest, its hash and the card name instead of `config` (a replay's: the settings of the fresh
    build it stands for, which differ only in how the input is read)."""
    config = config or RunConfig()
    preflight(inputs, output, config, rejects=rejects)  # before any task: inputs, extras, outputs
    check_corpus_stages(config)  # the embedding encoder
    place = place_output(output, config.exec.work_dir)
    check_not_nested(inputs, place.target)
    with store_build.held(place):  # a work dir at a URL: its lease and a local mirror of it
        finished = _complete_finish(place, list(inputs), config, rejects is not None)
        store_build.after_finish_check(place)
        if finished is not None:
            return finished  # this very build had finished; a kill stopped only its clean-up
        check_output(place, overwrite=overwrite)
        place.work.root.mkdir(parents=True, exist_ok=True)
        with BuildLock(place.work):
            if place.publishes:
                claim_work_dir(place, overwrite)
            request = BuildRequest(
                inputs=list(inputs), place=place, config=config, rejects=rejects, overwrite=overwrite,
                on_progress=on_progress, tasks=tasks, carried=carried, published=published,
            )
            return _build_locked(request)


def _complete_finish(place: OutputPlace, inputs: list[str], config: RunConfig, rejects: bool) -> BuildResult | None:
    """Complete the clean-up of a finished build a kill interrupted (`thresher.run.lifecycle`); when
    that build had the plan of this one, the dataset it finished is this build's result."""
    previous = own_manifest(place.target)
    complete = previous is not None and previous.get("complete") is True
    check_no_links(place.stage)  # nothing is deleted through a link
    finished = complete_finish(place.stage, place.work, complete, publishes=place.publishes)
    if not finished or not complete or previous is None or "-" in inputs:
        return None  # standard input cannot be compared without reading it
    _, plan = work_plan(inputs, config, write_rejects=rejects)
    if not any(f.same_plan(plan_digest(plan)) for f in finished):
        return None
    try:
        stats = Stats.from_dict(json.loads(place.target.open("stats.json").read().decode("utf-8")))
    except (OSError, ValueError, AttributeError):
        return None  # a damaged stats.json: the finished-dataset rule decides
    return BuildResult(place.shown, previous, stats)


def _with_list_folder(config: RunConfig, folder: Path) -> RunConfig:
    """`config` with its compiled URL lists and benchmark index in `folder` unless it names a folder
    (not hashed: where they are compiled changes no output)."""
    urls = config.quality.urls
    if urls.configured and urls.compiled_dir is None:
        config = replace(config, quality=replace(config.quality, urls=replace(urls, compiled_dir=str(folder))))
    if config.decontam.enabled and config.decontam.compiled_dir is None:
        config = replace(config, decontam=replace(config.decontam, compiled_dir=str(folder)))
    return config


def _build_locked(request: BuildRequest) -> BuildResult:
    place, config = request.place, request.config
    work = place.work
    # An interrupted run must never leave a manifest claiming completeness: remove it first, after
    # noting the shards it listed (the only files of the output this build may delete).
    previous = own_manifest(place.target)
    listed = listed_shards(previous) if previous is not None else []
    place.target.remove(MANIFEST)
    remove_own_card(place.target)  # after the manifest: a card without one never claims completeness
    config = _with_list_folder(config, work.path("lists"))
    ctx = TaskContext(config, str(work.root), request.rejects is not None, store_url=place.store)
    runner = PhaseRunner(
        work, ctx, request.on_progress, request.tasks
    )  # first: a pool's workers start while the driver plans
    try:
        stored_plan = store_build.plan_bytes(place)
        _, partitions = prepare_workdir(
            work, request.inputs, config, write_rejects=request.rejects is not None, overwrite=request.overwrite
        )
        remember_previous_shards(work, listed)  # after the plan: a changed plan resets the work dir
        # e.g. large URL lists compiled once, before the workers read them: in a process of its own
        # where the engine has one (what compiling them leaves allocated dies with it), else here,
        # its freed heap given back so that it stays out of the driver's peak
        run_apart = getattr(runner.engine, "run_apart", None)
        if needs_preparation(config) and (run_apart is None or not run_apart(prepare_stages, config)):
            prepare_stages(config)
            trim_heap()
        store_build.push_plan(place, stored_plan)  # an object work store: its plan and the driver's files
        grouped = scan_and_group(runner, partitions)
        clustered = phased_stages(runner, cluster_phase(runner, grouped))
        shards, write_stats = write_phase(runner, clustered)
        stats = grouped.stats + write_stats
        if request.carried is not None:
            stats += request.carried
        added, sections = after_write(runner, clustered, shards)
        if config.output.signals:
            signal_files, sections["signals"] = signals_phase(runner, clustered)
            added += signal_files
        written = shards + added  # the files beside the manifest this build wrote (published, cleaned)
        if place.publishes:
            publish_phase(runner, written, place.stage, place.location)
    finally:
        runner.close()
    aggregator = runner.aggregator
    aggregator.start_phase("finalize", 1)
    for phase, seconds in aggregator.phase_seconds.items():
        stats.add_time(f"phase.{phase}", seconds)  # wall clock per phase, for scaling models
    done = Finished(config=request.published or config, inputs=request.inputs, partitions=partitions,
                    shards=shards, stats=stats, sections=sections, beside=added)
    manifest = finalize(place.target, work, done, request.rejects)
    aggregator.task_done()
    aggregator.emit(final=True)
    if not config.exec.keep_work:
        plan = plan_digest(json.loads(work.path("plan.json").read_text(encoding="utf-8")))
        staged = [s.path for s in written] if place.publishes else []
        owned = place.publishes and place.owned
        store_build.mark_finished(place, plan, staged, owned)
        finish(place.stage, work, plan, staged, owned_stage=owned)
        store_build.sweep_store(place)
    return BuildResult(place.shown, manifest, stats)
