"""FineWeb-2's per-language filter settings: the published configs, the table shipped with thresher,
and which language-script pair a document is judged as.

FineWeb-2 (Penedo et al. 2025, github.com/huggingface/fineweb-2, Apache-2.0) publishes one YAML file
per language-script pair (`configs/deu_Latn.yml`, 1,929 of them) with the thresholds its filtering
step uses. thresher reads them in two ways:

- the shipped table `data/fineweb2.json.gz`, generated from the folder by
  `benchmarks/fineweb2_table.py` (attribution in `data/FINEWEB2_NOTICE`), used by default;
- a folder given by `quality.fineweb2.configs` (`--quality-fineweb2-configs DIR`), read with the
  small YAML-subset reader below (the files are flat: scalars, lists of strings, lists of pairs),
  so the core needs no YAML library.

A file that cannot be read, or lacks a key, is reported as one located line
(`path:line: reason`, logged as a warning and kept in `Fineweb2Table.problems`) and its pair
falls back like a pair without a file. Tables are read once per process and path.
"""

from __future__ import annotations

import gzip
import json
import logging
import re
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any

from thresher.core.errors import ConfigError

log = logging.getLogger(__name__)

SHIPPED = Path(__file__).parent / "data" / "fineweb2.json.gz"

NUMBER_KEYS = (
    "dup_line_frac", "language_score", "line_punct_thr", "max_avg_word_length",
    "max_non_alpha_words_ratio", "min_avg_word_length", "new_line_ratio",
)
PAIR_KEYS = ("dup_n_grams", "top_n_grams")
REQUIRED = (*NUMBER_KEYS, *PAIR_KEYS, "stopwords")


@dataclass(frozen=True, slots=True)
class LanguageThresholds:
    """One pair's settings, named as in the published files (see docs/quality.md for how each one
    maps onto a rule). `max_non_alpha_words_ratio` is, despite its name, the *smallest* share of
    words containing a letter (datatrove's argument of that name is used that way)."""

    key: str
    dup_line_frac: float
    top_n_grams: tuple[tuple[int, float], ...]
    dup_n_grams: tuple[tuple[int, float], ...]
    new_line_ratio: float
    line_punct_thr: float
    max_non_alpha_words_ratio: float
    min_avg_word_length: float
    max_avg_word_length: float
    stopwords: frozenset[str]
    language_score: float

    def to_row(self) -> list[Any]:
        return [self.dup_line_frac, [list(p) for p in self.top_n_grams], [list(p) for p in self.dup_n_grams],
                self.new_line_ratio, self.line_punct_thr, self.max_non_alpha_words_ratio,
                self.min_avg_word_length, self.max_avg_word_length, sorted(self.stopwords), self.language_score]

    @classmethod
    def from_row(cls, key: str, row: list[Any]) -> LanguageThresholds:
        (dup_line, top, dup, newline, punct, alpha, min_len, max_len, stop, score) = row
        return cls(key, dup_line, tuple((int(n), float(f)) for n, f in top), tuple((int(n), float(f)) for n, f in dup),
                   newline, punct, alpha, min_len, max_len, frozenset(stop), score)

    @classmethod
    def from_mapping(cls, key: str, values: dict[str, Any]) -> LanguageThresholds:
        return cls(
            key, float(values["dup_line_frac"]),
            tuple((int(n), float(f)) for n, f in values["top_n_grams"]),
            tuple((int(n), float(f)) for n, f in values["dup_n_grams"]),
            float(values["new_line_ratio"]), float(values["line_punct_thr"]),
            float(values["max_non_alpha_words_ratio"]), float(values["min_avg_word_length"]),
            float(values["max_avg_word_length"]),
            # PyYAML reads an unquoted `no` or `1` as a boolean or a number, which never equals a word:
            # such entries are left out, as they had no effect in FineWeb-2's pipeline
            frozenset(w for w in values["stopwords"] if isinstance(w, str)),
            float(values["language_score"]),
        )


@dataclass(frozen=True)
class Fineweb2Table:
    pairs: dict[str, LanguageThresholds]
    sentence_terminal: str  # Unicode Sentence_Terminal characters: FineWeb's line-punctuation stop characters
    source: str
    problems: tuple[str, ...] = field(default=())


