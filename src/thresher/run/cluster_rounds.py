"""The cluster phase over partitions (`--dedup-cluster-partitions N`, N > 1): the same decisions as
the single cluster task (`thresher.run.cluster`), byte for byte, from tasks that each hold one
partition's share of the graph rather than the whole graph.

Phases, each a list of ordinary tasks (so they run in-process, in the pool and on Ray alike, and a
resumed build skips those with markers):

  cluster-split    one per ~256 MiB of edge files: every edge, once from each end, into the
                   round-0 file of the partition its end hashes to (`thresher.stars.partition_of`),
                   and a half-edge (the end's id, length, quality; the other end's ordinal and id;
                   stage; similarity) into the node partition of that end
  cluster-round    per round, one per partition: `thresher.stars.large_star` (even rounds) or
                   `small_star` (odd), its output edges routed to the next round's partitions. A
                   large-star round also writes each node's m(u), routed to its node partition; the
                   first large-star round in which no partition finds a node out of star form is
                   the last, and those are the component labels (each component's lowest ordinal,
                   the union-find's root)
  cluster-rank     one per node partition: each node's label; per label, the member the keep policy
                   ranks first among this partition's members and their count, sent to the label's
                   partition
  cluster-keepers  one per label partition: per label, the best of those candidates (the keeper)
                   and the member count, sent back to each node partition that asked
  cluster-decide   one per node partition: each node's best edge (`thresher.clusters.attribute`'s
                   order: direct to the keeper, earlier stage, higher similarity, lower neighbour)
                   and the decisions files of its input partitions, in ordinal order

A node partition holds whole input partitions (a hash of the partition index), so each decisions
file is written by one task, as the write phase reads it. Files live under `cluster/nN/` in the work
dir; a round's input files are removed once the round after it has finished. Needs NumPy.
"""

from __future__ import annotations

import contextlib
import math
import os
import shutil
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from thresher.clusters import Decision, keep_policy
from thresher.core.document import Drop
from thresher.core.phased import PhaseDriver
from thresher.pipeline import build_corpus_stages
from thresher.read.base import ordinal_partition
from thresher.run.cluster_files import Layout, Outputs, pairs_array, read_array, read_pairs, write_by, write_routed
from thresher.run.records import EDGE
from thresher.run.results import ClusterResult, KeepersResult, RankResult, RoundResult, SplitResult
from thresher.run.task import TaskContext
from thresher.run.workdir import WorkDir
from thresher.write.atomic import atomic_open, dumps_line

# When `--dedup-cluster-partitions` is not set: the single task up to SINGLE_TASK_EDGES edges (~80 B
# per colliding document; the benchmark's graphs have 1.6 edges per document, so ~0.8 GB at 16M
# edges, within the 1 GiB a cluster task declares), then one partition per EDGES_PER_PARTITION edges:
# a partition's tasks peak at ~250 B per edge of the partition (the star rounds' sorts and the
# decide task's half-edges; benchmarks/cluster_partitions.py), ~0.5 GB at 2M.
SINGLE_TASK_EDGES = 16_000_000
EDGES_PER_PARTITION = 2_000_000
SPLIT_BYTES = 256 << 20  # edge-file bytes per split task
READ_RECORDS = 1 << 18  # edge records read at a time (13.6 MB)


def edge_dtype() -> Any:
    import numpy as np

    return np.dtype([("oa", ">u8"), ("ia", ">u8"), ("la", ">u4"), ("qa", ">f4"),
                     ("ob", ">u8"), ("ib", ">u8"), ("lb", ">u4"), ("qb", ">f4"), ("sim", ">f4")])


def half_dtype() -> Any:
    """A half-edge: one end x (ordinal, id, length, quality), the other end y (ordinal, id), the
    verifying stage's index and the similarity as stored (float32)."""
    import numpy as np

    return np.dtype([("x", "<u8"), ("xid", "<u8"), ("xlen", "<u4"), ("xq", "<f4"),
                     ("y", "<u8"), ("yid", "<u8"), ("stage", "u1"), ("sim", "<f4")])


