"""Evaluation of a classifier on labelled texts: accuracy, per-label precision/recall/F1 and ROC
AUC, macro and weighted F1, and precision/recall at score thresholds.

A softmax model predicts its best label; a one-vs-all model predicts every label whose score is at
least 0.5 (accuracy then counts exact label-set matches). AUC is one label against the rest,
computed from score ranks (ties share their mean rank: the Mann-Whitney U statistic).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from thresher.classify.calibration import calibration_bins, expected_calibration_error
from thresher.classify.model import Model

THRESHOLDS = (0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9)


def roc_auc(scores: Sequence[float], positive: Sequence[bool]) -> float | None:
    """Area under the ROC curve; None when one side has no examples."""
    n_pos = sum(positive)
    n_neg = len(positive) - n_pos
    if n_pos == 0 or n_neg == 0:
        return None
    order = sorted(range(len(scores)), key=scores.__getitem__)
    rank_sum = 0.0
    i = 0
    while i < len(order):
        j = i
        while j + 1 < len(order) and scores[order[j + 1]] == scores[order[i]]:
            j += 1
        mean_rank = (i + j) / 2 + 1
        rank_sum += mean_rank * sum(1 for t in order[i : j + 1] if positive[t])
        i = j + 1
    return (rank_sum - n_pos * (n_pos + 1) / 2) / (n_pos * n_neg)


def _best(scores: Sequence[float]) -> int:
    """The index of the highest score (the first on a tie)."""
    best = 0
    for c in range(1, len(scores)):
        if scores[c] > scores[best]:
            best = c
    return best


def _prf(tp: int, fp: int, fn: int) -> tuple[float, float, float]:
    p = tp / (tp + fp) if tp + fp else 0.0
    r = tp / (tp + fn) if tp + fn else 0.0
    f = 2 * p * r / (p + r) if p + r else 0.0
    return p, r, f


def evaluate_scores(
    labels: Sequence[str], loss: str, scores: Sequence[Sequence[float]], gold: Sequence[Sequence[str]],
    thresholds: Sequence[float] = THRESHOLDS,
) -> dict[str, Any]:
    """The report for `scores` (one list per text, in label order) against gold label sets."""
    k = len(labels)
    if loss == "ova":
        predicted = [{labels[c] for c in range(k) if s[c] >= 0.5} for s in scores]
    else:
        predicted = [{labels[_best(s)]} for s in scores]
    gold_sets = [set(g) for g in gold]
    n = len(gold_sets)
    per_label: dict[str, Any] = {}
    for c, label in enumerate(labels):
        positive = [label in g for g in gold_sets]
        tp = sum(1 for p, g in zip(predicted, positive, strict=True) if g and label in p)
        fp = sum(1 for p, g in zip(predicted, positive, strict=True) if not g and label in p)
        fn = sum(positive) - tp
        precision, recall, f1 = _prf(tp, fp, fn)
        column = [s[c] for s in scores]
        at = []
        for t in thresholds:
            tp_t = sum(1 for s, g in zip(column, positive, strict=True) if g and s >= t)
            fp_t = sum(1 for s, g in zip(column, positive, strict=True) if not g and s >= t)
            p_t, r_t, _ = _prf(tp_t, fp_t, sum(positive) - tp_t)
            at.append({"threshold": t, "precision": p_t, "recall": r_t, "kept": tp_t + fp_t})
        calibration = calibration_bins(column, positive)
        per_label[label] = {
            "support": sum(positive), "precision": precision, "recall": recall, "f1": f1,
            "roc_auc": roc_auc(column, positive), "at_threshold": at,
            "calibration": calibration, "ece": expected_calibration_error(calibration),
        }
    support = sum(v["support"] for v in per_label.values())
    return {
        "examples": n,
        "accuracy": sum(1 for p, g in zip(predicted, gold_sets, strict=True) if p == g) / n if n else 0.0,
        "macro_f1": sum(v["f1"] for v in per_label.values()) / k,
        "weighted_f1": sum(v["f1"] * v["support"] for v in per_label.values()) / support if support else 0.0,
        "labels": per_label,
    }


def evaluate(model: Model, examples: Sequence[tuple[str, Sequence[str]]], batch_size: int = 1024) -> dict[str, Any]:
    """Score `(text, labels)` pairs with `model` and report (see `evaluate_scores`)."""
    unknown = sorted({lab for _, labs in examples for lab in labs} - set(model.labels))
    if unknown:
        from thresher.classify.training import TrainingError

        raise TrainingError(
            f"evaluation data has label {unknown[0]!r}, which the model does not know {list(model.labels)}"
        )
    scores: list[list[float]] = []
    for start in range(0, len(examples), batch_size):
        scores += model.scores_batch([t for t, _ in examples[start : start + batch_size]])
    return evaluate_scores(model.labels, model.loss, scores, [labs for _, labs in examples])


def render_report(report: dict[str, Any]) -> str:
    """The report as a plain-text table."""
    lines = [
        f"examples {report['examples']}  accuracy {report['accuracy']:.4f}  "
        f"macro F1 {report['macro_f1']:.4f}  weighted F1 {report['weighted_f1']:.4f}",
        "",
        f"{'label':<20} {'support':>8} {'precision':>9} {'recall':>7} {'F1':>7} {'ROC AUC':>8} {'ECE':>7}",
    ]
    for label, v in report["labels"].items():
        auc = "-" if v["roc_auc"] is None else f"{v['roc_auc']:.4f}"
        lines.append(
            f"{label:<20} {v['support']:>8} {v['precision']:>9.4f} {v['recall']:>7.4f} {v['f1']:>7.4f} {auc:>8}"
            f" {v['ece']:>7.4f}"
        )
    lines += ["", "precision / recall / kept when keeping score >= threshold:"]
    labels = list(report["labels"])
    lines.append(f"{'threshold':>9}  " + "  ".join(f"{lab[:22]:>22}" for lab in labels))
    for i, row in enumerate(report["labels"][labels[0]]["at_threshold"]):
        cells = []
        for lab in labels:
            a = report["labels"][lab]["at_threshold"][i]
            cells.append(f"{a['precision']:>6.3f} {a['recall']:>6.3f} {a['kept']:>8}")
        lines.append(f"{row['threshold']:>9.2f}  " + "  ".join(cells))
    return "\n".join(lines)
