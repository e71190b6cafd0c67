"""Files of an input folder that are not data: skipped, each counted once (`event/skipped_<reason>`),
instead of being read as records and reported as thousands of malformed lines.

Only the files a folder expands to are looked at; a file named on the command line (or by a glob) is
read as asked. A file is skipped

- by its name: `documentation` for a project's notes (`LICENSE`, `LICENSE-MIT`, `README`, `NOTICE`,
  `COPYING`, `CHANGELOG`, ... bare or as `.txt`, `.md`, `.rst`; a `history.warc.gz` is data) and any `.md`
  or `.rst` file; hidden names, `.DS_Store`, are never listed (`thresher.read.paths.list_files`);
- by its first bytes: `json_document` for a file sniffed as JSON (it starts with `{` or `[`) that is one
  JSON document spread over lines (`ground-truth.json`, a pretty-printed config) rather than JSON Lines:
  neither of its first two non-empty lines is a JSON value by itself. A file named `.jsonl` or
  `.ndjson` says it is JSON Lines, so it is read, and its broken lines are reported.
"""

from __future__ import annotations

import json
import posixpath

# a partition of this kind prefix reads as one `Event` naming the file and why it is skipped
SKIPPED_KIND = "skipped"
DOC_STEMS = frozenset({
    "LICENSE", "LICENCE", "COPYING", "NOTICE", "README", "AUTHORS", "CONTRIBUTORS", "CHANGELOG", "CHANGES",
    "HISTORY", "CONTRIBUTING", "CITATION", "CODE_OF_CONDUCT", "SECURITY", "UNLICENSE",
})
DOC_SUFFIXES = (".md", ".markdown", ".rst")
DOC_STEM_SUFFIXES = frozenset({"", ".txt", ".md", ".markdown", ".rst"})
JSON_LINES_SUFFIXES = (".jsonl", ".ndjson", ".jsonl.gz", ".jsonl.zst", ".ndjson.gz", ".ndjson.zst")
HEAD_BYTES = 256 * 1024  # how much of a file the JSON document check reads (decompressed)


def skip_by_name(path: str) -> str | None:
    """`documentation` for a name that is not data (see the module docstring), else None."""
    name = posixpath.basename(path.rstrip("/").replace("\\", "/"))
    if name.lower().endswith(DOC_SUFFIXES):
        return "documentation"
    stem, dot, rest = name.partition(".")
    stem = stem.upper().replace("-", "_")
    named = stem in DOC_STEMS or stem.startswith(("LICENSE_", "LICENCE_"))
    return "documentation" if named and (dot + rest).lower() in DOC_STEM_SUFFIXES else None


def is_json_document(path: str, head: bytes) -> bool:
    """Whether a file sniffed as JSON is one document over many lines rather than JSON Lines, from its
    first decompressed bytes `head`: neither of its first two non-empty lines parses alone."""
    if path.lower().endswith(JSON_LINES_SUFFIXES):
        return False
    lines = [line for line in head.lstrip(b"\xef\xbb\xbf").splitlines() if line.strip()]
    if len(lines) < 2 or not lines[0].lstrip().startswith((b"{", b"[")):
        return False  # one line (a document or a record, read as one) or not JSON at all
    return not any(_parses(line) for line in lines[:2])


def _parses(line: bytes) -> bool:
    try:
        json.loads(line)
    except ValueError:  # JSONDecodeError and UnicodeDecodeError
        return False
    return True
