"""`thresher demo`: generate a realistic synthetic crawl and build it, start to finish."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from thresher.config import RunConfig
from thresher.demo import write_crawl
from thresher.report.progress import ProgressPrinter
from thresher.run.build import build
from thresher.write.manifest import verify_dataset


def register(subparsers: Any) -> None:
    p = subparsers.add_parser("demo", help="build a built-in synthetic crawl end to end", description=__doc__)
    p.add_argument("-o", "--output", default="thresher-demo", help="folder for the crawl and the dataset")
    p.add_argument("--pages", type=int, default=600, help="pages in the synthetic crawl")
    p.add_argument("--workers", type=int, default=None, help="worker processes (default: CPU count)")
    p.add_argument("-q", "--quiet", action="store_true", help="no progress")
    p.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    root = Path(args.output)
    crawl = write_crawl(root / "crawl.jsonl", n_pages=args.pages)
    dataset = root / "dataset"
    print(f"generated {crawl} ({args.pages} pages with templates, duplicates, spam, malformed lines)", file=sys.stderr)
    config = RunConfig.from_dict({"exec": {"workers": args.workers}, "output": {"shard_max_records": 200}})
    printer = ProgressPrinter(sys.stderr, every=config.exec.progress_every, quiet=args.quiet)
    result = build([str(crawl)], dataset, config, rejects=root / "rejects", overwrite=True, on_progress=printer)
    print(result.stats.render(), file=sys.stderr)
    problems = verify_dataset(dataset)
    print(
        f"\ndataset: {dataset} ({result.manifest['records']} documents, {len(result.manifest['shards'])} shards,"
        f" verify: {'ok' if not problems else 'FAILED'})\n"
        f"rejects: {root / 'rejects'}/rejects.jsonl.gz (every dropped document with its reason)\n"
        f"card:    {dataset / 'README.md'}",
        file=sys.stderr,
    )
    return 0 if result.ok and not problems else 1
