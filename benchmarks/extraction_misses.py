"""All-or-nothing misses of the built-in extractor on the labelled sets, explained.

A miss is a page where thresher's page F1 is below 0.1 while a peer's is at least 0.5 (the same
per-page scores as `extraction_eval.py`: shingle F1 for AEB and readability, snippet F1 for the
trafilatura set). For each, `thresher.extract.diagnose.explain` reports the chosen region and the
rejected candidates with why they lost. Writes benchmarks/results/extraction_misses.json.

    python benchmarks/extraction_misses.py --peers trafilatura_nocomments,resiliparse
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import extraction_eval as ev
from extraction_worker import read_page

from thresher.extract.diagnose import explain

RESULTS = Path(__file__).resolve().parent / "results" / "extraction_misses.json"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--peers", default="trafilatura_nocomments,resiliparse")
    ap.add_argument("--sets", default=",".join(ev.ALL_SETS))
    ap.add_argument("--no-write", action="store_true")
    args = ap.parse_args(argv)
    loaders = {"aeb": ev.aeb_pages, "trafilatura": ev.trafilatura_pages, "readability": ev.readability_pages}
    report: dict[str, object] = {"miss_f1": ev.MISS_F1, "peer_f1": ev.PEER_F1, "sets": {}}
    for set_name in [s for s in args.sets.split(",") if s]:
        pages, gold = loaders[set_name](None)
        by_id = {p["id"]: p for p in pages}
        scores = {}
        for name in ["thresher", *[p for p in args.peers.split(",") if p]]:
            outputs, _, _, _ = ev.run_extractor(name, pages)
            scores[name] = ev.page_scores(set_name, outputs, gold)
        misses = []
        for page_id, f1 in sorted(scores["thresher"].items()):
            best_peer = max(((name, s.get(page_id, 0.0)) for name, s in scores.items() if name != "thresher"),
                            key=lambda kv: kv[1])
            if f1 < ev.MISS_F1 and best_peer[1] >= ev.PEER_F1:
                why = explain(read_page(by_id[page_id]["path"]))
                misses.append({"page": page_id, "thresher_f1": round(f1, 3), "peer": best_peer[0],
                               "peer_f1": round(best_peer[1], 3), **why})
        counts = ev.count_misses(scores)
        report["sets"][set_name] = {"pages": len(pages), "misses_per_extractor": counts, "thresher_misses": misses}
        print(f"{set_name}: {len(pages)} pages, misses {counts}", flush=True)
        for m in misses:
            print(
                f"  {m['page']}: region {m['region']} ({m['region_text_chars']} chars); "
                f"best rejected: {m['rejected'][0]['node'] + ' - ' + m['rejected'][0]['why'] if m['rejected'] else '-'}"
            )
    if not args.no_write:
        RESULTS.parent.mkdir(parents=True, exist_ok=True)
        RESULTS.write_text(json.dumps(report, indent=2, ensure_ascii=False) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
