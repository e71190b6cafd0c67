"""The `fast` extra makes a build faster, never different: the same real WARC files built with its
packages (numpy, fastwarc) and with them made unimportable write byte-identical shards."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from tests.conftest import shared_path

from thresher.compiled import MODULES as COMPILED_MODULES

# the fast extra's packages, and the compiled kernels built with the package (tree builder,
# repetition, MinHash): without them every accelerator takes its pure-Python path
FAST_MODULES = ("numpy", "fastwarc", *COMPILED_MODULES)
# Runs the CLI with the fast extra's modules unimportable (a None entry in sys.modules makes
# `import` raise ImportError), so every accelerator takes its pure-Python path.
_WITHOUT_FAST = (
    f"import sys; sys.modules.update({{m: None for m in {FAST_MODULES!r}}}); "
    "from thresher.cli import main; sys.exit(main(sys.argv[1:]))"
)
_WITH = "import sys; from thresher.cli import main; sys.exit(main(sys.argv[1:]))"


def _build(code: str, files: list[Path], out: Path) -> dict:
    src = str(Path(__file__).resolve().parents[3] / "src")
    env = dict(os.environ, PYTHONPATH=src + os.pathsep + os.environ.get("PYTHONPATH", ""))
    proc = subprocess.run([sys.executable, "-c", code, "build", *map(str, files), "-o", str(out), "-q",
                           "--workers", "1"], capture_output=True, text=True, env=env, timeout=300)
    assert proc.returncode == 0, proc.stderr[-2000:]
    return json.loads((out / "manifest.json").read_text())


def test_build_writes_the_same_shards_with_and_without_the_fast_extra(tmp_path: Path) -> None:
    for name in ("numpy", "fastwarc"):  # the compiled kernels may be absent: then both runs are pure
        pytest.importorskip(name)
    files = [shared_path("warc", "resiliparse", "warcfile.warc.gz"), shared_path("warc", "pywb", "iana.warc.gz")]
    with_fast = _build(_WITH, files, tmp_path / "fast")
    without = _build(_WITHOUT_FAST, files, tmp_path / "pure")
    assert with_fast["records"] > 0
    assert [s["sha256"] for s in with_fast["shards"]] == [s["sha256"] for s in without["shards"]]
    assert with_fast["records"] == without["records"]
