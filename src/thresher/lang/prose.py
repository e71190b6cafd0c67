"""The prose of a document: what language identification reads.

Code, math, URLs and tables of numbers say nothing about a page's language and mislead detectors
(fastText's lid.176 reads `def main():` as French and LaTeX as Greek), so they are left out:

- fenced blocks (```` ``` ```` or `~~~`, as the extractor writes `<pre>` in Markdown output);
- code-like lines: starting like code (`def `, `import `, `#include`, `}`, `<div`, `>>> `, `$ `),
  ending in `;`, `{` or `}`, or dense in code symbols (`{}[]()<>=;$\\_*&|^~`);
- URLs, e-mail addresses, inline `code` and `$math$` inside prose lines;
- lines in which letters are under half of the non-space characters (number tables, rules).

The result is a list of paragraphs (runs of kept lines, broken by blank or left-out lines), each
with its character range in the document text, so per-paragraph languages map back to the text.
Reading stops after `max_chars` characters of prose and `max_scan_chars` of text (bounded time on
a 10 MB page).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

_CODE_HINT = re.compile(r"[{};=<>`$\\@]|://|www\.")
_CODE_HINT_BYTES = b"{};=<>`$\\@"
_CODE_START = re.compile(
    r"\s*(?:def |class \w|import \w|from [\w.]+ import |return\b|#include|#!|//|/\*|\*/|\* |function\b|var \w|let \w"
    r"|const \w|public |private |static |if ?\(|for ?\(|while ?\(|else\b|elif |try:|except\b|[{}\]\)]|<[a-zA-Z/!?]"
    r"|\$ |>>> |@\w+|SELECT |INSERT |CREATE )"
)
_CODE_ENDINGS = frozenset(";{}([,:")
_SYMBOLS = re.compile(r"[{}\[\]()<>=;$\\_*&|^~/#\"']")
_INLINE_NOISE = re.compile(r"https?://\S+|www\.\S+|\S+@\S+\.\w+|`[^`\n]*`|\$[^$\n]+\$|\\[a-zA-Z]+")
_FENCE = re.compile(r"\s*(?:```|~~~)")
# A line with none of these is prose as it stands: no code symbol, URL, markup or digit to look at
_LINE_HINT = re.compile(r"[{}\[\]()<>=;$\\_*&|^~/#\"'`@\d]")

SYMBOL_SHARE_FOR_CODE = 0.12  # of a line's non-space characters; prose has ~0.01-0.04 (quotes, brackets)
MIN_LETTER_SHARE = 0.5


@dataclass(frozen=True, slots=True)
class Paragraph:
    start: int  # character offsets in the document text
    end: int
    text: str  # the prose, with URLs and inline code removed


# Counted on the UTF-8 bytes with `bytes.translate` (C speed): all of these are ASCII.
_SYMBOL_BYTES = b"{}[]()<>=;$\\_*&|^~/#\"'"
_NON_LETTER_BYTES = bytes(b for b in range(128) if not chr(b).isalpha() and chr(b) != " ")


def _count_bytes(line: str, which: bytes) -> int:
    raw = line.encode("utf-8", "surrogatepass")
    return len(raw) - len(raw.translate(None, which))


def is_code_line(line: str) -> bool:
    stripped = line.strip()
    if _CODE_START.match(line) or (stripped[-1:] in _CODE_ENDINGS and _SYMBOLS.search(stripped)):
        return True
    n = len(stripped) - stripped.count(" ")
    return n > 0 and _count_bytes(stripped, _SYMBOL_BYTES) > SYMBOL_SHARE_FOR_CODE * n


def _letter_share(line: str) -> float:
    """Share of the non-space characters that are not ASCII digits, punctuation or controls
    (non-ASCII characters count as letters: an estimate, exact for Latin text)."""
    n = len(line) - line.count(" ")
    return (n - _count_bytes(line, _NON_LETTER_BYTES)) / n if n else 0.0


def prose_paragraphs(text: str, max_chars: int = 4096, max_scan_chars: int = 262_144) -> list[Paragraph]:
    """The document's prose paragraphs in order (see the module docstring)."""
    if len(text) > max_scan_chars:
        text = text[:max_scan_chars]
    raw = text.encode("utf-8", "surrogatepass")
    if (
        len(raw.translate(None, _CODE_HINT_BYTES)) == len(raw)
        and "://" not in text
        and "www." not in text
        and "~~~" not in text
    ):
        return _plain_paragraphs(text, max_chars)
    paragraphs: list[Paragraph] = []
    kept = 0
    lines: list[str] = []
    start = end = 0
    in_fence = False
    pos = 0

    def flush() -> None:
        nonlocal kept, lines
        if lines:
            body = "\n".join(lines)
            paragraphs.append(Paragraph(start, end, body))
            kept += len(body)
            lines = []

    for line in text.split("\n"):
        line_start, pos = pos, pos + len(line) + 1
        if (
            not in_fence
            and _LINE_HINT.search(line) is None
            and "www." not in line
            and "```" not in line
            and "~~~" not in line
        ):
            clean = line.strip()
            if clean:
                if not lines:
                    start = line_start
                lines.append(clean)
                end = line_start + len(line)
                if kept + sum(map(len, lines)) >= max_chars:
                    break
                continue
        if _FENCE.match(line):
            in_fence = not in_fence
            flush()
            continue
        if in_fence or not line.strip() or is_code_line(line):
            flush()
            if kept >= max_chars:
                break
            continue
        clean = _INLINE_NOISE.sub(" ", line).strip() if _CODE_HINT.search(line) else line.strip()
        if not clean or _letter_share(clean) < MIN_LETTER_SHARE:
            flush()
            continue
        if not lines:
            start = line_start
        lines.append(clean)
        end = line_start + len(line)
        if kept + sum(map(len, lines)) >= max_chars:
            break
    flush()
    return paragraphs


def _plain_paragraphs(text: str, max_chars: int) -> list[Paragraph]:
    """Text without any code or URL hint: paragraphs are the blank-line-separated blocks; lines
    that are mostly digits (tables) are still left out."""
    paragraphs: list[Paragraph] = []
    kept = 0
    pos = 0
    for block in text.split("\n\n"):
        block_start, pos = pos, pos + len(block) + 2
        body = block.strip()
        if not body:
            continue
        if _letter_share(body) < MIN_LETTER_SHARE:
            kept_lines = [ln for ln in body.split("\n") if _letter_share(ln) >= MIN_LETTER_SHARE]
            if not kept_lines:
                continue
            body = "\n".join(kept_lines)
        lead = len(block) - len(block.lstrip())
        paragraphs.append(Paragraph(block_start + lead, block_start + len(block.rstrip()), body))
        kept += len(body)
        if kept >= max_chars:
            break
    return paragraphs
