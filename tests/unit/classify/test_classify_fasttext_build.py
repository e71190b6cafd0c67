"""A fastText `.bin`/`.ftz` file as a build's classifier: `--classifier MODEL.bin --classifier-keep
LABEL --classifier-min-score X` keeps and drops by the file's own scores, attributed like a `.thc`
model's, and a bad file or label is refused with one line before the build starts."""

from __future__ import annotations

import gzip
import hashlib
import json
import random

import pytest

np = pytest.importorskip("numpy")

from fasttext_helpers import BAD, GOOD, reference_scores, require_fasttext, train  # noqa: E402

from thresher.classify.config import ClassifyConfig  # noqa: E402
from thresher.classify.fasttext import FastTextModel  # noqa: E402
from thresher.classify.stage import build_classifier_stages, resolve_classifiers  # noqa: E402
from thresher.cli import main  # noqa: E402
from thresher.core.document import Document  # noqa: E402
from thresher.core.errors import ConfigError  # noqa: E402

require_fasttext("trains the model")


def texts(n: int, seed: int) -> list[tuple[str, str]]:
    rng = random.Random(seed)
    out = []
    for _ in range(n):
        label = rng.choice(["hq", "lq"])
        words = GOOD if label == "hq" else BAD
        out.append((" ".join(rng.choice(words) for _ in range(rng.randint(60, 90))), label))
    return out


@pytest.fixture(scope="module")
def model_path(tmp_path_factory):
    lines = [f"__label__{label} {text}" for text, label in texts(1500, seed=1)]
    return train(lines, tmp_path_factory.mktemp("ft") / "quality.bin", dim=8, epoch=3, wordNgrams=2, bucket=10_000)


def crawl(tmp_path, n=40):
    path = tmp_path / "crawl.jsonl"
    docs = texts(n, seed=7)
    # a mixed document: half good words, half bad, so its score is neither 0 nor 1
    docs.append((" ".join(GOOD[:5] * 6 + BAD[:5] * 6), "mixed"))
    with open(path, "w", encoding="utf-8") as f:
        for i, (text, _) in enumerate(docs):
            f.write(json.dumps({"url": f"https://x.example/{i}", "text": text}) + "\n")
    return path, [t for t, _ in docs]


def test_labels_are_named_without_the_prefix_and_either_spelling_keeps(model_path):
    model = FastTextModel(str(model_path))
    assert sorted(model.labels) == ["hq", "lq"]
    for keep in ("hq", "__label__hq"):
        config = ClassifyConfig(models=(f"q={model_path}",), keep=(keep,), min_score=("0.5",))
        (record,) = resolve_classifiers(config)
        assert record["keep"] == ["hq"] and record["kind"] == "fasttext"


def test_a_document_below_the_bound_is_dropped_with_fasttexts_score(model_path):
    (stage,) = build_classifier_stages(ClassifyConfig(models=(f"q={model_path}",), keep=("hq",), min_score=("0.9",)))
    text = " ".join(BAD * 4)
    (ref,) = reference_scores(model_path, [text])
    evaluation = stage.evaluate(Document(id="1", text=text))
    (drop,) = evaluation.drops
    assert (drop.stage, drop.reason, drop.limit, drop.detail) == ("classify", "low_score", 0.9,
                                                                  {"model": "q", "label": "hq"})
    assert drop.value == round(ref["__label__hq"], 4)
    assert evaluation.annotations == {"classify.q.hq": round(ref["__label__hq"], 4),
                                      "classify.q.lq": round(ref["__label__lq"], 4)}