# -- the YAML subset ----------------------------------------------------------------------------

_BOOL_NULL = re.compile(
    r"^(?:yes|Yes|YES|no|No|NO|true|True|TRUE|false|False|FALSE|on|On|ON|off|Off|OFF|null|Null|NULL|~)$"
)
_INT = re.compile(r"^[-+]?(?:0|[1-9][0-9_]*)$")
_FLOAT = re.compile(r"^[-+]?(?:[0-9][0-9_]*)?\.[0-9_]*(?:[eE][-+][0-9]+)?$")
_ESCAPES = {"0": "\0", "a": "\a", "b": "\b", "t": "\t", "\t": "\t", "n": "\n", "v": "\v", "f": "\f", "r": "\r",
            "e": "\x1b", " ": " ", '"': '"', "/": "/", "\\": "\\", "N": "\x85", "_": "\xa0", "L": "\u2028",
            "P": "\u2029"}
_HEX = {"x": 2, "u": 4, "U": 8}


def _double_quoted(body: str) -> str:
    out: list[str] = []
    i = 0
    while i < len(body):
        ch = body[i]
        if ch != "\\":
            out.append(ch)
            i += 1
            continue
        esc = body[i + 1] if i + 1 < len(body) else ""
        if esc in _HEX:
            digits = body[i + 2:i + 2 + _HEX[esc]]
            if len(digits) != _HEX[esc] or not all(c in "0123456789abcdefABCDEF" for c in digits):
                raise ValueError(f"bad escape \\{esc}{digits}")
            out.append(chr(int(digits, 16)))
            i += 2 + _HEX[esc]
        elif esc in _ESCAPES:
            out.append(_ESCAPES[esc])
            i += 2
        else:
            raise ValueError(f"unknown escape \\{esc}")
    return "".join(out)


def scalar(token: str) -> Any:
    """A YAML 1.1 scalar as PyYAML's safe loader reads it (the forms these files use)."""
    token = token.strip()
    if len(token) >= 2 and token[0] == token[-1] == '"':
        return _double_quoted(token[1:-1])
    if len(token) >= 2 and token[0] == token[-1] == "'":
        return token[1:-1].replace("''", "'")
    if token[:1] in ('"', "'"):
        raise ValueError(f"unterminated string {token!r}")
    if token == "" or _BOOL_NULL.match(token):
        return None if token in ("", "~") or token.lower() == "null" else token.lower() in ("yes", "true", "on")
    if _INT.match(token):
        return int(token.replace("_", ""))
    if _FLOAT.match(token) and token not in (".", "-.", "+."):
        return float(token.replace("_", ""))
    return token


def parse_config(text: str, where: str) -> dict[str, Any]:
    """A flat FineWeb-2 config: `key: scalar`, or `key:` followed by `- item` or `- - n` / `  - f` lines.

    Raises ConfigError naming `where:line` on anything else.
    """
    values: dict[str, Any] = {}
    key: str | None = None
    for number, raw in _logical_lines(text):
        line = raw.rstrip()
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        try:
            if not line[0].isspace() and not line.startswith("-"):
                name, sep, rest = line.partition(":")
                if not sep or not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", name):
                    raise ValueError("expected `key: value`")
                key = name
                values[key] = scalar(rest) if rest.strip() else []
                if rest.strip() == "[]":
                    values[key] = []
            elif line.startswith("- - "):
                _items(values, key).append([scalar(line[4:])])
            elif line.startswith("  - "):
                items = _items(values, key)
                if not items or not isinstance(items[-1], list):
                    raise ValueError("continuation of a pair without its first element")
                items[-1].append(scalar(line[4:]))
            elif line.startswith("- "):
                _items(values, key).append(scalar(line[2:]))
            else:
                raise ValueError("unexpected indentation")
        except ValueError as exc:
            raise ConfigError(f"{where}:{number}: {exc}") from None
    return values


def _open_quote(line: str) -> bool:
    """Whether `line` ends inside a double-quoted string."""
    body = line.split('"', 1)
    if len(body) < 2:
        return False
    inside, i, rest = True, 0, body[1]
    while i < len(rest):
        if rest[i] == "\\" and inside:
            i += 2
            continue
        if rest[i] == '"':
            inside = not inside
        i += 1
    return inside


