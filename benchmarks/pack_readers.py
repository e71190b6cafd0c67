"""thresher pack's `mds` files read by mosaicml-streaming itself, in a side venv.

mosaicml-streaming pins numpy<2.2 and transformers<5, so it cannot be installed beside the other
extras; `tests/unit/test_pack.py` checks the MDS layout by its own parser everywhere and skips the
`StreamingDataset` test where `streaming` is absent. This script makes the side venv
`benchmarks/.venvs/streaming` (if missing) and runs the pack format tests there, so the real reader
runs at least once per change to the format:

- `mosaicml-streaming==0.13.0` and its import-time dependencies, without their dependencies, with
  numpy<2.2 shadowing the main venv's; everything else (torch, tokenizers, pyarrow, pytest) comes from
  the interpreter running this script, through a `.pth` file placed after the venv's own packages;
- a stand-in `torchvision` (three names `import streaming` touches in its vision module): PyPI's
  torchvision wheels are CUDA builds that do not load beside the CPU torch, and reading token shards
  never uses them.

    python benchmarks/pack_readers.py

Writes benchmarks/results/pack_readers.json (the versions and the tests' outcome).
"""

from __future__ import annotations

import json
import platform
import subprocess
import sys
import sysconfig
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
VENV = HERE / ".venvs" / "streaming"
RESULTS = HERE / "results" / "pack_readers.json"
PACKAGES = ["mosaicml-streaming==0.13.0", "numpy<2.2", "xxhash", "zstd", "brotli", "python-snappy", "cramjam", "tqdm",
            "catalogue", "pillow"]
STAND_IN = {
    "torchvision/__init__.py": '"""A stand-in: see benchmarks/pack_readers.py."""\n'
                               "from torchvision import datasets, transforms  # noqa: F401\n",
    "torchvision/datasets.py": "class VisionDataset:\n    pass\n\n\nclass CIFAR10(VisionDataset):\n    pass\n",
    "torchvision/transforms/__init__.py": "from torchvision.transforms import functional  # noqa: F401\n",
    "torchvision/transforms/functional.py": "def to_tensor(pic):\n    raise NotImplementedError\n",
}


def make_venv() -> Path:
    python = VENV / "bin" / "python"
    if python.exists():
        return python
    subprocess.run([sys.executable, "-m", "venv", str(VENV)], check=True)
    subprocess.run([str(python), "-m", "pip", "install", "-q", "--no-deps", *PACKAGES], check=True)
    site = Path(subprocess.run([str(python), "-c", "import sysconfig; print(sysconfig.get_path('purelib'))"],
                               check=True, capture_output=True, text=True).stdout.strip())
    (site / "zz_parent_env.pth").write_text(sysconfig.get_path("purelib") + "\n")
    for relative, text in STAND_IN.items():
        (site / relative).parent.mkdir(parents=True, exist_ok=True)
        (site / relative).write_text(text)
    return python


def main() -> int:
    python = make_venv()
    versions = json.loads(subprocess.run(
        [str(python), "-c", "import json, numpy, streaming, torch, datatrove, megatron.core as m; print(json.dumps("
         "{'mosaicml-streaming': streaming.__version__, 'numpy': numpy.__version__, 'torch': torch.__version__, "
         "'datatrove': __import__('importlib.metadata').metadata.version('datatrove'), "
         "'megatron-core': __import__('importlib.metadata').metadata.version('megatron-core')}))"],
        check=True, capture_output=True, text=True).stdout)
    tests = subprocess.run(
        [str(python), "-m", "pytest", "-p", "no:cacheprovider", "-rs", "tests/unit/test_pack.py"],
        cwd=ROOT, capture_output=True, text=True, env={"PYTHONPATH": f"{ROOT / 'src'}:{ROOT}", "PATH": "/usr/bin:/bin"})
    summary = tests.stdout.strip().splitlines()[-1] if tests.stdout.strip() else tests.stderr[-500:]
    result = {"versions": versions, "python": platform.python_version(), "tests": "tests/unit/test_pack.py",
              "returncode": tests.returncode, "summary": summary,
              "skipped": [line for line in tests.stdout.splitlines() if line.startswith("SKIPPED")]}
    RESULTS.write_text(json.dumps(result, indent=2) + "\n")
    print(json.dumps(result, indent=2))
    return tests.returncode


if __name__ == "__main__":
    raise SystemExit(main())
