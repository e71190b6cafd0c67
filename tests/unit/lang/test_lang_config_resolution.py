"""`lang.detector = auto` is resolved when the config is made, so manifests and config hashes name
the detector that ran (output then depends on the config alone, never silently on an install)."""

from __future__ import annotations

from thresher.config import RunConfig
from thresher.lang.cascade import cld2_available
from thresher.lang.config import LangConfig


def test_auto_resolves_to_the_installed_detector():
    expected = "cascade" if cld2_available() else "ngram"
    assert LangConfig().detector == expected
    assert RunConfig().to_dict()["lang"]["detector"] == expected


def test_the_resolved_detector_changes_the_config_hash():
    script = RunConfig.from_dict({"lang": {"detector": "script"}})
    assert script.lang.detector == "script"
    assert RunConfig().hash != script.hash  # auto is the cascade or the n-gram model, never the script alone
