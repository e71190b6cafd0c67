"""Class weighting for imbalanced training data (`--class-weight`)."""

import json
import random

import pytest

from thresher.classify import TrainingError, train
from thresher.classify.format import dump_model
from thresher.classify.training import TrainConfig, class_weights
from thresher.cli import main

COMMON = "the a of and to is it was this that with for on as".split()


def imbalanced(n=1000, rare=0.08, seed=2):
    """Mostly `common`; a few `rare` texts, whose cue words also occur in common texts (so an
    unweighted model leans to the majority on ambiguous texts)."""
    rng = random.Random(seed)
    out = []
    for _ in range(n):
        label = "rare" if rng.random() < rare else "common"
        cue = "odd strange" if label == "rare" else "plain usual"
        words = [rng.choice(COMMON) for _ in range(6)] + cue.split()[: rng.choice((1, 2))]
        if rng.random() < 0.5:  # noise: the other label's cue
            words.append(("plain usual" if label == "rare" else "odd strange").split()[rng.randrange(2)])
        rng.shuffle(words)
        out.append((" ".join(words), label))
    return out


def recall(model, data, label):
    hits = [model.predict(t)[0][0] == label for t, lab in data if lab == label]
    return sum(hits) / len(hits)


@pytest.mark.parametrize("trainer", ["python", "numpy"])
def test_balanced_weights_raise_the_rare_class_recall(trainer):
    if trainer == "numpy":
        pytest.importorskip("numpy")
    data = imbalanced()
    test = imbalanced(600, seed=5)
    plain = train(data, epochs=3, trainer=trainer, labels=("common", "rare"))
    weighted = train(data, epochs=3, trainer=trainer, labels=("common", "rare"), class_weight="balanced")
    assert recall(weighted, test, "rare") > recall(plain, test, "rare") + 0.05
    counts = weighted.info["examples_per_label"]
    weights = weighted.info["class_weight"]["weights"]
    assert (
        weights["rare"] == pytest.approx(len(data) / (2 * counts["rare"])) and weights["rare"] > 5 * weights["common"]
    )
    assert "class_weight" not in plain.info


def test_weights_of_one_train_the_unweighted_model():
    data = imbalanced(300)
    plain = train(data, epochs=2, trainer="python")
    ones = train(data, epochs=2, trainer="python", class_weight="common=1,rare=1")
    assert (plain.rows, plain.output, plain.scale_bits) == (ones.rows, ones.output, ones.scale_bits)
    assert dump_model(plain) != dump_model(ones)  # the file records the weighting


@pytest.mark.parametrize("spec", ["rare=0", "rare", "rare=-1", "=2", "rare=inf", "rare=x"])
def test_malformed_weights_are_refused(spec):
    with pytest.raises(ValueError, match="class weights"):
        TrainConfig(class_weight=spec)


def test_a_weight_for_an_unknown_label_is_a_training_error():
    with pytest.raises(TrainingError, match="'rarest'"):
        class_weights("rarest=2", {"common": 9, "rare": 1})
    assert class_weights("rare=3", {"common": 9, "rare": 1}) == [1.0, 3.0]


def test_the_class_weight_flag(tmp_path, capsys):
    for label in ("common", "rare"):
        with open(tmp_path / f"{label}.jsonl", "w") as f:
            for text, lab in imbalanced():
                if lab == label:
                    f.write(json.dumps({"text": text}) + "\n")
    args = ["classify", "train", f"--label={tmp_path}/common.jsonl:common", f"--label={tmp_path}/rare.jsonl:rare",
            "--epochs", "2", "-o", str(tmp_path / "m.thc")]
    assert main([*args, "--class-weight", "balanced"]) == 0
    assert main([*args, "--class-weight", "rare=zero"]) == 1
    assert "class weights are 'balanced'" in capsys.readouterr().err
