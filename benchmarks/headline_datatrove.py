"""Headline benchmark: `thresher build` vs datatrove's FineWeb-style pipeline on the same WARC files.

Input: the HTML 200 response records of the shared WARC samples that both sides read (aut, resiliparse
Common Crawl excerpt, dolma, pywb, the ukwa gov.uk pair, whirlwind), repeated to a few thousand
pages and written once, deterministically, to benchmarks/.data/headline/ as per-record-gzip WARC 1.0
files. Copy 0 of a page is the original record unchanged; copy k >= 1 gets `copy=k` appended to its
WARC-Target-URI, a fresh WARC-Record-ID, and a sentence "This is copy k of this page." inserted after
`<body>` (so no copy is an exact duplicate); odd copies also have one ASCII word in eight of the
page's visible text replaced by another word of the same page (seeded by URL and k), so they are no
longer near duplicates either. Even copies are near duplicates of copy 0 that both dedups should
remove. Every written record carries `WARC-Identified-Payload-Type: text/html` (as Common Crawl's do)
so datatrove does not have to guess types with libmagic; chunked HTTP bodies are de-chunked (and the
header dropped) and content-encoded ones left out, so both readers see the same plain bytes.

thresher: `thresher build FILES -o OUT -q --workers N` (default config), run twice per repeat: with the
`fast` extra's packages (numpy, fastwarc) as installed, and without them (`thresher-nofast`: the same
environment with those modules made unimportable, so every accelerator takes its pure-Python path);
the two must write the same shards, and the result says whether they did. datatrove: the pipeline in
headline_datatrove_worker.py, in benchmarks/.venvs/datatrove. Each run is one process tree timed by
GNU time (`%e %U %S %M`): wall, user+system CPU of the tree, largest process RSS. Runs are interleaved
(repeat r: thresher 1, datatrove 1, thresher 2, datatrove 2) and the load average is recorded before
each. datatrove's per-page extraction guard is 10 s (its default 1 s skips pages on a loaded machine)
and its pool uses fork (forkserver workers are never reaped, so their CPU would be lost); see
docs/headline.md. thresher's bytecode is compiled once before the timed runs, as `pip install` compiles
an installed package's (the peer's venv has its packages'). A 16-page run of each tool measures the
fixed start-up cost. docs/s = input HTML records / wall second. Extraction F1 on the AEB set is scored with
extraction_eval's scorer (builtin extractor vs datatrove's Trafilatura step as configured), and the
extraction speed against trafilatura (default settings; issue 15's 5x goal) is measured in the same
run: CPU time per page, interleaved passes (`--trafilatura-passes`).

    python benchmarks/headline_datatrove.py [--pages 1500] [--repeats 3] [--workers 1,2]

`--input real` runs both tools on the shared WARC files themselves instead (the same SOURCES, linked
unchanged into benchmarks/.data/headline/real/: every record as crawled, revisits, redirects, chunked
and compressed bodies included), writing benchmarks/results/headline_datatrove_real.json. The page
count there is the HTML 200 responses with a plain or de-chunkable body (what `html_page` accepts);
each tool reads whatever else the files hold as it does in production.

    python benchmarks/headline_datatrove.py --input real --repeats 3 --workers 1
"""

from __future__ import annotations

import argparse
import datetime
import gzip
import json
import os
import platform
import random
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import uuid
from pathlib import Path

from thresher.compiled import MODULES as COMPILED_MODULES

BENCH = Path(__file__).resolve().parent
ROOT = BENCH.parent
WARC_DIR = ROOT.parent / "shared" / "data" / "warc"
DATA = BENCH / ".data" / "headline"
DT_PY = BENCH / ".venvs" / "datatrove" / "bin" / "python"
WORKER = BENCH / "headline_datatrove_worker.py"
THRESHER = Path(sys.executable).parent / "thresher"
RESULTS = BENCH / "results" / "headline_datatrove.json"
SOURCES = (
    "aut/example.warc.gz",
    "resiliparse/warcfile.warc.gz",
    "dolma/sample-0000.warc.gz",
    "dolma/sample-0001.warc.gz",
    "pywb/iana.warc.gz",
    "ukwa/BL-20140325121225068-00000-32090_opera_8443.warc.gz",
    "ukwa/BL-20140325122341434-00000-32090_opera_8443.warc.gz",
    "whirlwind/whirlwind.warc.gz",
)
N_FILES = 8  # input files = partitions for thresher, file shards for datatrove's tasks
GOAL = 10.0


