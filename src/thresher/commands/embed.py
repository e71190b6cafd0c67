"""`thresher embed DATASET`: write a vector file beside every shard (`.npy`, a row per record in
document order), list them in the manifest with their sha256 and the encoder's name, version and
dimension; `thresher verify` then checks them. `--semantic-dedup` reports the near-duplicate
meanings in an embedded dataset (see thresher.embed.semantic)."""

from __future__ import annotations

import argparse
import sys
from typing import Any

from thresher.embed.encoder import DEFAULT_ENCODER, ENCODERS, get_encoder


def register(subparsers: Any) -> None:
    p = subparsers.add_parser("embed", help="add embeddings beside a dataset's shards; semantic dedup report", description=__doc__)
    p.add_argument("dataset", help="dataset directory (holding manifest.json)")
    p.add_argument("--encoder", choices=sorted(ENCODERS), default=DEFAULT_ENCODER,
                   help=f"the model (default {DEFAULT_ENCODER}: packaged static embeddings, CPU, no torch)")
    p.add_argument("--dtype", choices=["float16", "float32"], default="float16", help="the vector files' element type (default float16)")
    p.add_argument("--batch-size", type=int, default=64, help="most texts per batch (default 64)")
    p.add_argument("--batch-tokens", type=int, default=None,
                   help="most padded tokens per batch (default: the encoder's max length × batch size)")
    p.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    from thresher.embed.dataset import embed_dataset

    encoder = get_encoder(args.encoder)
    report = embed_dataset(args.dataset, encoder, dtype=args.dtype, max_batch_size=args.batch_size,
                           max_batch_tokens=args.batch_tokens)
    print(
        f"embedded {report.records} records in {len(report.files)} shard(s) with {report.encoder} "
        f"{report.version} ({report.dimension}-d {report.dtype}): {report.batches} batches, padding efficiency "
        f"{report.padding_efficiency:.3f}, {report.truncated} truncated to {encoder.max_len} tokens, {report.empty} empty",
        file=sys.stderr,
    )
    return 0