def test_a_build_filters_with_the_files_scores_attributed(model_path, tmp_path, capsys):
    path, docs = crawl(tmp_path)
    out = tmp_path / "out"
    args = ["build", str(path), "-o", str(out), "--engine", "local", "--quality", "none", "--no-lang-enabled", "-q",
            "--classifier", f"q={model_path}", "--classifier-keep", "__label__hq", "--classifier-min-score", "0.6"]
    assert main(args) == 0
    manifest = json.loads((out / "manifest.json").read_text())
    (record,) = manifest["classifiers"]
    assert record == {"name": "q", "path": str(model_path), "kind": "fasttext",
                      "sha256": hashlib.sha256(model_path.read_bytes()).hexdigest(),
                      "labels": list(FastTextModel(str(model_path)).labels), "keep": ["hq"], "min_score": 0.6}
    scores = {text: ref["__label__hq"] for text, ref in zip(docs, reference_scores(model_path, docs), strict=True)}
    expected_kept = {text for text, score in scores.items() if score >= 0.6}
    assert 0 < len(expected_kept) < len(docs)
    kept = []
    for entry in manifest["shards"]:
        with gzip.open(out / entry["path"], "rt", encoding="utf-8") as f:
            kept += [json.loads(line) for line in f]
    assert {r["text"] for r in kept} == expected_kept
    for r in kept:
        assert r["annotations"]["classify.q.hq"] == round(scores[r["text"]], 4)
    stats = json.loads((out / "stats.json").read_text())
    assert stats["drops"]["classify"]["low_score"] == len(docs) - len(expected_kept) == stats["dropped"]


@pytest.mark.parametrize(("make", "message"), [
    ("not_fasttext", "not a fastText model (no fastText magic number)"),
    ("truncated", "truncated fastText model"),
    ("label", "--classifier-keep 'great': classifier 'q'"),
])
def test_a_bad_model_or_label_is_one_line_before_the_build_starts(model_path, tmp_path, capsys, make, message):
    path, _ = crawl(tmp_path, n=4)
    model, keep = model_path, "hq"
    if make == "not_fasttext":
        model = tmp_path / "model.bin"
        model.write_bytes(b"not a model at all" * 10)
    elif make == "truncated":
        model = tmp_path / "cut.ftz"
        model.write_bytes(model_path.read_bytes()[:5000])
    else:
        keep = "great"
    out = tmp_path / "out"
    code = main(["build", str(path), "-o", str(out), "--engine", "local", "--quality", "none", "-q",
                 "--classifier", f"q={model}", "--classifier-keep", keep])
    err = capsys.readouterr().err
    assert code == 1 and message in err and err.count("\n") == 1, err
    assert not out.exists()  # refused before the build touched anything


def test_the_header_not_the_suffix_says_whether_a_model_is_quantized(model_path, tmp_path):
    # fastText itself reads a quantized model under any name, and so does thresher
    lines = [f"__label__{label} {text}" for text, label in texts(600, seed=2)]
    quantized = train(lines, tmp_path / "q.ftz", dim=8, epoch=2, wordNgrams=2, bucket=10_000,
                      quantize={"cutoff": 400, "dsub": 2})
    renamed = tmp_path / "quantized-named.bin"
    renamed.write_bytes(quantized.read_bytes())
    dense_named_ftz = tmp_path / "dense.ftz"
    dense_named_ftz.write_bytes(model_path.read_bytes())
    assert FastTextModel(str(renamed)).quantized and not FastTextModel(str(dense_named_ftz)).quantized
    sample = [t for t, _ in texts(20, seed=3)]
    for path in (renamed, dense_named_ftz):
        ours = FastTextModel(str(path)).scores_array(sample)
        theirs = reference_scores(path, sample)
        labels = FastTextModel(str(path)).raw_labels
        assert max(abs(ours[i, j] - ref[label]) for i, ref in enumerate(theirs)
                   for j, label in enumerate(labels)) <= 1e-6


def test_a_model_loads_once_per_process(model_path, monkeypatch):
    import thresher.classify.fasttext as ft

    loads = []
    real = ft.FastTextModel.__init__

    def counting(self, path):
        loads.append(path)
        real(self, path)

    monkeypatch.setattr(ft.FastTextModel, "__init__", counting)
    copy = model_path.parent / "once.bin"
    copy.write_bytes(model_path.read_bytes())
    config = ClassifyConfig(models=(f"q={copy}",), keep=("hq",))
    for _ in range(3):  # three tasks' stages
        resolve_classifiers(config)
        build_classifier_stages(config)
    assert loads == [str(copy)]


def test_a_missing_model_is_a_config_error(tmp_path):
    with pytest.raises(ConfigError, match="classifier model not found"):
        resolve_classifiers(ClassifyConfig(models=(f"q={tmp_path / 'absent.bin'}",)))
