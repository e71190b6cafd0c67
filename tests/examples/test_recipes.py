"""Every recipe in docs/recipes.md is run as written, on the shared evaluation data, and the counts it
states are checked (issue 38: a recipe that said it built an English corpus kept Japanese, Chinese,
Russian and Dutch pages, and nothing noticed).

A recipe states what its run reported in a comment the test reads, one per output folder:
`<!-- recipe-check: OUT/ seen=770 kept=79 drop/lang/not_wanted=48 only_lang=en -->`: stats.json's
`seen`, `kept`, `dropped`, `malformed` and counters by name, and `only_lang=CODE` (every kept document
carries that `lang.code`) or `same_shards=OTHER/` (the shards are those of another recipe's output).
"""

from __future__ import annotations

import gzip
import importlib.util
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
RECIPES = ROOT / "docs" / "recipes.md"
SHARED = ROOT.parent / "shared" / "data"

_BLOCK = re.compile(r"^## (.+?)\n(.*?)(?=^## |\Z)", re.S | re.M)
_BASH = re.compile(r"```bash\n(.*?)```", re.S)
_CHECK = re.compile(r"<!-- recipe-check: (\S+) (.*?) -->")


def recipes() -> list[tuple[str, list[str], list[tuple[str, dict[str, str]]]]]:
    """(title, commands, checks) of each section of docs/recipes.md that has a bash block."""
    found = []
    for title, body in _BLOCK.findall(RECIPES.read_text(encoding="utf-8")):
        commands = []
        for block in _BASH.findall(body):
            for line in block.replace("\\\n", " ").splitlines():
                command = re.sub(r"\s+#\s.*$", "", line).strip()  # a trailing comment ("  # ...")
                if command:
                    commands.append(command)
        checks = [(out, dict(item.split("=", 1) for item in items.split())) for out, items in _CHECK.findall(body)]
        if commands:
            found.append((title.strip(), commands, checks))
    return found


def _kept_records(out: Path) -> list[dict]:
    records = []
    for shard in json.loads((out / "manifest.json").read_text())["shards"]:
        with gzip.open(out / shard["path"], "rt", encoding="utf-8") as f:
            records.extend(json.loads(line) for line in f)
    return records


def _missing_extras(commands: list[str]) -> list[str]:
    """The extras a recipe's stated counts depend on that this environment lacks: the language
    stage's labels (and the rules routed by them) are those of the `lang` extra's detectors."""
    needs = {"pycld2": "lang", "lingua": "lang"}
    if any("parquet" in c for c in commands):
        needs["pyarrow"] = "parquet"
    if any("--engine ray" in c for c in commands):
        needs["ray"] = "ray"
    return sorted({extra for module, extra in needs.items() if importlib.util.find_spec(module) is None})


def _shard_digests(out: Path) -> list[str]:
    manifest = json.loads((out / "manifest.json").read_text())
    return [shard["sha256"] for shard in manifest["shards"]]


def test_every_recipe_states_what_its_run_is_checked_against() -> None:
    found = recipes()
    assert len(found) >= 4, [t for t, _, _ in found]
    for title, commands, checks in found:
        builds = [c for c in commands if c.startswith("thresher build")]
        assert len(checks) >= len(builds), f"{title}: {len(builds)} builds, {len(checks)} recipe-check comments"


@pytest.mark.parametrize("title", [t for t, _, _ in recipes()])
def test_recipe_runs_as_written(title: str, tmp_path: Path) -> None:
    if not SHARED.is_dir():
        pytest.skip(f"the shared evaluation data ({SHARED}) is absent")
    _, commands, checks = next(r for r in recipes() if r[0] == title)
    missing = _missing_extras(commands)
    if missing:
        pytest.skip(f"the recipe's counts need the {', '.join(missing)} extra(s)")
    path = str(ROOT / "src") + os.pathsep + os.environ.get("PYTHONPATH", "")
    env = {**os.environ, "D": str(SHARED), "PYTHONPATH": path}
    thresher = f"{sys.executable} -m thresher"
    if any("thresher-demo/" in c for c in commands):
        subprocess.run(f"{thresher} demo", shell=True, cwd=tmp_path, env=env, check=True, capture_output=True)
    for command in commands:
        proc = subprocess.run(
            thresher + command[len("thresher"):] + " -q" * command.startswith("thresher build"),
            shell=True, executable="/bin/bash", cwd=tmp_path, env=env, capture_output=True, text=True, timeout=600,
        )
        assert proc.returncode == 0, f"{command}\n{proc.stderr[-3000:]}"
    for out, expected in checks:
        stats = json.loads((tmp_path / out / "stats.json").read_text())
        for key, value in expected.items():
            if key == "only_lang":
                langs = {r.get("annotations", {}).get("lang.code") for r in _kept_records(tmp_path / out)}
                assert langs == {value}, f"{out}: kept languages {langs}"
            elif key == "same_shards":
                assert _shard_digests(tmp_path / out) == _shard_digests(tmp_path / value)
            elif key in ("seen", "kept", "dropped", "malformed"):
                assert stats[key] == int(value), f"{out}: {key} {stats[key]}, the recipe says {value}"
            else:
                got = stats["counters"].get(key, 0)
                assert got == int(value), f"{out}: {key} {got}, the recipe says {value}"
