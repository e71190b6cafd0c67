"""Issue 14 item 8: help that helps — `build --help` fits a screen, every setting is one flag away
(`--help-all`, `thresher help SECTION`), choices and list syntax are shown, and mistakes get a
"did you mean"."""

import pytest

from thresher.cli import build_parser, config_from_args, full_help, main, verb_parser
from thresher.config import RunConfig
from thresher.core.config import flat_fields


@pytest.fixture(autouse=True)
def _columns(monkeypatch):
    monkeypatch.setenv("COLUMNS", "100")


def build_help() -> str:
    return verb_parser(build_parser(), "build").format_help()


def test_build_help_fits_a_screen_and_points_to_the_rest():
    text = build_help()
    assert len(text.splitlines()) <= 60
    assert "--help-all" in text and "thresher help SECTION" in text
    assert "--quality-gopher-min-words" not in text  # a rarely-touched setting is left to --help-all


def test_help_all_lists_every_setting_with_its_config_key():
    text = " ".join(full_help(verb_parser(build_parser(), "build")).split())  # unwrapped
    for ff in flat_fields(RunConfig):
        assert ff.long_flag in text and f"[config: {ff.dotted}]" in text


def test_choice_flags_list_their_choices_with_none_and_one_default():
    text = build_help()
    assert "--quality {default,gopher,c4,fineweb,fineweb2,all,none}" in text
    # the format is a registry name (plugins add formats): its help lists the built-ins
    fmt = " ".join(text[text.index("--format "):].split("\n  --")[0].split())
    assert all(name in fmt for name in ("jsonl.gz", "jsonl.zst", "parquet"))
    workers = text[text.index("--workers N"):].split("\n  --")[0]
    assert workers.count("default") == 1 and "CPU count" in workers


def test_list_flags_show_comma_syntax_and_a_readable_default(capsys):
    assert main(["help", "input.warc"]) == 0
    text = " ".join(capsys.readouterr().out.split())  # unwrapped
    assert "--input-warc-http-statuses N,N,..." in text
    assert "(default: 200); a comma" in text and "list, or repeat the flag" in text
    assert "(default: text/html,application/xhtml+xml)" in text
    assert "(200,)" not in text and "('text/html'" not in text


@pytest.mark.parametrize(
    "argv",
    [
        ["--input-warc-http-statuses", "200,404"],
        ["--input-warc-http-statuses", "200 404"],
        ["--input-warc-http-statuses", "200", "--input-warc-http-statuses", "404"],
    ],
)
def test_list_flag_accepts_commas_spaces_and_repeats(argv):
    args = build_parser().parse_args(["build", "in.jsonl", "-o", "out", *argv])
    assert config_from_args(args).input.warc.http_statuses == (200, 404)


def test_mistyped_flag_gets_did_you_mean_from_the_verb(capsys):
    with pytest.raises(SystemExit) as exc:
        main(["build", "in.jsonl", "-o", "out", "--workrs", "2"])
    assert exc.value.code == 2
    err = capsys.readouterr().err
    assert "thresher build: error: unknown flag --workrs (did you mean --workers?)" in err
    assert err.startswith("usage: thresher build ")


def test_mistyped_verb_gets_did_you_mean(capsys):
    with pytest.raises(SystemExit):
        main(["biuld", "in.jsonl"])
    assert "(did you mean 'build'?)" in capsys.readouterr().err


def test_bad_quality_preset_lists_none(capsys):
    with pytest.raises(SystemExit) as exc:
        main(["build", "in.jsonl", "-o", "out", "--quality", "strict"])
    assert exc.value.code == 2
    assert "'all', 'none')" in capsys.readouterr().err


def test_workers_zero_is_rejected(capsys):
    assert main(["build", "in.jsonl", "-o", "out", "--workers", "0"]) == 1
    assert "workers must be at least 1" in capsys.readouterr().err


def test_help_section_lists_that_section_only(capsys):
    assert main(["help", "dedup.near"]) == 0
    text = capsys.readouterr().out
    assert "--dedup-near-threshold" in text and "--quality-preset" not in text
    assert main(["help", "qualty"]) == 1
    assert "did you mean 'quality'?" in capsys.readouterr().err


def test_help_on_a_name_that_is_a_verb_and_a_section_shows_both(capsys):
    assert main(["help", "dedup"]) == 0
    text = capsys.readouterr().out
    assert text.startswith("usage: thresher dedup INPUT... [options]")
    assert "settings under dedup" in text and "--dedup-keep" in text.split("settings under dedup")[1]


def test_dedup_help_fits_a_screen_too():
    text = verb_parser(build_parser(), "dedup").format_help()
    assert text.startswith("usage: thresher dedup INPUT... [options]") and len(text.splitlines()) <= 80
