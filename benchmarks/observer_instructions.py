"""What the build's records (histograms, index, samples, card counters) cost, in instructions.

CPU time cannot resolve a 3% cost on a shared machine (two identical builds differ by more); the
instructions a build executes can: callgrind counts them, the same on every run. This builds one
corpus with the local engine under `valgrind --tool=callgrind`, twice: with revision REV as it is
and with the same revision's observations switched off (`report_scale.ablate`). Both trees get
their bytecode compiled first, as an install does. A 30-document build of the ablated tree measures
the fixed cost (interpreter start, imports), so the per-document share excludes it:

    share = (new - ablated) / (ablated - fixed)

    python benchmarks/observer_instructions.py --corpus text --documents 3000 [--rev HEAD] [--max-share 0.03]

Exits 1 when the per-document share is above `--max-share`. Needs valgrind; about 5 minutes a corpus.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent
REPO = ROOT.parent
sys.path.insert(0, str(ROOT))


def instructions(src: Path, crawl: Path, out: Path, tmp: Path) -> int:
    report = tmp / f"callgrind-{out.name}.out"
    env = dict(os.environ, PYTHONPATH=str(src))
    subprocess.run(["valgrind", "--tool=callgrind", f"--callgrind-out-file={report}", sys.executable, "-m", "thresher",
                    "build", str(crawl), "-o", str(out), "--engine", "local", "-q", "--overwrite"],
                   env=env, check=True, capture_output=True)
    for line in report.read_text().splitlines():
        if line.startswith("summary:"):
            return int(line.split()[1])
    raise SystemExit(f"{report}: no summary line")


def write_corpus(kind: str, path: Path, n: int, sentences: int) -> None:
    if kind == "text":
        from engines_scaling import write_text_corpus

        write_text_corpus(path, n, max_sentences=sentences)
    else:
        sys.path.insert(0, str(REPO / "src"))
        from thresher.demo import write_crawl

        write_crawl(path, n_pages=n)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument(
        "--corpus",
        choices=("text", "demo"),
        default="text",
        help="text: generated 5-sentence records (the cheapest documents per record); demo: the demo's HTML pages",
    )
    ap.add_argument("--documents", type=int, default=3000)
    ap.add_argument("--sentences", type=int, default=5)
    ap.add_argument("--rev", default="HEAD")
    ap.add_argument("--max-share", type=float, default=0.03)
    ap.add_argument("--out", default=None)
    args = ap.parse_args()
    from report_scale import ablate

    rev = subprocess.run(
        ["git", "-C", str(REPO), "rev-parse", args.rev], check=True, capture_output=True, text=True
    ).stdout.strip()
    with tempfile.TemporaryDirectory(prefix="observer-instructions-") as tmp_s:
        tmp = Path(tmp_s)
        trees = {"new": tmp / "new", "ablated": tmp / "ablated"}
        try:
            for tree in trees.values():
                subprocess.run(
                    ["git", "-C", str(REPO), "worktree", "add", "--detach", str(tree), rev],
                    check=True,
                    capture_output=True,
                )
            ablate(trees["ablated"] / "src")
            for tree in trees.values():
                subprocess.run(
                    [sys.executable, "-m", "compileall", "-q", str(tree / "src")], check=True, capture_output=True
                )
            crawl, small = tmp / "crawl.jsonl", tmp / "small.jsonl"
            write_corpus(args.corpus, crawl, args.documents, args.sentences)
            with open(crawl, "rb") as f, open(small, "wb") as g:
                for _ in range(30):
                    g.write(f.readline())
            counts = {name: instructions(tree / "src", crawl, tmp / f"out-{name}", tmp) for name, tree in trees.items()}
            fixed = instructions(trees["ablated"] / "src", small, tmp / "out-fixed", tmp)
        finally:
            for tree in trees.values():
                subprocess.run(
                    ["git", "-C", str(REPO), "worktree", "remove", "--force", str(tree)], capture_output=True
                )
    share = (counts["new"] - counts["ablated"]) / (counts["ablated"] - fixed)
    result = {
        "rev": rev,
        "corpus": args.corpus,
        "documents": args.documents,
        "instructions": counts,
        "fixed_instructions_30_documents": fixed,
        "whole_build_ratio": round(counts["new"] / counts["ablated"], 4),
        "per_document_share": round(share, 4),
        "max_share": args.max_share,
        "within_budget": share <= args.max_share,
    }
    out = Path(args.out or ROOT / "results" / f"observer_instructions_{args.corpus}.json")
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(result, indent=2) + "\n")
    print(json.dumps(result))
    return 0 if result["within_budget"] else 1


if __name__ == "__main__":
    sys.exit(main())
