"""`--partition-by language` gives the same folders, byte for byte, on every engine and after a resume.

Each build is its own `thresher build` process with its own PYTHONHASHSEED (as in
`test_mixed_language_engines.py`), on a mixed-language corpus built from lingua's sentences.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from tests.conftest import shared_path
from tests.engines.mixed_language import write_corpus

from thresher.write.partitions import PARTITIONS_DIR

DOCUMENTS = 400


def _build(corpus: Path, out: Path, seed: int, *args: str) -> None:
    env = {**os.environ, "PYTHONHASHSEED": str(seed)}
    command = [sys.executable, "-m", "thresher.cli", "build", str(corpus), "-o", str(out), "-q",
               "--input-partition-bytes", "100000", "--partition-by", "language", "--shard-size", "40", *args]
    subprocess.run(command, env=env, check=True, capture_output=True, text=True)


def _partitions(out: Path) -> dict[str, bytes]:
    return {p.relative_to(out).as_posix(): p.read_bytes()
            for p in sorted((out / PARTITIONS_DIR).rglob("*")) if p.is_file()}


def test_local_pool_and_resume_write_identical_partitions(tmp_path):
    corpus = write_corpus(tmp_path / "mixed.jsonl", shared_path("language", "lingua"), DOCUMENTS)
    _build(corpus, tmp_path / "local", 1, "--engine", "local")
    expected = _partitions(tmp_path / "local")
    section = json.loads((tmp_path / "local" / "manifest.json").read_text())["partitions"]
    assert len(section["datasets"]) >= 10 and sum(d["records"] for d in section["datasets"]) > DOCUMENTS // 2
    assert any(len(d["shards"]) > 1 for d in section["datasets"])

    _build(corpus, tmp_path / "pool", 2, "--engine", "pool", "--workers", "2")
    assert _partitions(tmp_path / "pool") == expected

    # killed after some partitions were written: no root manifest, one partition's manifest missing
    resumed = tmp_path / "resumed"
    _build(corpus, resumed, 3, "--engine", "pool", "--workers", "2", "--keep-work")
    (resumed / "manifest.json").unlink()
    first = resumed / section["datasets"][0]["path"]
    (first / "manifest.json").unlink()
    _build(corpus, resumed, 4, "--engine", "pool", "--workers", "2")
    assert _partitions(resumed) == expected
