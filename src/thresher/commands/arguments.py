"""The arguments verbs share and the parser they are read with: one flag per `RunConfig` setting
(defaults declared once, there, so `--help` always shows the real ones), the inputs every reading
verb takes, the settings those make (`config_from_args`), and help that fits a screen.

`thresher.cli` builds the top-level parser from these and each verb's module (`thresher.commands.*`)
adds its own arguments with them, so neither a verb nor `thresher help` imports the CLI.
"""

from __future__ import annotations

import argparse
import difflib
import importlib
import re
import sys
from collections.abc import Sequence
from typing import Any, NoReturn

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
from thresher.core.errors import ConfigError

_DEST_PREFIX = "cfg__"

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
    data = settings_from_args(args)
    config = RunConfig.from_dict(data)
    _refuse_ignored_settings(data, config)
    return config


def settings_from_args(args: argparse.Namespace) -> dict[str, Any]:
    """The settings a command line gives (the TOML file of `--config`, then the flags), nested as in
    the config tree; what it leaves out is not there."""
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
    return data


def _refuse_ignored_settings(data: dict[str, Any], config: RunConfig) -> None:
    """A setting the user gave that the chosen method would not read is an error, not a silent no-op."""
    near = data.get("dedup", {}).get("near", {})
    if isinstance(near, dict) and "threshold" in near and config.dedup.near.method == "simhash":
        raise ConfigError(
            "--threshold (dedup.near.threshold) is the MinHash Jaccard threshold; SimHash compares fingerprints by "
            "Hamming distance: set --dedup-near-simhash-max-hamming instead"
        )

def verb_parser(parser: argparse.ArgumentParser, verb: str) -> argparse.ArgumentParser | None:
    """The parser of `verb` among `parser`'s subcommands (None when it has no such verb)."""
    for action in parser._actions:  # noqa: SLF001
        if isinstance(action, argparse._SubParsersAction):  # noqa: SLF001
            found: argparse.ArgumentParser | None = action.choices.get(verb)
            return found
    return None
