"""Calibration: `classify eval` reports reliability bins, `classify train` stores the held-out ones in
the model file, and the HTML report of a build that ran the model draws them (SVG, no script)."""

import json
import re

import pytest
from classify_helpers import corpus

from thresher.classify.calibration import calibration_bins, calibration_svg, expected_calibration_error
from thresher.classify.format import load_model
from thresher.cli import main


def test_bins_count_mean_score_and_positive_share():
    bins = calibration_bins([0.05, 0.15, 0.12, 0.95, 1.0, 0.99], [False, True, False, True, True, False], bins=10)
    assert [b["count"] for b in bins] == [1, 2, 0, 0, 0, 0, 0, 0, 0, 3]
    assert bins[1]["mean_score"] == pytest.approx(0.135) and bins[1]["positive_rate"] == 0.5
    assert bins[9]["positive_rate"] == pytest.approx(2 / 3) and bins[2]["mean_score"] is None
    ece = expected_calibration_error(bins)
    assert ece == pytest.approx(
        (1 * 0.05 + 2 * abs(0.5 - 0.135) + 3 * abs(2 / 3 - (0.95 + 1.0 + 0.99) / 3)) / 6, abs=1e-5
    )
    perfect = calibration_bins([0.25] * 4, [True, False, False, False], bins=4)
    assert expected_calibration_error(perfect) == pytest.approx(0.0)


def test_the_svg_escapes_labels_and_has_a_point_per_non_empty_bin():
    bins = calibration_bins([0.1, 0.5, 0.9], [False, True, True])
    svg = calibration_svg({"<b>good</b>": bins}, "cal")
    assert svg.count("<circle") == 3 and "<b>" not in svg and "&lt;b&gt;good" in svg
    assert "<script" not in svg


def test_train_stores_held_out_calibration_and_the_build_report_draws_it(tmp_path, capsys):
    rows = corpus(600, ("good", "bad"))
    for label in ("good", "bad"):
        with open(tmp_path / f"{label}.jsonl", "w") as f:
            f.writelines(json.dumps({"text": t}) + "\n" for t, lab in rows if lab == label)
    model = tmp_path / "q.thc"
    assert main(["classify", "train", f"--label={tmp_path}/good.jsonl:good", f"--label={tmp_path}/bad.jsonl:bad",
                 "--epochs", "3", "--holdout", "0.2", "-o", str(model), "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    held = load_model(str(model)).info["heldout"]
    assert held["examples"] == report["examples"] == 120 and held["fraction"] == 0.2
    assert held["calibration"]["good"] == report["labels"]["good"]["calibration"]
    assert sum(b["count"] for b in held["calibration"]["good"]) == 120
    assert 0.0 <= report["labels"]["good"]["ece"] < 0.5

    crawl = tmp_path / "crawl.jsonl"
    with open(crawl, "w") as f:
        for i, (text, _) in enumerate(corpus(60, seed=8)):
            f.write(json.dumps({"url": f"https://c.example/{i}", "text": text}) + "\n")
    out = tmp_path / "out"
    assert main(["build", str(crawl), "-o", str(out), "--quality", "none", "--engine", "local", "-q",
                 "--classifier", f"q={model}", "--classifier-keep", "good"]) == 0
    assert json.loads((out / "manifest.json").read_text())["classifiers"][0]["heldout"] == held
    page = tmp_path / "report.html"
    assert main(["report", str(out), "-o", str(page), "-q"]) == 0
    html = page.read_text()
    section = html[html.index("id='classifiers'"):]
    assert "Calibration of q on its held-out split" in section
    non_empty = sum(1 for lab in ("good", "bad") for b in held["calibration"][lab] if b["count"])
    assert len(re.findall(r"<circle", section)) == non_empty
    assert "href='#classifiers'" in html and "<script" not in html
