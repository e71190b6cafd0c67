"""The partitioned cluster phase's tasks (`thresher.run.cluster_rounds`), run without a build on
random graphs, write the single cluster task's decisions byte for byte: every keep policy, ties in
length and quality, duplicate edges, self loops, both stages, members of many input partitions."""

from __future__ import annotations

import tempfile

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

pytest.importorskip("numpy")

from tests.conftest import local_config  # noqa: E402

from thresher.clusters import Node  # noqa: E402
from thresher.pipeline import build_corpus_stages  # noqa: E402
from thresher.run.cluster import cluster_task  # noqa: E402
from thresher.run.cluster_rounds import run_rounds  # noqa: E402
from thresher.run.phases import BUILD_PHASES  # noqa: E402
from thresher.run.records import pack_edge  # noqa: E402
from thresher.run.task import TaskContext  # noqa: E402
from thresher.run.workdir import WorkDir  # noqa: E402


class InProcess:
    """A phase driver that runs each task at once, in this process."""

    def __init__(self, ctx: TaskContext) -> None:
        self.ctx = ctx

    @property
    def config(self):
        return self.ctx.config

    def call(self, phase, task_id, *args, weight=None):
        return next(p.task for p in BUILD_PHASES if p.name == phase), args

    def phase(self, name, calls):
        return [fn(self.ctx, *args) for fn, args in calls]


def node(index: int, length: int, quality: float) -> Node:
    ordinal = ((index % 5) << 40) | ((index // 5) << 8)  # members of 5 input partitions
    return Node(ordinal, (index * 7919 + 13).to_bytes(8, "big"), length, quality)


def decisions(work: WorkDir) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(work.path("decisions").glob("*.jsonl"))}


edge = st.tuples(st.integers(0, 39), st.integers(0, 39), st.sampled_from([0.7, 0.75, 0.8125, 0.9, 1.0]))


@settings(max_examples=100, deadline=None)
@given(edges=st.lists(edge, min_size=1, max_size=90), partitions=st.integers(2, 5),
       keep=st.sampled_from(["first", "longest", "best_quality"]), files=st.integers(1, 3),
       lengths=st.lists(st.sampled_from([100, 200, 300]), min_size=40, max_size=40),
       qualities=st.lists(st.sampled_from([0.0, 0.25, 0.5]), min_size=40, max_size=40))
def test_partitioned_tasks_write_the_single_tasks_decisions(edges, partitions, keep, files, lengths, qualities):
    config = local_config(dedup={"keep": keep})
    stages = build_corpus_stages(config)
    with tempfile.TemporaryDirectory() as tmp:
        work = WorkDir(tmp)
        paths = [work.edges(stages[f % 2].name, f) for f in range(files)]
        for path in paths:
            path.parent.mkdir(parents=True, exist_ok=True)
        outs = [open(p, "wb") for p in paths]
        for i, (a, b, sim) in enumerate(edges):
            f = i % files  # an edge's stage is its file's: exact for even files, near for odd
            outs[f].write(pack_edge(node(a, lengths[a], qualities[a]), node(b, lengths[b], qualities[b]), sim))
        for out in outs:
            out.close()
        ctx = TaskContext(config, tmp, False)
        single = cluster_task(ctx)
        expected = decisions(work)
        for path in work.path("decisions").glob("*.jsonl"):
            path.unlink()
        run = run_rounds(InProcess(ctx), work, [(f % 2, p) for f, p in enumerate(paths)], partitions)
        assert decisions(work) == expected
        assert run.result == single
