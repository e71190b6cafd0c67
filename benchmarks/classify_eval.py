"""thresher's linear classifier against fastText and scikit-learn (TF-IDF + logistic regression), in
one run, on the same seeded splits and the same token streams.

Tasks:
- toxicity: ../shared/data/toxicity/davidson-hate-offensive (24,783 tweets), 3 classes (hate,
  offensive, neither) and toxic-vs-neither; seeded stratified 80/20 split.
- language gate "en vs other" (the seed's domain gate): lingua sentences of 75 languages, 80/20 per
  language; evaluated on held-out sentences and on English paragraphs and code blocks of tech
  blogs from the readability test pages (../shared/data/extraction/readability).
- content vs boilerplate: the `with` / `without` snippets of ../shared/data/extraction/trafilatura-eval,
  pages split 50/50; ROC AUC of the content score against the builtin extractor's own decision.
- training speed: 100k short texts (the tweets, repeated) on one core.
- the statistical gate's keep rate on prose in 75 languages.

Measured with CPU time (`time.process_time`): training time, and predictions per CPU second as
medians of interleaved repeats. thresher: the build's classifier stage on Documents, in the scan
loop's batches (`evaluate_batch`, NumPy + SciPy) and one document at a time (`evaluate`, pure
Python), and `scores_batch` (`classify apply`/`eval`); fastText per call (`FastText.f.predict`, the
C++ call under its Python wrapper) with the shared tokenization timed, on lines tokenized
beforehand, and per list (`multilinePredict`). fastText is the `fasttext-wheel` package (training
needs it; predict-only builds such as `fasttext-predict` are skipped: put a `fasttext-wheel` install
first on PYTHONPATH).

    python benchmarks/classify_eval.py [--repeats 3]    # writes benchmarks/results/classify_eval.json
"""

from __future__ import annotations

import argparse
import csv
import gc
import gzip
import json
import platform
import random
import statistics
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
DATA = ROOT.parent / "shared" / "data"
RESULTS = ROOT / "benchmarks" / "results" / "classify_eval.json"
sys.path.insert(0, str(ROOT / "src"))

from thresher.classify import train  # noqa: E402
from thresher.classify.config import ClassifierPlan  # noqa: E402
from thresher.classify.features import FeatureExtractor, FeatureSpec  # noqa: E402
from thresher.classify.metrics import evaluate_scores  # noqa: E402
from thresher.classify.stage import Classifier  # noqa: E402
from thresher.config import RunConfig  # noqa: E402
from thresher.core.document import Document  # noqa: E402
from thresher.core.stages import Evaluation, stage_runner  # noqa: E402
from thresher.pipeline import BATCH_DOCS, DocumentChain  # noqa: E402

Example = tuple[str, str]
TECH_PAGES = ("001", "002", "dropbox-blog", "lazy-image-1", "mathjax", "gitlab-blog", "ietf-1",
              "firefox-nightly-blog", "google-sre-book-1", "blogger", "links-in-tables", "lwn-1")


def cpu(fn: Callable[[], Any]) -> tuple[Any, float]:
    """`fn()` and its CPU seconds, timed from a freshly collected heap: a full (generation 2)
    garbage collection traverses every live object of the process (the data sets, the peers'
    models), so one that falls inside a measurement charges it to whichever peer allocated last
    (it moved a build-stage measurement up to 3x). Collections of the objects a measurement makes
    itself still count."""
    gc.collect()
    t0 = time.process_time()
    out = fn()
    return out, time.process_time() - t0


def stage_chain(stage: Any) -> DocumentChain:
    """A `DocumentChain` holding `stage` alone. Its `run_batch` is what the scan loop calls on each
    batch of `BATCH_DOCS` documents: the stage's `evaluate_batch`, then the annotations written to
    each document and its outcome (the drop) recorded. thresher's stage and fastText's both run
    through it."""
    chain = DocumentChain(RunConfig())
    chain.stages = [stage]
    chain.runners = [(stage.name, stage_runner(stage), False)]
    chain.batch_stages = [stage]
    return chain


def run_build(chain: DocumentChain, docs: Sequence[Document]) -> None:
    for i in range(0, len(docs), BATCH_DOCS):
        chain.run_batch(docs[i : i + BATCH_DOCS])


