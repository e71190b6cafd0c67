"""Issue 14 item 4: the README's library snippet, saved as a script without a `__main__` guard as a
newcomer writes it, runs to the end on the process pool (its workers used to re-run the script and
start a second build)."""

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_library_example_runs_as_a_script_on_the_process_pool(tmp_path):
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src") + os.pathsep + os.environ.get("PYTHONPATH", "")}
    script = ROOT / "examples" / "library_build.py"
    assert "__main__" not in script.read_text().split('"""', 2)[2]  # no guard: the case that used to crash
    proc = subprocess.run(
        [sys.executable, str(script)], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=240
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert "another build" not in proc.stderr and "BrokenProcessPool" not in proc.stderr
    read_back = [line for line in proc.stdout.splitlines() if line.startswith("read back ")]
    assert len(read_back) == 1 and int(read_back[0].split()[2]) > 0
    assert (tmp_path / "dataset" / "manifest.json").is_file()
    assert not (tmp_path / "dataset" / ".work").exists()