def candidate_dtype() -> Any:
    """A label's best member in one node partition (what the keep policy ranks) and its count."""
    import numpy as np

    return np.dtype([("label", "<u8"), ("ordinal", "<u8"), ("id", "<u8"), ("length", "<u4"), ("quality", "<f4"),
                     ("members", "<u8")])


def keeper_dtype() -> Any:
    import numpy as np

    return np.dtype([("label", "<u8"), ("keeper", "<u8"), ("id", "<u8"), ("members", "<u8")])


def node_partition_of(ordinals: Any, partitions: int) -> Any:
    """The node partition of each document: a hash of its input partition, so that one task writes
    each input partition's decisions file."""
    import numpy as np

    from thresher.stars import partition_of

    return partition_of(np.asarray(ordinals, dtype=np.uint64) >> np.uint64(40), partitions)


def auto_partitions(edges: int) -> int:
    return 1 if edges <= SINGLE_TASK_EDGES else math.ceil(edges / EDGES_PER_PARTITION)


def cluster_partitions(setting: int | None, edge_files: Sequence[Path]) -> int:
    """The partitions of the cluster phase: the setting, else from the edge count (`auto_partitions`;
    1, the single task, without NumPy)."""
    if setting is not None:
        return setting
    edges = sum(os.path.getsize(p) for p in edge_files if p.exists()) // EDGE.size
    n = auto_partitions(edges)
    if n > 1:
        try:
            import numpy  # noqa: F401
        except ImportError:
            return 1
    return n


# -- tasks ----------------------------------------------------------------------------------------


def split_task(ctx: TaskContext, partitions: int, s: int, files: list[tuple[int, str]]) -> SplitResult:
    """Split edge files (each with the index of the stage that wrote it) into round 0's adjacency
    files (both directions) and the node partitions' half-edge files."""
    import numpy as np

    layout = Layout(ctx.work, partitions)
    dtype, half = edge_dtype(), half_dtype()
    edges = 0
    with Outputs([layout.split_adj(s, q) for q in range(partitions)]) as adj, \
         Outputs([layout.split_half(s, q) for q in range(partitions)]) as halves:
        for si, name in files:
            with open(name, "rb") as f:
                while raw := f.read(READ_RECORDS * dtype.itemsize):
                    e = np.frombuffer(raw, dtype=dtype)
                    edges += e.size
                    linked = e["oa"] != e["ob"]  # a self loop links nothing (its node stays, as a half-edge)
                    a, b = e["oa"][linked], e["ob"][linked]
                    keys = np.concatenate((a, b))
                    write_routed(adj, partitions, keys, pairs_array(keys, np.concatenate((b, a))))
                    for x, y in (("a", "b"), ("b", "a")):
                        rows = np.empty(e.size, dtype=half)
                        for field, column in (("x", "o"), ("xid", "i"), ("xlen", "l"), ("xq", "q")):
                            rows[field] = e[column + x]
                        rows["y"], rows["yid"], rows["stage"], rows["sim"] = e["o" + y], e["i" + y], si, e["sim"]
                        write_by(halves, partitions, node_partition_of(rows["x"], partitions), rows)
    return SplitResult(edges=edges)


def round_task(ctx: TaskContext, partitions: int, r: int, q: int, splits: int) -> RoundResult:
    """Round r of partition q: large-star when r is even, small-star when odd (`thresher.stars`)."""
    from thresher.stars import large_star, small_star

    layout = Layout(ctx.work, partitions)
    if r == 0:
        sources = [layout.split_adj(s, q) for s in range(splits)]
    else:
        sources = [layout.round_adj(r - 1, src, q) for src in range(partitions)]
    key, nbr = read_pairs(sources)
    edges_in = int(key.size)
    violations = 0
    with Outputs([layout.round_adj(r, q, dst) for dst in range(partitions)]) as out:
        if r % 2 == 0:
            step = large_star(key, nbr)
            del key, nbr
            violations = step.violations
            hi, lo = step.hi, step.lo
            with Outputs([layout.round_labels(r, q, dst) for dst in range(partitions)]) as labels:
                rows = pairs_array(step.nodes, step.labels)
                where = node_partition_of(step.nodes, partitions)
                write_by(labels, partitions, where, rows)
            write_routed(out, partitions, hi, pairs_array(hi, lo))  # a small-star round next: at the higher end
        else:
            hi, lo = small_star(key, nbr)
            del key, nbr
            import numpy as np

            keys = np.concatenate((hi, lo))  # a large-star round next: at both ends
            write_routed(out, partitions, keys, pairs_array(keys, np.concatenate((lo, hi))))
    return RoundResult(edges_in=edges_in, edges_out=int(hi.size), violations=violations)


