"""Peer runs for the dedup benchmarks; executed by `dedup_accuracy.py` / `dedup_speed.py` with the
side venv's Python (`benchmarks/.venvs/dedup`: datasketch, rensa, websieve==0.1.2), never imported by
thresher. Reads a JSONL file of {"id", "text", "shingles"} and prints one JSON object.

    python dedup_peers.py accuracy FILE THRESHOLD   -> {"tool": {"pairs": [[i, j], ...], "dropped": [...]}}
    python dedup_peers.py speed FILE                 -> {"tool": signatures per second}

The shingles are thresher's reference shingle strings (5 words, or 5 characters for scripts without
spaces), so datasketch and rensa are compared on indexing and estimation over the same sets the
ground truth uses; websieve is driven through its own text API (its own 5-word shingling).
"""

from __future__ import annotations

import json
import re
import sys
import time

NUM_PERM = 128


def load(path: str) -> list[dict]:
    with open(path, encoding="utf-8") as fh:
        return [json.loads(line) for line in fh]


def datasketch_pairs(docs: list[dict], threshold: float) -> dict:
    from datasketch import MinHash, MinHashLSH

    lsh = MinHashLSH(threshold=threshold, num_perm=NUM_PERM)
    sigs = []
    for d in docs:
        m = MinHash(num_perm=NUM_PERM)
        m.update_batch([s.encode("utf-8") for s in d["shingles"]])
        sigs.append(m)
    raw, verified = set(), set()
    for d, m in zip(docs, sigs, strict=True):
        for key in lsh.query(m):
            pair = (min(key, d["id"]), max(key, d["id"]))
            raw.add(pair)
            if m.jaccard(sigs[key]) >= threshold:
                verified.add(pair)
        lsh.insert(d["id"], m)
    return {
        "datasketch MinHashLSH": {
            "pairs": sorted(raw),
            "params": list(lsh.b_r) if hasattr(lsh, "b_r") else [lsh.b, lsh.r],
        },
        "datasketch MinHashLSH + estimate check": {"pairs": sorted(verified)},
    }


def rensa_pairs(docs: list[dict], threshold: float) -> dict:
    from rensa import RMinHash, RMinHashDeduplicator

    dedup = RMinHashDeduplicator(threshold, NUM_PERM, True)
    pairs = set()
    dropped = []
    for d in docs:
        m = RMinHash(NUM_PERM, 42)
        m.update(d["shingles"])
        key = str(d["id"])
        dups = dedup.get_duplicates(m)
        for k in dups:
            pairs.add((int(k), d["id"]))
        if dups:
            dropped.append(d["id"])
        dedup.add(key, m)
    # RMinHashLSH with explicit bands (16 x 8 = 128, knee 0.71) and the estimate checked
    from rensa import RMinHashLSH

    lsh = RMinHashLSH(threshold, NUM_PERM, 16)
    sigs = {}
    checked = set()
    for d in docs:
        m = RMinHash(NUM_PERM, 42)
        m.update(d["shingles"])
        for k in lsh.query(m):
            if m.jaccard(sigs[k]) >= threshold:
                checked.add((min(k, d["id"]), max(k, d["id"])))
        lsh.insert(d["id"], m)
        sigs[d["id"]] = m
    return {
        "rensa RMinHashDeduplicator": {"pairs": sorted(pairs)},
        "rensa RMinHashLSH 16 bands + estimate check": {"pairs": sorted(checked)},
    }


def websieve_dropped(docs: list[dict], threshold: float) -> dict:
    from websieve.dedup.minhash import deduplicate

    dropped, pairs = [], set()
    for key, is_dup, matched, _sim in deduplicate(((d["id"], d["text"]) for d in docs), threshold=threshold):
        if is_dup:
            dropped.append(key)
            pairs.add((min(key, matched), max(key, matched)))
    return {"websieve 0.1.2": {"dropped": dropped, "pairs": sorted(pairs), "pairs_partial": True}}


_WORD = re.compile(r"\w+")


def word_shingles(text: str, n: int = 5) -> list[str]:
    toks = _WORD.findall(text.lower())
    return [" ".join(toks[i : i + n]) for i in range(len(toks) - n + 1)]


def speed(docs: list[dict]) -> dict:
    """Signatures per CPU second from text (tokenization and shingling included), one thread."""
    from datasketch import MinHash
    from rensa import RMinHash
    from websieve.dedup.minhash import MinHash as WsMinHash

    texts = [d["text"] for d in docs]
    out: dict[str, float] = {}

    def timed(name: str, fn, texts: list[str]) -> None:  # type: ignore[no-untyped-def]
        start = time.process_time()
        for t in texts:
            fn(t)
        out[name] = len(texts) / (time.process_time() - start)

    def ds(t: str) -> None:
        m = MinHash(num_perm=NUM_PERM)
        m.update_batch([s.encode("utf-8") for s in word_shingles(t)])

    def rs(t: str) -> None:
        m = RMinHash(NUM_PERM, 42)
        m.update(word_shingles(t))
        m.digest()

    ws = WsMinHash(num_perm=NUM_PERM)
    timed("datasketch MinHash", ds, texts)
    timed("rensa RMinHash", rs, texts)
    timed("websieve 0.1.2 MinHash", lambda t: ws.signature(t), texts[: max(50, len(texts) // 10)])
    start = time.process_time()
    RMinHash.digest_matrix_from_token_sets([word_shingles(t) for t in texts], NUM_PERM, 42)
    out["rensa digest_matrix_from_token_sets (batch)"] = len(texts) / (time.process_time() - start)
    return out


def versions() -> dict:
    from importlib.metadata import version

    return {p: version(p) for p in ("datasketch", "rensa", "websieve", "numpy")}


if __name__ == "__main__":
    mode, path = sys.argv[1], sys.argv[2]
    docs = load(path)
    if mode == "accuracy":
        t = float(sys.argv[3])
        result = {}
        result.update(datasketch_pairs(docs, t))
        result.update(rensa_pairs(docs, t))
        result.update(websieve_dropped(docs, t))
        print(json.dumps(result))
    elif mode == "speed":
        print(json.dumps({"speed": speed(docs), "versions": versions()}))
    else:
        raise SystemExit(f"unknown mode {mode}")
