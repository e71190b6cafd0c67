"""The command line: a thin layer over the library.

Verbs live in `thresher.commands.<verb>` modules, each with `register(subparsers)`; flags that set
configuration are generated from `RunConfig` (defaults declared once, there), so `--help` always
shows the real defaults. Typed errors become one-line messages: exit 0 success, 1 input or config
error, 2 usage error, 130 interrupted.
"""

from __future__ import annotations

import argparse
import importlib
import logging
import sys
from collections.abc import Sequence
from typing import Any

from thresher import __version__
from thresher.config import RunConfig, load_toml
from thresher.core.config import flat_fields, merge, nest, parse_flag_value
from thresher.core.errors import ConfigError, ThresherError

VERBS = ("build", "assess", "dedup", "extract", "verify", "report", "check", "compare", "demo", "decontam-report")
_DEST_PREFIX = "cfg__"

log = logging.getLogger("thresher")


def add_config_flags(parser: argparse.ArgumentParser, sections: Sequence[str] | None = None) -> None:
    """Add one flag per RunConfig setting (optionally only some sections), grouped by section.

    Flags default to "not given" so that only what the user typed overrides the config file."""
    groups: dict[str, Any] = {}
    for ff in flat_fields(RunConfig):
        if sections is not None and ff.path[0] not in sections:
            continue
        group = groups.get(ff.path[0])
        if group is None:
            group = groups[ff.path[0]] = parser.add_argument_group(f"{ff.path[0]} settings")
        names = [ff.long_flag] + ([ff.flag] if ff.flag and ff.flag != ff.long_flag else [])
        dest = _DEST_PREFIX + "__".join(ff.path)
        default_text = "none" if ff.default is None else str(ff.default)
        help_text = f"{ff.help} (default: {default_text}; config key {ff.dotted})"
        if ff.type is bool:
            group.add_argument(*names, dest=dest, action=argparse.BooleanOptionalAction, default=argparse.SUPPRESS, help=help_text)
        else:
            group.add_argument(*names, dest=dest, default=argparse.SUPPRESS, metavar="VALUE", help=help_text)


INPUTS_HELP = "JSONL(.gz/.zst), WARC/ARC/WET, Parquet, HTML files, a directory, a glob, a URL, or - for stdin"


def add_input_arguments(
    parser: argparse.ArgumentParser, quiet_help: str = "no progress and no report", verbose_help: str = "log more"
) -> None:
    """The arguments every verb that reads a crawl shares: inputs, a settings file, -q and -v."""
    parser.add_argument("inputs", nargs="+", metavar="INPUT", help=INPUTS_HELP)
    parser.add_argument("--config", metavar="TOML", help="settings file (flags override it)")
    parser.add_argument("-q", "--quiet", action="store_true", help=quiet_help)
    parser.add_argument("-v", "--verbose", action="count", default=0, help=verbose_help)


def config_from_args(args: argparse.Namespace) -> RunConfig:
    """defaults < TOML file (`--config`) < flags, validated against the config tree."""
    data: dict[str, Any] = load_toml(args.config) if getattr(args, "config", None) else {}
    by_dest = {_DEST_PREFIX + "__".join(ff.path): ff for ff in flat_fields(RunConfig)}
    for dest, value in vars(args).items():
        ff = by_dest.get(dest)
        if ff is None:
            continue
        if not isinstance(value, bool):
            value = parse_flag_value(ff, value)
        data = merge(data, nest(ff.path, value))
    return RunConfig.from_dict(data)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="thresher",
        description="Turn a web crawl into an ML-ready text corpus: extract, filter, deduplicate, shard.",
    )
    parser.add_argument("--version", action="version", version=f"thresher {__version__}")
    sub = parser.add_subparsers(dest="verb", metavar="VERB")
    for verb in VERBS:
        try:
            module = importlib.import_module(f"thresher.commands.{verb.replace('-', '_')}")
        except ImportError as exc:  # a verb whose module is not in this build
            log.debug("verb %s unavailable: %s", verb, exc)
            continue
        module.register(sub)
    return parser


def _setup_logging(verbosity: int, quiet: bool) -> None:
    level = logging.ERROR if quiet else logging.INFO if verbosity > 0 else logging.WARNING
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(logging.Formatter("thresher: %(levelname)s: %(message)s"))
    root = logging.getLogger("thresher")
    root.handlers[:] = [handler]
    root.setLevel(level)
    root.propagate = False


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if not getattr(args, "handler", None):
        parser.print_help(sys.stderr)
        return 2
    _setup_logging(getattr(args, "verbose", 0) or 0, getattr(args, "quiet", False))
    try:
        code: int = args.handler(args)
        return code
    except ConfigError as exc:
        print(f"thresher: config error: {exc}", file=sys.stderr)
        return 1
    except ThresherError as exc:
        print(f"thresher: error: {exc}", file=sys.stderr)
        return exc.exit_code
    except KeyboardInterrupt:
        print("thresher: interrupted; rerun the same command to resume", file=sys.stderr)
        return 130
    except BrokenPipeError:
        return 0


if __name__ == "__main__":
    sys.exit(main())