def _node_table(halves: Any) -> Any:
    """The distinct nodes of half-edges (sorted by ordinal) with what the keep policy ranks."""
    import numpy as np

    _, first = np.unique(halves["x"], return_index=True)
    picked = halves[first]
    rows = np.empty(picked.size, dtype=[("ordinal", "<u8"), ("id", "<u8"), ("length", "<u4"), ("quality", "<f4")])
    for field, column in (("ordinal", "x"), ("id", "xid"), ("length", "xlen"), ("quality", "xq")):
        rows[field] = picked[column]
    return rows


def rank_task(ctx: TaskContext, partitions: int, q: int, splits: int, last_round: int) -> RankResult:
    """Node partition q: each node's label (from the last round; a node with only self loops is
    its own), and per label this partition's best member by the keep policy and its member count."""
    import numpy as np

    layout = Layout(ctx.work, partitions)
    tables = [_node_table(np.fromfile(layout.split_half(s, q), dtype=half_dtype())) for s in range(splits)]
    rows = np.concatenate(tables) if tables else _node_table(np.empty(0, dtype=half_dtype()))
    del tables
    _, first = np.unique(rows["ordinal"], return_index=True)
    rows = rows[first]
    found, label = read_pairs([layout.round_labels(last_round, src, q) for src in range(partitions)])
    order = np.argsort(found)
    found, label = found[order], label[order]
    labels = rows["ordinal"].copy()
    at = np.searchsorted(found, rows["ordinal"])
    hit = at < found.size
    hit[hit] = found[at[hit]] == rows["ordinal"][hit]
    labels[hit] = label[at[hit]]
    with atomic_open(layout.nodes(q), "wb", durable=False) as f:
        f.write(pairs_array(rows["ordinal"], labels).tobytes())
    policy = keep_policy(ctx.config.dedup.keep)
    order = np.lexsort([*policy.sort_keys(rows), labels])  # by label, the member to keep first
    rows, labels = rows[order], labels[order]
    new = np.ones(labels.size, dtype=bool)
    new[1:] = labels[1:] != labels[:-1]
    starts = np.flatnonzero(new)
    best = np.empty(len(starts), dtype=candidate_dtype())
    best["label"] = labels[starts]
    for name in ("ordinal", "id", "length", "quality"):
        best[name] = rows[name][starts]
    best["members"] = np.diff(np.append(starts, labels.size))
    with Outputs([layout.candidates(q, dst) for dst in range(partitions)]) as out:
        write_routed(out, partitions, best["label"], best)
    return RankResult(nodes=int(rows.size), labels=int(best.size))


def keepers_task(ctx: TaskContext, partitions: int, q: int) -> KeepersResult:
    """Label partition q: per label, the keeper (the best of every node partition's candidate) and
    the member count, written back to each node partition that sent a candidate for it."""
    import numpy as np

    layout = Layout(ctx.work, partitions)
    parts = [np.fromfile(layout.candidates(src, q), dtype=candidate_dtype()) for src in range(partitions)]
    cands = np.concatenate(parts)
    source = np.repeat(np.arange(partitions), [p.size for p in parts])
    policy = keep_policy(ctx.config.dedup.keep)
    order = np.lexsort([*policy.sort_keys(cands), cands["label"]])
    cands, source = cands[order], source[order]
    labels = cands["label"]
    new = np.ones(labels.size, dtype=bool)
    new[1:] = labels[1:] != labels[:-1]
    group = np.cumsum(new) - 1
    starts = np.flatnonzero(new)
    members = np.add.reduceat(cands["members"], starts) if starts.size else np.empty(0, dtype=np.uint64)
    rows = np.empty(labels.size, dtype=keeper_dtype())
    rows["label"] = labels
    rows["keeper"] = cands["ordinal"][starts][group]
    rows["id"] = cands["id"][starts][group]
    rows["members"] = members[group]
    with Outputs([layout.keepers(q, dst) for dst in range(partitions)]) as out:
        write_by(out, partitions, source, rows)
    return KeepersResult(clusters=int(starts.size))