def _logical_lines(text: str) -> list[tuple[int, str]]:
    """Lines, with a double-quoted string continued over several lines joined into its first one
    (YAML: a line ending in a backslash continues without a space, otherwise the break folds into
    one space; the next line's indentation is dropped)."""
    out: list[tuple[int, str]] = []
    pending: tuple[int, str] | None = None
    for number, line in enumerate(text.splitlines(), 1):
        if pending is not None:
            start, head = pending
            head = head[:-1] + line.lstrip() if head.endswith("\\") else head.rstrip() + " " + line.lstrip()
            pending = (start, head) if _open_quote(head) else None
            if pending is None:
                out.append((start, head))
            continue
        if _open_quote(line):
            pending = (number, line)
        else:
            out.append((number, line))
    if pending is not None:
        out.append(pending)  # reported as an unterminated string
    return out


def _items(values: dict[str, Any], key: str | None) -> list[Any]:
    if key is None or not isinstance(values[key], list):
        raise ValueError("list item outside a list")
    items: list[Any] = values[key]
    return items


def thresholds_from_file(path: Path) -> LanguageThresholds:
    """One config file, checked: every key present, numbers where numbers belong, (n, bound) pairs."""
    where = str(path)
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(f"{where}: cannot read: {exc}") from None
    values = parse_config(text, where)
    missing = [k for k in REQUIRED if k not in values]
    if missing:
        raise ConfigError(f"{where}: missing {', '.join(missing)}")
    for k in NUMBER_KEYS:
        if isinstance(values[k], bool) or not isinstance(values[k], (int, float)):
            raise ConfigError(f"{where}: {k} is not a number ({values[k]!r})")
    for k in PAIR_KEYS:
        pairs = values[k]
        if not isinstance(pairs, list) or not all(
            isinstance(p, list) and len(p) == 2 and isinstance(p[0], int) and p[0] > 0
            and isinstance(p[1], (int, float)) and not isinstance(p[1], bool) for p in pairs
        ):
            raise ConfigError(f"{where}: {k} is not a list of (n, bound) pairs")
    if not isinstance(values["stopwords"], list):
        raise ConfigError(f"{where}: stopwords is not a list")
    return LanguageThresholds.from_mapping(path.stem, values)


def read_folder(folder: Path) -> tuple[dict[str, LanguageThresholds], list[str]]:
    """Every `<lang>_<Script>.yml` of `folder`, and one located line per file that could not be used."""
    if not folder.is_dir():
        return {}, [f"{folder}: not a folder of FineWeb-2 configs"]
    pairs: dict[str, LanguageThresholds] = {}
    problems: list[str] = []
    for path in sorted(folder.glob("*.yml")):
        if not re.fullmatch(r"[a-z]{2,3}_[A-Z][a-z]{3}", path.stem):
            problems.append(f"{path}: not named <iso639-3>_<Script>.yml")
            continue
        try:
            pairs[path.stem] = thresholds_from_file(path)
        except ConfigError as exc:
            problems.append(str(exc))
    if not pairs and not problems:
        problems.append(f"{folder}: no .yml files")
    return pairs, problems


def _read_shipped() -> dict[str, Any]:
    with gzip.open(SHIPPED, "rt", encoding="utf-8") as f:
        data: dict[str, Any] = json.load(f)
    return data


@lru_cache(maxsize=4)
def load_table(folder: str | None = None) -> Fineweb2Table:
    """The shipped table, or the configs of `folder` (read once per process and folder)."""
    shipped = _read_shipped()
    terminal = shipped["sentence_terminal"]
    if folder is None:
        pairs = {k: LanguageThresholds.from_row(k, row) for k, row in shipped["pairs"].items()}
        return Fineweb2Table(pairs, terminal, f"shipped table ({shipped['source']})")
    found, problems = read_folder(Path(folder))
    for line in problems:
        log.warning("fineweb2 configs: %s (that pair uses the fallback)", line)
    return Fineweb2Table(found, terminal, folder, tuple(problems))
