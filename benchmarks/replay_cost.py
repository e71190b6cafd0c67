"""What `thresher replay` costs against the fresh build it replaces (issue 33: goal <= 0.1x CPU).

Corpus: the first `--docs` lines (default 20,000) of the recombined real-paragraph corpus
(`benchmarks/.data/recombined-50000.jsonl`, made by `scale_contract.py`), in two forms:

- `text`: the records as they are (text input: no extraction, the cheapest fresh build, so the
  largest relative cost of a replay);
- `html`: each text as an HTML page (its lines as paragraphs in an `<article>`, with navigation,
  a sidebar and a footer around it), so the fresh build extracts, as a build of a crawl does.

- `warc`: a real crawl: the HTML pages of the shared WARC archives, repeated to `--pages` pages as
  the headline benchmark writes them (`headline_datatrove.build_input`: copy 0 of each page as
  crawled, later copies with a sentence added and, for odd copies, one word in eight swapped, so
  even copies are near duplicates), read as WARC files, so the fresh build reads archives,
  decodes and extracts the pages as a build of a crawl does. The results go to
  `results/replay_cost_warc.json` (the recombined forms to `results/replay_cost.json`).

For each form: one `build --signals` with the default config, then for each setting change of the
issue's "Done when" (`--quality-gopher-min-words 150 --threshold 0.7` and `... 20 --threshold
0.9`) a fresh build of the corpus with those settings and a replay of the signals build with them,
alternating, `--repeats` times each; medians reported. Every build runs in its own process with the
local engine (every task in that process); CPU is the child's user + system time
(`resource.getrusage(RUSAGE_CHILDREN)`); the package's bytecode is compiled once before the timed
runs (`compile_bytecode`). The replay's shards, manifest records and stats counters
are compared with the fresh build's (`same_output`), and the last replay's wall time is split by
phase (`replay_phase_wall_share`: what reading and deciding, dedup and writing the shards cost).

Then a budget: a replay with `--target-tokens 2000000 --by quality.word_count`, with how far below
the target it lands. Results are written after every measurement.

    python benchmarks/replay_cost.py [--docs 20000] [--repeats 1] [--forms html,text]
    python benchmarks/replay_cost.py --forms warc --pages 3000 --repeats 3
"""

from __future__ import annotations

import argparse
import html
import json
import os
import platform
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
RESULTS = HERE / "results" / "replay_cost.json"
RESULTS_WARC = HERE / "results" / "replay_cost_warc.json"
SOURCE = HERE / ".data" / "recombined-50000.jsonl"
SRC = HERE.parent / "src"

CHANGES = {
    "min_words_150_threshold_0.7": {"quality": {"gopher": {"min_words": 150}}, "dedup": {"near": {"threshold": 0.7}}},
    "min_words_20_threshold_0.9": {"quality": {"gopher": {"min_words": 20}}, "dedup": {"near": {"threshold": 0.9}}},
}

DRIVER = r"""
import json, sys
from thresher.config import RunConfig
from thresher.core.config import merge
from thresher.run.build import build
from thresher.run.replay import replay

kind, source, out, change = sys.argv[1], sys.argv[2], sys.argv[3], json.loads(sys.argv[4])
local = {"exec": {"engine": "local"}}
if kind == "replay":
    replay(source, out, merge(change, local))
else:
    build([source], out, RunConfig.from_dict(merge(merge(change, local), {"output": {"signals": kind == "signals"}})))
"""

PAGE = ("<!DOCTYPE html><html lang='en'><head><meta charset='utf-8'><title>{title}</title></head><body>"
        "<header><nav><a href='/'>Home</a> <a href='/news'>News</a> <a href='/about'>About us</a> "
        "<a href='/contact'>Contact</a></nav></header><main><article><h1>{title}</h1>{body}</article>"
        "<aside><h2>Popular</h2><ul><li><a href='/a'>Ten things to know</a></li><li><a href='/b'>Read more "
        "stories</a></li></ul></aside></main><footer><p>Copyright 2024 Example Media. All rights reserved. "
        "Privacy policy. Terms of use.</p></footer></body></html>")


def compile_bytecode() -> None:
    """Write the bytecode of the thresher package the timed runs import, as `pip install` does (and
    as the headline benchmark does): a source checkout run with PYTHONDONTWRITEBYTECODE set would
    compile every module again in every process (~0.45 CPU s a run here), a cost no installed
    thresher pays and that weighs far more on the replay than on the fresh build."""
    subprocess.run([sys.executable, "-m", "compileall", "-q", str(SRC / "thresher")], check=True,
                   stdout=subprocess.DEVNULL)


def warc_input(pages: int) -> tuple[Path, dict]:
    """The headline benchmark's WARC input of `pages` pages (written once under benchmarks/.data)."""
    sys.path.insert(0, str(HERE))
    from headline_datatrove import ROOT, build_input

    info = build_input(pages)
    return ROOT / info["dir"], info


def subsample(docs: int, dest: Path, form: str) -> Path:
    with open(SOURCE, encoding="utf-8") as src, open(dest, "w", encoding="utf-8") as out:
        for i, line in enumerate(src):
            if i >= docs:
                break
            if form == "text":
                out.write(line)
                continue
            record = json.loads(line)
            lines = [x for x in record.pop("text").split("\n") if x.strip()]
            title = html.escape(lines[0][:60]) if lines else "Untitled"
            body = "".join(f"<p>{html.escape(x)}</p>" for x in lines)
            record["html"] = PAGE.format(title=title, body=body)
            out.write(json.dumps(record, ensure_ascii=False) + "\n")
    return dest


