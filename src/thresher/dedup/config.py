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
class DedupConfig:
    exact: ExactDedupConfig = section(ExactDedupConfig, "exact duplicate removal")
    near: NearDedupConfig = section(NearDedupConfig, "near-duplicate removal (MinHash/LSH or SimHash)")
    keep: Literal["first", "longest", "best_quality"] = setting(
        "first", "which member of a duplicate cluster is kept", flag="--keep"
    )
    url: UrlDedupConfig = section(UrlDedupConfig, "URL dedup: one document per normalized URL, the newest")
    stages: tuple[str, ...] = setting(
        ("url", "semantic"),
        "corpus stages with phases of their own, run after clustering in this order: url (URL dedup, unless "
        "--no-url-dedup), semantic (semantic dedup, when an encoder is set) and any an installed plugin adds "
        "(entry points thresher.corpus_stages); a list without url runs no URL dedup",
        flag="--corpus-stages",
    )
