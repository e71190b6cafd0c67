"""Fill the build, engine and memory sections of docs/benchmarks.md from benchmarks/results/*.json,
so the document never drifts from the measurements. Sections are delimited by HTML comments
`<!-- results:NAME -->` ... `<!-- /results:NAME -->` (or a bare `RESULTS_NAME` placeholder)."""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent
DOC = ROOT.parent / "docs" / "benchmarks.md"


def load(name: str) -> dict | None:
    path = ROOT / "results" / f"{name}.json"
    return json.loads(path.read_text()) if path.exists() else None


def build_section() -> str:
    r = load("build_vs_websieve")
    if r is None:
        return "_not run yet_"
    load_avg = r.get("load_average_at_start")
    lines = [f"Corpus: {r['corpus']}; {r['machine']}; {r['repeats']} repeats"
             + (f"; load average at start {', '.join(f'{x:.1f}' for x in load_avg)}" if load_avg else "") + ".", "",
             "| tool | docs/s (median wall) | vs websieve (wall) | CPU s per 1k docs | vs websieve (CPU) | kept |",
             "|---|---:|---:|---:|---:|---:|"]
    for name, s in r["results"].items():
        cpu = s.get("cpu_s_per_1k_docs")
        eff = s.get("cpu_efficiency_vs_websieve")
        lines.append(
            f"| {name} | {s['docs_per_s']:.0f} | {s['speedup_vs_websieve']:.2f}× | {cpu if cpu is not None else '-'} | "
            f"{f'{eff:.2f}×' if eff is not None else '-'} | {s['kept']} |"
        )
    lines += ["", "Kept counts differ because the pipelines differ (websieve has 9 quality rules and no C4/FineWeb"
              " rules; thresher's extractor and rule sets are stricter on stubs and spam)."]
    return "\n".join(lines)


def engines_section() -> str:
    r = load("engines_scaling")
    if r is None:
        return "_not run yet_"
    lines: list[str] = []
    sp = r.get("speedup")
    if sp is not None:
        load_avg = sp.get("load_average_at_start") or r.get("load_average_at_start") or []
        lines = [
            f"Speed-up: {sp['corpus']}; {r['machine']}; load average at start "
            f"{', '.join(f'{x:.1f}' for x in load_avg)}."
            f" Identical manifests on every engine: **{sp['identical_manifests']}**."
            + (f" {sp['note']}" if sp.get("note") else ""),
            "",
            "| engine | docs/s (median wall) | speed-up vs 1 worker | CPU s per 1k docs | largest process RSS MiB |",
            "|---|---:|---:|---:|---:|",
        ]
        for name, s in sp["results"].items():
            lines.append(
                f"| {name} | {s['docs_per_s']:.0f} | {s['speedup_vs_1_worker']:.2f}× | {s['cpu_s_per_1k_docs']:.2f} | "
                f"{s['peak_rss_mib']:.0f} |"
            )
        lines.append("")
        if any(name.startswith("ray") for name in sp["results"]):
            lines.append("CPU for Ray counts only the driver's process tree (Ray's workers are not its children).")
        replay = sp.get("schedule_replay")
        if replay:
            def replayed(x: dict) -> str:
                return f"{x['speedup']:.2f}× ({x['code']})"

            lines.append(f"Schedule replay ({replay.get('what', '')}): before {replayed(replay['before'])}, "
                         f"after {replayed(replay['after'])}.")
        for key in ("speedup_loaded", "speedup_before_issue_7_quiet"):
            other = r.get(key)
            if other:
                cells = ", ".join(f"{name} {s['speedup_vs_1_worker']:.2f}×" for name, s in other["results"].items()
                                  if s.get("speedup_vs_1_worker") is not None)
                lines.append(f"{key.replace('_', ' ')}: {cells}. {other.get('note', '')}")
    else:
        lines.append("Speed-up: not measured on a quiet machine yet.")
    if "identity" in r:
        idn = r["identity"]
        lines += ["", f"Identity at scale: {idn['corpus']}: identical manifests **{idn['identical_manifests']}**, "
                  f"equal stats **{idn['equal_stats']}**, {idn['kept']} kept.", "",
                  "| engine | wall s | docs/s | phases (wall s) |", "|---|---:|---:|---|"]
        for name, run in idn["runs"].items():
            phases = ", ".join(f"{k.removeprefix('phase.')} {v:.1f}" for k, v in run["phases_s"].items())
            lines.append(f"| {name} | {run['wall_s']:.1f} | {run['docs_per_s']:.0f} | {phases} |")
    if "partitions" in r:
        lines += [
            "",
            f"Partitions (same HTML crawl, 2 workers): identical shards across partition plans: "
            f"**{r['partitions_identical']}**.",
            "",
            "| partitions | wall s | CPU s | phases (wall s) |",
            "|---|---:|---:|---|",
        ]
        for name, run in r["partitions"].items():
            phases = ", ".join(f"{k.removeprefix('phase.')} {v:.1f}" for k, v in run["phases_s"].items())
            lines.append(f"| {name} | {run['wall_s']:.1f} | {run['cpu_s']:.1f} | {phases} |")
    return "\n".join(lines)


def memory_section() -> str:
    parts = []
    r = load("memory_scaling")
    if r is not None:
        parts += [f"{r['corpus']}; {r['machine']}; {r['workers']} workers.", "",
                  "| documents | input MB | peak tree RSS MiB | peak by phase (MiB) | wall s | docs/s | kept |",
                  "|---:|---:|---:|---|---:|---:|---:|"]
        for row in r["rows"]:
            by_phase = ", ".join(f"{k} {v:.0f}" for k, v in row.get("peak_by_phase_mib", {}).items()) or "-"
            parts.append(f"| {row['documents']:,} | {row['input_mb']} | {row['peak_tree_rss_mib']:.0f} | {by_phase} | "
                         f"{row['wall_s']:.0f} | {row['docs_per_s']:.0f} | {row['kept']:,} |")
        if r.get("growth_bytes_per_document") is not None:
            parts += [
                "",
                f"Growth between the smallest and largest run: **{r['growth_bytes_per_document']:.0f} bytes per "
                f"document**.",
            ]
        if len(r["rows"]) > 2:
            from memory_scaling import growth_steps

            parts += [
                "",
                "By step: "
                + ", ".join(
                    f"{s['from']:,} → {s['to']:,}: {s['bytes_per_document']:+.0f} B per document"
                    for s in growth_steps(r["rows"])
                )
                + ".",
            ]
    c = load("cluster_memory")
    if c is not None:
        parts += [
            "",
            "Cluster task alone: "
            + ", ".join(
                f"{row['nodes']:,} colliding documents → {row['bytes_per_colliding_document']:.0f} B each"
                for row in c["rows"]
            )
            + ".",
        ]
    return "\n".join(parts) or "_not run yet_"


def main() -> int:
    text = DOC.read_text()
    for name, render in (("BUILD", build_section), ("ENGINES", engines_section), ("MEMORY", memory_section)):
        block = f"<!-- results:{name} -->\n{render()}\n<!-- /results:{name} -->"
        pattern = re.compile(rf"<!-- results:{name} -->.*?<!-- /results:{name} -->", re.S)
        if pattern.search(text):
            text = pattern.sub(lambda _m, b=block: b, text)
        else:
            text = text.replace(f"RESULTS_{name}", block)
    DOC.write_text(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
