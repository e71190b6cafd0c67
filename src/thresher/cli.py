"""The command line: a thin layer over the library.

Each verb lives in its own module under `thresher.commands`, named in `VERB_MODULES` and imported
only when the command line needs that verb; the module's `register(subparsers)` adds the verb and
its arguments. Flags that set configuration are generated from `RunConfig` by
`thresher.commands.arguments` (defaults declared once, there), so `--help` always shows the real
defaults. Typed errors become one-line messages: exit 0 success, 1 input or config error, 2 usage
error, 130 interrupted.

The CLI is the top layer: it imports the verbs' modules, and none of them imports it.
"""

from __future__ import annotations

import argparse
import difflib
import importlib
import logging
import sys
from collections.abc import Sequence
from typing import Any, NoReturn

from thresher import __version__
from thresher.commands.arguments import HelpFormatter, Parser, config_from_args, full_help, verb_parser
from thresher.core.errors import ConfigError, ThresherError

# the names tests and callers have long imported from here
__all__ = ["VERBS", "VERB_MODULES", "build_parser", "config_from_args", "full_help", "main", "verb_parser"]

# verb -> the module that registers it, imported only when that verb is parsed (importing every
# verb's module would cost every command its startup time); the order is `--help`'s
VERB_MODULES = {
    "build": "thresher.commands.build",
    "assess": "thresher.commands.assess",
    "dedup": "thresher.commands.dedup",
    "extract": "thresher.commands.extract",
    "verify": "thresher.commands.verify",
    "pack": "thresher.commands.pack",
    "report": "thresher.commands.report",
    "check": "thresher.commands.check",
    "consent": "thresher.commands.consent",
    "compare": "thresher.commands.compare",
    "explain": "thresher.commands.explain",
    "signals": "thresher.commands.signals",
    "replay": "thresher.commands.replay",
    "lang": "thresher.commands.lang",
    "classify": "thresher.commands.classify",
    "embed": "thresher.commands.embed",
    "fetch": "thresher.commands.fetch",
    "decontam-report": "thresher.commands.decontam_report",
    "demo": "thresher.commands.demo",
    "help": "thresher.commands.help",
}
VERBS = tuple(VERB_MODULES)

log = logging.getLogger("thresher")

def build_parser(verbs: Sequence[str] = VERBS) -> argparse.ArgumentParser:
    """The parser with the subcommands of `verbs` (every verb by default; `main` registers only the
    one the command line names, so a run imports and builds the flags of that verb alone)."""
    parser = Parser(
        prog="thresher",
        description="Turn a web crawl into an ML-ready text corpus: extract, filter, deduplicate, shard.",
    )
    parser.add_argument("--version", action="version", version=f"thresher {__version__}")
    sub = parser.add_subparsers(dest="verb", metavar="VERB", parser_class=Parser)
    sub.add_parser = _with_formatter(sub.add_parser)  # type: ignore[method-assign]
    for verb in verbs:
        try:
            module = importlib.import_module(VERB_MODULES[verb])
        except ImportError as exc:  # a verb whose module is not in this build
            log.debug("verb %s unavailable: %s", verb, exc)
            continue
        module.register(sub)
    help_verb = sub.choices.get("help")
    if help_verb is not None:  # `thresher help` describes every verb: handed this function, it need not import the CLI
        help_verb.set_defaults(every_verb_parser=build_parser)
    return parser

def _with_formatter(add_parser: Any) -> Any:
    """Every verb's parser uses HelpFormatter (whatever formatter its module asked for)."""

    def add(*args: Any, **kwargs: Any) -> Any:
        kwargs["formatter_class"] = HelpFormatter
        return add_parser(*args, **kwargs)

    return add

def _setup_logging(verbosity: int, quiet: bool) -> None:
    level = logging.ERROR if quiet else logging.INFO if verbosity > 0 else logging.WARNING
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(logging.Formatter("thresher: %(levelname)s: %(message)s"))
    root = logging.getLogger("thresher")
    root.handlers[:] = [handler]
    root.setLevel(level)
    root.propagate = False

def _unknown_flags(parser: argparse.ArgumentParser, args: argparse.Namespace, extras: list[str]) -> NoReturn:
    """Unknown arguments, reported by the verb that got them, with the closest flag it knows."""
    target = verb_parser(parser, getattr(args, "verb", None) or "") or parser
    known = [o for a in target._actions for o in a.option_strings]  # noqa: SLF001
    flag = next((e for e in extras if e.startswith("-")), None)
    if flag is None:
        target.error(f"unrecognized arguments: {' '.join(extras)}")
    name = flag.split("=", 1)[0]
    close = difflib.get_close_matches(name, known, n=1, cutoff=0.6)
    hint = f" (did you mean {close[0]}?)" if close else f" (see {target.prog} --help-all)"
    target.error(f"unknown flag {name}{hint}")

def _verbs_to_register(argv: Sequence[str]) -> Sequence[str]:
    """Only the verb the command line starts with, when it starts with one; else every verb (for the
    top-level help, `--version`, and a mistyped verb's "did you mean")."""
    if argv and argv[0] in VERBS:
        return (argv[0],)
    return VERBS

def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    parser = build_parser(_verbs_to_register(argv))
    args, extras = parser.parse_known_args(argv)
    if extras:
        _unknown_flags(parser, args, extras)
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
    except OSError as exc:  # a file the checks before the run could not foresee (one line, not a traceback)
        where = f"{exc.filename}: " if exc.filename else ""
        print(f"thresher: error: {where}{exc.strerror or exc}", file=sys.stderr)
        return 1

if __name__ == "__main__":
    sys.exit(main())
