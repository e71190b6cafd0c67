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
    p = subparsers.add_parser(
        "embed", help="add embeddings beside a dataset's shards; semantic dedup report", description=__doc__
    )
    p.add_argument("dataset", help="dataset directory (holding manifest.json)")
    p.add_argument("--encoder", choices=sorted(ENCODERS.names()), default=DEFAULT_ENCODER,
                   help=f"the model (default {DEFAULT_ENCODER}: packaged static embeddings, CPU, no torch)")
    p.add_argument(
        "--device",
        choices=["auto", "cpu", "cuda"],
        default="auto",
        help="where a transformer encoder runs: cuda (an error when absent), cpu, or auto (cuda when present)",
    )
    p.add_argument(
        "--dtype",
        choices=["float16", "float32"],
        default="float16",
        help="the vector files' element type (default float16)",
    )
    p.add_argument("--batch-size", type=int, default=64, help="most texts per batch (default 64)")
    p.add_argument("--batch-tokens", type=int, default=None,
                   help="most padded tokens per batch (default: the encoder's max length × batch size)")
    p.add_argument(
        "--semantic-dedup",
        action="store_true",
        help="report the semantic duplicates (k-means, then cosine within each cluster); embeds first unless the "
        "dataset already has this encoder's vectors",
    )
    p.add_argument(
        "--semantic-threshold",
        type=float,
        default=0.9,
        help="cosine at or above which a document duplicates an earlier one (default 0.9)",
    )
    p.add_argument(
        "--semantic-clusters", type=int, default=None, help="k-means clusters (default: one per ~1,000 documents)"
    )
    p.add_argument(
        "--semantic-report",
        default=None,
        metavar="FILE",
        help="write each duplicate as a JSON line (id, shard, row and its attributed drop) to FILE; - for stdout",
    )
    p.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    from thresher.write.manifest import load_manifest

    encoder = get_encoder(args.encoder, args.device)
    section = load_manifest(args.dataset).get("embeddings") or {}
    reuse = args.semantic_dedup and (section.get("encoder"), section.get("version")) == (encoder.name, encoder.version)
    if not reuse:
        _embed(args, encoder)
    if args.semantic_dedup:
        return _semantic(args)
    return 0


def _embed(args: argparse.Namespace, encoder: Any) -> None:
    from thresher.embed.dataset import embed_dataset

    report = embed_dataset(args.dataset, encoder, dtype=args.dtype, max_batch_size=args.batch_size,
                           max_batch_tokens=args.batch_tokens)
    print(
        f"embedded {report.records} records in {len(report.files)} shard(s) with {report.encoder} "
        f"{report.version} ({report.dimension}-d {report.dtype}): {report.batches} batches, padding efficiency "
        f"{report.padding_efficiency:.3f}, {report.truncated} truncated to {encoder.max_len} tokens, {report.empty} "
        f"empty, "
        f"{len(report.failed)} failed (zero vectors, listed in the manifest)",
        file=sys.stderr,
    )


def _semantic(args: argparse.Namespace) -> int:
    import json

    from thresher.embed.semantic import SemanticDedupConfig, SemanticStats, semantic_duplicates

    config = SemanticDedupConfig(threshold=args.semantic_threshold, clusters=args.semantic_clusters)
    stats = SemanticStats()
    out = None
    if args.semantic_report == "-":
        out = sys.stdout
    elif args.semantic_report:
        out = open(args.semantic_report, "w", encoding="utf-8")  # noqa: SIM115 - closed below
    try:
        for dup in semantic_duplicates(args.dataset, config, stats):
            if out is not None:
                line = {
                    "id": dup.id,
                    "shard": dup.shard,
                    "row": dup.row,
                    "drop": dup.drop(config.threshold).to_record(),
                }
                out.write(json.dumps(line, ensure_ascii=False) + "\n")
    finally:
        if out is not None and out is not sys.stdout:
            out.close()
    print(
        f"semantic dedup at cosine >= {config.threshold}: {stats.duplicates} of {stats.records} records duplicate an "
        f"earlier one ({stats.clusters} clusters, largest {stats.largest_cluster})",
        file=sys.stderr,
    )
    return 0
