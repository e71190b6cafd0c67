"""C4 rules (Raffel et al. 2020, "Exploring the Limits of Transfer Learning", section 2.2).

Two stages:

- `C4LineFilter` (stage `quality.c4_lines`), a *transform*: removes lines with a word longer than
  `max_word_chars`, strips Wikipedia-style citation marks (`[1]`, `[edit]`, `[citation needed]`),
  and removes lines with fewer than `min_words_per_line` words, lines mentioning `javascript`, and
  cookie/terms-of-use/privacy-policy boilerplate; with `require_terminal_punctuation` (the `c4`
  preset) also lines that do not end in terminal punctuation (or end in an ellipsis). It drops a
  document only when no line is left (`no_lines_left`).
- `C4Quality` (stage `quality.c4`), a rule set on the cleaned text: `lorem_ipsum`, `curly_bracket`
  and `too_few_sentences`.

Markdown aware: in a document written in Markdown (it has a heading or a code fence line, as
`--text-format markdown` extraction produces), headings, list items, table rows and code are not
prose lines, so the per-line word minimum and the terminal-punctuation rule do not judge them;
code lines (inside ``` fences) keep their indentation and are not checked for `javascript` or policy
words either; blank lines between blocks are kept (one at most). The build's text then keeps
`## Introduction` as `thresher extract` shows it. Plain text is judged line by line as in C4.

Writing-system aware: the terminal punctuation is the document script's (`。` for Chinese, `।` for
Hindi, ...); for scripts that do not mark sentence ends (Thai, Lao) neither the punctuation line
rule nor the sentence count applies, and in scripts without spaces a "word" of the per-line minimum
is a character.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from thresher.core.config import setting
from thresher.core.document import Document, Drop
from thresher.lang.script import TRAITS, ScriptTraits, detect_script
from thresher.quality.rules import Bound, QualityRuleSet
from thresher.quality.text import AnalysisCache, TextAnalysis, tokenize

LINES_STAGE = "quality.c4_lines"
STAGE = "quality.c4"

CITATION = re.compile(r"\[\d*\]|\[edit\]|\[citation needed\]")
POLICY_PHRASES = ("terms of use", "privacy policy", "cookie policy", "uses cookies", "use of cookies", "use cookies")
# C4's own list: a closing quote also ends a quoted sentence
LATIN_LINE_ENDS = (".", "?", "!", '"', "'")
# Markdown structure (CommonMark: ATX headings, fences, list items, GFM table rows)
MD_HEADING = re.compile(r"#{1,6}(?:\s|$)")
MD_FENCE = re.compile(r"(?:```|~~~)")
MD_BLOCK = re.compile(r"(?:#{1,6}(?:\s|$)|[-*+]\s|\d{1,9}[.)]\s|\|.*\|$|>)")


def is_markdown(text: str) -> bool:
    """Whether a text is Markdown as the extractor writes it: a heading or code fence starts a line."""
    if "#" not in text and "```" not in text and "~~~" not in text:
        return False
    return any(MD_HEADING.match(line) or MD_FENCE.match(line) for line in (raw.lstrip() for raw in text.split("\n")))


@dataclass(frozen=True, slots=True, kw_only=True)
class C4Config:
    min_words_per_line: int | None = setting(3, "remove lines with fewer words (characters in scripts without spaces)")
    max_word_chars: int | None = setting(1000, "remove lines containing a longer word")
    remove_citations: bool = setting(True, "strip [1], [edit], [citation needed] marks")
    remove_javascript_lines: bool = setting(True, "remove lines that mention javascript")
    remove_policy_lines: bool = setting(True, "remove cookie, privacy-policy and terms-of-use lines")
    max_lorem_ipsum: int | None = setting(0, "most occurrences of 'lorem ipsum' a document may have")
    max_curly_brackets: int | None = setting(0, "most '{' a document may have")
    min_sentences: int | None = setting(5, "fewest sentences a document may have")


def _line_ends(code: str) -> tuple[str, ...]:
    marks = TRAITS[code].terminal_punctuation
    return tuple(dict.fromkeys(LATIN_LINE_ENDS + tuple(marks))) if marks else ()


_LINE_ENDS = {code: _line_ends(code) for code in TRAITS}


class C4LineFilter:
    """C4's line cleanup as a transform (see the module docstring)."""

    name = LINES_STAGE

    def __init__(self, config: C4Config = C4Config(), *, require_terminal_punctuation: bool = False,
                 cache: AnalysisCache | None = None) -> None:
        self.config = config
        self.require_terminal_punctuation = require_terminal_punctuation
        self.cache = cache

    def transform(self, doc: Document) -> Drop | None:
        c = self.config
        text = doc.text
        before = self.cache.get(doc) if self.cache is not None else None
        script = before.script if before is not None else detect_script(text)
        charwords = script.has_character_words
        lost_tokens = 0  # tokens of removed lines and citation marks, to keep the token count exact
        spaced = script.traits.space_delimited
        ends = _LINE_ENDS.get(script.code, ()) if self.require_terminal_punctuation else ()
        check_ends = bool(ends)
        max_word = c.max_word_chars
        min_words = c.min_words_per_line
        kept: list[str] = []
        removed = 0
        markdown = is_markdown(text)
        in_code = False
        for raw in text.split("\n"):
            line = raw.strip()
            if markdown:
                if MD_FENCE.match(line):
                    in_code = not in_code
                    kept.append(line)
                    continue
                if in_code:  # code: not prose, indentation kept
                    kept.append(raw.rstrip())
                    continue
                if not line:
                    if kept and kept[-1]:
                        kept.append("")  # one blank line between blocks
                    continue
            elif not line:
                continue
            words = line.split()
            if max_word is not None and len(line) > max_word and any(len(w) > max_word for w in words):
                removed += 1
                lost_tokens += len(tokenize(line, charwords))
                continue
            if c.remove_citations and "[" in line:
                cited = line
                line = CITATION.sub("", line)
                if line != cited:
                    lost_tokens += len(tokenize(cited, charwords)) - len(tokenize(line, charwords))
            structure = markdown and MD_BLOCK.match(line) is not None
            keep = True
            if structure:
                pass  # a heading, list item, table row or quote: not judged as a prose line
            elif check_ends and (not line.endswith(ends) or line.endswith("...")):
                keep = False
            elif (
                min_words is not None and (len(words) if spaced else sum(1 for ch in line if ch.isalpha())) < min_words
            ):
                keep = False
            if keep:
                low = line.lower()
                if (c.remove_javascript_lines and "javascript" in low) or (
                        c.remove_policy_lines and any(p in low for p in POLICY_PHRASES)):
                    keep = False
            if not keep:
                removed += 1
                lost_tokens += len(tokenize(line, charwords))
                continue
            kept.append(line)
        if markdown:
            kept = _without_empty_blocks(kept)
        doc.annotations["quality.c4_removed_lines"] = removed
        new_text = "\n".join(kept).strip()
        if new_text != text:
            doc.text = new_text
            if before is not None and self.cache is not None:
                self.cache.rewritten(doc, before, lost_tokens)
        if not new_text:
            return Drop(self.name, "no_lines_left", value=0, limit=1)
        return None