def fresh_docs(texts: Sequence[str]) -> list[Document]:
    """New documents (no annotations yet), as the scan loop hands each batch its own."""
    return [Document(id=str(i), text=t, ordinal=i) for i, t in enumerate(texts)]


def split(examples: Sequence[Example], holdout: float, seed: int) -> tuple[list[Example], list[Example]]:
    by_label: dict[str, list[int]] = {}
    for i, (_, label) in enumerate(examples):
        by_label.setdefault(label, []).append(i)
    rng = random.Random(seed)
    held: set[int] = set()
    for label in sorted(by_label):
        members = by_label[label]
        rng.shuffle(members)
        held.update(members[: round(len(members) * holdout)])
    return [e for i, e in enumerate(examples) if i not in held], [e for i, e in enumerate(examples) if i in held]


# -- peers -----------------------------------------------------------------------------------------

def fasttext_module() -> Any:
    try:
        import fasttext
    except ImportError:
        return None
    return fasttext if hasattr(fasttext, "train_supervised") else None


class Peer:
    name = ""

    def fit(self, examples: Sequence[Example]) -> None: ...
    def scores(self, texts: Sequence[str]) -> list[list[float]]: ...
    def per_text(self, texts: Sequence[str]) -> None: ...


class Thresher(Peer):
    name = "thresher"

    def __init__(self, labels: Sequence[str], **options: Any) -> None:
        self.labels, self.options = tuple(labels), options

    def fit(self, examples: Sequence[Example]) -> None:
        self.model = train(examples, labels=self.labels, **self.options)

    def scores(self, texts: Sequence[str]) -> list[list[float]]:
        out: list[list[float]] = []
        for i in range(0, len(texts), 1024):
            out += self.model.scores_batch(texts[i : i + 1024])
        return out

    def per_text(self, texts: Sequence[str]) -> None:
        score = self.model.score_list
        for t in texts:
            score(t)

    def stage(self) -> Classifier:
        """The build's classifier stage for this model (keep the first label at 0.5)."""
        return Classifier(ClassifierPlan(name="m", path="", keep=(self.labels[0],), min_score=0.5), self.model)

    def build_per_document(self, docs: Sequence[Document]) -> None:
        evaluate = self.stage().evaluate
        for doc in docs:
            evaluate(doc)


class FastText(Peer):
    name = "fasttext"

    def __init__(self, labels: Sequence[str], prep: Callable[[str], str], **options: Any) -> None:
        self.labels, self.prep, self.options = tuple(labels), prep, options

    def fit(self, examples: Sequence[Example]) -> None:
        ft = fasttext_module()
        with tempfile.NamedTemporaryFile("w", suffix=".txt", delete=False, encoding="utf-8") as f:
            for text, label in examples:
                f.write(f"__label__{label} {self.prep(text)}\n")
        self.model = ft.train_supervised(f.name, thread=1, verbose=0, **self.options)
        Path(f.name).unlink()

    def _lines(self, texts: Sequence[str]) -> list[str]:
        return [self.prep(t) + "\n" for t in texts]

    def scores(self, texts: Sequence[str]) -> list[list[float]]:
        out = []
        predict = self.model.f.predict
        for pairs in (predict(line, -1, 0.0, "strict") for line in self._lines(texts)):
            got = {label.replace("__label__", ""): p for p, label in pairs}
            out.append([got.get(lab, 0.0) for lab in self.labels])
        return out

    def per_text(self, texts: Sequence[str]) -> None:
        predict = self.model.f.predict
        for line in self._lines(texts):
            predict(line, -1, 0.0, "strict")

    def stage(self, decide: Any) -> FastTextStage:
        return FastTextStage(self, decide)

    def per_line(self, lines: Sequence[str]) -> None:
        """The C++ call alone, on lines tokenized beforehand (outside the timing)."""
        predict = self.model.f.predict
        for line in lines:
            predict(line, -1, 0.0, "strict")

    def batch(self, texts: Sequence[str]) -> None:
        self.model.f.multilinePredict(self._lines(texts), -1, 0.0, "strict")


