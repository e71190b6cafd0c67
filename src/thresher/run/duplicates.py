"""Find the duplicate clusters of a crawl without writing a dataset: the library side of
`thresher dedup`.

`find_clusters` runs the phases of a build up to clustering (`thresher.run.phases.cluster_duplicates`)
and reads back the cluster phase's own decisions, so the report says exactly what a build with the
same config would drop: members, URLs, the verified similarity of each linked pair, and the keeper.
"""

from __future__ import annotations

import json
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from thresher.config import RunConfig
from thresher.core.serial import Serializable
from thresher.pipeline import build_corpus_stages
from thresher.run.cluster import iter_decisions, iter_edges
from thresher.run.phases import ProgressSink, cluster_duplicates
from thresher.run.scan import iter_scan_docs


@dataclass(frozen=True, slots=True, kw_only=True)
class ClusterReport(Serializable):
    """What `thresher dedup` reports; `to_json` is its `--json` form."""

    documents_seen: int
    documents_compared: int  # those that reached the corpus stages
    clusters: int
    duplicates: int  # documents a build would drop: every cluster's members but its keeper
    keep: str
    stages: list[str]
    cluster_list: list[dict[str, Any]]  # largest first: cluster, size, kept, members, pairs


def find_clusters(
    inputs: Sequence[str], config: RunConfig, workdir: str | Path, *, on_progress: ProgressSink | None = None
) -> ClusterReport:
    """The duplicate clusters of `inputs` under `config`, computed in `workdir` (its files stay).

    The build's preflight runs first: a missing input, a missing extra or a work dir that cannot be
    written fails in a second with one line, never after a scan of everything else."""
    from thresher.run.preflight import check_writable, preflight

    preflight(inputs, None, config)
    check_writable(workdir, "work dir")
    run = cluster_duplicates(inputs, config, workdir, on_progress=on_progress)
    grouped = run.grouped
    work = grouped.work
    stages = build_corpus_stages(config)

    # every colliding document's cluster (the keeper's id) from the decisions
    cluster_of: dict[int, str] = {}
    kept: dict[str, int] = {}
    for p in grouped.partitions:
        for decision in iter_decisions(work, p.index):
            cluster_of[decision.ordinal] = decision.cluster
            if decision.kept:
                kept[decision.cluster] = decision.ordinal

    info: dict[int, dict[str, Any]] = {}
    for p in grouped.partitions:
        if cluster_of and work.scan_docs(p.index).exists():
            for o, line in iter_scan_docs(work, p.index):
                if o in cluster_of:
                    rec = json.loads(line)
                    info[o] = {
                        "id": rec.get("id"),
                        "url": rec.get("url"),
                        "title": rec.get("title"),
                        "chars": len(rec.get("text") or ""),
                    }

    # the verified pairs of each cluster (a pair of identical payloads may be linked in several tasks)
    pairs: dict[str, dict[tuple[int, int, str], dict[str, Any]]] = defaultdict(dict)
    for si, a, b, sim in iter_edges(work, stages):
        name = stages[si].name
        pairs[cluster_of[a.ordinal]][(a.ordinal, b.ordinal, name)] = {
            "a": a.id_hex, "b": b.id_hex, "similarity": round(sim, 4), "stage": name,
        }
    members: dict[str, list[int]] = defaultdict(list)
    for o, cluster in cluster_of.items():
        members[cluster].append(o)

    def describe(o: int) -> dict[str, Any]:
        d = dict(info.get(o) or {})
        d["ordinal"] = o
        return d

    clusters: list[dict[str, Any]] = []
    for cluster, group in members.items():
        group.sort()
        clusters.append(
            {
                "cluster": cluster,
                "size": len(group),
                "kept": describe(kept[cluster]),
                "members": [describe(o) for o in group],
                "pairs": [pairs[cluster][k] for k in sorted(pairs[cluster])],
            }
        )
    clusters.sort(key=lambda c: (-c["size"], c["members"][0]["ordinal"]))
    return ClusterReport(
        documents_seen=grouped.stats.seen,
        documents_compared=sum(r.survivors for r in grouped.scan_results),
        clusters=len(clusters),
        duplicates=sum(c["size"] - 1 for c in clusters),
        keep=config.dedup.keep,
        stages=[s.name for s in stages],
        cluster_list=clusters,
    )
