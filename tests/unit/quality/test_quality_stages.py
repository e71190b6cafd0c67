import pytest

from thresher.config import RunConfig
from thresher.core import ConfigError
from thresher.core.stages import RuleSet, Transform
from thresher.quality.config import PRESETS, QualityConfig
from thresher.quality.stages import build_quality_stages
from thresher.quality.urls import UrlFilterConfig


def names(config: QualityConfig) -> list[str]:
    return [s.name for s in build_quality_stages(config)]


def test_default_preset_is_fineweb_recipe_without_unconfigured_lists():
    assert names(QualityConfig()) == [
        "quality.gopher", "quality.repetition", "quality.c4_lines", "quality.c4", "quality.fineweb"
    ]


def test_presets_choose_rule_sets():
    assert names(QualityConfig(preset="gopher")) == ["quality.gopher", "quality.repetition"]
    assert names(QualityConfig(preset="c4")) == ["quality.c4_lines", "quality.c4"]
    assert names(QualityConfig(preset=None)) == []
    c4_lines = build_quality_stages(QualityConfig(preset="c4"))[0]
    assert c4_lines.require_terminal_punctuation is True
    assert build_quality_stages(QualityConfig())[2].require_terminal_punctuation is False


def test_explicit_rule_sets_override_the_preset(tmp_path):
    (tmp_path / "b.txt").write_text("bad.com\n")
    cfg = QualityConfig(rule_sets=("fineweb", "urls"), urls=UrlFilterConfig(blocklists=(str(tmp_path / "b.txt"),)))
    assert names(cfg) == ["quality.urls", "quality.fineweb"]


def test_stages_satisfy_the_protocols():
    for stage in build_quality_stages(QualityConfig(preset="all")):
        assert isinstance(stage, (RuleSet, Transform))


def test_thresholds_come_from_toml_form_and_none_disables():
    cfg = RunConfig.from_dict({"quality": {"preset": "gopher", "gopher": {"min_words": None, "max_words": 10}}})
    assert cfg.quality.gopher.min_words is None and cfg.quality.gopher.max_words == 10
    with pytest.raises(ConfigError):
        RunConfig.from_dict({"quality": {"gopher": {"min_wordz": 3}}})
    with pytest.raises(ConfigError):
        RunConfig.from_dict({"quality": {"rule_sets": ["nope"]}})


def test_every_preset_names_known_rule_sets():
    for preset, sets in PRESETS.items():
        assert QualityConfig(preset=preset).active_rule_sets == sets  # type: ignore[arg-type]
