"""What tasks declare to a scheduler that places them by resources (issue 30: Ray tasks declared no
resources, so an embedding task could not ask for a GPU)."""

from __future__ import annotations

import pytest

from thresher.config import RunConfig
from thresher.run.calls import TaskCall, TaskResources
from thresher.run.phases import phase_table, task_resources
from thresher.run.ray_engine import ray_task_options

SEMANTIC = {"embed": {"semantic_threshold": 0.9}}


def test_every_phase_declares_one_cpu_and_its_memory():
    config = RunConfig.from_dict(SEMANTIC)
    phases = phase_table(config)
    assert {"scan", "cluster", "write", "embed", "semantic", "vectors"} <= set(phases)  # the stages' phases too
    for phase in phases.values():
        resources = task_resources(phase, config)
        assert resources.cpus == 1.0 and resources.gpus == 0.0
        assert 128 <= phase.memory_mib <= 2048  # every phase has a measured bound
        assert resources.memory_bytes == phase.memory_mib << 20
    assert task_resources(phases["scan"], config).memory_bytes == 512 << 20
    assert "embed" not in phase_table(RunConfig())  # a stage that is off adds no phase


def test_an_embedding_task_asks_for_a_gpu_only_when_told_to_run_on_one():
    cuda = RunConfig.from_dict({"embed": {**SEMANTIC["embed"], "device": "cuda"}})
    phases = phase_table(cuda)
    assert task_resources(phases["embed"], cuda).gpus == 1.0
    assert task_resources(phases["vectors"], cuda).gpus == 0.0  # copies vectors: no encoder
    auto = RunConfig.from_dict({"embed": {**SEMANTIC["embed"], "device": "auto"}})
    assert task_resources(phase_table(auto)["embed"], auto).gpus == 0.0


def test_ray_options_name_what_was_declared():
    assert ray_task_options(TaskResources()) == {"num_cpus": 1.0}
    assert ray_task_options(TaskResources(cpus=2.0, gpus=0.5, memory_bytes=3 << 20)) == {
        "num_cpus": 2.0, "num_gpus": 0.5, "memory": 3 << 20}


def test_a_ray_task_runs_with_the_resources_it_declared():
    ray = pytest.importorskip("ray")
    from thresher.run.ray_engine import RayEngine

    engine = RayEngine(workers=2)
    try:
        call = TaskCall(lambda: ray.get_runtime_context().get_assigned_resources(), (), "resources",
                        resources=TaskResources(cpus=1.0, memory_bytes=64 << 20))
        (assigned,) = engine.run([call])
    finally:
        engine.close()
    assert assigned["CPU"] == 1.0
    assert assigned["memory"] == 64 << 20