def run(kind: str, source: Path, out: Path, change: dict) -> float:
    shutil.rmtree(out, ignore_errors=True)
    env = {**os.environ, "PYTHONPATH": str(SRC)}
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    subprocess.run([sys.executable, "-c", DRIVER, kind, str(source), str(out), json.dumps(change)], env=env,
                   check=True)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def output_of(out: Path) -> dict:
    manifest = json.loads((out / "manifest.json").read_text())
    stats = json.loads((out / "stats.json").read_text())
    return {"shards": [(s["path"], s["records"], s["sha256"]) for s in manifest["shards"]],
            "records": manifest["records"], "counters": stats["counters"]}


def budget_run(first: Path, out: Path, target: int, by: str) -> dict:
    change = {"select": {"target_tokens": target, "by": [by]}}
    cpu = run("replay", first, out, change)
    section = json.loads((out / "manifest.json").read_text())["budget"]
    return {"change": change, "replay_cpu_s": cpu, **section,
            "below_target": round(1 - section["tokens"] / target, 6)}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--docs", type=int, default=20_000)
    parser.add_argument("--repeats", type=int, default=1)
    parser.add_argument("--forms", default="html,text")
    parser.add_argument("--target-tokens", type=int, default=2_000_000)
    parser.add_argument("--by", default="quality.word_count")
    parser.add_argument("--pages", default="3000", help="pages of the warc form (a list: one form each)")
    args = parser.parse_args(argv)
    forms_asked = args.forms.split(",")
    if "warc" in forms_asked:  # one warc form per page count, in the order asked
        at = forms_asked.index("warc")
        forms_asked[at:at + 1] = [f"warc-{int(n)}" for n in args.pages.split(",")]
    compile_bytecode()
    results_path = RESULTS_WARC if all(form.startswith("warc") for form in forms_asked) else RESULTS
    if not all(form.startswith("warc") for form in forms_asked) and not SOURCE.exists():
        sys.exit(f"{SOURCE} is missing: run benchmarks/scale_contract.py once to generate it")
    forms: dict[str, dict] = {}
    result = {
        "benchmark": "replay_cost",
        "machine": {"python": platform.python_version(), "cpus": os.cpu_count(), "platform": platform.platform()},
        "corpus": ({"source": "headline WARC pages", "pages": args.pages} if results_path == RESULTS_WARC
                   else {"source": SOURCE.name, "documents": args.docs}),
        "repeats": args.repeats,
        "forms": forms,
    }

    def save() -> None:  # after every measurement: a long run cut short keeps what it measured
        result["machine"]["load_average"] = os.getloadavg()
        results_path.parent.mkdir(parents=True, exist_ok=True)
        results_path.write_text(json.dumps(result, indent=2) + "\n")

    with tempfile.TemporaryDirectory(prefix="replay-cost-") as tmp_name:
        tmp = Path(tmp_name)
        for form in forms_asked:
            if form.startswith("warc-"):
                corpus, info = warc_input(int(form.removeprefix("warc-")))
                documents, input_bytes = info["pages"], info["bytes"]
            else:
                corpus = subsample(args.docs, tmp / f"{form}.jsonl", form)
                documents, input_bytes = args.docs, corpus.stat().st_size
            first = tmp / f"{form}-signals"
            signals_cpu = run("signals", corpus, first, {})
            manifest = json.loads((first / "manifest.json").read_text())
            changes: dict[str, dict] = {}
            forms[form] = {
                "documents": documents,
                "input_bytes": input_bytes,
                "signals_build_cpu_s": signals_cpu,
                "signals_rows": manifest["signals"]["rows"],
                "signals_bytes": manifest["signals"]["bytes"],
                "kept_by_first_build": manifest["records"],
                "changes": changes,
            }
            forms[form]["budget"] = budget_run(first, tmp / "budget", args.target_tokens, args.by)
            save()
            for name, change in CHANGES.items():
                fresh_cpu, replay_cpu = [], []
                for _ in range(args.repeats):
                    replay_cpu.append(run("replay", first, tmp / "replayed", change))
                    fresh_cpu.append(run("build", corpus, tmp / "fresh", change))
                fresh, replayed = output_of(tmp / "fresh"), output_of(tmp / "replayed")
                timings = json.loads((tmp / "replayed" / "stats.json").read_text())["timings_s"]
                phases = {k[len("phase."):]: v for k, v in timings.items() if k.startswith("phase.")}
                total = sum(phases.values())
                fresh_median, replay_median = statistics.median(fresh_cpu), statistics.median(replay_cpu)
                changes[name] = {
                    "change": change,
                    "fresh_cpu_s": fresh_cpu,
                    "replay_cpu_s": replay_cpu,
                    "replay_over_fresh": round(replay_median / fresh_median, 4),
                    "kept": fresh["records"],
                    "same_output": fresh == replayed,
                    # where the last replay's wall went, by phase (shares: the load scales them alike)
                    "replay_phase_wall_share": {k: round(v / total, 3) for k, v in sorted(phases.items())},
                }
                save()
            shutil.rmtree(first, ignore_errors=True)
    print(json.dumps({form: {name: {k: c[k] for k in ("replay_over_fresh", "same_output")}
                             for name, c in f["changes"].items()} for form, f in forms.items()}, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
