"""A user's ONNX sequence classifier through the onnx extra, with a model and tokenizer the test
builds itself (mean-pooled embeddings, a MatMul to logits): nothing is downloaded."""

from __future__ import annotations

import json

import pytest

np = pytest.importorskip("numpy")
onnx = pytest.importorskip("onnx")
pytest.importorskip("onnxruntime")
tokenizers = pytest.importorskip("tokenizers")

VOCAB = {"[PAD]": 0, "[UNK]": 1, "good": 2, "great": 3, "bad": 4, "awful": 5, "the": 6, "movie": 7, "was": 8}


def tiny_model(path):
    from onnx import TensorProto, helper, numpy_helper

    emb = np.zeros((len(VOCAB), 2), dtype=np.float32)
    emb[VOCAB["good"]] = emb[VOCAB["great"]] = [1.0, 0.0]
    emb[VOCAB["bad"]] = emb[VOCAB["awful"]] = [0.0, 1.0]
    weights = np.array([[4.0, -4.0], [-4.0, 4.0]], dtype=np.float32)
    nodes = [
        helper.make_node("Gather", ["embedding", "input_ids"], ["tokens"]),
        helper.make_node("Cast", ["attention_mask"], ["mask_f"], to=TensorProto.FLOAT),
        helper.make_node("Unsqueeze", ["mask_f", "axis2"], ["mask3"]),
        helper.make_node("Mul", ["tokens", "mask3"], ["masked"]),
        helper.make_node("ReduceSum", ["masked", "axis1"], ["summed"], keepdims=0),
        helper.make_node("ReduceSum", ["mask3", "axis1"], ["count"], keepdims=0),
        helper.make_node("Div", ["summed", "count"], ["pooled"]),
        helper.make_node("MatMul", ["pooled", "weights"], ["logits"]),
    ]
    graph = helper.make_graph(
        nodes, "tiny",
        [helper.make_tensor_value_info("input_ids", TensorProto.INT64, ["batch", "tokens"]),
         helper.make_tensor_value_info("attention_mask", TensorProto.INT64, ["batch", "tokens"])],
        [helper.make_tensor_value_info("logits", TensorProto.FLOAT, ["batch", 2])],
        initializer=[numpy_helper.from_array(emb, "embedding"), numpy_helper.from_array(weights, "weights"),
                     numpy_helper.from_array(np.array([2], dtype=np.int64), "axis2"),
                     numpy_helper.from_array(np.array([1], dtype=np.int64), "axis1")],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    helper.set_model_props(model, {"id2label": json.dumps({"0": "positive", "1": "negative"})})
    onnx.checker.check_model(model)
    onnx.save(model, str(path))
    return path


def tiny_tokenizer(path):
    from tokenizers import Tokenizer, models, pre_tokenizers

    tok = Tokenizer(models.WordLevel(vocab=VOCAB, unk_token="[UNK]"))
    tok.pre_tokenizer = pre_tokenizers.Whitespace()
    tok.save(str(path))
    return path


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    d = tmp_path_factory.mktemp("onnx")
    return tiny_model(d / "model.onnx"), tiny_tokenizer(d / "tokenizer.json")


def test_scores_come_from_the_user_model_with_labels_from_its_metadata(files):
    from thresher.classify.transformer import OnnxClassifier

    clf = OnnxClassifier(*files)
    assert clf.labels == ("positive", "negative") and "CPUExecutionProvider" in clf.providers
    good, bad = clf.scores_batch(["the movie was good", "the movie was awful awful"])
    assert good[0] > 0.85 and bad[1] > 0.95
    # mean pooling over real tokens: 1 cue word in 4 gives logits (1, -1), i.e. softmax 1/(1+e^-2)
    assert good[0] == pytest.approx(1 / (1 + np.exp(-2.0)), rel=1e-6)


def test_batches_are_length_sorted_and_results_come_back_in_input_order(files):
    from thresher.classify.transformer import OnnxClassifier

    texts = ["good " * n + "the movie" for n in (30, 1, 12, 3, 50, 2)] + ["", "awful"]
    small = OnnxClassifier(*files, max_len=64, max_batch_size=2)
    whole = OnnxClassifier(*files, max_len=64, max_batch_size=64)
    a, b = small.scores_batch(texts), whole.scores_batch(texts)
    assert np.allclose(a, b, atol=1e-6)
    assert all(len(batch.indices) <= 2 for batch in small.last_plan.batches)
    assert small.last_plan.padding_efficiency > whole.last_plan.padding_efficiency
    assert a[-1][1] > 0.9  # "awful", scored last in input order though it is among the shortest


def test_a_missing_or_broken_model_is_a_config_error(files, tmp_path):
    from thresher.classify.transformer import OnnxClassifier
    from thresher.core.errors import ConfigError

    with pytest.raises(ConfigError, match="file not found"):
        OnnxClassifier(tmp_path / "absent.onnx", files[1])
    broken = tmp_path / "broken.onnx"
    broken.write_bytes(b"not a graph")
    with pytest.raises(ConfigError, match="not a usable ONNX model"):
        OnnxClassifier(broken, files[1])


def test_classify_apply_annotates_with_an_onnx_model(files, tmp_path, capsys):
    from thresher.cli import main

    data = tmp_path / "in.jsonl"
    data.write_text('{"text": "the movie was great"}\n{"text": "awful"}\n')
    out = tmp_path / "out.jsonl"
    assert main(["classify", "apply", str(files[0]), str(data), "--tokenizer-json", str(files[1]), "-o", str(out),
                 "--name", "sent"]) == 0
    first, second = (json.loads(line) for line in out.read_text().splitlines())
    assert first["annotations"]["classify.sent.positive"] > 0.85
    assert second["annotations"]["classify.sent.negative"] > 0.95
    assert main(["classify", "apply", str(files[0]), str(data), "-o", str(out)]) == 1
    assert "needs --tokenizer-json" in capsys.readouterr().err


def sentiment_crawl(path, n=300):
    words = ["good", "great", "bad", "awful"]
    with open(path, "w") as f:
        for i in range(n):
            cue = " ".join(words[(i * 7 + k) % 4] for k in range(1 + i % 3))
            f.write(json.dumps({"url": f"https://r.example/{i}", "text": f"the movie {i} was {cue}"}) + "\n")
    return path


def test_a_build_runs_an_onnx_model_in_batches_with_attributed_drops(files, tmp_path, capsys, monkeypatch):
    import hashlib

    from thresher.classify.stage import Classifier
    from thresher.cli import main

    crawl = sentiment_crawl(tmp_path / "crawl.jsonl")
    calls = []
    real = Classifier.evaluate_batch
    monkeypatch.setattr(Classifier, "evaluate_batch", lambda self, docs: calls.append(len(docs)) or real(self, docs))
    base = ["build", str(crawl), "--quality", "none", "--dedup-near-method", "none", "-q",
            "--classifier", f"sent={files[0]}", "--classifier-keep", "positive", "--classifier-min-score", "0.6"]
    assert main([*base, "-o", str(tmp_path / "local"), "--engine", "local"]) == 0  # tokenizer.json beside the model
    assert calls and max(calls) > 100  # the stage got the scan loop's batches
    manifest = json.loads((tmp_path / "local" / "manifest.json").read_text())
    (record,) = manifest["classifiers"]
    assert record["sha256"] == hashlib.sha256(files[0].read_bytes()).hexdigest()
    assert record["tokenizer_sha256"] == hashlib.sha256(files[1].read_bytes()).hexdigest()
    stats = json.loads((tmp_path / "local" / "stats.json").read_text())
    assert 0 < stats["drops"]["classify"]["low_score"] < 300 and stats["kept"] > 0
    first = json.loads(gzip_lines(tmp_path / "local")[0])
    assert first["annotations"]["classify.sent.positive"] >= 0.6
    # the same shards from a worker pool (each worker loads the model itself)
    assert main([*base, "-o", str(tmp_path / "pool"), "--engine", "pool", "--workers", "2",
                 "--classifier-tokenizer", f"sent={files[1]}"]) == 0
    shards = [
        [s["sha256"] for s in json.loads((tmp_path / d / "manifest.json").read_text())["shards"]]
        for d in ("local", "pool")
    ]
    assert shards[0] == shards[1]


def gzip_lines(out):
    import gzip

    (shard,) = sorted(out.glob("shard-*.jsonl.gz"))
    return gzip.decompress(shard.read_bytes()).decode().splitlines()


def test_an_onnx_model_without_its_tokenizer_or_keep_label_is_refused_before_the_build(files, tmp_path, capsys):
    from thresher.cli import main

    crawl = sentiment_crawl(tmp_path / "crawl.jsonl", 5)
    alone = tmp_path / "alone.onnx"
    alone.write_bytes(files[0].read_bytes())
    args = ["build", str(crawl), "-o", str(tmp_path / "o"), "--quality", "none", "-q", "--classifier", f"s={alone}"]
    assert main(args) == 1
    err = capsys.readouterr().err
    assert "tokenizer of ONNX classifier" in err and err.count("\n") == 1
    assert main([*args, "--classifier-tokenizer", str(files[1]), "--classifier-keep", "neutral"]) == 1
    err = capsys.readouterr().err
    assert "has labels positive, negative" in err and err.count("\n") == 1
    assert not (tmp_path / "o").exists()
