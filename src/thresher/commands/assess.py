"""`thresher assess INPUT...`: how a crawl fares against the quality rules, without dropping or
writing anything: per-rule fail counts, metric percentiles (p1..p99) with the bounds marked, and
with `-v` example documents per failing rule. `--sample N` assesses a seeded reservoir sample."""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Iterator
from typing import Any

from thresher.commands.arguments import add_config_flags, add_input_arguments, config_from_args
from thresher.core.document import Document, Malformed


def register(subparsers: Any) -> None:
    p = subparsers.add_parser(
        "assess",
        help="report how documents fare against the quality rules (drops nothing)",
        description=__doc__,
        usage="%(prog)s INPUT... [options]",
        formatter_class=argparse.ArgumentDefaultsHelpFormatter,
    )
    add_input_arguments(p, quiet_help="log errors only", verbose_help="show example documents per failing rule")
    p.add_argument(
        "--sample", type=int, default=None, metavar="N", help="assess a seeded reservoir sample of N documents"
    )
    p.add_argument("--seed", type=int, default=0, help="seed of the sample")
    p.add_argument("--examples", type=int, default=3, metavar="K", help="example documents kept per failing rule")
    p.add_argument("--json", action="store_true", help="print the report as JSON")
    add_config_flags(p, sections=("input", "extract", "normalize", "lang", "quality"))
    p.set_defaults(handler=run)


def _documents(inputs: list[str], config: Any) -> Iterator[Document | Malformed]:
    from thresher.read.sources import iter_items

    for item in iter_items(inputs, config.input):
        if isinstance(item, (Document, Malformed)):
            yield item


def run(args: argparse.Namespace) -> int:
    from thresher.extract.stage import Extract
    from thresher.normalize.text import Normalize
    from thresher.quality.assess import assess
    from thresher.run.preflight import preflight

    config = config_from_args(args)
    preflight(args.inputs, None, config)
    from thresher.lang.stage import build_lang_stages

    prepare = [Extract(config.extract), Normalize(config.normalize), *build_lang_stages(config.lang)]
    if args.sample is not None and args.sample < 1:
        raise SystemExit("thresher assess: --sample must be at least 1")
    report = assess(_documents(args.inputs, config), config.quality, sample=args.sample, seed=args.seed,
                    prepare=prepare, examples=args.examples)
    if args.json:
        sys.stdout.write(json.dumps(report.to_dict(), ensure_ascii=False, indent=2) + "\n")
    else:
        sys.stdout.write(report.render(verbose=args.verbose > 0) + "\n")
    return 0
