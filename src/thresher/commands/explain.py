"""`thresher explain DATASET URL-or-ID [--json] [--no-rerun]`: where a document went and why —
kept (shard, row, every rule's value against its bounds, its duplicate cluster) or dropped (the
Drop; for a duplicate the kept document and the similarity; for a per-document stage every rule,
re-run on the input record under the recorded config). Exit 1 when nothing matches."""

from __future__ import annotations

import argparse
import json
from typing import Any

from thresher.core.errors import InputError


def register(subparsers: Any) -> None:
    p = subparsers.add_parser("explain", help="where one document went and why", description=__doc__)
    p.add_argument("dataset", help="dataset directory (holding manifest.json and index/)")
    p.add_argument("query", metavar="URL-or-ID", help="a document id (16 hex digits) or a URL")
    p.add_argument("--json", action="store_true", help="print JSON")
    p.add_argument(
        "--no-rerun", dest="rerun", action="store_false", help="do not re-read the input to re-run the stages"
    )
    p.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    from thresher.report.explain import explain

    found = explain(args.dataset, args.query, rerun_inputs=args.rerun)
    if not found:
        raise InputError(f"{args.query}: no document with this id or URL in {args.dataset}")
    if args.json:
        print(json.dumps([e.to_dict() for e in found], indent=2, ensure_ascii=False))
    else:
        print("\n".join(e.render() for e in found))
    return 0
