"""`thresher build INPUT... -o OUT`: the whole pipeline, written as a verified dataset."""

from __future__ import annotations

import argparse
import sys
from typing import Any

from thresher.cli import add_config_flags, add_input_arguments, config_from_args
from thresher.report.progress import ProgressPrinter
from thresher.run.build import build


def register(subparsers: Any) -> None:
    p = subparsers.add_parser(
        "build",
        help="build a dataset from a crawl",
        description="Read, extract, normalize, filter and deduplicate a crawl into sharded, checksummed output.",
        usage="%(prog)s INPUT... -o OUTPUT [options]",
        formatter_class=argparse.ArgumentDefaultsHelpFormatter,
    )
    add_input_arguments(p)
    p.add_argument(
        "-o", "--output", required=True,
        help="output folder, or a URL (s3://bucket/prefix; the remote extra)",
    )
    p.add_argument(
        "--rejects", metavar="DIR",
        help="write every dropped document with its reason, and every malformed record, to DIR",
    )
    p.add_argument("--overwrite", action="store_true", help="discard an unfinished build of another config")
    add_config_flags(p)
    p.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    config = config_from_args(args)
    printer = ProgressPrinter(sys.stderr, every=config.exec.progress_every, quiet=args.quiet)
    result = build(args.inputs, args.output, config, rejects=args.rejects, overwrite=args.overwrite, on_progress=printer)
    if not args.quiet:
        print(result.stats.render(), file=sys.stderr)
        m = result.manifest
        print(f"wrote {m['records']} documents in {len(m['shards'])} shard(s) to {result.output}", file=sys.stderr)
    return 0 if result.ok else 1
