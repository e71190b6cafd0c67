"""What the wide extra costs a build: `thresher build --engine pool --workers 2` with the default
detector (the `lang` extra's cascade) and with `--lang-detector wide`, on the same documents, the
process tree sampled from /proc (`tree_memory.run_sampled`: peak RSS summed over the tree, peak
PSS, which counts a page shared by the fork server and its workers once, each process's own peak,
CPU of the tree).

Documents: the held-out Bible segments of `lang_open_set.py` (odd three-verse segments) of every
language, five segments to a document, each with a URL, so most of them are in languages the
cascade does not know and the wide detector asks heliport. With `--check-local` the wide build also
runs on the local engine and its shards are compared byte for byte with the pool's.

Usage: python benchmarks/lang_wide_build.py [--docs 600] [--out benchmarks/results/lang_wide_build.json]
"""

from __future__ import annotations

import argparse
import filecmp
import json
import os
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent
REPO = ROOT.parent
sys.path.insert(0, str(ROOT))

from lang_open_set import bible_segments, bible_split  # noqa: E402
from tree_memory import run_sampled  # noqa: E402


def write_input(path: Path, n_docs: int) -> int:
    segments = bible_split(bible_segments(), "report")
    by_lang: dict[str, list[str]] = {}
    for gold, text, _, _ in segments:
        by_lang.setdefault(gold, []).append(text)
    rows = []
    for gold, texts in sorted(by_lang.items()):
        for i in range(0, len(texts) - 4, 5):
            rows.append({"id": f"{gold}-{i}", "url": f"https://example.org/{gold}/{i}",
                         "text": "\n\n".join(texts[i:i + 5])})
    rows = rows[:: max(1, len(rows) // n_docs)][:n_docs]
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")
    return len(rows)


def build(src: Path, out: Path, detector: str, engine: str) -> dict:
    cmd = [sys.executable, "-m", "thresher", "build", str(src), "-o", str(out), "--engine", engine,
           "--lang-detector", detector, "--partition-by", "language"]
    if engine == "pool":
        cmd += ["--workers", "2"]
    env = {**os.environ, "PYTHONPATH": str(REPO / "src")}
    measured = run_sampled(cmd, out, env=env)
    stats = json.loads((out / "stats.json").read_text(encoding="utf-8"))
    measured["kept"] = stats.get("kept", stats.get("counts", {}).get("kept"))
    parts = out / "by-language"
    measured["languages"] = sorted(p.name for p in parts.iterdir()) if parts.exists() else []
    return {k: (round(v, 2) if isinstance(v, float) else v) for k, v in measured.items()}


def same_shards(a: Path, b: Path) -> bool:
    files = sorted(p.relative_to(a) for p in a.rglob("shard-*.jsonl.gz"))
    return bool(files) and all(filecmp.cmp(a / f, b / f, shallow=False) for f in files)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--docs", type=int, default=600)
    ap.add_argument("--check-local", action="store_true")
    ap.add_argument("--out", default=str(ROOT / "results" / "lang_wide_build.json"))
    args = ap.parse_args(argv)
    results: dict = {"load": os.getloadavg()}
    with tempfile.TemporaryDirectory() as tmp:
        src = Path(tmp) / "bible.jsonl"
        results["documents"] = write_input(src, args.docs)
        for detector in ("cascade", "wide"):
            results[detector] = build(src, Path(tmp) / detector, detector, "pool")
            print(detector, results[detector], flush=True)
        if args.check_local:
            build(src, Path(tmp) / "wide-local", "wide", "local")
            results["wide_pool_equals_local"] = same_shards(Path(tmp) / "wide", Path(tmp) / "wide-local")
            print("pool == local:", results["wide_pool_equals_local"])
    results["load_after"] = os.getloadavg()
    Path(args.out).write_text(json.dumps(results, indent=1, sort_keys=True) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
