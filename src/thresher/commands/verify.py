"""`thresher verify DATASET`: check every file the dataset holds — every shard and vector file
against the manifest, the manifest against the folder (no entry missing, no shard or vector file
unlisted, no path outside it), `stats.json`, each index file against the index header, the
samples; the exit code says."""

from __future__ import annotations

import argparse
import sys
from typing import Any


def register(subparsers: Any) -> None:
    p = subparsers.add_parser("verify", help="check a dataset against its manifest", description=__doc__)
    p.add_argument("dataset", help="dataset directory (holding manifest.json), or its fsspec URL (s3://bucket/prefix)")
    p.add_argument(
        "--records", action="store_true", help="also decode every shard's records as strict UTF-8 JSON and count them"
    )
    p.add_argument("-q", "--quiet", action="store_true", help="print nothing; the exit code says")
    p.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    from thresher.report.dataset import open_dataset

    dataset = open_dataset(args.dataset, whole=False)  # the unlisted files are among the problems
    manifest, problems = dataset.manifest, dataset.problems(records=args.records)
    if not args.quiet:
        for problem in problems:
            print(f"thresher: FAIL {problem.describe()}", file=sys.stderr)
        if not problems:
            n = len(manifest["shards"])
            print(
                f"ok: {n} shard(s), {manifest['records']} records match {str(args.dataset).rstrip('/')}/manifest.json"
            )
    return 1 if problems else 0
