"""Every kind of bad input in the catalogue: the build finishes, counts reconcile, the exact
counters are as expected, the problem is located, and time and memory stay bounded."""

from __future__ import annotations

import gzip
import json
import os
import resource
import time

import pytest
from tests.conftest import local_config
from tests.reliability.catalogue import CASES, Case

from thresher.run.build import build

MAX_SECONDS = 20.0
MAX_GROWTH_MIB = 128  # what one build of a bad input may add to the process's peak RSS (the most seen: 18)


def _reset_peak_rss() -> int | None:
    """Reset this process's peak RSS (Linux: "5" to clear_refs) and return the current RSS in KiB, so
    the peak read afterwards is this build's own. The process-lifetime ru_maxrss would instead carry
    whatever the tests before this one held (CI once failed every case here on an earlier test's peak)."""
    try:
        with open("/proc/self/clear_refs", "w") as f:
            f.write("5")
        return _status_kib("VmRSS")
    except OSError:
        return None


def _status_kib(field: str) -> int:
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith(field + ":"):
                return int(line.split()[1])
    raise KeyError(field)


def test_catalogue_has_at_least_sixty_kinds():
    assert len({case.name for case in CASES}) == len(CASES) >= 60


def _write(root, files):
    for name, data in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(data, tuple):
            os.symlink(data[1], path)
        else:
            path.write_bytes(data)


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_bad_input_outcome(case: Case, tmp_path):
    if case.needs is not None:
        pytest.importorskip(case.needs)
    inputs = tmp_path / "in"
    _write(inputs, case.files)
    target = inputs / "d" if (inputs / "d").is_dir() else inputs
    config = local_config(**case.config)
    before_kib = _reset_peak_rss()
    t0 = time.monotonic()
    result = build([str(target)], tmp_path / "out", config, rejects=tmp_path / "rejects")
    elapsed = time.monotonic() - t0
    counters = result.stats.counters
    assert result.stats.reconciles(), dict(counters)
    assert {k: counters.get(k, 0) for k in case.expect} == case.expect, dict(counters)
    if case.located is not None:
        with gzip.open(tmp_path / "rejects" / "malformed.jsonl.gz", "rt", encoding="utf-8") as f:
            first = json.loads(f.readline())
        assert case.located in first["location"], first
    assert elapsed < MAX_SECONDS
    if before_kib is None:  # no clear_refs: the lifetime peak, with the old, looser bound
        assert resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024 < 1024
    else:
        assert (_status_kib("VmHWM") - before_kib) / 1024 < MAX_GROWTH_MIB
    for shard in (tmp_path / "out").glob("shard-*.jsonl.gz"):  # whatever was kept is strict UTF-8 JSON
        for raw in gzip.decompress(shard.read_bytes()).splitlines():
            json.loads(raw.decode("utf-8"), parse_constant=lambda name: pytest.fail(f"{name} in a shard"))
