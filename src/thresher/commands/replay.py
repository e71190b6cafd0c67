"""`thresher replay DATASET -o NEW [settings]`: decide a `build --signals` dataset's documents again
under changed settings (quality thresholds and rule sets, dedup method, threshold and keep policy,
output format and shard size), from its signals table alone: the shards, manifest records and stats
a fresh `thresher build` with those settings writes, without reading or extracting the crawl
again. A setting that would change what the first build recorded before the quality rules
(extraction, normalization, language, consent, PII, classifiers) is refused, named. See
docs/signals.md."""

from __future__ import annotations

import argparse
import sys
from typing import Any

from thresher.commands.arguments import add_config_flags, settings_from_args
from thresher.core.errors import ConfigError


def register(subparsers: Any) -> None:
    p = subparsers.add_parser(
        "replay", help="re-decide a --signals build under changed settings, without the crawl",
        description=__doc__, usage="%(prog)s DATASET -o OUTPUT [settings]",
    )
    p.add_argument("dataset", help="a dataset folder built with --signals")
    p.add_argument("-o", "--output", required=True, help="output folder, or a URL (s3://bucket/prefix)")
    p.add_argument("--config", metavar="TOML", help="settings file (flags override it; both override the dataset's)")
    p.add_argument("--rejects", metavar="DIR", help="write every dropped document with its reason to DIR")
    p.add_argument("--overwrite", action="store_true", help="discard an unfinished build of another config")
    p.add_argument("-q", "--quiet", action="store_true", help="no progress and no report")
    p.add_argument("-v", "--verbose", action="count", default=0, help="log more")
    add_config_flags(p)
    p.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    try:
        import pyarrow  # noqa: F401
    except ImportError as exc:
        raise ConfigError('thresher replay needs the parquet extra: pip install "thresher[parquet]"') from exc
    from thresher.config import RunConfig
    from thresher.report.progress import ProgressPrinter
    from thresher.run.replay import replay

    overrides = settings_from_args(args)
    every = overrides.get("exec", {}).get("progress_every", RunConfig().exec.progress_every)
    printer = ProgressPrinter(sys.stderr, every=every, quiet=args.quiet)
    result = replay(args.dataset, args.output, overrides, rejects=args.rejects, overwrite=args.overwrite,
                    on_progress=printer)
    if not args.quiet:
        print(result.stats.render(), file=sys.stderr)
        m = result.manifest
        print(f"wrote {m['records']} documents in {len(m['shards'])} shard(s) to {result.output}", file=sys.stderr)
        if "budget" in m:
            from thresher.select.budget import budget_line

            print(budget_line(m), file=sys.stderr)
    return 0 if result.ok else 1
