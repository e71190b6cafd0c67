"""The scan loop's batch hook (`pipeline.BatchEvaluator`): a classifier judges documents in batches in
the build, with the same outcomes, shards and stats as one document at a time, on any engine."""

import json

import pytest
from classify_helpers import corpus
from tests.conftest import local_config, write_jsonl

from thresher.classify import train
from thresher.classify.format import save_model
from thresher.classify.stage import Classifier
from thresher.config import RunConfig
from thresher.core.document import Document
from thresher.pipeline import BATCH_DOCS, DocumentChain
from thresher.run import scan
from thresher.run.build import build


@pytest.fixture(scope="module")
def model_path(tmp_path_factory):
    path = tmp_path_factory.mktemp("model") / "q.thc"
    save_model(train(corpus(400), epochs=3), str(path))
    return path


def crawl(tmp_path, n):
    records = []
    for i, (text, _) in enumerate(corpus(n, seed=7)):
        if i % 9 == 0:
            text = "tiny"  # dropped by the quality rules, before the classifier
        if i % 11 == 0:
            text += f" write to someone{i}@mail.example"  # PII redaction runs after the classifier
        records.append({"url": f"https://c.example/{i}", "text": text})
    return write_jsonl(tmp_path / "crawl.jsonl", records, raw_lines=["{not json"])


def sections(model_path):
    return {"classify": {"models": [f"q={model_path}"], "keep": ["good"]}, "pii": {"types": ["email"]},
            "quality": {"preset": None, "rule_sets": ["gopher"], "gopher": {"min_words": 3}},
            "dedup": {"near": {"method": None}}}


def outputs(result):
    stats = result.stats.to_dict()
    return ([s["sha256"] for s in result.manifest["shards"]],
            json.dumps({k: stats[k] for k in ("seen", "kept", "dropped", "malformed", "drops", "counters", "histograms")
                        if k in stats}, sort_keys=True))


def test_batched_scan_gives_the_per_document_output_on_every_engine(model_path, tmp_path, monkeypatch):
    monkeypatch.setattr(scan, "BATCH_DOCS", 400)  # smaller batches: several in a partition of a small crawl
    assert BATCH_DOCS >= 400
    src = crawl(tmp_path, 700)  # more than one batch in a partition
    calls = []
    real = Classifier.evaluate_batch
    monkeypatch.setattr(Classifier, "evaluate_batch", lambda self, docs: calls.append(len(docs)) or real(self, docs))
    batched = build([str(src)], tmp_path / "batched", local_config(**sections(model_path)))
    assert len(calls) >= 2 and max(calls) > 100  # the stage got batches, of survivors only
    quality_drops = sum(batched.stats.to_dict()["drops"]["quality.gopher"].values())
    assert sum(calls) == batched.stats.seen - batched.stats.malformed - quality_drops

    monkeypatch.setattr(scan, "BATCH_DOCS", 1)  # the scan loop reads no ahead: one document at a time
    calls.clear()
    alone = build([str(src)], tmp_path / "alone", local_config(**sections(model_path)))
    assert calls == []
    monkeypatch.undo()
    pooled = build([str(src)], tmp_path / "pool", local_config(
        exec={"engine": "pool", "workers": 2}, input={"partition_bytes": 16384}, **sections(model_path)))
    assert outputs(batched) == outputs(alone) == outputs(pooled)
    drops = batched.stats.to_dict()["drops"]
    assert drops["classify"]["low_score"] > 0 and drops["quality.gopher"]
    assert batched.stats.kept > 0


def test_run_batch_equals_run_document_by_document(model_path):
    config = RunConfig.from_dict({"quality": {"preset": None}, **{k: v for k, v in sections(model_path).items()
                                                                   if k != "dedup"}})
    texts = [t for t, _ in corpus(60, seed=4)] + ["x", "", "careful " * 50]
    chain = DocumentChain(config)
    assert chain.batched
    alone = [chain.run(Document(id=str(i), text=t)) for i, t in enumerate(texts)]
    docs = [Document(id=str(i), text=t) for i, t in enumerate(texts)]
    assert chain.run_batch(docs) == alone
    fresh = [Document(id=str(i), text=t) for i, t in enumerate(texts)]
    for doc in fresh:
        chain.run(doc)
    assert [d.annotations for d in docs] == [d.annotations for d in fresh]
    assert any("classify.q.good" in d.annotations for d in docs) and any(o is not None for o in alone)


