"""`thresher compare A B [--sample 2000] [--json]`: two datasets side by side — URLs in both, how
much of each one's text has a near duplicate in the other, examples kept only by one, and the `check`
measures of both (with `--language` for the language share)."""

from __future__ import annotations

import argparse
import json
from typing import Any

from thresher.core.errors import ConfigError


def register(subparsers: Any) -> None:
    p = subparsers.add_parser("compare", help="compare two datasets: overlap, differences, quality measures",
                              description=__doc__)
    p.add_argument("a", help="first dataset directory")
    p.add_argument("b", help="second dataset directory")
    p.add_argument(
        "--sample", type=int, default=2_000, help="documents sampled per side for the near-duplicate overlap"
    )
    p.add_argument("--language", help="target language for the language-share measure")
    p.add_argument("--json", action="store_true", help="print the result as JSON")
    p.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    from thresher.report.check import Bounds
    from thresher.report.compare import compare_datasets
    from thresher.report.dataset import open_dataset

    for d in (args.a, args.b):
        open_dataset(d)  # a damaged manifest or an unlisted shard: one line, before sampling
    if args.sample < 1:
        raise ConfigError("--sample must be at least 1")
    result = compare_datasets(args.a, args.b, Bounds(language=args.language), args.sample)
    print(json.dumps(result.to_dict(), indent=2) if args.json else result.render())
    return 0
