"""A build pays only for what it runs: on one worker, without an encoder or a classifier, it imports
neither the process pool, nor the embedding phase's encoder and clustering code, nor the classifier
trainer (each was imported by every build before; ~33 M instructions of a 1-page build)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

NOT_IMPORTED = (
    "concurrent.futures.process",
    "multiprocessing",
    "thresher.run.pool_engine",
    "thresher.embed.batched",
    "thresher.embed.encoder",
    "thresher.embed.semantic",
    "thresher.embed.vectors",
    "thresher.classify.training",
    "thresher.classify.features",
    "thresher.classify.format",
)

PROBE = """
import json, sys
from thresher.cli import main
code = main(["build", sys.argv[1], "-o", sys.argv[2], "-q", "--workers", "1"])
print(json.dumps({"code": code, "loaded": sorted(m for m in {names} if m in sys.modules)}))
"""


def test_a_one_worker_build_imports_only_what_it_runs(tmp_path: Path) -> None:
    crawl = tmp_path / "in.jsonl"
    page = "<html><body><p>" + "A plain sentence about rivers and the towns along them. " * 12 + "</p></body></html>"
    crawl.write_text(json.dumps({"id": "a", "url": "http://example.org/a", "html": page}) + "\n", encoding="utf-8")
    probe = PROBE.replace("{names}", repr(NOT_IMPORTED))
    out = subprocess.run([sys.executable, "-c", probe, str(crawl), str(tmp_path / "out")],
                         capture_output=True, text=True, check=True).stdout
    result = json.loads(out.strip().splitlines()[-1])
    assert result["code"] == 0
    assert result["loaded"] == []


def test_the_classifier_package_face_exports_functions_not_modules() -> None:
    # a lazy name that is also a submodule's name would be shadowed by the submodule once imported:
    # the trainer's module is `training`, so `train` stays the function
    import thresher.classify as classify
    import thresher.classify.training  # noqa: F401 - the submodule imported first, on purpose
    from thresher.classify import train

    assert train.__module__ == "thresher.classify.training" and callable(train)
    for name in classify.__all__:
        assert getattr(classify, name).__module__.startswith("thresher.classify."), name
