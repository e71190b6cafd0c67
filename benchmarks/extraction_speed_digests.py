"""Digests of every evaluation page's extraction and parse tree: proof that a speed change changed nothing.

For every page of ../shared/data/extraction (AEB, trafilatura-eval, readability), decoded as
extraction_worker.py decodes it, this records the SHA-256 of:
- the built-in extractor's output in each mode the build can ask for (text, markdown, tables split,
  comments kept): text, title, metadata and tables;
- the parse tree (`extract.tree.parse`): every node's tag, raw attributes, flags, index, end,
  text and link lengths, and every child string with its type (text or link text).

Run it before and after a change and compare the two files (`--compare A B` prints the pages whose
digests differ).

    python benchmarks/extraction_speed_digests.py --out /tmp/before.json
    python benchmarks/extraction_speed_digests.py --out /tmp/after.json
    python benchmarks/extraction_speed_digests.py --compare /tmp/before.json /tmp/after.json
"""

from __future__ import annotations

import argparse
import glob
import hashlib
import json
import sys
from pathlib import Path

BENCH = Path(__file__).resolve().parent
DATA = BENCH.parent.parent / "shared" / "data" / "extraction"
MODES = (("text", "keep", "drop"), ("markdown", "keep", "drop"), ("text", "split", "drop"), ("text", "keep", "keep"))


def page_paths() -> list[tuple[str, str]]:
    out = []
    for name, pattern in (("aeb", "aeb/html/*.html.gz"), ("trafilatura-eval", "trafilatura-eval/pages/*"),
                          ("readability", "readability/*/source.html.gz")):
        for path in sorted(glob.glob(str(DATA / pattern))):
            out.append((f"{name}:{Path(path).relative_to(DATA)}", path))
    return out


def tree_digest(doc) -> str:  # type: ignore[no-untyped-def]
    h = hashlib.sha256()
    for node in doc.nodes:
        h.update(f"{node.tag}\x00{node.raw_attrs}\x00{node.flags}\x00{node.index}\x00{node.end}\x00"
                 f"{node.text_len}\x00{node.link_len}\x00{len(node.children)}\x01".encode("utf-8", "surrogatepass"))
        for child in node.children:
            if isinstance(child, str):
                h.update(f"{type(child).__name__}\x00{child}\x02".encode("utf-8", "surrogatepass"))
            else:
                h.update(f"#{child.index}\x02".encode())
    h.update(json.dumps([doc.title, doc.lang, doc.metas, doc.links, doc.json_ld], sort_keys=True).encode())
    return h.hexdigest()


def digests() -> dict[str, dict[str, str]]:
    sys.path.insert(0, str(BENCH))
    from extraction_worker import read_page

    from thresher.extract.builtin import BuiltinExtractor
    from thresher.extract.tree import parse, release

    extractors = [BuiltinExtractor(text_format=f, tables=t, comments=c) for f, t, c in MODES]
    out: dict[str, dict[str, str]] = {}
    for key, path in page_paths():
        html = read_page(path)
        doc = parse(html)
        entry = {"tree": tree_digest(doc)}
        release(doc)
        for (f, t, c), ex in zip(MODES, extractors, strict=True):
            r = ex.extract(html)
            blob = json.dumps([r.text, r.title, r.metadata, r.tables], sort_keys=True, ensure_ascii=False)
            entry[f"{f}/{t}/{c}"] = hashlib.sha256(blob.encode("utf-8", "surrogatepass")).hexdigest()
        out[key] = entry
    return out


def compare(a: dict[str, dict[str, str]], b: dict[str, dict[str, str]]) -> int:
    differ = 0
    for key in sorted(set(a) | set(b)):
        da, db = a.get(key, {}), b.get(key, {})
        fields = sorted(k for k in set(da) | set(db) if da.get(k) != db.get(k))
        if fields:
            differ += 1
            print(f"{key}: {', '.join(fields)}")
    print(f"{len(set(a) | set(b))} pages, {differ} differ")
    return 1 if differ else 0


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out")
    ap.add_argument("--compare", nargs=2, metavar=("A", "B"))
    args = ap.parse_args()
    if args.compare:
        a, b = (json.loads(Path(p).read_text()) for p in args.compare)
        return compare(a, b)
    if not DATA.is_dir():
        print(f"no evaluation pages under {DATA}", file=sys.stderr)
        return 1
    result = digests()
    text = json.dumps(result, indent=0, sort_keys=True) + "\n"
    if args.out:
        Path(args.out).write_text(text)
    print(f"{len(result)} pages")
    return 0


if __name__ == "__main__":
    sys.exit(main())
