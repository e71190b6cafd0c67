"""Near-duplicate removal as corpus stages: `MinHashDedup` (default) and `SimHashDedup`.

Both implement `thresher.core.stages.CorpusStage` and run through the phase machinery:

- **scan**: `scan(doc)` computes the document's sketch and its candidate keys (MinHash LSH band keys,
  or SimHash block-combination keys). A document with fewer tokens than one shingle (empty,
  one-word, or shorter than `shingle_size` words) returns None: it takes no part in near dedup and
  is left to exact dedup.
- **group**: for each key seen more than once, `candidate_pairs(n)` pairs the bucket's members
  (all pairs up to `max_bucket_representatives + 1` members, else each member with the first
  `max_bucket_representatives`: O(n) for hot buckets), and `similarity(a, b)` verifies each pair.
- **cluster**: union-find over verified pairs, keeper by the dedup keep policy; a dropped document's
  `Drop("dedup.near", "near_duplicate", value=similarity, limit=threshold)` comes from there.

MinHash verification is two-step. The signature estimate rejects pairs clearly below the
threshold (`PREFILTER_MARGIN` below it, more than 4 standard errors at 128 hashes); the rest are
decided on the Jaccard of the shingle-id samples, exact for documents with at most
`verify_max_shingles` distinct shingles. Banding can then favour recall (see
`thresher.dedup.lsh`) while verification keeps precision. With `verify_max_shingles = None` the
signature estimate alone decides.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping

from thresher.core.document import Document
from thresher.core.stages import CorpusKeys, CorpusStage
from thresher.dedup.lsh import band_keys, derive_bands_rows, representative_pairs
from thresher.dedup.minhash import (
    SKETCH_HEADER_SIZE,
    MinHasher,
    PreparedSketch,
    encode_sketch,
    estimate_jaccard,
    prepared_jaccard,
    signature_bytes,
)
from thresher.dedup.near_config import NearDedupConfig
from thresher.dedup.simhash import Fingerprint, SimHasher, block_masks, fingerprint_keys, hamming

#: Signature estimates this far below the threshold are rejected without the exact check. At 128
#: hashes the estimate's standard error is at most 0.044 (J = 0.5), so 0.2 is > 4.5 sigma.
PREFILTER_MARGIN = 0.2


def recorded_with(config: NearDedupConfig, *names: str) -> str:
    """`ReusesSignals.recorded_with` of a near stage: its method and the settings `names` its
    payload depends on (not the threshold, bands or bucket cap: they decide from the payload)."""
    return json.dumps({"method": config.method, **{n: getattr(config, n) for n in names}}, sort_keys=True)


class MinHashDedup:
    """Drops documents whose word (or character) shingle sets have Jaccard similarity >= `threshold`
    with a kept document: MinHash signatures, LSH banding for candidates, verified similarity."""

    name = "dedup.near"
    reason = "near_duplicate"

    def __init__(self, config: NearDedupConfig | None = None) -> None:
        self.config = config = config or NearDedupConfig()
        if config.bands is not None and config.rows is not None:
            self.bands, self.rows = config.bands, config.rows
        else:
            params = derive_bands_rows(config.threshold, config.num_hashes)
            self.bands, self.rows = params.bands, params.rows
        self.threshold = config.threshold
        self.verify = config.verify_max_shingles is not None
        self.hasher = MinHasher(
            config.num_hashes,
            shingle_size=config.shingle_size,
            char_shingle_size=config.char_shingle_size,
            shingle_kind=config.shingle_kind,
            scheme=config.scheme,
            seed=config.seed,
            sample_size=config.verify_max_shingles or 0,
            kernel=config.kernel,
        )
        # the kernel is left out: every kernel gives the same sketch
        self.recorded_with = recorded_with(config, "num_hashes", "scheme", "shingle_kind", "shingle_size",
                                           "char_shingle_size", "seed", "verify_max_shingles")

    def scan(self, doc: Document) -> CorpusKeys | None:
        sketch = self.hasher.sketch(doc.text, doc.derived)
        if sketch is None:
            return None
        payload = encode_sketch(sketch)
        return CorpusKeys(band_keys(signature_bytes(payload), self.bands, self.rows), payload)

    def signals(self, scanned: CorpusKeys) -> dict[str, bytes]:
        """The MinHash signature (`num_hashes` little-endian u32), and the rest of the payload (its
        header, then the shingle-id sample verification reads): a replay bands the signature at
        its own threshold and verifies with the sample, without shingling the text again."""
        payload = scanned.payload
        signature = signature_bytes(payload)
        end = SKETCH_HEADER_SIZE + len(signature)
        rest = payload[:SKETCH_HEADER_SIZE] + payload[end:]
        return {"dedup.near.minhash": bytes(signature), "dedup.near.sample": rest}

    def from_signals(self, values: Mapping[str, bytes]) -> CorpusKeys | None:
        signature, rest = values.get("dedup.near.minhash"), values.get("dedup.near.sample")
        if signature is None or rest is None:
            return None
        payload = rest[:SKETCH_HEADER_SIZE] + signature + rest[SKETCH_HEADER_SIZE:]
        return CorpusKeys(band_keys(signature, self.bands, self.rows), payload)

    def candidate_pairs(self, n: int) -> Iterable[tuple[int, int]]:
        return representative_pairs(n, self.config.max_bucket_representatives)

    def similarity(self, a: bytes, b: bytes) -> float | None:
        if a == b:  # identical shingle samples and signatures: the hot-bucket case, no decoding
            return 1.0
        return self.compare(PreparedSketch(a), PreparedSketch(b))

    # the verify phase prepares each member once and compares prepared sketches
    prepare = PreparedSketch

    def compare(self, sa: PreparedSketch, sb: PreparedSketch) -> float | None:
        if sa is sb:
            return 1.0
        if len(sa.signature) != len(sb.signature):
            return None
        estimate = estimate_jaccard(sa.signature, sb.signature)
        if self.verify and sa.sample_size and sb.sample_size:
            if estimate < self.threshold - PREFILTER_MARGIN:
                return None
            jaccard = prepared_jaccard(sa, sb)
            return jaccard if jaccard >= self.threshold else None
        return estimate if estimate >= self.threshold else None


class SimHashDedup:
    """Drops documents whose 64-bit SimHash is within `simhash_max_hamming` bits of a kept
    document's; short documents (fewer than `simhash_min_shingles` shingles) only on identical
    token sequences. The similarity reported is 1 - distance / 64."""

    name = "dedup.near"
    reason = "near_duplicate"

    def __init__(self, config: NearDedupConfig | None = None) -> None:
        self.config = config = config or NearDedupConfig(method="simhash")
        self.max_hamming = config.simhash_max_hamming
        self.threshold = 1.0 - self.max_hamming / 64  # the similarity bound a Drop reports as its limit
        self.masks = block_masks(config.simhash_max_hamming)
        self.hasher = SimHasher(
            shingle_size=config.shingle_size,
            char_shingle_size=config.char_shingle_size,
            shingle_kind=config.shingle_kind,
            min_shingles=config.simhash_min_shingles,
            seed=config.seed,
            kernel=config.kernel,
        )
        self.recorded_with = recorded_with(config, "shingle_kind", "shingle_size", "char_shingle_size",
                                           "simhash_min_shingles", "seed")

    def scan(self, doc: Document) -> CorpusKeys | None:
        fp = self.hasher.fingerprint(doc.text, doc.derived)
        if fp is None:
            return None
        return CorpusKeys(fingerprint_keys(fp, self.masks), fp.encode())

    def signals(self, scanned: CorpusKeys) -> dict[str, bytes]:
        """The SimHash payload (`Fingerprint.encode`: a tag byte, then the 64-bit fingerprint, or a
        short document's 16-byte digest), for the signals table."""
        return {"dedup.near.simhash": scanned.payload}

    def from_signals(self, values: Mapping[str, bytes]) -> CorpusKeys | None:
        payload = values.get("dedup.near.simhash")
        if payload is None:
            return None
        return CorpusKeys(fingerprint_keys(Fingerprint.decode(payload), self.masks), payload)

    def candidate_pairs(self, n: int) -> Iterable[tuple[int, int]]:
        return representative_pairs(n, self.config.max_bucket_representatives)

    def similarity(self, a: bytes, b: bytes) -> float | None:
        fa, fb = Fingerprint.decode(a), Fingerprint.decode(b)
        if fa.short or fb.short:
            return 1.0 if fa.short and fb.short and fa.digest == fb.digest else None
        distance = hamming(fa.value, fb.value)
        return 1.0 - distance / 64 if distance <= self.max_hamming else None


def build_near_stage(config: NearDedupConfig) -> CorpusStage | None:
    """The near-dedup stage for `config`, or None when `method` is None (near dedup off)."""
    if config.method is None:
        return None
    from thresher.dedup.methods import NEAR_METHODS

    stage: CorpusStage = NEAR_METHODS.get(config.method)(config)
    return stage
