"""`thresher decontam-report DIR`: which benchmark items a build found, in which documents."""

from __future__ import annotations

import argparse
import json
from typing import Any

from thresher.decontam.report import contamination_report


def register(subparsers: Any) -> None:
    p = subparsers.add_parser(
        "decontam-report", help="list the benchmark items a build found and where",
        description="Read the rejects a build wrote with --rejects (mode drop), or a dataset built with "
        "--decontaminate-mode cut, and list each benchmark item found with its documents.",
    )
    p.add_argument("path", help="rejects folder (or its rejects.jsonl.gz), or a dataset folder")
    p.add_argument("--json", action="store_true", help="print the report as JSON")
    p.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    report = contamination_report(args.path)
    print(json.dumps(report.to_dict(), indent=2, ensure_ascii=False) if args.json else report.render())
    return 0
