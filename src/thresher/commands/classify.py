"""`thresher classify train|eval|apply`: train a linear text classifier, evaluate it, and annotate
records with its scores.

    thresher classify train --label good.jsonl:good --label bad.jsonl:bad -o model.thc
    thresher classify eval model.thc test.jsonl --label-field label
    thresher classify apply model.thc crawl.jsonl -o scored.jsonl

`apply` only annotates (`annotations["classify.<name>.<label>"]`); to filter, give the model to
`thresher build --classifier NAME=model.thc --classifier-keep LABEL`.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path
from typing import Any

from thresher.core.errors import ConfigError, InputError


def register(subparsers: Any) -> None:
    p = subparsers.add_parser("classify", help="train, evaluate and apply text classifiers", description=__doc__,
                              formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = p.add_subparsers(dest="classify_verb", metavar="ACTION")

    t = sub.add_parser("train", help="train a classifier from labelled JSONL",
                       formatter_class=argparse.ArgumentDefaultsHelpFormatter)
    _add_data_arguments(t)
    t.add_argument("-o", "--output", required=True, help="model file to write (.thc)")
    t.add_argument(
        "--holdout", type=float, default=0.1, help="fraction of each label held out for evaluation (0: none)"
    )
    t.add_argument("--seed", type=int, default=0, help="seed of the split, the shuffling and the initial weights")
    t.add_argument("--epochs", type=int, default=5, help="passes over the training data")
    t.add_argument("--lr", type=float, default=0.5, help="initial learning rate (decays linearly to 0)")
    t.add_argument("--dim", type=int, default=16, help="embedding dimensions")
    t.add_argument("--word-ngrams", type=int, default=2, help="longest word n-gram (1: words only)")
    t.add_argument("--char-ngrams", default="none", metavar="MIN-MAX",
                   help="character n-gram lengths, e.g. 2-5 (none: off)")
    t.add_argument("--buckets", type=int, default=1 << 20, help="hash buckets shared by all features")
    t.add_argument("--loss", choices=("softmax", "ova"), default="softmax",
                   help="softmax (one label per text) or one-vs-all (multi-label)")
    t.add_argument("--tokenizer", choices=("words", "whitespace"), default="words",
                   help="words: \\w+ runs and single symbols; whitespace: split on spaces only (as fastText)")
    t.add_argument("--max-chars", type=int, default=100_000, help="characters of a text read for features")
    t.add_argument("--max-tokens", type=int, default=10_000, help="words of a text used for features")
    t.add_argument("--trainer", choices=("auto", "python", "numpy"), default="auto",
                   help="how rows are stored while training (the same model bytes from each): numpy (int64 arrays,"
                        " ~2x faster) or python (packed integers); auto: NumPy when installed (the fast extra)")
    t.add_argument("--class-weight", default=None, metavar="balanced|LABEL=W,...",
                   help="weigh examples by label for imbalanced data: 'balanced' (examples / (labels x examples of the"
                        " label)) or LABEL=W pairs (others 1); default: every example once")
    t.add_argument("--json", action="store_true", help="print the held-out report as JSON")
    t.set_defaults(handler=run_train)

    e = sub.add_parser("eval", help="evaluate a classifier on labelled JSONL",
                       formatter_class=argparse.ArgumentDefaultsHelpFormatter)
    e.add_argument("model", help="model file (.thc)")
    e.add_argument("inputs", nargs="*", metavar="FILE", help="JSONL whose records carry their labels (--label-field)")
    _add_data_arguments(e, required=False)
    e.add_argument("--json", action="store_true", help="print the report as JSON")
    e.set_defaults(handler=run_eval)

    a = sub.add_parser("apply", help="annotate JSONL records with a classifier's scores (no filtering)",
                       formatter_class=argparse.ArgumentDefaultsHelpFormatter)
    a.add_argument("model", help="model file (.thc)")
    a.add_argument("inputs", nargs="+", metavar="FILE", help="JSONL input")
    a.add_argument("-o", "--output", default="-", help="JSONL output (- for stdout)")
    a.add_argument("--name", default=None, help="annotation name (default: the model file's stem)")
    a.add_argument("--text-field", default="text", help="record field holding the text")
    a.add_argument("--batch-size", type=int, default=1024, help="texts scored per batch")
    a.add_argument("--tokenizer-json", default=None, metavar="PATH",
                   help="for an ONNX model (.onnx, the onnx extra): its tokenizers tokenizer.json")
    a.add_argument("--max-len", type=int, default=256, help="ONNX models: tokens kept per text")
    a.set_defaults(handler=run_apply)
    p.set_defaults(handler=lambda args: _usage(p))


def _usage(parser: argparse.ArgumentParser) -> int:
    parser.print_help(sys.stderr)
    return 2


def _add_data_arguments(p: argparse.ArgumentParser, required: bool = True) -> None:
    p.add_argument("--label", action="append", default=[], metavar="FILE:LABEL",
                   help="every record of FILE has LABEL (repeat for each label)")
    if required:
        p.add_argument("--data", action="append", default=[], metavar="FILE",
                       help="JSONL whose records carry their labels in --label-field (repeatable)")
    p.add_argument("--text-field", default="text", help="record field holding the text")
    p.add_argument("--label-field", default="label", help="record field holding a label or a list of labels")


def _sources(args: argparse.Namespace, extra: list[str]) -> list[Any]:
    from thresher.classify.data import LabelledSource, parse_label_spec

    sources = [parse_label_spec(s) for s in args.label] + [LabelledSource(path, None) for path in extra]
    if not sources:
        raise InputError("no labelled data: give --label FILE:LABEL (or files whose records carry --label-field)")
    return sources


def _char_ngrams(text: str) -> tuple[int, int] | None:
    if text.strip().lower() in ("none", "off", "0", ""):
        return None
    lo, sep, hi = text.partition("-")
    try:
        return (int(lo), int(hi if sep else lo))
    except ValueError:
        raise ConfigError(f"--char-ngrams expects MIN-MAX (e.g. 2-5) or none, got {text!r}") from None


def run_train(args: argparse.Namespace) -> int:
    from thresher.classify import FeatureSpec, TrainConfig, train
    from thresher.classify.data import load_examples, split_examples
    from thresher.classify.format import save_model
    from thresher.classify.metrics import evaluate, render_report

    sources = _sources(args, args.data)
    try:
        spec = FeatureSpec(
            buckets=args.buckets,
            word_ngrams=args.word_ngrams,
            char_ngrams=_char_ngrams(args.char_ngrams),
            max_chars=args.max_chars,
            max_tokens=args.max_tokens,
            tokenizer=args.tokenizer,
        )
        config = TrainConfig(dim=args.dim, epochs=args.epochs, lr=args.lr, loss=args.loss, seed=args.seed,
                             trainer=args.trainer, class_weight=args.class_weight, features=spec)
    except ValueError as exc:
        raise ConfigError(str(exc)) from None
    examples = load_examples(sources, args.text_field, args.label_field)
    declared = [s.label for s in sources if s.label is not None]
    labels = list(dict.fromkeys(declared + sorted({lab for _, labs in examples for lab in labs} - set(declared))))
    train_part, held_out = split_examples(examples, labels, args.holdout, args.seed)
    t0 = time.process_time()
    model = train(train_part, config, labels=labels)
    seconds = time.process_time() - t0
    report = evaluate(model, held_out) if held_out else None
    if report is not None:  # the held-out calibration travels with the model (the build's report draws it)
        from thresher.classify.calibration import heldout_record

        model.info["heldout"] = heldout_record(report, args.holdout, args.seed)
    digest = save_model(model, args.output)
    counts = ", ".join(f"{lab} {n}" for lab, n in model.info["examples_per_label"].items())
    print(f"trained on {len(train_part)} examples ({counts}) in {seconds:.1f} CPU s ({model.info['trainer']} trainer); "
          f"wrote {args.output} (sha256 {digest[:16]}...)", file=sys.stderr)
    if report is not None:
        if args.json:
            print(json.dumps(report, indent=2))
        else:
            print(f"held out: {len(held_out)} examples ({args.holdout:g} of each label, seed {args.seed})")
            print(render_report(report))
    return 0


def run_eval(args: argparse.Namespace) -> int:
    from thresher.classify import load_model
    from thresher.classify.data import load_examples
    from thresher.classify.metrics import evaluate, render_report

    model = load_model(args.model)
    examples = load_examples(_sources(args, args.inputs), args.text_field, args.label_field)
    report = evaluate(model, examples)
    report["model"] = {"path": args.model, "sha256": model.sha256, "labels": list(model.labels)}
    print(json.dumps(report, indent=2) if args.json else render_report(report))
    return 0


def run_apply(args: argparse.Namespace) -> int:
    from thresher.classify import load_model
    from thresher.classify.stage import annotation_keys

    model: Any
    if args.model.endswith(".onnx"):
        from thresher.classify.transformer import OnnxClassifier

        if not args.tokenizer_json:
            raise ConfigError("an ONNX model needs --tokenizer-json PATH")
        model = OnnxClassifier(args.model, args.tokenizer_json, max_len=args.max_len)
    else:
        model = load_model(args.model)
    name = args.name or Path(args.model).stem
    keys = annotation_keys(name, model.labels)
    out = sys.stdout if args.output == "-" else open(args.output, "w", encoding="utf-8")  # noqa: SIM115
    n = 0
    try:
        for path in args.inputs:
            batch: list[dict[str, Any]] = []
            for record in _records(path):
                batch.append(record)
                if len(batch) >= args.batch_size:
                    n += _write_scored(out, model, keys, batch, args.text_field)
                    batch = []
            n += _write_scored(out, model, keys, batch, args.text_field)
    finally:
        if out is not sys.stdout:
            out.close()
    print(f"annotated {n} records with {', '.join(keys)}", file=sys.stderr)
    return 0


def _records(path: str) -> Any:
    from thresher.classify.data import json_records

    for _, record in json_records(path):
        yield record


def _write_scored(out: Any, model: Any, keys: list[str], batch: list[dict[str, Any]], text_field: str) -> int:
    if not batch:
        return 0
    texts = [r.get(text_field) if isinstance(r.get(text_field), str) else "" for r in batch]
    for record, scores in zip(batch, model.scores_batch(texts), strict=True):
        annotations = record.get("annotations")
        if not isinstance(annotations, dict):
            annotations = record["annotations"] = {}
        for key, score in zip(keys, scores, strict=True):
            annotations[key] = round(score, 4)
        out.write(json.dumps(record, ensure_ascii=False) + "\n")
    return len(batch)
