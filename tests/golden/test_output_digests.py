"""Output pinned byte for byte: the demo crawl, the AEB + trafilatura-eval pages and the real WARC
files are built with the in-process engine, and every per-reason drop count, every shard's sha256
and the digest of the manifest's stable parts must equal `digests.json`.

A change that moves a digest changes what users get: re-pin deliberately, after reading the diff of
the records, with `python tests/golden/test_output_digests.py --repin` (it rebuilds all three and
rewrites `digests.json`). What legitimately varies is left out of the manifest digest: the thresher
and extractor versions and the config (a new config section changes it without changing the output).
Inputs are given as relative paths from a fixed folder, so `source.file` in the records is the same
on every machine."""

from __future__ import annotations

import gzip
import hashlib
import json
import os
import sys
from pathlib import Path
from typing import Any

import pytest

HERE = Path(__file__).resolve().parent
DIGESTS = HERE / "digests.json"
SHARED_DATA = HERE.parent.parent.parent / "shared" / "data"

# Well-formed archives of every kind the reader handles (WARC 1.0/1.1 gz, ARC, revisits, a
# FastWARC quirk case); the malformed edge cases are the reliability suite's, whose fixes may move them.
WARC_FILES = (
    "aut/example.warc.gz",
    "aut/example.arc.gz",
    "resiliparse/warcfile.warc.gz",
    "resiliparse/clueweb-quirk.warc.gz",
    "dolma/sample-0000.warc.gz",
    "dolma/sample-0001.warc.gz",
    "whirlwind/whirlwind.warc.gz",
    "pywb/iana.warc.gz",
    "ukwa/BL-20140325121225068-00000-32090_opera_8443.warc.gz",
    "ukwa/BL-20140325122341434-00000-32090_opera_8443.warc.gz",
)


def _write_real_pages(path: Path) -> bool:
    """The AEB and trafilatura-eval pages as one JSONL crawl (as tests/golden/test_real_pages.py)."""
    aeb = SHARED_DATA / "extraction" / "aeb"
    traf = SHARED_DATA / "extraction" / "trafilatura-eval"
    if not (aeb / "ground-truth.json").exists() or not (traf / "evaldata.json").exists():
        return False
    with open(path, "w", encoding="utf-8") as out:
        truth = json.loads((aeb / "ground-truth.json").read_text(encoding="utf-8"))
        for page_id in sorted(truth):
            raw = gzip.decompress((aeb / "html" / f"{page_id}.html.gz").read_bytes())
            out.write(
                json.dumps({"url": truth[page_id]["url"], "html": raw.decode("utf-8", "replace"), "set": "aeb"}) + "\n"
            )
        evaldata = json.loads((traf / "evaldata.json").read_text(encoding="utf-8"))
        for url in sorted(evaldata):
            page = traf / "pages" / (evaldata[url]["file"] + ".gz")
            if page.exists():
                raw = gzip.decompress(page.read_bytes())
                out.write(json.dumps({"url": url, "html": raw.decode("utf-8", "replace"), "set": "trafilatura"}) + "\n")
    return True


def stable_manifest(manifest: dict[str, Any]) -> dict[str, Any]:
    stable = {k: v for k, v in manifest.items() if k not in ("thresher_version", "config", "config_hash", "extractor")}
    stable["extractor"] = {k: v for k, v in manifest.get("extractor", {}).items() if k != "version"}
    return stable


def digest_dataset(out: Path) -> dict[str, Any]:
    """What is pinned of one built dataset."""
    manifest = json.loads((out / "manifest.json").read_text(encoding="utf-8"))
    stats = json.loads((out / "stats.json").read_text(encoding="utf-8"))
    shards = {}
    for shard in manifest["shards"]:
        shards[shard["path"]] = hashlib.sha256((out / shard["path"]).read_bytes()).hexdigest()
    stable = json.dumps(stable_manifest(manifest), sort_keys=True, ensure_ascii=False).encode("utf-8")
    return {
        "counts": {k: stats[k] for k in ("seen", "kept", "dropped", "malformed")},
        "drops": stats["drops"],
        "rule_failures": stats["rule_failures"],
        "malformed_reasons": stats["malformed_reasons"],
        "events": stats["events"],
        "shards": shards,
        "manifest": hashlib.sha256(stable).hexdigest(),
    }


def build_case(case: str, tmp: Path) -> dict[str, Any] | None:
    """Build one golden case into `tmp`; None when its data is absent. Inputs are relative paths."""
    from thresher.config import RunConfig
    from thresher.run.build import build

    config: dict[str, Any] = {"exec": {"engine": "local"}}
    if case == "demo":
        from thresher.demo import write_crawl

        write_crawl(tmp / "crawl.jsonl", n_pages=600)
        cwd, inputs = tmp, ["crawl.jsonl"]
        config["output"] = {"shard_max_records": 200}
    elif case == "real_pages":
        if not _write_real_pages(tmp / "crawl.jsonl"):
            return None
        cwd, inputs = tmp, ["crawl.jsonl"]
        config["output"] = {"shard_max_records": 250}
    elif case == "warc":
        cwd = SHARED_DATA / "warc"
        if not all((cwd / f).exists() for f in WARC_FILES):
            return None
        inputs = list(WARC_FILES)
    else:
        raise ValueError(case)
    previous = os.getcwd()
    os.chdir(cwd)
    try:
        build(inputs, tmp / "out", RunConfig.from_dict(config))
    finally:
        os.chdir(previous)
    return digest_dataset(tmp / "out")


CASES = ("demo", "real_pages", "warc")


@pytest.mark.parametrize("case", CASES)
def test_output_is_byte_identical_to_pinned(case, tmp_path):
    pinned = json.loads(DIGESTS.read_text(encoding="utf-8"))
    got = build_case(case, tmp_path)
    if got is None:
        pytest.skip(f"evaluation data for the {case!r} case missing under {SHARED_DATA}")
    want = pinned[case]
    # the counts first: a drift there says which stage moved, before the digests say that something did
    assert got["counts"] == want["counts"]
    assert got["drops"] == want["drops"]
    assert got["rule_failures"] == want["rule_failures"]
    assert got["malformed_reasons"] == want["malformed_reasons"]
    assert got["events"] == want["events"]
    assert got["shards"] == want["shards"]
    assert got["manifest"] == want["manifest"]


def _repin() -> None:
    import tempfile

    digests = {}
    for case in CASES:
        with tempfile.TemporaryDirectory(prefix=f"thresher-golden-{case}-") as tmp:
            got = build_case(case, Path(tmp))
        if got is None:
            raise SystemExit(f"cannot repin: data for {case!r} missing under {SHARED_DATA}")
        digests[case] = got
    DIGESTS.write_text(json.dumps(digests, indent=1, sort_keys=True) + "\n", encoding="utf-8")
    print(f"wrote {DIGESTS}")


if __name__ == "__main__":
    if sys.argv[1:] != ["--repin"]:
        raise SystemExit(f"usage: python {sys.argv[0]} --repin")
    _repin()