ATTRIBUTION = ("x", "y", "yid", "stage", "sim", "indirect")
CHUNK = 1 << 16  # members turned into decisions at a time


def best_edges(cols: dict[str, Any]) -> dict[str, Any]:
    """Per member x, its best edge of `cols` (`thresher.clusters.attribute`'s order: a direct edge
    to the keeper first, then the earlier stage, the higher similarity, the lower neighbour)."""
    import numpy as np

    order = np.lexsort((cols["y"], -cols["sim"], cols["stage"], cols["indirect"], cols["x"]))
    x = cols["x"][order]
    first = np.ones(x.size, dtype=bool)
    first[1:] = x[1:] != x[:-1]
    return {name: cols[name][order[first]] for name in ATTRIBUTION}


def decide_task(ctx: TaskContext, partitions: int, q: int, splits: int) -> ClusterResult:
    """Node partition q: each member's attribution and the decisions files of its input partitions.
    The half-edges are read one split file at a time (the best edge per member in each, then the best
    of those), and decisions are made `CHUNK` members at a time."""
    import numpy as np

    layout = Layout(ctx.work, partitions)
    stages = build_corpus_stages(ctx.config)
    nodes, labels = read_pairs([layout.nodes(q)])  # ascending ordinals
    keep = read_array([layout.keepers(src, q) for src in range(partitions)], keeper_dtype())
    keep = keep[np.argsort(keep["label"])]
    k = keep[np.searchsorted(keep["label"], labels)] if nodes.size else keep[:0]
    del keep, labels
    bests = []
    for s in range(splits):
        halves = np.fromfile(layout.split_half(s, q), dtype=half_dtype())
        keeper_of_x = k["keeper"][np.searchsorted(nodes, halves["x"])]
        attributed = halves["x"] != keeper_of_x  # a keeper is attributed nothing
        cols = {name: halves[name][attributed] for name in ATTRIBUTION[:-1]}
        del halves
        cols["indirect"] = (cols["y"] != keeper_of_x[attributed]).astype(np.uint8)
        bests.append(best_edges(cols))
    best = best_edges({name: np.concatenate([b[name] for b in bests]) for name in ATTRIBUTION}) if bests else {}
    del bests
    # per member (aligned with nodes): its best edge; keepers have none
    at = np.searchsorted(nodes, best["x"]) if best else np.empty(0, dtype=np.int64)
    aligned = {}
    for name, dtype in (("stage", np.uint8), ("sim", np.float32), ("yid", np.uint64), ("indirect", np.uint8)):
        column = np.zeros(nodes.size, dtype=dtype)
        if best:
            column[at] = best[name]
        aligned[name] = column
    del best, at
    dropped: dict[int, int] = {}
    keepers = 0
    current_p = -1
    out: Any = None
    stack = contextlib.ExitStack()
    with stack:
        for lo in range(0, nodes.size, CHUNK):
            hi = lo + CHUNK
            ordinals = nodes[lo:hi].tolist()
            keeper_ords, keeper_ids = k["keeper"][lo:hi].tolist(), k["id"][lo:hi].tolist()
            member_counts = k["members"][lo:hi].tolist()
            stage_of, sim_of = aligned["stage"][lo:hi].tolist(), aligned["sim"][lo:hi].tolist()
            via_of, indirect_of = aligned["yid"][lo:hi].tolist(), aligned["indirect"][lo:hi].tolist()
            for i, ordinal in enumerate(ordinals):
                p = ordinal_partition(ordinal)
                if p != current_p:
                    stack.close()
                    out = stack.enter_context(atomic_open(ctx.work.decisions(p), "wb", durable=False))
                    current_p = p
                    dropped[p] = 0
                cluster = keeper_ids[i].to_bytes(8, "big").hex()
                if ordinal == keeper_ords[i]:
                    keepers += 1
                    decision = Decision(ordinal=ordinal, cluster=cluster, duplicates=member_counts[i] - 1)
                else:
                    stage = stages[stage_of[i]]
                    detail: dict[str, Any] = {"kept_id": cluster, "cluster": cluster}
                    if indirect_of[i]:
                        detail["via_id"] = via_of[i].to_bytes(8, "big").hex()
                    drop = Drop(stage.name, stage.reason, value=round(sim_of[i], 4), limit=stage.threshold,
                                detail=detail)
                    decision = Decision(ordinal=ordinal, cluster=cluster, drop=drop)
                    dropped[p] += 1
                out.write(dumps_line(decision.to_json()))
    return ClusterResult(dropped=dropped, clusters=keepers, nodes=int(nodes.size))