class FastTextStage:
    """fastText as a classifier stage of this build: the same protocol as thresher's stage
    (`pipeline.BatchEvaluator`), on the same tokens, with the same decisions. Per document: the
    shared tokenization and the C++ predict call, its (probability, label) pairs put in label
    order; per batch: the scores as one array and thresher's vectorised decision
    (`Classifier.decide_batch`: rounded annotations, drops)."""

    name = "classify"

    def __init__(self, peer: FastText, decide: Classifier) -> None:
        self.predict, self.prep, self.decide = peer.model.f.predict, peer.prep, decide
        self.position = {"__label__" + lab: i for i, lab in enumerate(peer.labels)}
        self.annotates = decide.annotates

    def evaluate(self, doc: Document) -> Evaluation:
        return self.evaluate_batch([doc])[0]

    def check_all(self, doc: Document) -> list[Any]:
        return self.evaluate(doc).drops

    def evaluate_batch(self, docs: Sequence[Document]) -> list[Evaluation]:
        import numpy as np

        predict, prep, position = self.predict, self.prep, self.position
        rows = []
        for doc in docs:
            row = [0.0] * len(position)
            for p, label in predict(prep(doc.text) + "\n", -1, 0.0, "strict"):
                row[position[label]] = p
            rows.append(row)
        return self.decide.decide_batch(np.array(rows, dtype=np.float64).reshape(len(docs), len(position)))


class TfidfLogistic(Peer):
    name = "sklearn_tfidf_lr"

    def __init__(self, labels: Sequence[str], prep: Callable[[str], str], ngrams: tuple[int, int] = (1, 2),
                 analyzer: str = "word", class_weight: str | None = None) -> None:
        self.labels, self.prep, self.ngrams, self.analyzer = tuple(labels), prep, ngrams, analyzer
        self.class_weight = class_weight

    def fit(self, examples: Sequence[Example]) -> None:
        from sklearn.feature_extraction.text import TfidfVectorizer
        from sklearn.linear_model import LogisticRegression

        self.vec = TfidfVectorizer(ngram_range=self.ngrams, analyzer=self.analyzer, token_pattern=r"\S+",
                                   sublinear_tf=True, min_df=1)
        x = self.vec.fit_transform([self.prep(t) for t, _ in examples])
        self.clf = LogisticRegression(max_iter=2000, C=10.0, class_weight=self.class_weight)
        self.clf.fit(x, [lab for _, lab in examples])

    def scores(self, texts: Sequence[str]) -> list[list[float]]:
        probs = self.clf.predict_proba(self.vec.transform([self.prep(t) for t in texts]))
        order = [list(self.clf.classes_).index(lab) for lab in self.labels]
        return [[row[i] for i in order] for row in probs.tolist()]

    def per_text(self, texts: Sequence[str]) -> None:
        self.scores(texts)


