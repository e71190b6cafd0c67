"""`thresher signals DATASET`: what the signals table says (docs/signals.md).

For each numeric signal (text size, word count, every numeric annotation: quality metrics, language
score, classifier scores, PII counts, decontamination overlap): how many documents it was measured
on and its percentiles. For each quality rule's metric: what each candidate threshold (the metric's
own percentiles) would keep of the documents it was measured on, as a floor (value >= t) and as a
ceiling (value <= t), in documents and whitespace tokens.

Percentiles are exact and are values documents have (the lower of the two around the rank:
`interpolation="lower"`). The table is read one column (and the word counts) at a time over every
part file, so memory is about 16 bytes per document, never the texts.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from thresher.write.manifest import _store, load_manifest
from thresher.write.signals import HEAD_COLUMNS, iter_signal_files

PERCENTILES = (1, 5, 25, 50, 75, 95, 99)
# numeric head columns that are places, not measurements
NOT_SIGNALS = frozenset({"ordinal", "source_offset", "shard", "row", "drop_value", "drop_limit", "dedup_duplicates"})
RULE_PREFIX = "quality."


def summarize(dataset: Any) -> dict[str, Any]:
    """The distributions and candidate thresholds of a dataset's signals table (see the module doc)."""
    import pyarrow as pa
    import pyarrow.compute as pc
    import pyarrow.parquet as pq

    store = _store(dataset)
    manifest = load_manifest(store)
    paths = list(iter_signal_files(store, manifest))

    def column(names: Sequence[str]) -> Any:
        tables = []
        for rel in paths:
            with store.open(rel) as f:
                tables.append(pq.read_table(f, columns=list(names)))
        return pa.concat_tables(tables) if tables else None

    schema = None
    if paths:
        with store.open(paths[0]) as f:
            schema = pq.read_schema(f)
    keys = json.loads((schema.metadata or {}).get(b"thresher.annotation_keys", b"{}")) if schema is not None else {}
    head = {name for name, _ in HEAD_COLUMNS}
    numeric = [f.name for f in (schema or []) if (pa.types.is_integer(f.type) or pa.types.is_floating(f.type))
               and f.name not in NOT_SIGNALS and (f.name in head or f.name in keys)]
    status = column(["status"])
    counts = {"documents": 0, "kept": 0, "dropped": 0}
    if status is not None:
        counts["documents"] = status.num_rows
        counts["kept"] = int(pc.sum(pc.equal(status["status"], "kept")).as_py() or 0)
        counts["dropped"] = counts["documents"] - counts["kept"]
    signals: dict[str, Any] = {}
    thresholds: dict[str, Any] = {}
    for name in numeric:
        key = keys.get(name, name)
        table = column([name] if name == "words" else [name, "words"])
        assert table is not None
        measured = table.filter(pc.is_valid(table[name]))
        n = measured.num_rows
        entry: dict[str, Any] = {"column": name, "documents": n, "percentiles": {}}
        if n:
            values = pc.quantile(measured[name], q=[p / 100 for p in PERCENTILES], interpolation="lower")
            entry["percentiles"] = {f"p{p}": _plain(v) for p, v in zip(PERCENTILES, values.to_pylist(), strict=True)}
            entry["whitespace_tokens"] = int(pc.sum(measured["words"]).as_py() or 0)
        signals[key] = entry
        if n and key.startswith(RULE_PREFIX):
            thresholds[key] = _candidates(pc, measured[name], measured["words"], entry["percentiles"].values())
    return {"dataset": str(store.locate()), **counts, "files": len(paths), "signals": signals,
            "thresholds": thresholds}


def _candidates(pc: Any, values: Any, words: Any, cuts: Any) -> list[dict[str, Any]]:
    """What each distinct threshold keeps as a floor and as a ceiling (documents, whitespace tokens)."""
    out = []
    for t in sorted(set(cuts)):
        row: dict[str, Any] = {"threshold": t}
        for side, test in (("at_least", pc.greater_equal), ("at_most", pc.less_equal)):
            mask = test(values, t)
            row[side] = {"documents": int(pc.sum(mask).as_py() or 0),
                         "whitespace_tokens": int(pc.sum(pc.if_else(mask, words, 0)).as_py() or 0)}
        out.append(row)
    return out


def _plain(value: Any) -> Any:
    return round(value, 6) if isinstance(value, float) else value


def _fmt(value: Any) -> str:
    if isinstance(value, float):
        return f"{value:.4g}"
    return str(value)


def render(summary: dict[str, Any]) -> str:
    """The summary as text: a table of percentiles, then each rule's candidate thresholds."""
    lines = [f"signals of {summary['dataset']}: {summary['documents']} documents ({summary['kept']} kept, "
             f"{summary['dropped']} dropped) in {summary['files']} file(s)", ""]
    names = list(summary["signals"])
    width = max([len(n) for n in names] + [6])
    header = f"{'signal':<{width}} {'documents':>9} " + " ".join(f"{'p' + str(p):>9}" for p in PERCENTILES)
    lines.append(header)
    for name in names:
        entry = summary["signals"][name]
        cells = " ".join(f"{_fmt(entry['percentiles'].get(f'p{p}', '-')):>9}" for p in PERCENTILES)
        lines.append(f"{name:<{width}} {entry['documents']:>9} {cells}")
    if summary["thresholds"]:
        lines += ["", "candidate thresholds: what each keeps of the documents the rule's metric was measured on"]
    for name, rows in summary["thresholds"].items():
        entry = summary["signals"][name]
        lines.append(f"{name} (measured on {entry['documents']} documents, {entry['whitespace_tokens']} tokens)")
        lines.append(f"  {'threshold':>10}  {'>= t: docs':>11} {'tokens':>11}  {'<= t: docs':>11} {'tokens':>11}")
        for row in rows:
            lo, hi = row["at_least"], row["at_most"]
            lines.append(f"  {_fmt(row['threshold']):>10}  {lo['documents']:>11} {lo['whitespace_tokens']:>11}  "
                         f"{hi['documents']:>11} {hi['whitespace_tokens']:>11}")
    return "\n".join(lines)
