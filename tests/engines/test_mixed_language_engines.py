"""Engine identity on a mixed-language corpus (issue 29).

Each build runs as its own `thresher build` process with its own PYTHONHASHSEED, as separate runs
do in real use: a result that followed the process's string hashing (set iteration order) or
anything a process did before differs between these runs. The corpus reaches every path of the
language detector (script alone, CLD2, lingua between close languages, paragraph spans, tied
paragraph counts); `test_corpus_reaches_every_detector_path` checks that it still does.
"""

from __future__ import annotations

import collections
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from tests.conftest import shared_path
from tests.engines.mixed_language import documents, load_sentences, write_corpus

DOCUMENTS = 2400


@pytest.fixture(scope="module")
def lingua_dir() -> Path:
    return shared_path("language", "lingua")


@pytest.fixture(scope="module")
def mixed_corpus(tmp_path_factory, lingua_dir) -> Path:
    return write_corpus(tmp_path_factory.mktemp("mixed") / "mixed.jsonl", lingua_dir, DOCUMENTS)


def _build(corpus: Path, out: Path, seed: int, *args: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONHASHSEED": str(seed)}
    command = [sys.executable, "-m", "thresher.cli", "build", str(corpus), "-o", str(out), "-q",
               "--input-partition-bytes", "200000", *args]
    return subprocess.run(command, env=env, check=True, capture_output=True, text=True)


def _shards(out: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(out.glob("shard-*"))}


def test_corpus_reaches_every_detector_path(lingua_dir):
    pytest.importorskip("pycld2")
    pytest.importorskip("lingua")
    from thresher.lang.config import LangConfig
    from thresher.lang.prose import prose_paragraphs
    from thresher.lang.stage import make_detector

    detector = make_detector(LangConfig(detector="cascade"))
    methods: collections.Counter[str] = collections.Counter()
    mixed = 0
    for text in documents(load_sentences(lingua_dir), DOCUMENTS):
        detection, codes = detector.detect_paragraphs([p.text for p in prose_paragraphs(text, 2048)])
        methods[detection.method] += 1
        mixed += len(set(codes)) > 1
    assert methods["script"] >= 20 and methods["cld2"] >= 1000 and methods["lingua"] >= 40, methods
    assert mixed >= DOCUMENTS // 3, mixed


def test_local_pool_ray_and_resume_give_identical_shards_on_mixed_languages(mixed_corpus, tmp_path):
    pytest.importorskip("pycld2")
    reference = tmp_path / "local"
    _build(mixed_corpus, reference, 1, "--engine", "local")
    expected = _shards(reference)
    assert expected
    manifest = json.loads((reference / "manifest.json").read_text())
    assert manifest["config"]["lang"]["detector"] == "cascade"
    runs = {"pool-1": (2, "--engine", "pool", "--workers", "1"), "pool-2": (3, "--engine", "pool", "--workers", "2")}
    try:
        import ray  # noqa: F401

        runs["ray"] = (4, "--engine", "ray", "--workers", "2")
    except ImportError:
        pass
    for name, (seed, *args) in runs.items():
        _build(mixed_corpus, tmp_path / name, seed, *args)
        assert _shards(tmp_path / name) == expected, f"{name} (PYTHONHASHSEED={seed}) differs from local"

    # a resume: half the finished tasks forgotten, then run again in a process with another seed
    resumed = tmp_path / "resumed"
    _build(mixed_corpus, resumed, 5, "--engine", "pool", "--workers", "2", "--keep-work")
    (resumed / "manifest.json").unlink()
    markers = sorted((resumed / ".work" / "done").glob("*.json"))
    assert len(markers) >= 6
    for marker in markers[::2]:
        marker.unlink()
    _build(mixed_corpus, resumed, 6, "--engine", "pool", "--workers", "2")
    assert _shards(resumed) == expected, "a resumed build differs from local"