def run_task(name: str, labels: Sequence[str], train_set: Sequence[Example], test_set: Sequence[Example],
             peers: list[Peer], repeats: int, loss: str = "softmax") -> dict[str, Any]:
    texts = [t for t, _ in test_set]
    gold = [(lab,) for _, lab in test_set]
    out: dict[str, Any] = {"train": len(train_set), "test": len(test_set), "peers": {}}
    for peer in peers:
        _, seconds = cpu(lambda peer=peer: peer.fit(train_set))
        report = evaluate_scores(labels, loss if peer.name == "thresher" else "softmax", peer.scores(texts), gold)
        out["peers"][peer.name] = {
            "train_cpu_s": round(seconds, 3),
            "macro_f1": round(report["macro_f1"], 4),
            "weighted_f1": round(report["weighted_f1"], 4),
            "accuracy": round(report["accuracy"], 4),
            "per_label": {
                lab: {k: round(v[k], 4) for k in ("precision", "recall", "f1")}
                | {"roc_auc": v["roc_auc"] and round(v["roc_auc"], 4)}
                for lab, v in report["labels"].items()
            },
        }
    # predictions per CPU second, interleaved repeats (every peer once per round), medians
    # "build_*": the build's classifier stage on Documents (batches as the scan loop makes them, or
    # one `evaluate` per document), annotations and drops included; fastText per call on the same
    # token stream (its tokenization timed: a build would pay it), and on lines tokenized beforehand
    speeds: dict[str, list[float]] = {}
    thresher = next(p for p in peers if isinstance(p, Thresher))
    thresher_chain = stage_chain(thresher.stage())
    fasttext_chain = next((stage_chain(p.stage(thresher.stage())) for p in peers if isinstance(p, FastText)), None)

    def build(chain: DocumentChain) -> float:  # predictions per CPU second of a build stage
        docs = fresh_docs(texts)
        return len(texts) / cpu(lambda: run_build(chain, docs))[1]

    # the benchmark's own data (data sets, splits, the peers' training leftovers) is frozen out of the
    # garbage collector, as a build worker holds none of it: a full collection over it cost ~50 ms,
    # ~4 us a document a pass, whichever peer triggered it. The peers' caches and what the measured
    # calls allocate stay collected, as in a build.
    gc.collect()
    gc.freeze()
    for peer in peers:  # one untimed pass: warm caches for every peer
        peer.scores(texts)
    for chain in (thresher_chain, fasttext_chain):
        if chain is not None:
            build(chain)
    for _ in range(repeats):
        for peer in peers:
            if isinstance(peer, Thresher):
                speeds.setdefault("thresher_build_batches", []).append(build(thresher_chain))
                docs = fresh_docs(texts)
                speeds.setdefault("thresher_build_per_document", []).append(
                    len(texts) / cpu(lambda p=peer, d=docs: p.build_per_document(d))[1]
                )
                speeds.setdefault("thresher_batch_numpy", []).append(
                    len(texts) / cpu(lambda p=peer: p.scores(texts))[1]
                )
            elif isinstance(peer, FastText) and fasttext_chain is not None:
                speeds.setdefault("fasttext_per_call", []).append(len(texts) / cpu(lambda p=peer: p.per_text(texts))[1])
                speeds.setdefault("fasttext_build_per_call", []).append(build(fasttext_chain))
                lines = peer._lines(texts)
                speeds.setdefault("fasttext_per_call_pretokenized", []).append(
                    len(texts) / cpu(lambda p=peer, ls=lines: p.per_line(ls))[1]
                )
                speeds.setdefault("fasttext_list", []).append(len(texts) / cpu(lambda p=peer: p.batch(texts))[1])
            else:
                speeds.setdefault(peer.name + "_batch", []).append(len(texts) / cpu(lambda p=peer: p.scores(texts))[1])
    gc.unfreeze()
    out["predictions_per_cpu_s"] = {k: round(statistics.median(v)) for k, v in speeds.items()}
    if "fasttext_per_call" in out["predictions_per_cpu_s"]:
        ft = out["predictions_per_cpu_s"]["fasttext_per_call"]
        out["speed_vs_fasttext_per_call"] = {k: round(v / ft, 3) for k, v in out["predictions_per_cpu_s"].items()}
        # the ratio of each interleaved round, then the median (the box is shared: rounds drift)
        for base in ("fasttext_per_call", "fasttext_per_call_pretokenized", "fasttext_build_per_call"):
            out[f"build_batches_vs_{base}_median_of_round_ratios"] = round(statistics.median(
                a / b for a, b in zip(speeds["thresher_build_batches"], speeds[base], strict=True)), 3)
    print(name, json.dumps({k: v for k, v in out.items() if k != "peers"}),
          {p: (v["macro_f1"], v["weighted_f1"], v["train_cpu_s"]) for p, v in out["peers"].items()}, flush=True)
    return out


def make_peers(labels: Sequence[str], prep: Callable[[str], str], thresher_options: dict[str, Any],
               fasttext_options: dict[str, Any], sklearn_options: dict[str, Any]) -> list[Peer]:
    peers: list[Peer] = [Thresher(labels, **thresher_options)]
    if fasttext_module() is not None:
        peers.append(FastText(labels, prep, **fasttext_options))
    try:
        import sklearn  # noqa: F401

        peers.append(TfidfLogistic(labels, prep, **sklearn_options))
    except ImportError:
        pass
    return peers


# -- data ------------------------------------------------------------------------------------------

def davidson() -> list[Example]:
    names = {"0": "hate", "1": "offensive", "2": "neither"}
    path = DATA / "toxicity" / "davidson-hate-offensive" / "labeled_data.csv"
    with open(path, encoding="utf-8", newline="") as f:
        return [(row["tweet"], names[row["class"]]) for row in csv.DictReader(f)]


def lingua_sentences() -> list[tuple[str, str]]:
    out = []
    for path in sorted((DATA / "language" / "lingua" / "sentences").glob("*.txt")):
        for line in path.read_text(encoding="utf-8").splitlines():
            if line.strip():
                out.append((line.strip(), path.stem))
    return out


