"""`thresher build INPUT... -o OUT`: the whole pipeline, written as a verified dataset.

`thresher build --fetch urls.txt -o OUT` first fetches the list into a crawl folder (`--crawl`, by
default `OUT.crawl` beside the output: the build refuses inputs inside its output, and the WARC
files stay as the documents' provenance), then builds from it. A rerun resumes the fetch (settled
URLs are skipped) and then the build."""

from __future__ import annotations

import argparse
import sys
from typing import Any

from thresher.commands.arguments import add_config_flags, add_input_arguments, config_from_args
from thresher.core.errors import ConfigError, InputError
from thresher.paths import is_url
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
    # with --fetch the crawl is the input, so INPUT may be left out (checked in `run`)
    for action in p._actions:
        if action.dest == "inputs":
            action.nargs = "*"
    p.add_argument(
        "-o", "--output", required=True,
        help="output folder, or a URL (s3://bucket/prefix; the remote extra)",
    )
    p.add_argument(
        "--rejects", metavar="DIR",
        help="write every dropped document with its reason, and every malformed record, to DIR",
    )
    p.add_argument("--overwrite", action="store_true", help="discard an unfinished build of another config")
    p.add_argument("--fetch", metavar="URLS", action="append",
                   help="fetch this URL list into --crawl DIR (default OUTPUT.crawl) first, then build from it; "
                   "takes `thresher fetch` flags (--contact, ...: see thresher fetch --help)")
    p.add_argument("--crawl", metavar="DIR", help=argparse.SUPPRESS)
    p.add_argument("--urls-column", metavar="NAME", help=argparse.SUPPRESS)
    add_config_flags(p)
    from thresher.commands.fetch import add_fetch_flags

    add_fetch_flags(p, shown=False)  # read only with --fetch
    p.set_defaults(handler=run)


def crawl_folder(output: str, crawl: str | None) -> str:
    """Where `--fetch` writes its crawl: `crawl`, or `OUTPUT.crawl` beside a local output."""
    if crawl:
        return crawl
    if is_url(output):
        raise ConfigError(f"{output}: with --fetch and an output URL, name a local crawl folder with --crawl DIR")
    return output.rstrip("/\\") + ".crawl"


def fetch_first(args: argparse.Namespace) -> str:
    """Fetch `--fetch` lists into the crawl folder (resuming one a previous run started)."""
    from thresher.commands.fetch import fetch_config_from_args
    from thresher.fetch.crawl import fetch_urls

    crawl = crawl_folder(args.output, args.crawl)
    fetch_config = fetch_config_from_args(argparse.Namespace(**{k: v for k, v in vars(args).items() if k != "config"}))
    on_progress = None if args.quiet else (lambda stats: print(stats.progress_line(), file=sys.stderr, flush=True))
    result = fetch_urls(args.fetch, crawl, fetch_config, urls_column=args.urls_column, on_progress=on_progress)
    if not args.quiet:
        print(result.stats.render(), file=sys.stderr)
        print(f"fetched into {crawl}/; building from it", file=sys.stderr)
    return crawl


def run(args: argparse.Namespace) -> int:
    if not args.inputs and not args.fetch:
        raise InputError("no input: give crawl files or folders, or --fetch URLS")
    config = config_from_args(args)
    inputs = list(args.inputs)
    if args.fetch:
        inputs.insert(0, fetch_first(args))
    printer = ProgressPrinter(sys.stderr, every=config.exec.progress_every, quiet=args.quiet)
    result = build(inputs, args.output, config, rejects=args.rejects, overwrite=args.overwrite, on_progress=printer)
    if not args.quiet:
        print(result.stats.render(), file=sys.stderr)
        m = result.manifest
        print(f"wrote {m['records']} documents in {len(m['shards'])} shard(s) to {result.output}", file=sys.stderr)
        if "budget" in m:
            from thresher.select.budget import budget_line

            print(budget_line(m), file=sys.stderr)
    return 0 if result.ok else 1
