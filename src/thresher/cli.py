"""The command line: a thin layer over the library.

Verbs live in `thresher.commands.<verb>` modules, each with `register(subparsers)`; flags that set
configuration are generated from `RunConfig` (defaults declared once, there), so `--help` always
shows the real defaults. Typed errors become one-line messages: exit 0 success, 1 input or config
error, 2 usage error, 130 interrupted.
"""

from __future__ import annotations

import argparse
import difflib
import importlib
import logging
import re
import sys
from collections.abc import Sequence
from typing import Any, NoReturn

from thresher import __version__
from thresher.config import RunConfig, load_toml
from thresher.core.config import (
    FlatField,
    default_text,
    flag_choices,
    flag_metavar,
    flat_fields,
    is_list_setting,
    merge,
    nest,
    parse_flag_value,
)
from thresher.core.errors import ConfigError, ThresherError

VERBS = ("build", "assess", "dedup", "extract", "verify", "report", "check", "compare", "explain", "lang", "classify",
         "embed", "fetch", "decontam-report", "demo", "help")
_DEST_PREFIX = "cfg__"

log = logging.getLogger("thresher")

# The settings `--help` shows (the ones most builds touch); every other one is listed by
# `--help-all` and by `thresher help SECTION`.
COMMON_FLAGS = (
    "--input-format", "--html-column", "--extractor", "--text-format", "--quality", "--exact-level", "--method",
    "--threshold", "--keep", "--format", "--shard-size", "--engine", "--workers", "--ray-address", "--strict",
)

# Settings whose values are names in a registry (built-ins and plugins): help lists the names, the
# config checks them (plugins load only when asked for). (module, registry, values before, values after)
_REGISTRY_SETTINGS = {
    "input.format": ("thresher.read.readers", "READERS", ("auto",), ()),
    "output.format": ("thresher.write.formats", "FORMATS", (), ()),
    "dedup.near.method": ("thresher.dedup.methods", "NEAR_METHODS", (), ("none",)),
    "extract.extractor": ("thresher.extract.registry", "EXTRACTORS", (), ()),
    "embed.encoder": ("thresher.embed.encoder", "ENCODERS", (), ("none",)),
    "exec.engine": ("thresher.run.engine_registry", "ENGINES", (), ()),
}


def _registry_metavar(ff: FlatField) -> str | None:
    spec = _REGISTRY_SETTINGS.get(ff.dotted)
    if spec is None:
        return None
    module, attr, before, after = spec
    try:
        registry = getattr(importlib.import_module(module), attr)
        names = [*before, *sorted(registry.names(), key=lambda n: (n != ff.default, n)), *after]
    except (ImportError, AttributeError):
        return None
    return "{" + ",".join(dict.fromkeys(names)) + "}"


class Parser(argparse.ArgumentParser):
    """argparse with "did you mean" for a mistyped verb or choice, and registry metavars
    (`{jsonl,parquet,…}`) listed only when help or usage is shown: listing a registry loads its
    plugins' entry points, and importing `importlib.metadata` costs every command ~20 ms."""

    def format_usage(self) -> str:
        self._list_registries()
        return super().format_usage()

    def format_help(self) -> str:
        self._list_registries()
        return super().format_help()

    def _list_registries(self) -> None:
        for action in self._actions:
            ff = getattr(action, "registry_setting", None)
            if ff is not None:
                action.metavar = _registry_metavar(ff) or action.metavar
                del action.registry_setting  # type: ignore[attr-defined]

    def error(self, message: str) -> NoReturn:
        self.print_usage(sys.stderr)
        self.exit(2, f"{self.prog}: error: {message}{_choice_suggestion(message)}\n")

def _choice_suggestion(message: str) -> str:
    match = re.search(r"invalid choice: '([^']*)' \(choose from (.*)\)", message)
    if not match:
        return ""
    options = re.findall(r"'([^']*)'", match.group(2))
    close = difflib.get_close_matches(match.group(1), options, n=1, cutoff=0.6)
    return f" (did you mean {close[0]!r}?)" if close else ""

def describe_setting(ff: FlatField, *, with_key: bool) -> str:
    """A setting's help line: its text, its default as typed on the command line, list syntax."""
    text = ff.help
    if "(default:" not in text:  # some help already says it in words ("default: CPU count")
        text += f" (default: {default_text(ff.default)})"
    if is_list_setting(ff):
        text += "; a comma-separated list, or repeat the flag"
    if with_key:
        text += f" [config: {ff.dotted}]"
    return text

class _HelpAll(argparse.Action):
    """`--help-all`: the verb's help, then every setting, grouped by section."""

    def __init__(self, option_strings: Sequence[str], dest: str, **kwargs: Any) -> None:
        super().__init__(option_strings, dest, nargs=0, default=argparse.SUPPRESS, **kwargs)

    def __call__(self, parser: argparse.ArgumentParser, namespace: Any, values: Any, option_string: Any = None) -> None:
        sys.stdout.write(full_help(parser))
        parser.exit(0)