class _Blocks(HTMLParser):
    """Text of each <p>, <li> and <pre> block, with whether it is code (<pre>, or mostly <code>)."""

    def __init__(self) -> None:
        super().__init__()
        self.blocks: list[tuple[str, bool]] = []
        self.stack: list[str] = []
        self.parts: list[str] = []
        self.code_chars = 0

    def handle_starttag(self, tag: str, attrs: Any) -> None:
        if tag in ("p", "li", "pre") and not self.stack:
            self.parts, self.code_chars = [], 0
        self.stack.append(tag)

    def handle_endtag(self, tag: str) -> None:
        if tag in self.stack:
            while self.stack and self.stack.pop() != tag:
                pass
        if tag in ("p", "li", "pre") and not any(t in ("p", "li", "pre") for t in self.stack):
            text = " ".join("".join(self.parts).split())
            if len(text) >= 40:
                self.blocks.append((text, tag == "pre" or self.code_chars > len(text) / 2))
            self.parts, self.code_chars = [], 0

    def handle_data(self, data: str) -> None:
        if any(t in ("p", "li", "pre") for t in self.stack):
            self.parts.append(data)
            if "code" in self.stack or "pre" in self.stack:
                self.code_chars += len(data)


def tech_blocks() -> list[tuple[str, bool]]:
    blocks: list[tuple[str, bool]] = []
    for page in TECH_PAGES:
        path = DATA / "extraction" / "readability" / page / "expected.html.gz"
        if path.exists():
            parser = _Blocks()
            parser.feed(gzip.decompress(path.read_bytes()).decode("utf-8", "replace"))
            blocks += parser.blocks
    return blocks


# -- tasks -----------------------------------------------------------------------------------------

def toxicity(repeats: int, prep: Callable[[str], str]) -> dict[str, Any]:
    data = davidson()
    out = {}
    common_t = {"epochs": 5, "lr": 0.5, "word_ngrams": 2, "dim": 16, "buckets": 1 << 20}
    common_f = {"epoch": 5, "lr": 0.5, "wordNgrams": 2, "dim": 16, "bucket": 1 << 20, "minn": 0, "maxn": 0}
    for task, mapping in (("toxicity_3class", None), ("toxic_vs_neither", {"hate": "toxic", "offensive": "toxic"})):
        examples = [(t, mapping.get(lab, lab) if mapping else lab) for t, lab in data]
        labels = ("hate", "offensive", "neither") if mapping is None else ("toxic", "neither")
        train_set, test_set = split(examples, 0.2, seed=0)
        peers = make_peers(labels, prep, common_t, common_f, {"ngrams": (1, 2)})
        out[task] = run_task(task, labels, train_set, test_set, peers, repeats)
    return out


def class_weights(prep: Callable[[str], str]) -> dict[str, Any]:
    """Davidson 3 classes, same split: unweighted against `class_weight="balanced"` (thresher, and
    scikit-learn's logistic regression with its own balanced weights; fastText has no class weights)."""
    data = davidson()
    train_set, test_set = split(data, 0.2, seed=0)
    labels = ("hate", "offensive", "neither")
    texts, gold = [t for t, _ in test_set], [(lab,) for _, lab in test_set]
    out: dict[str, Any] = {}
    common = {"epochs": 5, "lr": 0.5, "word_ngrams": 2, "dim": 16, "buckets": 1 << 20}
    peers: list[tuple[str, Peer]] = [("thresher", Thresher(labels, **common)),
                                     ("thresher_balanced", Thresher(labels, **common, class_weight="balanced"))]
    try:
        import sklearn  # noqa: F401

        peers += [("sklearn_tfidf_lr", TfidfLogistic(labels, prep)),
                  ("sklearn_tfidf_lr_balanced", TfidfLogistic(labels, prep, class_weight="balanced"))]
    except ImportError:
        pass
    for name, peer in peers:
        peer.fit(train_set)
        report = evaluate_scores(labels, "softmax", peer.scores(texts), gold)
        hate = report["labels"]["hate"]
        out[name] = {"macro_f1": round(report["macro_f1"], 4), "weighted_f1": round(report["weighted_f1"], 4),
                     "hate_precision": round(hate["precision"], 4), "hate_recall": round(hate["recall"], 4),
                     "hate_ece": round(hate["ece"], 4)}
        print("class weights", name, out[name], flush=True)
    return out


