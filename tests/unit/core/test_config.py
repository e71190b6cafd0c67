import pytest

from thresher.cli import build_parser, config_from_args
from thresher.config import RunConfig
from thresher.core.config import flat_fields
from thresher.core.errors import ConfigError


def test_unknown_key_is_an_error_naming_it():
    with pytest.raises(ConfigError, match="unknown setting 'dedup.exact.levle'"):
        RunConfig.from_dict({"dedup": {"exact": {"levle": "raw"}}})


def test_wrong_type_and_bad_choice_are_errors():
    with pytest.raises(ConfigError, match="output.shard_max_records: expected an integer"):
        RunConfig.from_dict({"output": {"shard_max_records": "many"}})
    with pytest.raises(ConfigError, match="expected one of 'raw', 'normalized', 'structural'"):
        RunConfig.from_dict({"dedup": {"exact": {"level": "fuzzy"}}})
    with pytest.raises(ConfigError, match="shard_max_records must be at least 1"):
        RunConfig.from_dict({"output": {"shard_max_records": 0}})


def test_none_switches_a_check_off():
    cfg = RunConfig.from_dict({"dedup": {"exact": {"level": None}}})
    assert cfg.dedup.exact.level is None


def test_hash_ignores_execution_settings_but_not_output_settings():
    base = RunConfig()
    assert RunConfig.from_dict({"exec": {"workers": 7, "engine": "local"}}).hash == base.hash
    assert RunConfig.from_dict({"output": {"shard_max_records": 10}}).hash != base.hash


def test_dict_round_trip():
    cfg = RunConfig.from_dict({"output": {"shard_max_records": 10}, "dedup": {"keep": "longest"}})
    assert RunConfig.from_dict(cfg.to_dict()) == cfg


def test_toml_file_then_flags_override(tmp_path):
    toml = tmp_path / "t.toml"
    toml.write_text('[output]\nshard_max_records = 10\ncompression_level = 1\n[dedup.exact]\nlevel = "raw"\n')
    args = build_parser().parse_args(["build", "in.jsonl", "-o", "out", "--config", str(toml), "--shard-size", "20"])
    cfg = config_from_args(args)
    assert cfg.output.shard_max_records == 20  # flag wins
    assert cfg.output.compression_level == 1  # from the file
    assert cfg.dedup.exact.level == "raw"
    assert cfg.normalize.unicode_form == "NFKC"  # default


def test_flag_none_value_and_bool_flags():
    args = build_parser().parse_args(["build", "x", "-o", "y", "--exact-level", "none", "--strict"])
    cfg = config_from_args(args)
    assert cfg.dedup.exact.level is None and cfg.exec.strict is True


def test_unknown_toml_key_is_a_config_error(tmp_path):
    toml = tmp_path / "t.toml"
    toml.write_text("[output]\nshards = 3\n")
    args = build_parser().parse_args(["build", "x", "-o", "y", "--config", str(toml)])
    with pytest.raises(ConfigError, match="unknown setting 'output.shards'"):
        config_from_args(args)


def test_every_setting_has_help_and_a_flag():
    parser = build_parser()
    from thresher.cli import full_help

    help_text = full_help(parser._subparsers._group_actions[0].choices["build"])  # noqa: SLF001
    for ff in flat_fields(RunConfig):
        assert ff.help, f"{ff.dotted} has no help text"
        assert ff.long_flag in help_text


def test_toml_switches_a_check_off_with_the_string_none(tmp_path):
    toml = tmp_path / "t.toml"
    toml.write_text('[dedup.exact]\nlevel = "none"\n[dedup.near]\nmethod = "off"\n')
    cfg = RunConfig.from_toml(toml)
    assert cfg.dedup.exact.level is None and cfg.dedup.near.method is None
