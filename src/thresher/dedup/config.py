"""Deduplication settings."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from thresher.core.config import section, setting
from thresher.dedup.near_config import NearDedupConfig
from thresher.dedup.url_config import UrlDedupConfig


@dataclass(frozen=True, slots=True, kw_only=True)
class ExactDedupConfig:
    level: Literal["raw", "normalized", "structural"] | None = setting(
        "normalized",
        "raw: byte-identical text; normalized: also ignores case, punctuation and spacing; "
        "structural: also collapses digits (merges pages that differ only by numbers)",
        flag="--exact-level",
    )


@dataclass(frozen=True, slots=True, kw_only=True)
class LineDedupConfig:
    """Corpus-wide line (or paragraph) dedup: boilerplate is what many pages repeat."""

    enabled: bool = setting(
        False,
        "remove every line (or paragraph) that repeats on many pages of the corpus or of one host "
        "(boilerplate: menus, footers, share bars), each removed span attributed",
        flag="--line-dedup",
    )
    unit: Literal["line", "paragraph"] = setting(
        "line", "what is counted and removed: a line, or a paragraph (text between blank lines)",
        flag="--line-dedup-unit",
    )
    # structural by default: per-page counters ("Downloaded 812 times", "Page 3 of 17") are the
    # boilerplate the other levels miss (planted corpus: 0.988 removed vs 0.926, content lost 0
    # either way; benchmarks/line_dedup.py).
    level: Literal["raw", "normalized", "structural"] = setting(
        "structural",
        "when two lines are the same: raw (byte-identical), normalized (also ignoring case, punctuation and "
        "spacing), structural (also any digits: 'Downloaded 12 times' = 'Downloaded 3 times')",
        flag="--line-dedup-level",
    )
    min_documents: int = setting(
        10, "a line on at least this many documents of the corpus is removed from every one of them",
        flag="--line-dedup-min-documents",
    )
    min_host_pages: int = setting(
        3, "a line on at least this many pages of one host is removed from every document that has it",
        flag="--line-dedup-min-host-pages",
    )


@dataclass(frozen=True, slots=True, kw_only=True)
class DedupConfig:
    exact: ExactDedupConfig = section(ExactDedupConfig, "exact duplicate removal")
    near: NearDedupConfig = section(NearDedupConfig, "near-duplicate removal (MinHash/LSH or SimHash)")
    keep: Literal["first", "longest", "best_quality"] = setting(
        "first", "which member of a duplicate cluster is kept", flag="--keep"
    )
    lines: LineDedupConfig = section(LineDedupConfig, "line and paragraph dedup (boilerplate removal)")
    url: UrlDedupConfig = section(UrlDedupConfig, "URL dedup: one document per normalized URL, the newest")
    stages: tuple[str, ...] = setting(
        ("url", "lines", "semantic"),
        "corpus stages with phases of their own, run after clustering in this order: url (URL dedup, unless "
        "--no-url-dedup), lines (line dedup, with --line-dedup), semantic (semantic dedup, when an encoder is "
        "set) and any an installed plugin adds (entry points thresher.corpus_stages); a list without url runs "
        "no URL dedup",
        flag="--corpus-stages",
    )