def language_gate(repeats: int, prep: Callable[[str], str]) -> dict[str, Any]:
    sentences = [(t, "en" if lang == "en" else "other") for t, lang in lingua_sentences()]
    train_set, test_set = split(sentences, 0.2, seed=0)
    labels = ("en", "other")
    t_opts = {"epochs": 5, "lr": 0.5, "word_ngrams": 2, "dim": 16, "char_ngrams": (2, 4), "loss": "ova"}
    f_opts = {"epoch": 5, "lr": 0.5, "wordNgrams": 2, "dim": 16, "minn": 2, "maxn": 4, "loss": "ova", "bucket": 1 << 20}
    peers = make_peers(labels, prep, t_opts, f_opts, {"ngrams": (2, 4), "analyzer": "char_wb"})
    out = run_task("lang_en_vs_other", labels, train_set, test_set, peers, repeats, loss="ova")
    blocks = tech_blocks()
    out["tech_blog_blocks"] = {"blocks": len(blocks), "code_blocks": sum(1 for _, c in blocks if c), "recall_en": {}}
    for peer in peers:
        scores = peer.scores([t for t, _ in blocks])
        for kind, want in (("prose", False), ("code", True)):
            picked = [s for s, (_, c) in zip(scores, blocks, strict=True) if c == want]
            if picked:
                out["tech_blog_blocks"]["recall_en"].setdefault(peer.name, {})[kind] = round(
                    sum(1 for s in picked if s[0] >= s[1]) / len(picked), 4)
    print("tech blocks", out["tech_blog_blocks"], flush=True)
    return out


def boilerplate(repeats: int, prep: Callable[[str], str]) -> dict[str, Any]:
    """Content vs boilerplate snippets of the trafilatura evaluation pages (`with`: must appear in
    the main text, `without`: must not), pages split 50/50 with a seed. AUC of each classifier's
    content score, against the builtin extractor's own decision (1 when the snippet is in its
    output, else 0) on the same test pages."""
    from thresher.classify.metrics import roc_auc
    from thresher.extract.config import ExtractConfig
    from thresher.extract.registry import get_extractor
    from thresher.read.decode import decode_html

    root = DATA / "extraction" / "trafilatura-eval"
    pages = sorted(json.loads((root / "evaldata.json").read_text(encoding="utf-8")).items())
    random.Random(0).shuffle(pages)
    half = len(pages) // 2

    def snippets(part: list[tuple[str, Any]]) -> list[Example]:
        return [(text, label) for _, entry in part for label, key in (("content", "with"), ("boilerplate", "without"))
                for text in entry.get(key, []) if text.strip()]

    train_set, test_set = snippets(pages[:half]), snippets(pages[half:])
    labels = ("content", "boilerplate")
    t_opts = {"epochs": 5, "lr": 0.5, "word_ngrams": 2, "dim": 16, "char_ngrams": (2, 4)}
    f_opts = {"epoch": 5, "lr": 0.5, "wordNgrams": 2, "dim": 16, "minn": 2, "maxn": 4, "bucket": 1 << 20}
    peers = make_peers(labels, prep, t_opts, f_opts, {"ngrams": (1, 2)})
    out = run_task("content_vs_boilerplate", labels, train_set, test_set, peers, repeats)
    positive = [lab == "content" for _, lab in test_set]
    out["roc_auc_content"] = {}
    for peer in peers:
        out["roc_auc_content"][peer.name] = round(
            roc_auc([s[0] for s in peer.scores([t for t, _ in test_set])], positive) or 0.0, 4
        )
    extractor = get_extractor(ExtractConfig())
    kept: list[float] = []
    seconds = 0.0
    for url, entry in pages[half:]:
        path = root / "pages" / (entry["file"] + ".gz")
        text = ""
        if path.exists():
            html = decode_html(gzip.decompress(path.read_bytes()))[0]
            extraction, sec = cpu(lambda html=html, url=url: extractor.extract(html, url))
            seconds += sec
            text = " ".join(extraction.text.split())
        for key in ("with", "without"):  # the order `snippets` lists them in
            for snippet in entry.get(key, []):
                if snippet.strip():
                    kept.append(1.0 if " ".join(snippet.split()) in text else 0.0)
    out["roc_auc_content"]["builtin_extractor_decision"] = round(roc_auc(kept, positive) or 0.0, 4)
    out["builtin_extractor_cpu_s"] = round(seconds, 2)
    print("boilerplate AUC", out["roc_auc_content"], flush=True)
    return out


