"""Near-duplicate settings (composed into `DedupConfig` as its `near` section)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from thresher.core.config import setting


@dataclass(frozen=True, slots=True, kw_only=True)
class NearDedupConfig:
    # a name in thresher.dedup.near.NEAR_METHODS (the built-ins or a plugin's); None: off
    method: str | None = setting(
        "minhash",
        "near-duplicate method: minhash (Jaccard of shingle sets, LSH bands) or simhash (64-bit "
        "fingerprints, Hamming distance); none disables near dedup",
        flag="--method",
    )
    threshold: float = setting(
        0.8,
        "minhash: Jaccard similarity of shingle sets at or above which documents are duplicates",
        flag="--threshold",
    )
    num_hashes: int = setting(128, "minhash: signature length (one_permutation needs a power of two)")
    scheme: Literal["one_permutation", "k_permutation"] = setting(
        "one_permutation",
        "minhash: one_permutation (one hash per shingle, densified; measured 3-15x faster at equal "
        "accuracy, docs/dedup.md) or k_permutation (classic, one hash per shingle and signature value)",
    )
    shingle_kind: Literal["auto", "word", "char"] = setting(
        "auto", "shingle unit: auto picks char shingles for scripts written without spaces (CJK, Thai, ...)"
    )
    shingle_size: int = setting(5, "words per shingle")
    char_shingle_size: int = setting(5, "characters per shingle for scripts without spaces")
    bands: int | None = setting(
        None, "minhash: LSH bands (none: derived from threshold and num_hashes)", flag="--bands"
    )
    rows: int | None = setting(None, "minhash: rows per LSH band (none: derived with bands)", flag="--rows")
    verify_max_shingles: int | None = setting(
        1024,
        "minhash: candidates are verified by the Jaccard of up to this many shingle ids per document "
        "(exact for documents with at most this many distinct shingles); none: verify by the "
        "signature estimate only",
    )
    max_bucket_representatives: int = setting(
        32, "a bucket with more members compares each member only with its first N members (O(n) pairs)"
    )
    simhash_max_hamming: int = setting(3, "simhash: largest Hamming distance (of 64 bits) between duplicates")
    simhash_min_shingles: int = setting(
        16,
        "simhash: documents with fewer distinct shingles are matched only on identical token sequences "
        "(SimHash of a handful of features is unreliable)",
    )
    seed: int = setting(0, "seed of every hash function (changing it changes which pairs collide)")
    kernel: Literal["auto", "pure", "numpy"] = setting(
        "auto",
        "signature kernel: numpy when installed (the fast extra), else pure Python; identical results",
        hashed=False,
    )

    def __post_init__(self) -> None:
        from thresher.dedup.methods import NEAR_METHODS

        if self.method is not None and self.method not in NEAR_METHODS:
            raise ValueError(f"unknown near-dedup method {self.method!r} (known: {', '.join(NEAR_METHODS.names())})")
        if not 0.0 < self.threshold <= 1.0:
            raise ValueError(f"threshold must be in (0, 1], got {self.threshold}")
        if self.num_hashes < 1:
            raise ValueError(f"num_hashes must be >= 1, got {self.num_hashes}")
        if self.scheme == "one_permutation" and self.num_hashes & (self.num_hashes - 1):
            raise ValueError(f"scheme one_permutation needs num_hashes to be a power of two, got {self.num_hashes}")
        if self.shingle_size < 1 or self.char_shingle_size < 1:
            raise ValueError("shingle sizes must be >= 1")
        if (self.bands is None) != (self.rows is None):
            raise ValueError("set both bands and rows, or neither (then they are derived from threshold)")
        if self.bands is not None and self.rows is not None:
            if self.bands < 1 or self.rows < 1:
                raise ValueError("bands and rows must be >= 1")
            if self.bands * self.rows > self.num_hashes:
                raise ValueError(f"bands x rows = {self.bands * self.rows} exceeds num_hashes = {self.num_hashes}")
        if self.verify_max_shingles is not None and self.verify_max_shingles < 1:
            raise ValueError("verify_max_shingles must be >= 1 (none switches exact verification off)")
        if self.max_bucket_representatives < 1:
            raise ValueError("max_bucket_representatives must be >= 1")
        if not 0 <= self.simhash_max_hamming < 32:
            raise ValueError(f"simhash_max_hamming must be in [0, 32), got {self.simhash_max_hamming}")
        if self.simhash_min_shingles < 1:
            raise ValueError("simhash_min_shingles must be >= 1")