def _without_empty_blocks(lines: list[str]) -> list[str]:
    """Markdown lines after cleanup: blank lines left doubled by removed lines merged, none at either end."""
    out: list[str] = []
    for line in lines:
        if not line and out and not out[-1]:
            continue
        out.append(line)
    while out and not out[-1]:
        out.pop()
    while out and not out[0]:
        out.pop(0)
    return out


def _sentence_patterns(t: ScriptTraits) -> tuple[re.Pattern[str], re.Pattern[str]]:
    marks = f"[{re.escape(t.terminal_punctuation)}]+"
    closers = "[\"'”’»)\\]」』]*"
    ends = re.compile(marks + closers + (r"(?=\s|$)" if t.space_delimited else ""))
    line_ends = re.compile(marks + closers + r"[ \t]*$", re.M)
    return ends, line_ends


# compiled on first use, per script: compiling every script's pair at import cost each start ~3 ms
_SENTENCE_PATTERNS: dict[str, tuple[re.Pattern[str], re.Pattern[str]] | None] = {}


def _sentence_patterns_of(code: str) -> tuple[re.Pattern[str], re.Pattern[str]] | None:
    try:
        return _SENTENCE_PATTERNS[code]
    except KeyError:
        t = TRAITS.get(code)
        patterns = _SENTENCE_PATTERNS[code] = (
            _sentence_patterns(t) if t is not None and t.terminal_punctuation else None
        )
        return patterns


def sentence_count(a: TextAnalysis) -> int | None:
    """Sentences in the text: each run of terminal punctuation that ends a sentence, plus one for
    every non-blank line that does not end in one (a line without punctuation is one sentence)."""
    patterns = _sentence_patterns_of(a.script.code)
    if patterns is None:
        return None
    ends, line_ends = patterns
    text = a.text
    return len(ends.findall(text)) + len(a.nonblank_lines) - len(line_ends.findall(text))


def lorem_ipsum_count(a: TextAnalysis) -> int:
    return a.lower.count("lorem ipsum")


def curly_bracket_count(a: TextAnalysis) -> int:
    """Curly brackets, C4's sign of code; MediaWiki's language-conversion markup `-{...}-`, which
    leaks into Serbian and Chinese Wikipedia text, is prose and does not count."""
    n = a.text.count("{")
    return n - a.text.count("-{") if n else 0


def c4_rules(config: C4Config) -> list[Bound]:
    c = config
    return [
        Bound("lorem_ipsum_count", lorem_ipsum_count, None, c.max_lorem_ipsum, too_high="lorem_ipsum"),
        Bound("curly_bracket_count", curly_bracket_count, None, c.max_curly_brackets, too_high="curly_bracket"),
        Bound("sentence_count", sentence_count, c.min_sentences, None, "too_few_sentences"),
    ]


class C4Quality(QualityRuleSet):
    """C4 document rules as one rule set, stage `quality.c4`."""

    def __init__(self, config: C4Config = C4Config(), cache: AnalysisCache | None = None) -> None:
        super().__init__(STAGE, c4_rules(config), cache)
        self.config = config
