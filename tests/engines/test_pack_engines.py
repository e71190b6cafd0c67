"""`thresher pack` gives the same bytes whichever engine tokenizes (local, pool, Ray) and however many
workers it has, and a pack killed with SIGKILL and run again gives the same bytes as one never killed."""

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from tests.conftest import local_config, write_jsonl

from thresher.commands.pack import engine_runner
from thresher.pack.run import PackOptions, pack
from thresher.run.build import build

pytest.importorskip("tokenizers", reason="the pack extra (tokenizers) is not installed")
WORDS = ("river", "garden", "window", "engine", "market", "letter", "bridge", "forest", "station", "kitchen")


@pytest.fixture(scope="module")
def datasets(tmp_path_factory):
    """Two datasets of several shards each (40 documents a shard)."""
    tmp = tmp_path_factory.mktemp("pack")
    out = []
    for name, n in (("a", 400), ("b", 240)):
        records = [{"url": f"https://{name}.example/{i}",
                    "text": " ".join(f"{WORDS[(i * 7 + j) % 10]}{i % 13}" for j in range(30 + i % 40)) + "."}
                   for i in range(n)]
        src = write_jsonl(tmp / f"{name}.jsonl", records)
        build([str(src)], tmp / name, local_config(dedup={"near": {"method": None}}, output={"shard_max_records": 40}))
        assert len(json.loads((tmp / name / "manifest.json").read_text())["shards"]) >= 6
        out.append(tmp / name)
    return out


def options():
    return PackOptions(format="megatron", seed=11, validation_fraction=0.1, file_tokens=5_000)


def test_local_pool_and_ray_pack_the_same_bytes(datasets, tmp_path):
    try:
        from thresher.pack.tokenizer import load_tokenizer

        load_tokenizer("llama2")
    except Exception as exc:  # noqa: BLE001
        pytest.skip(f"the llama2 tokenizer file is not installed: {exc}")
    sources = [f"{datasets[0]}=0.6", f"{datasets[1]}=0.4"]
    local = pack(sources, tmp_path / "local", options())
    pool = pack(sources, tmp_path / "pool", options(), runner=engine_runner("pool", 2))
    pool3 = pack(sources, tmp_path / "pool3", options(), runner=engine_runner("pool", 3))
    assert len(local["splits"]["train"]["files"]) > 4
    for other in (pool, pool3):
        assert other["splits"] == local["splits"]  # every file's sha256
        assert other["datasets"] == local["datasets"]
    pytest.importorskip("ray")
    ray = pack(sources, tmp_path / "ray", options(), runner=engine_runner("ray", 2))
    assert ray["splits"] == local["splits"] and ray["datasets"] == local["datasets"]


def test_sigkill_then_rerun_gives_the_bytes_of_an_unkilled_pack(datasets, tmp_path):
    reference = pack([str(datasets[0]), str(datasets[1])], tmp_path / "ref", options())
    shards = sum(len(json.loads((d / "manifest.json").read_text())["shards"]) for d in datasets)
    base = [sys.executable, "-m", "thresher.cli", "pack", str(datasets[0]), str(datasets[1]), "--seed", "11",
            "--validation-fraction", "0.1", "--file-tokens", "5000", "-q"]
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(Path(__file__).resolve().parents[2] / "src"),
                                                        os.environ.get("PYTHONPATH", "")])}
    # kill once a few shards are tokenized, and once all are (the write pass, or after it)
    resumed = []
    trials = ((3, ["--engine", "pool", "--workers", "2"]), (shards, ["--engine", "local"]))
    for k, (target, engine) in enumerate(trials):
        out = tmp_path / f"run{k}"
        proc = subprocess.Popen([*base, "-o", str(out), *engine], start_new_session=True, env=env)
        while proc.poll() is None and len(list((out / ".work").glob("d*/s*/done.json"))) < target:
            time.sleep(0.002)
        os.killpg(proc.pid, signal.SIGKILL)  # the driver and its workers, as a crashed machine would
        proc.wait()
        if not (out / "manifest.json").exists():
            markers = len(list((out / ".work").glob("d*/s*/done.json")))
            assert markers >= min(target, 1)
            resumed.append(markers)
            subprocess.run([*base, "-o", str(out), *engine], check=True, env=env)
        manifest = json.loads((out / "manifest.json").read_text())
        assert manifest["splits"] == reference["splits"], f"killed at {target} shards: other bytes"
        assert not (out / ".work").exists()
    assert resumed and resumed[0] < shards, resumed  # at least the first kill stopped the tokenize pass
