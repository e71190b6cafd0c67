"""Instructions that decoding and extraction execute on a build's HTML pages (callgrind, deterministic).

CPU time on a shared box moves by ±10%; instruction counts do not. This script
1. runs `thresher build` on the given archives once, recording every `decode_html` call's bytes and
   declared charset (the pages the build extracts), into `--pages` (a pickle);
2. runs, under `valgrind --tool=callgrind`, a replay of those calls (`decode_html` then the
   `extract` stage's transform, as the build does) and the same process without the replay; the
   difference is the instructions decoding and extraction cost on those pages; and the same with
   decoding alone.

    python benchmarks/extraction_build_instructions.py WARC... [--pages /tmp/pages.pkl]

Prints (and with --out writes as JSON) the counts. Needs valgrind on PATH. The real-WARC input of
`benchmarks/headline_datatrove.py --input real` is the 8 files under ../shared/data/warc listed
in docs/extraction.md ("Speed and the headline").
"""

from __future__ import annotations

import argparse
import json
import pickle
import re
import subprocess
import sys
import tempfile
from pathlib import Path


def capture(paths: list[str], out: Path) -> int:
    import thresher.read.warc_payload as payload
    from thresher.cli import main

    calls: list[tuple[bytes, str | None]] = []
    decode = payload.decode_html

    def recording(data: bytes, declared: str | None = None) -> tuple[str, str, bool]:
        calls.append((data, declared))
        return decode(data, declared)

    payload.decode_html = recording  # type: ignore[assignment]
    with tempfile.TemporaryDirectory() as tmp:
        main(["build", *paths, "-o", str(Path(tmp) / "out"), "-q", "--workers", "1", "--overwrite"])
    out.write_bytes(pickle.dumps(calls))
    return len(calls)


def replay(pages: Path, mode: str) -> None:
    from thresher.core.document import Document
    from thresher.extract.stage import Extract
    from thresher.read.decode import decode_html

    calls = pickle.loads(pages.read_bytes())
    stage = Extract()
    if mode == "none":
        return
    for data, declared in calls:
        html, _, _ = decode_html(data, declared)
        if mode == "all":
            stage.transform(Document(id="x", html=html, url="http://x/"))


def instructions(pages: Path, mode: str) -> int:
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "cg.out"
        subprocess.run(["valgrind", "--tool=callgrind", f"--callgrind-out-file={out}", sys.executable, __file__,
                        "--replay", mode, "--pages", str(pages)], check=True, capture_output=True)
        m = re.search(r"^summary:\s*(\d+)", out.read_text(), re.M)
        assert m is not None, "no summary line in the callgrind output"
        return int(m.group(1))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("archives", nargs="*")
    ap.add_argument("--pages", type=Path, default=Path(tempfile.gettempdir()) / "thresher-build-pages.pkl")
    ap.add_argument("--replay", choices=("none", "decode", "all"), help=argparse.SUPPRESS)
    ap.add_argument("--out", type=Path)
    args = ap.parse_args()
    if args.replay:
        replay(args.pages, args.replay)
        return
    if args.archives:
        print(f"{capture(args.archives, args.pages)} pages recorded in {args.pages}")
    base = instructions(args.pages, "none")
    decode = instructions(args.pages, "decode") - base
    both = instructions(args.pages, "all") - base
    result = {
        "pages": len(pickle.loads(args.pages.read_bytes())),
        "start_up": base,
        "decode": decode,
        "decode_and_extract": both,
    }
    print(json.dumps(result, indent=2))
    if args.out:
        args.out.write_text(json.dumps(result, indent=2) + "\n")


if __name__ == "__main__":
    main()