def test_a_batch_call_that_fails_is_judged_again_document_by_document(model_path, monkeypatch):
    config = RunConfig.from_dict(
        {"quality": {"preset": None}, "classify": {"models": [f"q={model_path}"], "keep": ["good"]}}
    )
    texts = [t for t, _ in corpus(30, seed=5)]
    expected = [DocumentChain(config).run(Document(id=str(i), text=t)) for i, t in enumerate(texts)]

    def broken(self, docs):
        raise RuntimeError("batch failed")

    monkeypatch.setattr(Classifier, "evaluate_batch", broken)
    chain = DocumentChain(config)
    assert chain.run_batch([Document(id=str(i), text=t) for i, t in enumerate(texts)]) == expected
    assert chain.stats.counters["event/batch_fallback"] == 1

    monkeypatch.setattr(Classifier, "evaluate_batch", lambda self, docs: [])  # wrong length: also refused
    chain = DocumentChain(config)
    assert chain.run_batch([Document(id=str(i), text=t) for i, t in enumerate(texts)]) == expected
    chain.disable_batches()
    assert not chain.batched


@pytest.mark.parametrize("keep", [(), ("good",), ("bad", "good")])
def test_evaluate_batch_equals_evaluate_for_each_document(model_path, keep):
    from thresher.classify.config import ClassifierPlan
    from thresher.classify.stage import load_cached

    stage = Classifier(
        ClassifierPlan(name="q", path=str(model_path), keep=keep, min_score=0.6), load_cached(str(model_path))
    )
    docs = [Document(id=str(i), text=t) for i, (t, _) in enumerate(corpus(300, seed=9))] + [Document(id="e", text="")]
    assert stage.evaluate_batch(docs) == [stage.evaluate(d) for d in docs]


def test_batch_decisions_are_the_objects_their_constructors_make(model_path):
    # decide_batch fills the slots of Evaluation and Drop directly (a third of their frozen
    # constructors' cost): the objects must be indistinguishable from constructed ones
    pytest.importorskip("numpy")
    from thresher.classify.config import ClassifierPlan
    from thresher.classify.stage import load_cached
    from thresher.core.document import Drop
    from thresher.core.stages import Evaluation

    model = load_cached(str(model_path))
    stage = Classifier(ClassifierPlan(name="q", path=str(model_path), keep=(model.labels[0],), min_score=1.0), model)
    docs = [Document(id=str(i), text=t) for i, (t, _) in enumerate(corpus(20, seed=3))]
    for fast, doc in zip(stage.evaluate_batch(docs), docs, strict=True):
        made = stage.decide(model.score_list(doc.text))
        assert type(fast) is Evaluation and repr(fast) == repr(made) and fast == made and fast.drops
        drop = fast.drops[0]
        assert type(drop) is Drop and drop == Drop(made.drops[0].stage, made.drops[0].reason, made.drops[0].value,
                                                    made.drops[0].limit, made.drops[0].detail)
        assert drop.to_record() == made.drops[0].to_record() and hash(drop.stage) == hash("classify")
        with pytest.raises(AttributeError):
            drop.value = 0  # type: ignore[misc]  # still frozen


def test_round_array_is_pythons_round_bit_for_bit():
    np = pytest.importorskip("numpy")
    from thresher.classify.model import round_array

    values = [k / 10_000 + 0.00005 for k in range(10_000)]  # every half-way decimal at 4 places
    values += [0.0, 1.0, 0.5, 1e-300, 0.99995, 0.123449999999, 0.12345, 2 / 3]
    got = round_array(np.array(values).reshape(-1, 2), 4)
    assert [v for row in got for v in row] == [round(v, 4) for v in values]
