"""`thresher fetch URLS... -o CRAWL`: fetch a URL list into WARC files, politely, safely, resumably.

Flags are generated from `FetchConfig` (defaults declared once, there); a TOML file's `[fetch]`
table sets them too (flags win)."""

from __future__ import annotations

import argparse
import sys
from typing import Any

from thresher.core.config import flat_fields, from_dict, parse_flag_value
from thresher.fetch.config import FetchConfig

_DEST = "fetch__"


def add_fetch_flags(parser: argparse.ArgumentParser, *, shown: bool = True) -> None:
    """The fetch settings as flags; `shown=False` keeps them out of the parser's --help (`build`,
    whose help points to `thresher fetch --help` instead)."""
    group = parser.add_argument_group("fetch settings")
    for ff in flat_fields(FetchConfig):
        flag = "--" + ff.path[-1].replace("_", "-")
        default = (
            "none" if ff.default is None else ",".join(ff.default) if isinstance(ff.default, tuple) else ff.default
        )
        if isinstance(ff.default, tuple) and len(str(default)) > 60:
            default = f"{len(ff.default)} entries"
        help_text = f"{ff.help} (default: {default})" if shown else argparse.SUPPRESS
        if ff.type is bool:
            group.add_argument(flag, dest=_DEST + ff.path[-1], action=argparse.BooleanOptionalAction,
                               default=argparse.SUPPRESS, help=help_text)
        else:
            group.add_argument(
                flag, dest=_DEST + ff.path[-1], default=argparse.SUPPRESS, metavar="VALUE", help=help_text
            )


def fetch_config_from_args(args: argparse.Namespace) -> FetchConfig:
    """defaults < the TOML file's [fetch] table < flags."""
    data: dict[str, Any] = {}
    if getattr(args, "config", None):
        from thresher.config import load_toml

        data = dict(load_toml(args.config).get("fetch", {}))
    for ff in flat_fields(FetchConfig):
        dest = _DEST + ff.path[-1]
        if hasattr(args, dest):
            value = getattr(args, dest)
            data[ff.path[-1]] = value if isinstance(value, bool) else parse_flag_value(ff, value)
    config: FetchConfig = from_dict(FetchConfig, data, "fetch")
    return config


def register(subparsers: Any) -> None:
    p = subparsers.add_parser(
        "fetch", help="fetch a URL list into WARC files",
        description="Fetch the URLs of a list (one per line, or a column of JSONL/CSV/Parquet) into WARC 1.1 files, "
        "politely (robots.txt, per-host limits), safely (no private targets) and resumably (rerun to continue).",
    )
    p.add_argument(
        "inputs",
        nargs="+",
        metavar="URLS",
        help="URL list: text, one URL a line (.gz too), or JSONL/CSV/Parquet with --urls-column",
    )
    p.add_argument(
        "-o", "--output", required=True, help="crawl directory: warc/*.warc.gz, fetch-log.jsonl, fetch-stats.json"
    )
    p.add_argument(
        "--urls-column", metavar="NAME", help="read URLs from this column/field of JSONL, CSV or Parquet lists"
    )
    p.add_argument(
        "--config", metavar="TOML", help="settings file; its [fetch] table sets fetch settings (flags override it)"
    )
    p.add_argument("-q", "--quiet", action="store_true", help="no progress and no summary")
    p.add_argument("-v", "--verbose", action="count", default=0, help="log more")
    add_fetch_flags(p)
    p.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    from thresher.fetch.crawl import fetch_urls

    config = fetch_config_from_args(args)

    def progress(stats: Any) -> None:
        print(stats.progress_line(), file=sys.stderr, flush=True)

    result = fetch_urls(args.inputs, args.output, config, urls_column=args.urls_column,
                        on_progress=None if args.quiet else progress)
    if not args.quiet:
        plan = result.plan
        rejected = ", ".join(f"{k} {v}" for k, v in sorted(plan.rejected.items()))
        print(f"input: {plan.lines:,} lines, {plan.valid:,} valid, {plan.duplicates:,} duplicates, "
              f"{plan.already_done:,} already settled{f'; rejected: {rejected}' if rejected else ''}", file=sys.stderr)
        print(result.stats.render(), file=sys.stderr)
        print(
            f"wrote {result.warc_dir}/ and {result.output}/fetch-log.jsonl; next: thresher build {result.warc_dir} -o "
            f"DATASET",
            file=sys.stderr,
        )
    return 0