def full_help(parser: argparse.ArgumentParser) -> str:
    """A verb's help followed by every setting it takes, grouped by section, with its config key."""
    text = parser.format_help()
    if not hasattr(parser, "config_sections"):  # a verb without generated settings
        return text
    sections: Sequence[str] | None = parser.config_sections
    reference = Parser(prog=parser.prog, usage=argparse.SUPPRESS, add_help=False, formatter_class=HelpFormatter)
    add_config_flags(reference, sections, full=True)
    return text + "\nevery setting:\n" + reference.format_help()

class HelpFormatter(argparse.HelpFormatter):
    """Help that fits a screen: a common setting is shown by its short alias alone (`--workers N`,
    not `--exec-workers N, --workers N`; `--help-all` lists both); a default is shown only when it
    says something (not None or False)."""

    def _format_action_invocation(self, action: argparse.Action) -> str:
        short_names = getattr(action, "short_names", None)
        if short_names:
            saved = action.option_strings
            action.option_strings = short_names
            try:
                return super()._format_action_invocation(action)
            finally:
                action.option_strings = saved
        return super()._format_action_invocation(action)

    def _get_help_string(self, action: argparse.Action) -> str | None:
        text = action.help or ""
        if (
            "%(default)" not in text and "(default:" not in text and action.option_strings
            and action.default not in (None, False, 0, argparse.SUPPRESS) and action.nargs != 0
        ):
            text += " (default: %(default)s)"
        return text

def add_config_flags(
    parser: argparse.ArgumentParser,
    sections: Sequence[str] | None = None,
    *,
    prefix: str | None = None,
    full: bool = False,
) -> None:
    """Add one flag per RunConfig setting (optionally only some sections, or those under a dotted
    `prefix`). `full`: every setting shown, grouped by section, with its config key; else only the
    COMMON_FLAGS are shown, in one group, and `--help-all` (added here) lists the rest.

    Flags default to "not given" so that only what the user typed overrides the config file."""
    groups: dict[str, Any] = {}
    for ff in flat_fields(RunConfig):
        if sections is not None and ff.path[0] not in sections:
            continue
        if prefix is not None and not (ff.dotted == prefix or ff.dotted.startswith(prefix + ".")):
            continue
        title = f"{ff.path[0]} settings (thresher help {ff.path[0]})" if full else (
            "common settings (every setting: --help-all; one section: thresher help SECTION)"
        )
        group = groups.get(title)
        if group is None:
            group = groups[title] = parser.add_argument_group(title)
        names = [ff.long_flag] + ([ff.flag] if ff.flag and ff.flag != ff.long_flag else [])
        dest = _DEST_PREFIX + "__".join(ff.path)
        if full:
            help_text = describe_setting(ff, with_key=True)
        else:
            help_text = describe_setting(ff, with_key=False) if ff.flag in COMMON_FLAGS else argparse.SUPPRESS
        if ff.type is bool:
            action = group.add_argument(
                *names, dest=dest, action=argparse.BooleanOptionalAction, default=argparse.SUPPRESS, help=help_text
            )
        elif is_list_setting(ff):
            action = group.add_argument(
                *names, dest=dest, action="append", default=argparse.SUPPRESS, metavar=flag_metavar(ff), help=help_text
            )
        else:
            action = group.add_argument(*names, dest=dest, default=argparse.SUPPRESS,
                                        metavar=flag_metavar(ff), choices=flag_choices(ff), help=help_text)
            if ff.dotted in _REGISTRY_SETTINGS:
                action.registry_setting = ff  # type: ignore[union-attr]  # the metavar, once shown (Parser)
        if not full and ff.flag and ff.flag != ff.long_flag:
            no = ["--no-" + ff.flag[2:]] if ff.type is bool else []
            action.short_names = [ff.flag, *no]  # type: ignore[union-attr]
    if not full:
        parser.config_sections = sections  # type: ignore[attr-defined]  # what --help-all lists
        parser.add_argument("--help-all", action=_HelpAll, help="show every setting, grouped by section, and exit")

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
        if isinstance(value, list):  # a list flag, repeatable: `--x a,b --x c`
            value = parse_flag_value(ff, ",".join(value))
        elif not isinstance(value, bool):
            value = parse_flag_value(ff, value)
        data = merge(data, nest(ff.path, value))
    config = RunConfig.from_dict(data)
    _refuse_ignored_settings(data, config)
    return config


def _refuse_ignored_settings(data: dict[str, Any], config: RunConfig) -> None:
    """A setting the user gave that the chosen method would not read is an error, not a silent no-op."""
    near = data.get("dedup", {}).get("near", {})
    if isinstance(near, dict) and "threshold" in near and config.dedup.near.method == "simhash":
        raise ConfigError(
            "--threshold (dedup.near.threshold) is the MinHash Jaccard threshold; SimHash compares fingerprints by "
            "Hamming distance: set --dedup-near-simhash-max-hamming instead"
        )

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
            module = importlib.import_module(f"thresher.commands.{verb.replace('-', '_')}")
        except ImportError as exc:  # a verb whose module is not in this build
            log.debug("verb %s unavailable: %s", verb, exc)
            continue
        module.register(sub)
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

def verb_parser(parser: argparse.ArgumentParser, verb: str) -> argparse.ArgumentParser | None:
    for action in parser._actions:  # noqa: SLF001
        if isinstance(action, argparse._SubParsersAction):  # noqa: SLF001
            found: argparse.ArgumentParser | None = action.choices.get(verb)
            return found
    return None

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