def training_speed(repeats: int = 1) -> dict[str, Any]:
    """100k tweets (the Davidson set repeated), 5 epochs, word bigrams, dim 16, on one core: the
    NumPy and the pure-Python trainer (which must write the same bytes) and fastText, interleaved
    `repeats` times; CPU seconds, medians."""
    import hashlib

    from thresher.classify.format import dump_model

    data = davidson()
    texts = (data * 5)[:100_000]
    out: dict[str, Any] = {"examples": len(texts), "epochs": 5, "repeats": repeats}
    seconds: dict[str, list[float]] = {}
    digests: dict[str, set[str]] = {}
    ft = fasttext_module()
    ft_path = None
    if ft is not None:
        with tempfile.NamedTemporaryFile("w", suffix=".txt", delete=False, encoding="utf-8") as f:
            for t, lab in texts:
                f.write(f"__label__{lab} {' '.join(t.split())}\n")
        ft_path = f.name
    for _ in range(repeats):
        for trainer in ("numpy", "python"):
            model, sec = cpu(lambda trainer=trainer: train(texts, epochs=5, word_ngrams=2, trainer=trainer))
            seconds.setdefault(f"{trainer}_trainer_cpu_s", []).append(sec)
            digests.setdefault(trainer, set()).add(hashlib.sha256(dump_model(model)).hexdigest())
            print("train 100k", trainer, round(sec, 2), flush=True)
        if ft_path is not None:
            _, sec = cpu(lambda: ft.train_supervised(ft_path, epoch=5, wordNgrams=2, dim=16, thread=1, verbose=0))
            seconds.setdefault("fasttext_cpu_s", []).append(sec)
    if ft_path is not None:
        Path(ft_path).unlink()
    out |= {k: round(statistics.median(v), 2) for k, v in seconds.items()}
    out["runs_cpu_s"] = {k: [round(x, 2) for x in v] for k, v in seconds.items()}
    out["model_sha256"] = {k: sorted(v) for k, v in digests.items()}
    # reproducible (one digest per trainer over the repeats) and the same bytes from both trainers
    out["same_bytes_every_run_and_trainer"] = len(digests["numpy"] | digests["python"]) == 1
    return out


def statistical_gate() -> dict[str, Any]:
    sys.path.insert(0, str(ROOT / "tests" / "unit" / "quality"))
    from test_quality_languages import keep_rates

    from thresher.quality.config import QualityConfig

    rates = keep_rates(DATA / "language" / "lingua" / "sentences", QualityConfig(rule_sets=("statistical",)))
    return {"min_keep_rate": round(min(k / n for k, n in rates.values()), 4),
            "mean_keep_rate": round(sum(k / n for k, n in rates.values()) / len(rates), 4),
            "languages": len(rates),
            "lowest": sorted(((lang, round(k / n, 4)) for lang, (k, n) in rates.items()), key=lambda x: x[1])[:5]}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--train-repeats", type=int, default=1, help="interleaved rounds of the 100k training run")
    parser.add_argument(
        "--only", default=None, help="run one part: toxicity, lang, boilerplate, training, weights, statistical"
    )
    args = parser.parse_args()
    extractor = FeatureExtractor(FeatureSpec())

    def prep(text: str) -> str:  # the same token stream for every peer: thresher's tokens, lowercased
        return " ".join(extractor.tokens(text))

    results: dict[str, Any] = json.loads(RESULTS.read_text()) if RESULTS.exists() and args.only else {}
    results["machine"] = {"python": platform.python_version(), "cpu_count_note": "2 cores shared by several agents"}
    if fasttext_module() is None:
        results["fasttext"] = "not measured: fasttext-wheel (with train_supervised) is not importable"
    parts = {"toxicity": lambda: results.update(toxicity(args.repeats, prep)),
             "lang": lambda: results.update({"lang_en_vs_other": language_gate(args.repeats, prep)}),
             "boilerplate": lambda: results.update({"content_vs_boilerplate": boilerplate(args.repeats, prep)}),
             "training": lambda: results.update({"training_100k": training_speed(args.train_repeats)}),
             "weights": lambda: results.update({"class_weights_davidson": class_weights(prep)}),
             "statistical": lambda: results.update({"statistical_gate": statistical_gate()})}
    for name, run in parts.items():
        if args.only in (None, name):
            run()
    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    RESULTS.write_text(json.dumps(results, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
