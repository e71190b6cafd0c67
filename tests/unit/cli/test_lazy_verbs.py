"""A command line naming a verb imports that verb's module alone; the top-level help lists them all."""

from __future__ import annotations

import subprocess
import sys

from thresher.cli import VERBS, build_parser, main

PROBE = """
import sys
from thresher.cli import main
try:
    main(["verify", "--help"])
except SystemExit:
    pass
print(sorted(m for m in sys.modules if m.startswith("thresher.commands.")))
"""


def test_a_verb_imports_only_its_own_command_module() -> None:
    out = subprocess.run([sys.executable, "-c", PROBE], capture_output=True, text=True, check=True).stdout
    loaded = out.strip().splitlines()[-1]
    assert "'thresher.commands.verify'" in loaded
    assert "thresher.commands.build" not in loaded and "thresher.commands.classify" not in loaded


def test_top_level_help_lists_every_verb(capsys) -> None:  # type: ignore[no-untyped-def]
    try:
        main(["--help"])
    except SystemExit:
        pass
    text = capsys.readouterr().out
    for verb in VERBS:
        assert verb in text, verb


def test_mistyped_verb_still_gets_a_suggestion(capsys) -> None:  # type: ignore[no-untyped-def]
    try:
        main(["biuld", "x"])
    except SystemExit as exc:
        assert exc.code == 2
    assert "did you mean 'build'" in capsys.readouterr().err


def test_one_verb_parser_parses_like_the_full_one() -> None:
    argv = ["build", "in.jsonl", "-o", "out", "--workers", "3", "--method", "simhash"]
    assert vars(build_parser(("build",)).parse_args(argv)).keys() == vars(build_parser().parse_args(argv)).keys()
    assert (
        build_parser(("build",)).parse_args(argv).cfg__exec__workers
        == build_parser().parse_args(argv).cfg__exec__workers
    )
