import json

import pytest
from classify_helpers import corpus

from thresher.cli import main


@pytest.fixture
def data(tmp_path):
    rows = corpus(600, ("good", "bad", "meh"))
    for label in ("good", "bad", "meh"):
        with open(tmp_path / f"{label}.jsonl", "w") as f:
            for text, lab in rows[:500]:
                if lab == label:
                    f.write(json.dumps({"body": text}) + "\n")
    with open(tmp_path / "test.jsonl", "w") as f:
        for text, lab in rows[500:]:
            f.write(json.dumps({"body": text, "label": lab}) + "\n")
    return tmp_path


def test_train_eval_apply_from_the_command_line(data, capsys):
    model = data / "m.thc"
    labels = [f"--label={data / lab}.jsonl:{lab}" for lab in ("good", "bad", "meh")]
    assert main(["classify", "train", *labels, "--text-field", "body", "-o", str(model), "--epochs", "4",
                 "--char-ngrams", "2-4", "--holdout", "0.2", "--seed", "3", "--json"]) == 0
    captured = capsys.readouterr()
    held_out = json.loads(captured.out)
    assert held_out["examples"] == 100 and held_out["macro_f1"] > 0.9
    assert "trained on 400 examples" in captured.err
    assert main(["classify", "eval", str(model), str(data / "test.jsonl"), "--text-field", "body", "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["examples"] == 100 and set(report["labels"]) == {"good", "bad", "meh"}
    assert report["accuracy"] > 0.9 and report["labels"]["good"]["roc_auc"] > 0.95
    assert len(report["labels"]["bad"]["at_threshold"]) == 9
    out = data / "scored.jsonl"
    assert main(["classify", "apply", str(model), str(data / "test.jsonl"), "--text-field", "body", "-o", str(out),
                 "--name", "q"]) == 0
    first = json.loads(out.read_text().splitlines()[0])
    assert set(first["annotations"]) == {"classify.q.good", "classify.q.bad", "classify.q.meh"}
    assert first["label"] in ("good", "bad", "meh")  # the record is kept as it was, plus annotations


def test_training_the_same_data_twice_writes_the_same_bytes(data, capsys):
    args = ["classify", "train", f"--label={data}/good.jsonl:good", f"--label={data}/bad.jsonl:bad",
            "--text-field", "body", "--epochs", "2"]
    assert main([*args, "-o", str(data / "a.thc")]) == 0
    assert main([*args, "-o", str(data / "b.thc")]) == 0
    assert (data / "a.thc").read_bytes() == (data / "b.thc").read_bytes()


@pytest.mark.parametrize(("setup", "message"), [
    ("empty", "no examples (an empty file)"),
    ("one", "only one label"),
    ("few", "too few for a held-out split"),
    ("field", "no string field 'text'"),
])
def test_bad_training_input_is_a_one_line_error(data, capsys, setup, message):
    (data / "empty.jsonl").write_text("")
    (data / "few.jsonl").write_text('{"body": "one"}\n{"body": "two"}\n')
    labels = {
        "empty": [f"{data}/empty.jsonl:x", f"{data}/good.jsonl:good"],
        "one": [f"{data}/good.jsonl:good"],
        "few": [f"{data}/few.jsonl:x", f"{data}/good.jsonl:good"],
        "field": [f"{data}/good.jsonl:good", f"{data}/bad.jsonl:bad"],
    }[setup]
    field = ["--text-field", "body"] if setup != "field" else []
    assert main(["classify", "train", *[f"--label={x}" for x in labels], *field, "-o", str(data / "m.thc")]) == 1
    err = capsys.readouterr().err
    assert message in err and err.count("\n") == 1


def test_eval_of_an_altered_model_is_a_one_line_error(data, capsys):
    model = data / "m.thc"
    assert main(["classify", "train", f"--label={data}/good.jsonl:good", f"--label={data}/bad.jsonl:bad",
                 "--text-field", "body", "--epochs", "1", "-o", str(model)]) == 0
    capsys.readouterr()
    blob = bytearray(model.read_bytes())
    blob[-33] ^= 0xFF
    model.write_bytes(bytes(blob))
    assert main(["classify", "eval", str(model), str(data / "test.jsonl"), "--text-field", "body"]) == 1
    assert "checksum mismatch" in capsys.readouterr().err
