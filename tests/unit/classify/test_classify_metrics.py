import pytest

from thresher.classify.metrics import evaluate_scores, roc_auc


def test_roc_auc_counts_ranked_pairs_and_ties_count_half():
    assert roc_auc([0.9, 0.8, 0.2, 0.1], [True, True, False, False]) == 1.0
    assert roc_auc([0.1, 0.2, 0.8, 0.9], [True, True, False, False]) == 0.0
    # positives 0.9 and 0.5 against negatives 0.5 and 0.1: pairs won 1 + 1 + 0.5 (tie) + 1 of 4
    assert roc_auc([0.9, 0.5, 0.5, 0.1], [True, True, False, False]) == pytest.approx(3.5 / 4)
    assert roc_auc([0.3, 0.4], [True, True]) is None


def test_report_has_per_label_prf_macro_and_weighted_f1():
    labels = ("a", "b")
    scores = [[0.9, 0.1], [0.8, 0.2], [0.4, 0.6], [0.3, 0.7], [0.6, 0.4]]
    gold = [("a",), ("a",), ("b",), ("b",), ("b",)]
    report = evaluate_scores(labels, "softmax", scores, gold)
    a, b = report["labels"]["a"], report["labels"]["b"]
    assert (a["precision"], a["recall"]) == (pytest.approx(2 / 3), 1.0)
    assert (b["precision"], b["recall"]) == (1.0, pytest.approx(2 / 3))
    assert report["accuracy"] == 0.8 and report["macro_f1"] == pytest.approx(0.8)
    assert report["weighted_f1"] == pytest.approx((2 * 0.8 + 3 * 0.8) / 5)
    at_07 = next(row for row in b["at_threshold"] if row["threshold"] == 0.7)
    assert at_07 == {"threshold": 0.7, "precision": 1.0, "recall": pytest.approx(1 / 3), "kept": 1}
