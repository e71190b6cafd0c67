"""`thresher signals DATASET`: the distribution of every numeric signal a `build --signals` recorded
(percentiles p1 to p99) and, for each quality rule, what candidate thresholds would keep (documents,
whitespace tokens). See docs/signals.md."""

from __future__ import annotations

import argparse
import json
from typing import Any

from thresher.core.errors import ConfigError


def register(subparsers: Any) -> None:
    p = subparsers.add_parser(
        "signals", help="distributions of a --signals build's measured values and what thresholds would keep",
        description=__doc__,
    )
    p.add_argument("dataset", help="dataset directory built with --signals (or its fsspec URL)")
    p.add_argument("--json", action="store_true", help="print the summary as JSON")
    p.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    try:
        import pyarrow  # noqa: F401
    except ImportError as exc:
        raise ConfigError('thresher signals needs the parquet extra: pip install "thresher[parquet]"') from exc
    from thresher.report.signals import render, summarize

    summary = summarize(args.dataset)
    print(json.dumps(summary, indent=2) if args.json else render(summary))
    return 0
