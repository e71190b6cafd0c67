"""`thresher report DATASET [-o report.html] [--rejects DIR]`: one self-contained HTML page showing
what the build kept and dropped, and why (funnel, drops per rule, metric histograms with their bounds,
languages, lengths, duplicate clusters, hosts, timings, examples)."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from thresher.core.errors import InputError


def register(subparsers: Any) -> None:
    p = subparsers.add_parser("report", help="write an HTML report of a dataset", description=__doc__)
    p.add_argument("dataset", help="dataset directory (holding manifest.json)")
    p.add_argument("-o", "--output", metavar="HTML", help="where to write the page (default: DATASET/report.html)")
    p.add_argument("--rejects", metavar="DIR", help="the build's --rejects folder: adds dropped values and examples")
    p.add_argument("-q", "--quiet", action="store_true", help="print nothing")
    p.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    from thresher.report.html import write_report

    dataset = Path(args.dataset)
    if args.rejects is not None and not Path(args.rejects).is_dir():
        raise InputError(f"--rejects {args.rejects}: no such folder")
    out = args.output or str(dataset / "report.html")
    data = write_report(str(dataset), out, args.rejects)
    if not args.quiet:
        size = Path(out).stat().st_size
        print(f"report: {out} ({size:,} bytes; {data.kept_docs:,} kept documents read"
              f"{f', {data.dropped_docs_seen:,} dropped' if data.has_rejects else ''})", file=sys.stderr)
    return 0
