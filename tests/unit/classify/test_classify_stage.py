import json

import pytest
from classify_helpers import corpus

from thresher.classify import train
from thresher.classify.config import ClassifyConfig
from thresher.classify.format import save_model
from thresher.classify.stage import Classifier, build_classifier_stages
from thresher.cli import main
from thresher.config import RunConfig
from thresher.core.document import Document, Drop
from thresher.core.errors import ConfigError
from thresher.core.stages import apply_stage
from thresher.pipeline import Pipeline


@pytest.fixture(scope="module")
def model_path(tmp_path_factory):
    path = tmp_path_factory.mktemp("model") / "q.thc"
    save_model(train(corpus(400), epochs=3), str(path))
    return path


def test_a_document_below_the_bound_is_dropped_with_its_score_and_the_bound(model_path):
    (stage,) = build_classifier_stages(ClassifyConfig(models=(f"q={model_path}",), keep=("good",), min_score=("0.5",)))
    doc = Document(id="1", text="awful spam and a cheap scam, garbage clickbait")
    assert stage.check(doc) is not None and doc.annotations == {}  # deciding writes nothing
    (drop,) = apply_stage(stage, doc)
    score = doc.annotations["classify.q.good"]
    assert drop == Drop("classify", "low_score", value=score, limit=0.5, detail={"model": "q", "label": "good"})
    assert score < 0.5 and doc.annotations["classify.q.bad"] > 0.5
    kept = Document(id="2", text="a careful and thorough and insightful essay")
    assert apply_stage(stage, kept) == [] and kept.annotations["classify.q.good"] > 0.5


def test_a_model_without_keep_labels_only_annotates(model_path):
    (stage,) = build_classifier_stages(ClassifyConfig(models=(f"q={model_path}",)))
    doc = Document(id="1", text="awful spam")
    assert apply_stage(stage, doc) == [] and set(doc.annotations) == {"classify.q.good", "classify.q.bad"}


def test_several_named_models_each_with_its_own_bound(model_path, tmp_path):
    other = tmp_path / "m.thc"
    save_model(train(corpus(300, ("good", "meh")), epochs=3), str(other))
    config = ClassifyConfig(models=(f"q={model_path}", f"style={other}"), keep=("q:good", "style:meh"),
                            min_score=("0.5", "style:0.9"))
    stages = build_classifier_stages(config)
    assert [s.plan.name for s in stages] == ["q", "style"] and stages[1].plan.min_score == 0.9
    drop = stages[1].check(Document(id="1", text="careful thorough insightful"))
    assert drop is not None and drop.limit == 0.9 and drop.detail == {"model": "style", "label": "meh"}


@pytest.mark.parametrize(("fields", "message"), [
    ({"keep": ("good",)}, "needs a --classifier model"),
    ({"models": ("a=x.thc", "b=y.thc"), "keep": ("good",)}, "name the model"),
    ({"models": ("a=x.thc",), "keep": ("b:good",)}, "no classifier named 'b'"),
    ({"models": ("a=x.thc", "a=y.thc")}, "two classifiers are named 'a'"),
    ({"models": ("a=x.thc",), "min_score": ("1.5",)}, "a score is in"),
])
def test_contradictory_classifier_settings_are_refused(fields, message):
    with pytest.raises(ValueError, match=message):
        ClassifyConfig(**fields)


def test_a_missing_model_or_unknown_keep_label_is_a_config_error(model_path, tmp_path):
    with pytest.raises(ConfigError, match="not found"):
        _ = RunConfig.from_dict({"classify": {"models": [str(tmp_path / "absent.thc")]}}).hash
    with pytest.raises(ConfigError, match="has labels good, bad|has labels bad, good"):
        _ = RunConfig.from_dict({"classify": {"models": [f"q={model_path}"], "keep": ["great"]}}).hash


def test_the_config_hash_changes_with_the_model_file(model_path, tmp_path):
    path = tmp_path / "q.thc"
    path.write_bytes(model_path.read_bytes())
    config = RunConfig.from_dict({"classify": {"models": [f"q={path}"], "keep": ["good"]}})
    before = config.hash
    assert before != RunConfig().hash
    save_model(train(corpus(400), epochs=3, seed=5), str(path))
    assert config.hash != before


def test_the_library_pipeline_runs_the_classifier_after_the_rules(model_path):
    config = RunConfig.from_dict(
        {"quality": {"preset": "none"}, "classify": {"models": [f"q={model_path}"], "keep": ["good"]}}
    )
    dropped = []
    pipeline = Pipeline(config, on_drop=lambda doc, drop: dropped.append(drop))
    texts = ["a careful thorough essay, insightful and lovely " * 5, "spam scam garbage clickbait cheap " * 5]
    kept = list(pipeline.process({"url": f"u{i}", "text": t} for i, t in enumerate(texts)))
    assert [d.text for d in kept] == [texts[0].strip()]
    assert [(d.stage, d.reason) for d in dropped] == [("classify", "low_score")]
    assert isinstance(pipeline.chain.stages[-1], Classifier)


def test_a_build_records_the_model_in_the_manifest_and_attributes_drops(model_path, tmp_path, capsys):
    crawl = tmp_path / "crawl.jsonl"
    with open(crawl, "w") as f:
        for i, (text, _) in enumerate(corpus(40, seed=3)):
            f.write(json.dumps({"url": f"https://x.example/{i}", "text": (text + " ") * 10}) + "\n")
    out = tmp_path / "out"
    args = ["build", str(crawl), "-o", str(out), "--engine", "local", "--quality", "none", "-q",
            "--classifier", f"q={model_path}", "--classifier-keep", "good"]
    assert main(args) == 0
    manifest = json.loads((out / "manifest.json").read_text())
    (record,) = manifest["classifiers"]
    import hashlib

    assert record["sha256"] == hashlib.sha256(model_path.read_bytes()).hexdigest()
    assert record["keep"] == ["good"] and record["min_score"] == 0.5
    stats = json.loads((out / "stats.json").read_text())
    assert stats["drops"]["classify"]["low_score"] == stats["dropped"] > 0
    assert main([*args[:3], str(tmp_path / "o2"), *args[4:-1], "great"]) == 1
    err = capsys.readouterr().err
    assert "--classifier-keep 'great'" in err and err.count("\n") == 1
    assert not (tmp_path / "o2").exists()  # refused before the build touched anything