# -- input construction -----------------------------------------------------------------------

def warc_records(path: Path):
    """(headers as list of (name, value), block bytes) for every record of a (multi-member) gzip WARC."""
    data = gzip.decompress(path.read_bytes())
    pos = 0
    while True:
        start = data.find(b"WARC/", pos)
        if start < 0:
            return
        end = data.find(b"\r\n\r\n", start)
        if end < 0:
            return
        lines = data[start:end].decode("utf-8", "replace").split("\r\n")
        headers = []
        for line in lines[1:]:
            name, _, value = line.partition(":")
            headers.append((name.strip(), value.strip()))
        length = int(next((v for n, v in headers if n.lower() == "content-length"), "0"))
        block = data[end + 4:end + 4 + length]
        pos = end + 4 + length
        yield lines[0], headers, block


def html_page(headers, block: bytes) -> tuple[bytes, bytes] | None:
    """(http header bytes, body) of an HTML 200 response with a plain (unchunked, uncompressed) body."""
    h = {n.lower(): v for n, v in headers}
    if h.get("warc-type") != "response" or not h.get("content-type", "").startswith("application/http"):
        return None
    split = block.find(b"\r\n\r\n")
    if split < 0:
        return None
    head, body = block[:split], block[split + 4:]
    lines = head.decode("latin-1").split("\r\n")
    status = lines[0].split()
    if len(status) < 2 or status[1] != "200":
        return None
    fields = {}
    for line in lines[1:]:
        name, _, value = line.partition(":")
        fields[name.strip().lower()] = value.strip().lower()
    ctype = fields.get("content-type", "")
    if not (ctype.startswith("text/html") or ctype.startswith("application/xhtml+xml")):
        return None
    if fields.get("content-encoding", "identity") not in ("", "identity"):
        return None
    if "chunked" in fields.get("transfer-encoding", ""):
        # De-chunk (a body that declares chunking but is not chunked stays as it is) and drop the header,
        # so both readers see the same plain body.
        body = dechunk(body)
        head = re.sub(rb"(?im)\r\ntransfer-encoding:[^\r\n]*", b"", head)
    if not body.strip():
        return None
    return head, body


def dechunk(body: bytes) -> bytes:
    out, pos = [], 0
    while True:
        eol = body.find(b"\r\n", pos)
        if eol < 0:
            return body
        try:
            size = int(body[pos:eol].split(b";")[0].strip(), 16)
        except ValueError:
            return body
        if size == 0:
            return b"".join(out)
        out.append(body[eol + 2:eol + 2 + size])
        pos = eol + 2 + size + 2


_MARKUP = re.compile(rb"(<script\b.*?</script\s*>|<style\b.*?</style\s*>|<!--.*?-->|<[^>]*>)", re.I | re.S)
_WORD = re.compile(rb"[A-Za-z]{3,}")
_BODY = re.compile(rb"<body\b[^>]*>", re.I)


def perturb(body: bytes, url: str, k: int) -> bytes:
    sentence = b"<p>This is copy %d of this page.</p>" % k
    if k % 2 == 1:
        parts = _MARKUP.split(body)
        vocab = sorted({w for i in range(0, len(parts), 2) for w in _WORD.findall(parts[i])})
        if vocab:
            rng = random.Random(f"{url}|{k}")

            def swap(m: re.Match) -> bytes:
                return rng.choice(vocab) if rng.random() < 0.125 else m.group(0)

            for i in range(0, len(parts), 2):
                parts[i] = _WORD.sub(swap, parts[i])
            body = b"".join(parts)
    m = _BODY.search(body)
    return body[:m.end()] + sentence + body[m.end():] if m else sentence + body


def with_copy(url: str, k: int) -> str:
    return f"{url}{'&' if '?' in url else '?'}copy={k}"


