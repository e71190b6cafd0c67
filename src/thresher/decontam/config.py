"""Benchmark decontamination settings (off unless benchmark files are given).

The sha256 of every benchmark file is part of the config (`benchmark_sha256`, filled in when the
config is made without it), so the config hash and the manifest change when a benchmark file does;
a config read back from a manifest keeps its digests, and building its index refuses a different
file (`thresher.decontam.index.verify_benchmarks`).
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from typing import Literal

from thresher.core.config import setting

#: Default bound on the index: 12 bytes per n-gram (`thresher.decontam.index`), 120 MB per worker.
DEFAULT_MAX_NGRAMS = 10_000_000


@dataclass(frozen=True, slots=True, kw_only=True)
class DecontamConfig:
    benchmarks: tuple[str, ...] = setting(
        (), "benchmark files (JSONL with text fields, or plain text, one item per line) whose n-grams "
        "mark a document as contaminated (empty: no decontamination)", flag="--decontaminate",
    )
    fields: tuple[str, ...] = setting(
        ("text",), "JSONL fields holding an item's text (several: each is indexed)", flag="--decontaminate-field"
    )
    ngram: int = setting(13, "n-gram length in words (GPT-3 used 13)", flag="--ngram")
    mode: Literal["drop", "cut"] = setting(
        "drop", "drop: remove the document; cut: remove only the overlapping spans", flag="--decontaminate-mode"
    )
    min_overlap: int = setting(1, "distinct benchmark n-grams a document must share to be contaminated")
    max_items_per_ngram: int | None = setting(
        10, "n-grams found in more benchmark items than this are common phrasing, not contamination (exempt)"
    )
    common_texts: tuple[str, ...] = setting(
        (), "files of unrelated reference documents (JSONL text or plain lines): benchmark n-grams found in "
        "many of them are exempt"
    )
    max_common_docs: int = setting(3, "a benchmark n-gram in at least this many reference documents is exempt")
    max_ngrams: int = setting(DEFAULT_MAX_NGRAMS, "refuse benchmark files with more n-grams than this (bounded memory)")
    benchmark_sha256: tuple[str, ...] = setting(
        (), "sha256 of each benchmark file, filled in when empty; a mismatch is an error (reproducibility)"
    )
    compiled_dir: str | None = setting(
        None, "folder of the compiled benchmark index, mapped by every worker (default in a build: its work "
        "dir/lists; none: each process builds the index)", hashed=False)

    def __post_init__(self) -> None:
        if self.ngram < 1:
            raise ValueError(f"decontam.ngram must be >= 1, got {self.ngram}")
        if self.min_overlap < 1:
            raise ValueError(f"decontam.min_overlap must be >= 1, got {self.min_overlap}")
        if not self.benchmarks:
            return
        if not self.benchmark_sha256:
            object.__setattr__(self, "benchmark_sha256", tuple(file_sha256(path) for path in self.benchmarks))
        elif len(self.benchmark_sha256) != len(self.benchmarks):
            raise ValueError("decontam.benchmark_sha256 lists a different number of files than decontam.benchmarks")
        # Given digests (a config read back from a manifest) are checked when the index is built, not
        # here: reports that only read a dataset's config must not need its benchmark files.

    @property
    def enabled(self) -> bool:
        return bool(self.benchmarks)


def file_sha256(path: str) -> str:
    h = hashlib.sha256()
    try:
        with open(path, "rb") as f:
            while chunk := f.read(1 << 20):
                h.update(chunk)
    except OSError as exc:
        raise ValueError(f"benchmark file {path}: {exc.strerror or exc}") from None
    return h.hexdigest()


def benchmark_mismatches(config: DecontamConfig) -> list[str]:
    """One message per benchmark file whose sha256 is not the one the config records."""
    out = []
    for path, want in zip(config.benchmarks, config.benchmark_sha256, strict=True):
        got = file_sha256(path)
        if got != want:
            out.append(f"benchmark file {path} has sha256 {got}, the config records {want}")
    return out
