"""`thresher pack DATASET[=WEIGHT]... -o OUT`: built datasets to tokenized, shuffled training files.

Every kept document becomes its tokens followed by the tokenizer's end-of-sequence id, in one global
order fixed by `--seed`; with weights and `--max-tokens` each dataset takes its share of the budget.
Formats: `megatron` (`.bin`/`.idx` for megatron-core's IndexedDataset), `npy` (flat tokens + document
offsets), `datatrove` (`.ds` + `.ds.index` for datatrove's DatatroveFolderDataset), `mds` (shards +
`index.json` for mosaicml-streaming's StreamingDataset). A Parquet sidecar per split maps each
sequence to its document and archive record.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable, Sequence
from typing import Any

from thresher.core.errors import ConfigError


def register(subparsers: Any) -> None:
    p = subparsers.add_parser("pack", help="tokenize, shuffle and mix datasets into training files",
                              description=__doc__)
    p.add_argument("datasets", nargs="+", metavar="DATASET[=WEIGHT]", help="built dataset folders, each with a weight")
    p.add_argument("-o", "--output", required=True, help="output folder")
    p.add_argument("--tokenizer", default="llama2", help="llama2, or the path of a tokenizer.json (default: llama2)")
    from thresher.pack.formats import WRITERS

    p.add_argument("--format", default="megatron", choices=list(WRITERS), help="token file format")
    p.add_argument("--seed", type=int, default=0, help="fixes the document order and the validation draw")
    p.add_argument("--max-tokens", type=token_count, default=None,
                   help="token budget over all datasets, split by weight (1000000, 1e9 or 1_000_000)")
    p.add_argument("--validation-fraction", type=float, default=0.0, help="share of documents held out (by id)")
    p.add_argument("--allow-repeat", action="store_true", help="repeat a dataset too small for its share")
    p.add_argument("--file-tokens", type=token_count, default=1 << 28, help="tokens per output file (default 2^28)")
    p.add_argument("--eos", default=None, help="the end-of-sequence token, when the tokenizer's is not a usual one")
    p.add_argument("--engine", default="local", help="where the tokenize tasks run: local, pool, ray")
    p.add_argument("--workers", type=int, default=None, help="pool and ray: worker processes (default: the CPU count)")
    p.add_argument("-q", "--quiet", action="store_true", help="print nothing but errors")
    p.set_defaults(handler=run)


def token_count(text: str) -> int:
    """A count of tokens as people write them: 1000000, 1_000_000 or 1e9."""
    try:
        value = float(text.replace("_", ""))
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number of tokens, got {text!r}") from None
    if not value.is_integer() or value <= 0:
        raise argparse.ArgumentTypeError(f"expected a positive whole number of tokens, got {text!r}")
    return int(value)


def engine_runner(engine: str, workers: int | None) -> Callable[[Sequence[Any]], list[Any]]:
    """A `thresher.pack.run.TaskRunner` on the run layer's engine `engine` (local, pool, ray or a
    plugin's): the engine starts when the tasks come and is closed when they are done."""
    from thresher.run.calls import TaskCall
    from thresher.run.engines import ENGINES, make_engine

    ENGINES.get(engine)  # an unknown name fails here, before any work

    def run_tasks(tasks: Sequence[Any]) -> list[Any]:
        runner = make_engine(engine, workers, None)
        try:
            return runner.run([TaskCall(fn, (arg,), label, weight=weight) for fn, arg, label, weight in tasks])
        finally:
            runner.close()

    return run_tasks


def run(args: argparse.Namespace) -> int:
    from thresher.pack.run import PackOptions, pack

    if args.max_tokens is not None and args.max_tokens <= 0:
        raise ConfigError("--max-tokens must be positive")
    options = PackOptions(tokenizer=args.tokenizer, format=args.format, seed=args.seed, max_tokens=args.max_tokens,
                          validation_fraction=args.validation_fraction, allow_repeat=args.allow_repeat,
                          file_tokens=args.file_tokens, eos=args.eos)
    manifest = pack(args.datasets, args.output, options, runner=engine_runner(args.engine, args.workers))
    if not args.quiet:
        for name, split in manifest["splits"].items():
            if split["sequences"]:
                print(f"{name}: {split['sequences']:,} sequences, {split['tokens']:,} tokens in "
                      f"{len(split['files'])} file(s)", file=sys.stderr)
        print(f"wrote {args.output}/manifest.json ({manifest['format']}, {manifest['dtype']}, "
              f"{manifest['cpu_s']} CPU s)", file=sys.stderr)
    return 0
