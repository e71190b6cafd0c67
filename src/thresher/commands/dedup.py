"""`thresher dedup INPUT...`: find the duplicate clusters of a crawl (exact and near duplicates, as
`thresher build` would) and report them — members, URLs, the verified similarity of each linked
pair, and which member the keep policy keeps — without writing a dataset. `--json` prints every
cluster as JSON.

It runs the same scan, group, verify and cluster phases as a build (documents pass extraction,
normalization and the quality filters first, per the config), in a temporary work directory (or
`--work-dir`), so memory stays bounded by the documents that collide."""

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
    """Run the scan, group, verify and cluster phases of a build into `workdir` and return the
    duplicate clusters as plain data. Clusters, keepers and attributions are the cluster phase's
    own decisions, so the report says exactly what a build would drop."""
    from thresher.run.build import PhaseRunner, prepare_workdir, scan_and_group
    from thresher.run.tasks import TaskContext, cluster_task, iter_decisions, iter_edges, iter_scan_docs
    from thresher.run.workdir import WorkDir

    work = WorkDir(workdir)
    work.root.mkdir(parents=True, exist_ok=True)
    _, partitions = prepare_workdir(work, list(inputs), config, write_rejects=False, overwrite=True)
    runner = PhaseRunner(work, TaskContext(config, str(work.root), False), on_progress)
    try:
        grouped = scan_and_group(work, runner, partitions)
        runner.phase("cluster", [runner.call(cluster_task, "cluster")])
    finally:
        runner.close()
    stats, scanned = grouped.stats, grouped.scan_results
    stages = build_corpus_stages(config)

    # every colliding document's cluster (the keeper's id) from the decisions
    cluster_of: dict[int, str] = {}
    kept: dict[str, int] = {}
    for p in partitions:
        for decision in iter_decisions(work, p.index):
            o = decision["o"]
            if "keep" in decision:
                cluster_of[o] = decision["keep"]["cluster"]
                kept[cluster_of[o]] = o
            else:
                cluster_of[o] = decision["drop"]["detail"]["cluster"]

    info: dict[int, dict[str, Any]] = {}
    for p in partitions:
        if cluster_of and work.scan_docs(p.index).exists():
            for o, line in iter_scan_docs(work, p.index):
                if o in cluster_of:
                    rec = json.loads(line)
                    info[o] = {"id": rec.get("id"), "url": rec.get("url"), "title": rec.get("title"), "chars": len(rec.get("text") or "")}

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

    clusters = []
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
    return {
        "documents_seen": stats.seen,
        "documents_compared": sum(r["survivors"] for r in scanned),
        "clusters": len(clusters),
        "duplicates": sum(c["size"] - 1 for c in clusters),
        "keep": config.dedup.keep,
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
    if config.exec.work_dir is not None:  # a place with room for the work files; kept afterwards
        report = find_clusters(args.inputs, config, Path(config.exec.work_dir) / ".work-dedup", printer)
    else:
        with tempfile.TemporaryDirectory(prefix="thresher-dedup-") as tmp:
            report = find_clusters(args.inputs, config, Path(tmp), printer)
    if args.json:
        out = dict(report)
        out["clusters_detail"] = out.pop("cluster_list")
        sys.stdout.write(json.dumps(out, ensure_ascii=False, indent=2) + "\n")
    else:
        sys.stdout.write(render(report, args.max_clusters) + "\n")
    return 0
