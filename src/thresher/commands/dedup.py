"""`thresher dedup INPUT...`: find the duplicate clusters of a crawl (exact and near duplicates, as
`thresher build` would) and report them — members, URLs, the verified similarity of each linked
pair, and which member the keep policy keeps — without writing a dataset. `--json` prints every
cluster as JSON.

It runs the same scan and group phases as a build (documents pass extraction, normalization and
the quality filters first, per the config), in a temporary work directory, so memory stays bounded
by the documents that collide."""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from collections import defaultdict
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from thresher.cli import add_config_flags, add_input_arguments, config_from_args
from thresher.pipeline import build_corpus_stages
from thresher.run.tasks import keeper_rank


def register(subparsers: Any) -> None:
    p = subparsers.add_parser(
        "dedup",
        help="report duplicate clusters (writes no dataset)",
        description=__doc__,
        formatter_class=argparse.ArgumentDefaultsHelpFormatter,
    )
    add_input_arguments(p, quiet_help="no progress on stderr")
    p.add_argument("--json", action="store_true", help="print every cluster as JSON")
    p.add_argument(
        "--max-clusters", type=int, default=20, metavar="N", help="clusters shown in the text report (largest first)"
    )
    add_config_flags(p, sections=("input", "extract", "normalize", "lang", "quality", "dedup", "exec"))
    p.set_defaults(handler=run)


def find_clusters(inputs: Sequence[str], config: Any, workdir: Path, on_progress: Any = None) -> dict[str, Any]:
    """Run scan and group into `workdir` and return the duplicate clusters as plain data."""
    from thresher.run.build import PhaseRunner, prepare_workdir, scan_and_group
    from thresher.run.tasks import TaskContext, iter_edges, iter_scan_docs
    from thresher.run.workdir import WorkDir

    work = WorkDir(workdir)
    work.root.mkdir(parents=True, exist_ok=True)
    _, partitions = prepare_workdir(work, list(inputs), config, write_rejects=False, overwrite=True)
    runner = PhaseRunner(work, TaskContext(config, str(work.root), False), on_progress)
    try:
        grouped = scan_and_group(work, runner, partitions)
    finally:
        runner.close()
    stats, scanned = grouped.stats, grouped.scan_results
    stages = build_corpus_stages(config)

    # union-find over the verified edges (only colliding documents are in memory)
    parent: dict[int, int] = {}
    nodes: dict[int, Any] = {}
    # a pair colliding in several group tasks is verified (and written) once per task
    edges: dict[tuple[int, int, str], float] = {}

    def find(x: int) -> int:
        while parent[x] != x:
            parent[x] = parent[parent[x]]
            x = parent[x]
        return x

    for si, a, b, sim in iter_edges(work, stages):
        for n in (a, b):
            if n.ordinal not in parent:
                parent[n.ordinal] = n.ordinal
                nodes[n.ordinal] = n
        ra, rb = find(a.ordinal), find(b.ordinal)
        if ra != rb:
            parent[max(ra, rb)] = min(ra, rb)
        edges[(a.ordinal, b.ordinal, stages[si].name)] = sim

    info: dict[int, dict[str, Any]] = {}
    if nodes:
        for p in partitions:
            if not work.scan_docs(p.index).exists():
                continue
            for o, line in iter_scan_docs(work, p.index):
                if o in nodes:
                    rec = json.loads(line)
                    info[o] = {
                        "id": rec.get("id"),
                        "url": rec.get("url"),
                        "title": rec.get("title"),
                        "chars": len(rec.get("text") or ""),
                    }

    members: dict[int, list[int]] = defaultdict(list)
    for o in parent:
        members[find(o)].append(o)
    pairs: dict[int, list[tuple[int, int, float, str]]] = defaultdict(list)
    for (a, b, name), sim in edges.items():
        pairs[find(a)].append((a, b, sim, name))
    policy = config.dedup.keep
    rank = keeper_rank(policy)

    def describe(o: int) -> dict[str, Any]:
        d = dict(info.get(o) or {"id": nodes[o].id_hex})
        d["ordinal"] = o
        return d

    clusters = []
    for root, group in members.items():
        keeper = min((nodes[o] for o in group), key=rank)
        linked = sorted(pairs[root], key=lambda e: (e[0], e[1], e[3]))
        clusters.append(
            {
                "cluster": keeper.id_hex,
                "size": len(group),
                "kept": describe(keeper.ordinal),
                "members": [describe(o) for o in sorted(group)],
                "pairs": [
                    {"a": nodes[a].id_hex, "b": nodes[b].id_hex, "similarity": round(sim, 4), "stage": name}
                    for a, b, sim, name in linked
                ],
            }
        )
    clusters.sort(key=lambda c: (-c["size"], c["members"][0]["ordinal"]))
    return {
        "documents_seen": stats.seen,
        "documents_compared": sum(r["survivors"] for r in scanned),
        "clusters": len(clusters),
        "duplicates": sum(c["size"] - 1 for c in clusters),
        "keep": policy,
        "stages": [s.name for s in stages],
        "cluster_list": clusters,
    }


def render(report: dict[str, Any], max_clusters: int) -> str:
    lines = [
        f"{report['documents_compared']} of {report['documents_seen']} documents compared "
        f"(the rest were dropped before dedup or malformed); {report['clusters']} duplicate clusters, "
        f"{report['duplicates']} duplicates (keep: {report['keep']})"
    ]
    for c in report["cluster_list"][:max_clusters]:
        lines.append("")
        lines.append(f"cluster {c['cluster']}: {c['size']} documents")
        for m in c["members"]:
            mark = "keep" if m["ordinal"] == c["kept"]["ordinal"] else "drop"
            where = m.get("url") or m.get("title") or ""
            lines.append(f"  [{mark}] {m['id']}  {m.get('chars', '?')} chars  {where}")
        for pr in c["pairs"][:10]:
            lines.append(f"    {pr['a']} ~ {pr['b']}  {pr['similarity']:.3f} ({pr['stage']})")
        if len(c["pairs"]) > 10:
            lines.append(f"    ... {len(c['pairs']) - 10} more linked pairs")
    hidden = len(report["cluster_list"]) - max_clusters
    if hidden > 0:
        lines.append(f"\n... {hidden} more clusters (--max-clusters, or --json for all)")
    return "\n".join(lines)


def run(args: argparse.Namespace) -> int:
    config = config_from_args(args)
    printer = None
    if not args.quiet:
        from thresher.report.progress import ProgressPrinter

        printer = ProgressPrinter(sys.stderr, every=config.exec.progress_every)
    with tempfile.TemporaryDirectory(prefix="thresher-dedup-") as tmp:
        report = find_clusters(args.inputs, config, Path(tmp), printer)
    if args.json:
        out = dict(report)
        out["clusters_detail"] = out.pop("cluster_list")
        sys.stdout.write(json.dumps(out, ensure_ascii=False, indent=2) + "\n")
    else:
        sys.stdout.write(render(report, args.max_clusters) + "\n")
    return 0
