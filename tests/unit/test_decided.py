"""The merged decisions stream over several stages' files (`thresher.decided`)."""

from __future__ import annotations

import json
from pathlib import Path

from thresher.clusters import Decision
from thresher.decided import iter_decisions, iter_kept


def _write(path: Path, decisions: list[Decision]) -> Path:
    path.write_text("".join(json.dumps(d.to_json()) + "\n" for d in decisions))
    return path


def test_a_document_decided_by_two_stages_gets_one_merged_decision(tmp_path: Path) -> None:
    # A kept duplicate (exact dedup) that line dedup also edits: both files hold ordinal 3, so the
    # merge must order by stream, never compare two Decisions (it raised TypeError when every
    # stream carried the last stream's index).
    keeps = _write(
        tmp_path / "a.jsonl",
        [Decision(ordinal=1, cluster="c1", duplicates=1), Decision(ordinal=3, cluster="c2", duplicates=2)],
    )
    edits = _write(
        tmp_path / "b.jsonl",
        [
            Decision(ordinal=2, edit={"text": "two", "annotations": {}}),
            Decision(ordinal=3, edit={"text": "three", "annotations": {}}),
        ],
    )
    merged = list(iter_decisions([keeps, edits]))
    assert [d.ordinal for d in merged] == [1, 2, 3]
    third = merged[2]
    assert (third.cluster, third.duplicates, third.kept) == ("c2", 2, True)
    assert third.edit == {"text": "three", "annotations": {}}


def test_kept_documents_carry_the_edit(tmp_path: Path) -> None:
    docs = tmp_path / "docs.tsv"
    docs.write_bytes(
        b"".join(b"%d\t%s\n" % (o, json.dumps({"id": str(o), "text": f"t{o}"}).encode()) for o in (1, 2, 3))
    )
    keeps = _write(tmp_path / "a.jsonl", [Decision(ordinal=3, cluster="c2", duplicates=2)])
    edits = _write(tmp_path / "b.jsonl", [Decision(ordinal=3, edit={"text": "edited", "annotations": {}})])
    kept = {o: json.loads(line) for o, line in iter_kept(docs, [keeps, edits])}
    assert sorted(kept) == [1, 2, 3]
    assert kept[3]["text"] == "edited" and kept[1]["text"] == "t1"
