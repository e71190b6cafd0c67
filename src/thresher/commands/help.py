"""`thresher help [VERB | SECTION]`: a verb's help, or every setting of one config section (`quality`,
`dedup.near`, ...) with its flag, default and config key."""

from __future__ import annotations

import argparse
import sys
from typing import Any

from thresher.commands.arguments import HelpFormatter, add_config_flags, full_help, verb_parser
from thresher.config import RunConfig
from thresher.core.config import flat_fields
from thresher.core.errors import ConfigError


def sections() -> list[str]:
    """Every section and subsection of the config tree, dotted (`quality`, `quality.gopher`, ...)."""
    found: dict[str, None] = {}
    for ff in flat_fields(RunConfig):
        for depth in range(1, len(ff.path)):
            found.setdefault(".".join(ff.path[:depth]))
    return list(found)


def register(subparsers: Any) -> None:
    p = subparsers.add_parser(
        "help", help="help on a verb or on one section of settings", description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
        epilog="sections: " + ", ".join(sections()),
    )
    p.add_argument(
        "topic",
        nargs="?",
        metavar="VERB|SECTION",
        help="a verb (build, dedup, ...) or a settings section (quality, dedup.near, ...)",
    )
    p.set_defaults(handler=run)


def section_help(name: str) -> str:
    """Every setting under the section `name`, as `thresher build` accepts them."""
    if name not in sections():
        import difflib

        close = difflib.get_close_matches(name, sections(), n=1, cutoff=0.6)
        hint = f"did you mean {close[0]!r}? " if close else ""
        raise ConfigError(
            f"no settings section {name!r} ({hint}sections: {', '.join(s for s in sections() if '.' not in s)})"
        )
    parser = argparse.ArgumentParser(
        prog="thresher build", usage=argparse.SUPPRESS, add_help=False, formatter_class=HelpFormatter
    )
    add_config_flags(parser, prefix=name, full=True)
    return f"settings under {name} (flags of thresher build; TOML keys in brackets):\n" + parser.format_help()


def run(args: argparse.Namespace) -> int:
    parser: argparse.ArgumentParser = args.every_verb_parser()  # the CLI's parser of every verb
    topic = args.topic
    if topic is None:
        sys.stdout.write(parser.format_help().rstrip("\n") + "\n")
        print("\nsettings sections (thresher help SECTION): " + ", ".join(s for s in sections() if "." not in s))
        return 0
    verb = verb_parser(parser, topic)
    if verb is not None:
        sys.stdout.write(full_help(verb))
        if topic in sections():  # `dedup` is a verb and a settings section: both are asked for
            sys.stdout.write("\n" + section_help(topic))
        return 0
    sys.stdout.write(section_help(topic))
    return 0
