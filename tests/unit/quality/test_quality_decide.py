"""`measure` then `decide` (the halves `build --signals` records and `thresher replay` decides from)
give `evaluate`'s result, under the bounds the values were measured with and under any others."""

import json
import random

import pytest

from thresher.core import Document
from thresher.core.stages import Decider
from thresher.quality.config import QualityConfig
from thresher.quality.gopher import GopherQuality, GopherQualityConfig
from thresher.quality.stages import build_quality_stages

WORDS = "the of and river garden market winter harbor ... # - library station orchard bridge".split()


def texts() -> list[str]:
    rng = random.Random(7)
    out = ["", "one", "日本語の文章です。これはテストです。" * 5, "#" * 40]
    for n in (3, 20, 60, 200, 900):
        lines = [" ".join(rng.choice(WORDS) for _ in range(rng.randint(1, 14))) for _ in range(max(1, n // 8))]
        out.append("\n".join(lines))
        out.append("\n".join(lines[: len(lines) // 2] * 3))  # repeated lines
    return out


def docs(code: str | None = "en") -> list[Document]:
    annotations = {"lang.code": code} if code else {}
    return [Document(id=f"d{i}", text=t, annotations=dict(annotations)) for i, t in enumerate(texts())]


@pytest.mark.parametrize("preset", ["default", "all"])
def test_decide_from_measured_values_equals_evaluate(preset):
    stages = [s for s in build_quality_stages(QualityConfig(preset=preset)) if isinstance(s, Decider)]
    assert {s.name for s in stages} >= {"quality.gopher", "quality.repetition", "quality.c4", "quality.fineweb"}
    for d in docs():
        for stage in stages:
            measured = json.loads(json.dumps(stage.measure(d)))  # the table keeps them as JSON: exact
            assert stage.decide(d, measured) == stage.evaluate(d), (stage.name, d.text[:40])


def test_values_measured_under_one_bound_decide_as_evaluate_under_another():
    loose = GopherQuality(GopherQualityConfig(min_words=None, max_words=None, max_hash_ratio=None))
    strict = GopherQuality(GopherQualityConfig(min_words=150, max_hash_ratio=0.01))
    decided = 0
    for d in docs():
        measured = loose.measure(d)
        assert "quality.word_count" in measured and "quality.hash_ratio" in measured  # bounds off: still measured
        assert strict.decide(d, measured) == strict.evaluate(d)
        decided += bool(strict.evaluate(d).drops)
    assert decided > 3


def test_measured_floats_are_exact_where_annotations_are_rounded():
    d = Document(id="d", text="a bb cccc", annotations={"lang.code": "en"})
    stage = GopherQuality()
    assert stage.measure(d)["quality.mean_word_length"] == 7 / 3
    assert stage.evaluate(d).annotations["quality.mean_word_length"] == 2.3333


def test_the_dense_floor_is_decided_from_the_recorded_script():
    config = GopherQualityConfig(min_mean_word_length=3, dense_min_mean_word_length=1)
    stage = GopherQuality(config)
    dense = Document(id="d", text="한국어 문장 입니다 " * 30, annotations={"lang.code": "ko"})
    measured = stage.measure(dense)
    assert measured["quality.script"] == "Hang"
    assert stage.decide(dense, measured) == stage.evaluate(dense)
    assert not any(drop.reason == "mean_word_too_short" for drop in stage.decide(dense, measured).drops)
    latin = dict(measured, **{"quality.script": "Latn"})  # the same lengths in a spaced script: the plain floor
    assert any(drop.reason == "mean_word_too_short" for drop in stage.decide(dense, latin).drops)