def build_input(pages: int) -> dict:
    """Write the input once; return its description (reused when the same target was built before)."""
    target = DATA / f"p{pages}"
    info_path = target / "input.json"
    if info_path.exists():
        return json.loads(info_path.read_text())
    base = []
    per_source: dict[str, int] = {}
    for rel in SOURCES:
        n = 0
        for _, headers, block in warc_records(WARC_DIR / rel):
            page = html_page(headers, block)
            if page is None:
                continue
            h = {name.lower(): v for name, v in headers}
            base.append({"url": h.get("warc-target-uri", "").strip("<>"), "date": h.get("warc-date", ""),
                         "head": page[0], "body": page[1]})
            n += 1
        per_source[rel] = n
    copies = -(-pages // len(base))
    shutil.rmtree(target, ignore_errors=True)
    target.mkdir(parents=True)
    files = [open(target / f"headline-{i:02d}.warc.gz", "wb") for i in range(N_FILES)]
    written = 0
    for k in range(copies):
        for j, page in enumerate(base):
            if written >= pages:
                break
            body = page["body"] if k == 0 else perturb(page["body"], page["url"], k)
            head = re.sub(rb"(?im)^content-length:[^\r\n]*", b"Content-Length: %d" % len(body), page["head"])
            block = head + b"\r\n\r\n" + body
            url = page["url"] if k == 0 else with_copy(page["url"], k)
            rid = uuid.uuid5(uuid.NAMESPACE_URL, f"headline|{url}|{k}|{j}")
            warc_head = (f"WARC/1.0\r\nWARC-Type: response\r\nWARC-Record-ID: <urn:uuid:{rid}>\r\n"
                         f"WARC-Date: {page['date']}\r\nWARC-Target-URI: {url}\r\n"
                         f"WARC-Identified-Payload-Type: text/html\r\n"
                         f"Content-Type: application/http; msgtype=response\r\nContent-Length: {len(block)}\r\n\r\n")
            record = warc_head.encode("utf-8") + block + b"\r\n\r\n"
            files[written % N_FILES].write(gzip.compress(record, compresslevel=6, mtime=0))  # one member per record
            written += 1
    for f in files:
        f.close()
    info = {"pages": written, "base_pages": len(base), "copies": copies, "files": N_FILES,
            "base_pages_per_source": per_source, "bytes": sum(p.stat().st_size for p in target.glob("*.warc.gz")),
            "dir": str(target.relative_to(ROOT))}
    info_path.write_text(json.dumps(info, indent=1) + "\n")
    return info


def build_real_input() -> dict:
    """Link the shared WARC files unchanged into one folder (both tools take a folder or file list)."""
    target = DATA / "real"
    shutil.rmtree(target, ignore_errors=True)
    target.mkdir(parents=True)
    per_source: dict[str, int] = {}
    for i, rel in enumerate(SOURCES):
        (target / f"real-{i:02d}.warc.gz").symlink_to(WARC_DIR / rel)
        per_source[rel] = sum(1 for _, headers, block in warc_records(WARC_DIR / rel) if html_page(headers, block))
    pages = sum(per_source.values())
    info = {"pages": pages, "base_pages": pages, "copies": 1, "files": len(SOURCES), "real": True,
            "html_200_pages_per_source": per_source,
            "bytes": sum((WARC_DIR / rel).stat().st_size for rel in SOURCES), "dir": str(target.relative_to(ROOT))}
    (target.parent / "real-input.json").write_text(json.dumps(info, indent=1) + "\n")
    return info


# -- timing -----------------------------------------------------------------------------------

def timed(cmd: list[str], env: dict | None = None) -> dict:
    with tempfile.NamedTemporaryFile("r", suffix=".time") as tf:
        load = os.getloadavg()
        proc = subprocess.run(["/usr/bin/time", "-f", "%e %U %S %M", "-o", tf.name, *cmd], capture_output=True,
                              text=True, env=env)
        fields = tf.read().split()
    if proc.returncode != 0:
        raise RuntimeError(f"{cmd[:3]} failed ({proc.returncode}):\n{proc.stderr[-3000:]}")
    wall, user, sys_, rss = fields[-4:]
    return {
        "wall_s": float(wall),
        "cpu_s": round(float(user) + float(sys_), 2),
        "peak_rss_mib": round(int(rss) / 1024, 1),
        "loadavg_before": [round(x, 2) for x in load],
        "stdout": proc.stdout,
        "stderr": proc.stderr,
    }


# `thresher` without the `fast` extra, in the same environment: its packages made unimportable, so
# every optional accelerator takes its pure-Python path (the build must then write the same shards).
WITHOUT_FAST = ("import sys; sys.modules.update({m: None for m in FAST_MODULES}); "
                "from thresher.cli import main; sys.exit(main(sys.argv[1:]))")
# the fast extra's packages, and the compiled kernels built with the package (tree builder,
# repetition, MinHash): without them every accelerator takes its pure-Python path
FAST_MODULES = ("numpy", "fastwarc", *COMPILED_MODULES)


def compile_thresher_bytecode() -> str:
    """Write the bytecode of the thresher package the timed runs import, as `pip install` does for an
    installed package (the peer's packages in its venv have theirs). Without it, a source checkout
    run with PYTHONDONTWRITEBYTECODE set recompiles every module in every process: ~0.1-0.4 s of CPU
    per run that no installed thresher pays. Returns the package directory compiled."""
    where = subprocess.run(
        [str(THRESHER.with_name("python")), "-c", "import os, thresher; print(os.path.dirname(thresher.__file__))"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    subprocess.run(
        [str(THRESHER.with_name("python")), "-m", "compileall", "-q", where], check=True, stdout=subprocess.DEVNULL
    )
    return where


def run_thresher(files: list[str], workers: int, work: Path, fast: bool = True) -> dict:
    out = work / f"thresher-{workers}{'' if fast else '-nofast'}"
    shutil.rmtree(out, ignore_errors=True)
    cmd = [str(THRESHER)] if fast else [sys.executable, "-c", WITHOUT_FAST.replace(
        "FAST_MODULES", repr(FAST_MODULES))]
    r = timed([*cmd, "build", *files, "-o", str(out), "-q", "--workers", str(workers)])
    stats = json.loads((out / "stats.json").read_text())
    manifest = json.loads((out / "manifest.json").read_text())
    kept = int(manifest.get("records", sum(int(s.get("records", 0)) for s in manifest.get("shards", []))))
    r["kept"] = kept
    r["seen"] = stats.get("seen")
    r["drops"] = stats.get("drops")
    r["timings_s"] = stats.get("timings_s")
    r["shard_sha256"] = [s.get("sha256") for s in manifest.get("shards", [])]
    shutil.rmtree(out, ignore_errors=True)
    del r["stdout"], r["stderr"]
    return r


def run_datatrove(input_dir: Path, workers: int, work: Path, timeout: float) -> dict:
    out = work / f"datatrove-{workers}"
    shutil.rmtree(out, ignore_errors=True)
    env = dict(os.environ, PYTHONPATH="", OMP_NUM_THREADS="1", OPENBLAS_NUM_THREADS="1")
    r = timed([str(DT_PY), str(WORKER), "pipeline", str(input_dir), str(out), str(workers), str(timeout)], env=env)
    line = next(x for x in r["stdout"].splitlines() if x.startswith("RESULT "))
    result = json.loads(line[len("RESULT "):])
    r.update(
        kept=result["kept"],
        after_filters=result["after_filters"],
        start_method=result.get("start_method"),
        stage_seconds=result["stage_seconds"],
        steps=result["steps"],
        versions=result["versions"],
    )
    shutil.rmtree(out, ignore_errors=True)
    del r["stdout"], r["stderr"]
    return r


# -- extraction quality -----------------------------------------------------------------------

def extraction_f1(limit: int | None) -> dict:
    sys.path.insert(0, str(BENCH))
    import extraction_eval as ev

    pages, gold = ev.aeb_pages(limit)
    out: dict = {"set": "aeb", "pages": len(pages), "scorer": "benchmarks/extraction_eval.py score_aeb"}
    outputs, version, seconds, errors = ev.run_extractor("thresher", pages)
    out["thresher builtin"] = {**ev.score_aeb(outputs, gold), "version": version, "errors": errors,
                               "pages_per_s": round(len(pages) / seconds, 1) if seconds else None}
    proc = subprocess.run([str(DT_PY), str(WORKER), "extract-aeb"], input=json.dumps(pages), capture_output=True,
                          text=True, env=dict(os.environ, PYTHONPATH=""))
    if proc.returncode != 0:
        raise RuntimeError(proc.stderr[-3000:])
    lines = proc.stdout.splitlines()
    header = json.loads(lines[0])
    recs = [json.loads(x) for x in lines[1:]]
    dt_out = {r["id"]: r for r in recs}
    secs = sum(r["seconds"] for r in recs)
    out["datatrove trafilatura"] = {**ev.score_aeb(dt_out, gold), "version": header["version"],
                                    "config": header["extractor"], "errors": sum(r["error"] is not None for r in recs),
                                    "pages_per_s": round(len(pages) / secs, 1) if secs else None}
    published = BENCH / "results" / "extraction.json"  # the full extraction_eval run, when one was committed
    if published.exists():
        ev_results = json.loads(published.read_text())
        out["extraction_eval_results"] = {
            "date": ev_results.get("date"),
            "aeb": {
                name: {k: e["aeb"].get(k) for k in ("f1", "precision", "recall", "pages", "pages_per_s")}
                | {"version": e.get("version")}
                for name, e in ev_results.get("extractors", {}).items()
                if "aeb" in e
            },
        }
    return out


# -- main -------------------------------------------------------------------------------------

def run_tool(tool: str, files: list[str], input_dir: Path, workers: int, work: Path, dt_timeout: float) -> dict:
    if tool == "datatrove":
        return run_datatrove(input_dir, workers, work, dt_timeout)
    return run_thresher(files, workers, work, fast=tool == "thresher")


def trafilatura_speed(passes: int) -> dict:
    """Extraction alone, CPU time: thresher's built-in extractor and trafilatura (default settings)
    on the AEB pages, interleaved passes (extraction_eval's worker, one page at a time)."""
    sys.path.insert(0, str(BENCH))
    import extraction_eval as ev

    pages, _ = ev.aeb_pages(None)
    out = ev.interleaved_speed(pages, passes)
    out["goal_ratio"] = 5.0
    return out


def fast_identity(runs: dict[str, list[dict]]) -> dict:
    """Whether every run with the `fast` extra wrote the same shards as every run without it."""
    out = {}
    for key, fast_runs in runs.items():
        tool, _, w = key.partition("|")
        if tool != "thresher" or f"thresher-nofast|{w}" not in runs:
            continue
        digests = {json.dumps(r["shard_sha256"]) for r in fast_runs + runs[f"thresher-nofast|{w}"]}
        out[w] = {"identical_shards": len(digests) == 1, "distinct_shard_sets": len(digests),
                  "shards": len(fast_runs[0]["shard_sha256"])}
    return out


def summarize(runs: list[dict], pages: int) -> dict:
    wall = statistics.median(r["wall_s"] for r in runs)
    cpu_runs = [r for r in runs if not r.get("cpu_incomplete")]
    cpu = statistics.median(r["cpu_s"] for r in cpu_runs) if cpu_runs else None
    return {"runs": len(runs), "wall_s": wall, "docs_per_s": round(pages / wall, 1), "cpu_s": cpu,
            "cpu_s_per_1k_docs": round(cpu / pages * 1000, 2) if cpu else None,
            "docs_per_cpu_s": round(pages / cpu, 1) if cpu else None,
            "peak_rss_mib": max(r["peak_rss_mib"] for r in runs), "kept": sorted({r["kept"] for r in runs}),
            "wall_all": [r["wall_s"] for r in runs], "cpu_all": [r["cpu_s"] for r in runs],
            "loadavg_1m_before": [r["loadavg_before"][0] for r in runs]}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--pages", type=int, default=1500)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--workers", default="1,2")
    ap.add_argument("--aeb-limit", type=int, default=None, help="score extraction on the first N AEB pages")
    ap.add_argument("--tools", default="thresher,thresher-nofast,datatrove",
                    help="thresher (with the fast extra's packages), thresher-nofast (without them), datatrove")
    ap.add_argument("--trafilatura-passes", type=int, default=3,
                    help="interleaved passes of the extraction speed comparison with trafilatura (0: skip)")
    ap.add_argument("--out", default=None, help="results file (default: headline_datatrove.json, "
                    "headline_datatrove_real.json with --input real)")
    ap.add_argument(
        "--input",
        choices=("synthetic", "real"),
        default="synthetic",
        help="synthetic: --pages pages built from the shared WARC pages; real: the shared WARC files as they are",
    )
    ap.add_argument("--dt-timeout", type=float, default=10.0,
                    help="datatrove's per-page extraction wall-clock guard (its default is 1 s; see docs/headline.md)")
    ap.add_argument("--startup-pages", type=int, default=16, help="pages of the fixed-cost run (0: skip it)")
    ap.add_argument("--from-partial", action="store_true",
                    help="skip timing; summarize the runs saved in benchmarks/.data/headline/partial.json")
    args = ap.parse_args()
    if not WARC_DIR.is_dir():
        print(f"shared WARC samples not found at {WARC_DIR}", file=sys.stderr)
        return 1
    tools = args.tools.split(",")
    if "datatrove" in tools and not DT_PY.exists():
        print(f"datatrove venv missing at {DT_PY}:\n  python -m venv benchmarks/.venvs/datatrove && "
              "benchmarks/.venvs/datatrove/bin/pip install 'datatrove[processing]==0.10.1' warcio faust-cchardet "
              "python-magic spacy lxml_html_clean orjson", file=sys.stderr)
        return 1
    if args.out is None:
        args.out = str(RESULTS if args.input == "synthetic" else RESULTS.with_name("headline_datatrove_real.json"))
    info = build_input(args.pages) if args.input == "synthetic" else build_real_input()
    input_dir = ROOT / info["dir"]
    files = [str(p) for p in sorted(input_dir.glob("*.warc.gz"))]
    pages = info["pages"]
    print(f"input: {pages} HTML pages ({info['base_pages']} originals x {info['copies']} copies) in {len(files)} files",
          flush=True)
    workers = [int(w) for w in args.workers.split(",")]
    bytecode = compile_thresher_bytecode() if any(t.startswith("thresher") for t in tools) else None
    work = Path(tempfile.mkdtemp(prefix="headline-"))
    runs: dict[str, list[dict]] = {}
    started = datetime.datetime.now(datetime.UTC)
    if args.from_partial:  # summarize the runs a stopped invocation saved (no new timing runs)
        runs = json.loads((DATA / "partial.json").read_text())["runs"]
        args.repeats = 0
    try:
        for rep in range(args.repeats):
            for w in workers:
                for tool in tools:
                    key = f"{tool}|{w}"
                    r = run_tool(tool, files, input_dir, w, work, args.dt_timeout)
                    runs.setdefault(key, []).append(r)
                    (DATA / "partial.json").write_text(json.dumps({"input": info, "runs": runs}, indent=1) + "\n")
                    print(
                        f"rep {rep} {tool:<9} w={w}: wall {r['wall_s']:.1f}s cpu {r['cpu_s']:.1f}s "
                        f"{pages / r['wall_s']:.1f} docs/s kept {r['kept']} load {r['loadavg_before'][0]}",
                        flush=True,
                    )
    finally:
        shutil.rmtree(work, ignore_errors=True)
    # A datatrove run with workers > 1 before the worker pinned start_method="fork" ran its pool under a fork
    # server that never reaps its workers: GNU time saw only the driver's CPU. Its wall time stands.
    for k, v in runs.items():
        if k.startswith("datatrove|") and k != "datatrove|1":
            for r in v:
                if r.get("start_method") != "fork" and r.get("cpu_s", 0) < 0.1 * min(
                    x["cpu_s"] for x in runs.get("datatrove|1", [r])
                ):
                    r["cpu_incomplete"] = True
    summary = {k: summarize(v, pages) for k, v in runs.items()}
    for k, v in runs.items():
        summary[k]["cpu_runs"] = sum(not r.get("cpu_incomplete") for r in v)
    for k, v in runs.items():  # pages datatrove skipped on its per-page extraction wall-clock guard
        if k.startswith("datatrove"):
            summary[k]["trafilatura_timeouts"] = [next((s.get("timeout", 0) for n, s in r["steps"].items()
                                                        if "Trafilatura" in n), 0) for r in v]
    ratios: dict = {}
    for w in workers:
        d = summary.get(f"datatrove|{w}")
        for tool in ("thresher", "thresher-nofast"):
            t = summary.get(f"{tool}|{w}")
            if t and d:
                key = str(w) if tool == "thresher" else f"{w} without fast"
                ratios[key] = {"docs_per_s": round(t["docs_per_s"] / d["docs_per_s"], 2),
                               "cpu": round(d["cpu_s"] / t["cpu_s"], 2) if d["cpu_s"] and t["cpu_s"] else None}
    # Fixed cost: the same commands, one worker, on a 16-page input (2 pages per file). The marginal
    # per-document CPU is (run CPU - fixed CPU) / pages: what the ratio tends to on a large input.
    startup = {}
    if args.startup_pages:
        tiny = build_input(args.startup_pages)
        tiny_dir = ROOT / tiny["dir"]
        tiny_files = [str(p) for p in sorted(tiny_dir.glob("*.warc.gz"))]
        work = Path(tempfile.mkdtemp(prefix="headline-"))
        try:
            for tool in tools:
                r = run_tool(tool, tiny_files, tiny_dir, 1, work, args.dt_timeout)
                startup[tool] = {"pages": tiny["pages"], "wall_s": r["wall_s"], "cpu_s": r["cpu_s"],
                                 "peak_rss_mib": r["peak_rss_mib"], "loadavg_before": r["loadavg_before"]}
                s1 = summary.get(f"{tool}|1")
                if s1 and s1["cpu_s"]:
                    marginal = (s1["cpu_s"] - r["cpu_s"]) / (pages - tiny["pages"])
                    startup[tool]["marginal_cpu_s_per_1k_docs"] = round(marginal * 1000, 2)
                    startup[tool]["marginal_docs_per_cpu_s"] = round(1 / marginal, 1) if marginal > 0 else None
                print(f"fixed cost {tool}: {startup[tool]}", flush=True)
        finally:
            shutil.rmtree(work, ignore_errors=True)
        for tool in ("thresher", "thresher-nofast"):
            if all(startup.get(t, {}).get("marginal_cpu_s_per_1k_docs") for t in (tool, "datatrove")):
                key = "marginal_cpu_1_worker" + ("" if tool == "thresher" else " without fast")
                ratios[key] = round(startup["datatrove"]["marginal_cpu_s_per_1k_docs"]
                                    / startup[tool]["marginal_cpu_s_per_1k_docs"], 2)
    print("extraction F1 on AEB ...", flush=True)
    f1 = extraction_f1(args.aeb_limit)
    speed = None
    if args.trafilatura_passes:
        print("extraction speed vs trafilatura on AEB ...", flush=True)
        speed = trafilatura_speed(args.trafilatura_passes)
    result = {
        "benchmark": "thresher build vs datatrove FineWeb-style pipeline, same WARC input",
        "input": info,
        "datatrove_extract_timeout_s": args.dt_timeout,
        "goal": {"ratio": GOAL, "datatrove_docs_per_s_per_core_reference": 15},
        "summary": summary,
        "ratios": ratios,
        "fixed_cost": startup,
        "extraction": f1,
        "runs": runs,
        "fast_extra": {"modules": list(FAST_MODULES), "same_shards_with_and_without": fast_identity(runs)},
        "extraction_speed_vs_trafilatura": speed,
        "machine": {
            "platform": platform.platform(),
            "python": platform.python_version(),
            "processor": platform.processor() or platform.machine(),
            "cpus": os.cpu_count(),
        },
        "thresher_bytecode_precompiled": bytecode
        is not None,  # as an installed package has it (compile_thresher_bytecode)
        "from_partial": args.from_partial,  # True: the timing runs were made earlier, this run only summarized them
        "started_utc": started.isoformat(timespec="seconds"),
        "finished_utc": datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds"),
    }
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text(json.dumps(result, indent=1, sort_keys=True) + "\n")
    for k, s in summary.items():
        print(
            f"{k:<14} {s['docs_per_s']:>8} docs/s  {s['cpu_s_per_1k_docs']:>7} CPU s/1k  rss {s['peak_rss_mib']} MiB  "
            f"kept {s['kept']}"
        )
    print("ratios:", ratios)
    print("same shards with and without fast:", result["fast_extra"]["same_shards_with_and_without"])
    if speed:
        print("extraction speed vs trafilatura:", speed["median_pages_per_s"], speed["thresher_over_trafilatura"])
    print("F1:", {k: v["f1"] for k, v in f1.items() if isinstance(v, dict) and "f1" in v})
    return 0


if __name__ == "__main__":
    sys.exit(main())
