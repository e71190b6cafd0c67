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
from collections.abc import Sequence
from dataclasses import fields
from pathlib import Path
from typing import Any

from thresher.commands.arguments import add_config_flags, add_input_arguments, config_from_args
from thresher.config import RunConfig


def register(subparsers: Any) -> None:
    p = subparsers.add_parser(
        "dedup",
        help="report duplicate clusters (writes no dataset)",
        description=__doc__,
        usage="%(prog)s INPUT... [options]",
        formatter_class=argparse.ArgumentDefaultsHelpFormatter,
    )
    add_input_arguments(p, quiet_help="no progress on stderr")
    p.add_argument("--json", action="store_true", help="print every cluster as JSON")
    p.add_argument(
        "--max-clusters", type=int, default=20, metavar="N", help="clusters shown in the text report (largest first)"
    )
    # every section but the output's: the report is what a build with the same flags would drop
    add_config_flags(p, sections=tuple(f.name for f in fields(RunConfig) if f.name != "output"))
    p.set_defaults(handler=run)


def find_clusters(inputs: Sequence[str], config: Any, workdir: Path, on_progress: Any = None) -> dict[str, Any]:
    """The duplicate clusters of a crawl as plain data (`thresher.run.duplicates.find_clusters`)."""
    from thresher.run.duplicates import find_clusters as find

    return find(inputs, config, workdir, on_progress=on_progress).to_json()


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
