"""`thresher check DATASET [--sample 10000] [--bounds check.toml] [--language en --min-language-share 0.992 ...]`:
estimate the dataset's language share, duplicate-paragraph rate, boilerplate-line rate, mean length
and character entropy from a uniform sample, each with a 95% interval, and gate on bounds. Exit code
0 when every bound holds, 1 when one fails (or the dataset cannot be read)."""

from __future__ import annotations

import argparse
import json
import sys
import tomllib
from pathlib import Path
from typing import Any

from thresher.core.errors import ConfigError

BOUND_FLAGS = (
    ("min_language_share", "smallest share of the target language (with --language)"),
    ("max_duplicate_paragraph_rate", "largest share of repeated paragraphs"),
    ("max_boilerplate_line_rate", "largest share of boilerplate lines"),
    ("min_mean_words", "smallest mean words per document"),
    ("max_mean_words", "largest mean words per document"),
    ("min_mean_char_entropy", "smallest mean character entropy (bits)"),
    ("max_mean_char_entropy", "largest mean character entropy (bits)"),
)


def register(subparsers: Any) -> None:
    p = subparsers.add_parser("check", help="estimate dataset quality with confidence intervals; gate on bounds",
                              description=__doc__)
    p.add_argument("dataset", help="dataset directory (holding manifest.json)")
    p.add_argument("--sample", type=int, default=10_000, help="documents to sample (default: 10000)")
    p.add_argument("--bounds", metavar="TOML", help="bounds file: a [check] table (or top-level keys)")
    p.add_argument("--language", help="target language code for language_share (e.g. en)")
    for name, text in BOUND_FLAGS:
        p.add_argument("--" + name.replace("_", "-"), type=float, dest=name, default=None, help=text)
    p.add_argument("--consent-policy", metavar="ITEMS", default=None,
                   help="fail when a kept document carries one of these opt-outs: robots, robots:AGENT, noai, "
                   "noimageai, tdm (comma-separated; see docs/consent.md)")
    p.add_argument("--json", action="store_true", help="print the result as JSON")
    p.set_defaults(handler=run)


def bounds_from_args(args: argparse.Namespace) -> Any:
    from thresher.report.check import Bounds

    data: dict[str, Any] = {}
    if args.bounds:
        try:
            raw = tomllib.loads(Path(args.bounds).read_text(encoding="utf-8"))
        except FileNotFoundError as exc:
            raise ConfigError(f"bounds file not found: {args.bounds}") from exc
        except tomllib.TOMLDecodeError as exc:
            raise ConfigError(f"{args.bounds}: invalid TOML: {exc}") from exc
        data = raw.get("check", raw)
        if not isinstance(data, dict):
            raise ConfigError(f"{args.bounds}: [check] must be a table")
    if args.language is not None:
        data["language"] = args.language
    for name, _ in BOUND_FLAGS:
        if getattr(args, name) is not None:
            data[name] = getattr(args, name)
    return Bounds.from_mapping(data)


def run(args: argparse.Namespace) -> int:
    from thresher.report.check import check_dataset
    from thresher.report.dataset import open_dataset

    open_dataset(args.dataset)  # a damaged manifest or an unlisted shard: one line, before sampling
    if args.sample < 1:
        raise ConfigError("--sample must be at least 1")
    consent = consent_policy_violations(args.dataset, args.consent_policy) if args.consent_policy else None
    result = check_dataset(args.dataset, bounds_from_args(args), args.sample)
    if args.json:
        print(json.dumps({**result.to_dict(), **({"consent_policy": consent} if consent is not None else {})},
                         indent=2))
    else:
        print(result.render())
        if consent is not None:
            print("consent policy " + args.consent_policy + ": " + (
                "holds" if not consent else
                "broken by " + ", ".join(f"{n} kept documents with {item}" for item, n in consent.items())))
    failed = [m.name for m in result.measures if not m.passed] + [f"consent:{item}" for item in consent or {}]
    if failed:
        print("thresher: check failed: " + ", ".join(failed), file=sys.stderr)
    return 0 if not failed else 1


def consent_policy_violations(dataset: str, policy: str) -> dict[str, int]:
    """Kept documents that break each item of a `--consent-policy` (empty: it holds)."""
    from thresher.report.consent import consent_ledger, parse_policy, policy_violations
    from thresher.write.manifest import read_shards

    try:
        items = parse_policy(policy)
    except ValueError as exc:
        raise ConfigError(f"--consent-policy: {exc}") from exc
    return policy_violations(consent_ledger(read_shards(dataset)), items)