# -- the driver -----------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class RoundsRun:
    """What the partitioned cluster phase did: its result as the single task's, and its rounds."""

    result: ClusterResult
    rounds: int


def plan_splits(edge_files: Sequence[tuple[int, Path]]) -> list[list[tuple[int, str]]]:
    """Edge files (with their stage index) into split tasks of about `SPLIT_BYTES` each."""
    tasks: list[list[tuple[int, str]]] = [[]]
    size = 0
    for si, path in edge_files:
        n = os.path.getsize(path)
        if tasks[-1] and size + n > SPLIT_BYTES:
            tasks.append([])
            size = 0
        tasks[-1].append((si, str(path)))
        size += n
    return tasks


def run_rounds(runner: PhaseDriver, work: WorkDir, edge_files: Sequence[tuple[int, Path]], partitions: int,
               max_rounds: int = 1000) -> RoundsRun:
    """The partitioned cluster phase on `runner`'s engine; its decisions files are the single
    cluster task's, and its result too."""
    layout = Layout(work, partitions)
    n = partitions
    splits = plan_splits(edge_files)
    runner.phase("cluster-split", [runner.call("cluster-split", f"cluster-n{n}-split-{s:05d}", n, s, files)
                                   for s, files in enumerate(splits)])
    last = -1
    for r in range(max_rounds):
        results: list[RoundResult] = runner.phase(
            "cluster-round", [runner.call("cluster-round", f"cluster-n{n}-round-{r:03d}-{q:04d}", n, r, q, len(splits))
                              for q in range(n)])
        if r >= 2:  # round r - 2's files fed round r - 1, which has finished
            shutil.rmtree(layout.round_dir(r - 2), ignore_errors=True)
        if r % 2 == 0 and sum(x.violations for x in results) == 0:
            last = r
            break
    if last < 0:
        raise RuntimeError(f"the cluster phase did not converge in {max_rounds} rounds")
    runner.phase("cluster-rank", [runner.call("cluster-rank", f"cluster-n{n}-rank-{q:04d}", n, q, len(splits), last)
                                  for q in range(n)])
    runner.phase("cluster-keepers", [runner.call("cluster-keepers", f"cluster-n{n}-keepers-{q:04d}", n, q)
                                     for q in range(n)])
    decided: list[ClusterResult] = runner.phase(
        "cluster-decide", [runner.call("cluster-decide", f"cluster-n{n}-decide-{q:04d}", n, q, len(splits))
                           for q in range(n)])
    dropped: dict[int, int] = {}
    for d in decided:
        dropped.update(d.dropped)
    result = ClusterResult(dropped=dict(sorted(dropped.items())), clusters=sum(d.clusters for d in decided),
                           nodes=sum(d.nodes for d in decided))
    return RoundsRun(result, last + 1)
