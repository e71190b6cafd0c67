"""`thresher consent DATASET [--json] [--top 10] [--signals robots,noai,tdm]`: the consent ledger of a
built dataset — kept documents, words and hosts per opt-out signal and per agent whose robots.txt
disallows them, the opted-out hosts with the most kept words, and what `--consent enforce` would remove."""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

from thresher.core.errors import ConfigError, InputError


def register(subparsers: Any) -> None:
    p = subparsers.add_parser("consent", help="print a dataset's consent ledger (opt-out signals of kept pages)",
                              description=__doc__)
    p.add_argument("dataset", help="dataset directory (holding manifest.json)")
    p.add_argument("--top", type=int, default=10, help="opted-out hosts to list (default: 10)")
    p.add_argument("--signals", default="robots,noai,tdm",
                   help="signals 'enforce would remove' counts (default: robots,noai,tdm)")
    p.add_argument("--json", action="store_true", help="print the ledger as JSON")
    p.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    from thresher.consent.annotations import SIGNALS
    from thresher.report.consent import consent_ledger, render_ledger
    from thresher.write.manifest import read_shards

    if not (Path(args.dataset) / "manifest.json").is_file():
        raise InputError(f"{args.dataset}: not a thresher dataset (no manifest.json)")
    signals = tuple(s.strip() for s in args.signals.split(",") if s.strip())
    unknown = sorted(set(signals) - set(SIGNALS))
    if unknown:
        raise ConfigError(f"--signals: unknown {unknown}; choose from {', '.join(SIGNALS)}")
    data = consent_ledger(read_shards(args.dataset), signals).to_dict(top=args.top)
    print(json.dumps(data, indent=2, ensure_ascii=False) if args.json else render_ledger(data))
    return 0
