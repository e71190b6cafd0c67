"""What k-means costs SemDeDup, and what comparing across cluster boundaries wins back.

Every corpus is built with `thresher build` (local engine, quality filters off): once with MinHash
at Jaccard 0.8 (the default near dedup) as the peer, then with `--semantic-dedup` (MinHash off,
wordllama unless said) several ways: one cluster (every pair compared: the
reference), and k clusters with `semantic_margin` 0 (nearest centroid only: pairs split by a
boundary are never compared) and with margins 0.02 / 0.05 / 0.1 (a document within the margin of
its second-nearest centroid is compared there too). Pair precision / recall as in
benchmarks/embed_semdedup.py (a drop is correct when it and the document it names are in one true
group); each run's build CPU seconds and the rows the boundary added.

Corpora (../shared/data):
1. plagiarism: the short-answer plagiarism corpus (5 sources, 95 answers; cut/light/heavy
   revisions are their source's group), k = 4 and 8 (SemDeDup's one cluster per ~1,000 documents
   would put its 100 texts in one cluster, where nothing is split).
2. mixed: the 181 AEB article bodies, each with up to three variants (its sentences shuffled; the
   body inside a site template of header and footer lines; every 7th sentence dropped), one group
   per article, among 6,000 MSRP sentences as distractors that belong to no group; k as built
   (one cluster per ~1,000 documents).
3. msrp: the MSRP sentences alone as a corpus; the pairs found that MSRP labels, and which of its
   labelled paraphrase pairs are found (recall of labelled pairs; precision among labelled).

Usage: python benchmarks/embed_boundary.py [--encoder wordllama] [--only mixed,msrp] →
benchmarks/results/embed_boundary.json (with --only: the named sections replaced in it).
"""

from __future__ import annotations

import json
import random
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "src"))
sys.path.insert(0, str(ROOT / "benchmarks"))

from embed_semdedup import DATA, PLAG, build_and_read, evaluate, plagiarism_corpus  # noqa: E402

MARGINS = (0.0, 0.02, 0.05, 0.1)
THRESHOLD = 0.9


def msrp_sentences(limit: int | None = None) -> tuple[dict[str, str], list[tuple[int, str, str]]]:
    from embed_eval import msrp_sentences as read

    sentences, labelled = read()
    if limit is not None:
        keep = dict(list(sentences.items())[:limit])
        return keep, [(y, a, b) for y, a, b in labelled if a in keep and b in keep]
    return sentences, labelled


def mixed_corpus(distractors: int = 6000) -> tuple[list[dict], dict[str, str | None]]:
    """AEB bodies with templated and reworded variants, among MSRP sentences (records, name → group)."""
    rng = random.Random(0)
    articles = json.loads((DATA / "extraction" / "aeb" / "ground-truth.json").read_text())
    records: list[dict] = []
    group: dict[str, str | None] = {}

    def add(name: str, text: str, g: str | None) -> None:
        records.append({"url": f"https://mix.example/{name}", "text": " ".join(text.split())})
        group[name] = g

    for key in sorted(articles):
        body = articles[key]["articleBody"]
        sentences = [s for s in body.replace("\n", " ").split(". ") if s.strip()]
        if len(sentences) < 4:
            continue
        add(f"{key}-original", body, key)
        shuffled = list(sentences)
        rng.shuffle(shuffled)
        add(f"{key}-shuffled", ". ".join(shuffled), key)
        site = rng.choice(["Daily Courier", "Metro Post", "The Ledger"])
        add(f"{key}-templated", f"{site} | Home | News | Sport | Opinion\n{body}\nShare this story. "
                                f"Sign up for the {site} newsletter. (c) {site} all rights reserved.", key)
        add(f"{key}-abridged", ". ".join(s for i, s in enumerate(sentences) if i % 7 != 3), key)
    sentences, _ = msrp_sentences()
    for sid, text in list(sentences.items())[:distractors]:
        add(f"msrp-{sid}", text, None)
    rng.shuffle(records)
    return records, group


def runs(records: list[dict], tmp: Path, name: str, clusters: list[int], encoder: str) -> dict:
    """The drops of each configuration: one cluster, then each k with each margin."""
    drops, cpu = build_and_read(records, tmp, f"{name}-minhash", {})  # the default near dedup, Jaccard 0.8
    out = {"minhash_0.8": {"drops": drops, "build_cpu_s": round(cpu, 2), "semantic": {}}}
    configs = [("k=1", {"semantic_clusters": 1, "semantic_margin": 0.0})]
    for k in clusters:
        configs += [
            (f"k={k or 'auto'},margin={m}", {"semantic_clusters": k or None, "semantic_margin": m}) for m in MARGINS
        ]
    for label, embed in configs:
        cfg = {"dedup": {"near": {"method": None}},
               "embed": {"encoder": encoder, "semantic_threshold": THRESHOLD, "device": "cpu", **embed}}
        drops, cpu, section = build_and_read(records, tmp, f"{name}-{label}", cfg, with_section=True)
        out[label] = {"drops": drops, "build_cpu_s": round(cpu, 2), "semantic": section["semantic_dedup"]}
    return out


def summary(result: dict, score) -> dict:  # noqa: ANN001 - score(drops) -> dict
    table = {}
    for label, r in result.items():
        sem = r["semantic"]
        table[label] = {**score(r["drops"]), "build_cpu_s": r["build_cpu_s"]}
        if sem:
            table[label].update(
                clusters=sem["clusters"],
                boundary_rows=sem.get("boundary_rows", 0),
                boundary_duplicates=sem.get("boundary_duplicates", 0),
                reattributed=sem.get("reattributed", 0),
                largest_cluster=sem["largest_cluster"],
            )
    return table


def msrp_score(labelled: list[tuple[int, str, str]]):  # noqa: ANN201
    label = {frozenset((a, b)): y for y, a, b in labelled}
    positives = sum(1 for y in label.values() if y)

    def score(drops: list[tuple[str, str]]) -> dict:
        found = {frozenset((a.removeprefix("msrp-"), b.removeprefix("msrp-"))) for a, b in drops}
        known = [label[p] for p in found if p in label]
        return {"drops": len(drops), "found_pairs_msrp_labels": len(known),
                "labelled_precision": round(sum(known) / len(known), 4) if known else None,
                "labelled_paraphrase_recall": round(sum(known) / positives, 4)}

    return score


def main() -> int:
    import warnings

    warnings.filterwarnings("ignore")
    encoder = sys.argv[sys.argv.index("--encoder") + 1] if "--encoder" in sys.argv else "wordllama"
    if not PLAG.is_dir() or not (DATA / "reuse" / "msrp").is_dir():
        print("the reuse corpora are not under ../shared/data/reuse", file=sys.stderr)
        return 1
    t = time.process_time()
    results: dict = {"machine": "2 shared cores, CPU only; build CPU s = process time of the build", "encoder": encoder,
                     "threshold": THRESHOLD}
    only = (
        sys.argv[sys.argv.index("--only") + 1].split(",") if "--only" in sys.argv else ["plagiarism", "mixed", "msrp"]
    )
    out = ROOT / "benchmarks" / "results" / f"embed_boundary{'' if encoder == 'wordllama' else '_' + encoder}.json"
    if "--only" in sys.argv and out.exists():
        results = {**json.loads(out.read_text()), **results}
    with tempfile.TemporaryDirectory() as tmp_name:
        tmp = Path(tmp_name)
        records, group = plagiarism_corpus()
        grades = {r["url"].rsplit("/", 1)[1]: r["grade"] for r in records}
        if "plagiarism" in only:
            results["plagiarism"] = summary(runs(records, tmp / "plag", "plag", [4, 8], encoder),
                                            lambda d: evaluate(d, group, grades))
        records, group = mixed_corpus()
        kinds = {name: name.rsplit("-", 1)[1] if group[name] else "distractor" for name in group}

        def mixed_score(drops: list[tuple[str, str]]) -> dict:
            # MSRP distractors hold real paraphrase pairs of their own, which `precision` counts as
            # wrong; among the drops of an article or its variant, precision is the article's own
            articles = [(a, b) for a, b in drops if group[a]]
            correct = sum(1 for a, b in articles if group[a] == group[b])
            return {**evaluate(drops, group, kinds), "article_drops": len(articles),
                    "article_precision": round(correct / len(articles), 4) if articles else None,
                    "distractor_drops": len(drops) - len(articles)}

        if "mixed" in only:
            results["mixed"] = {"documents": len(records), "groups": len({g for g in group.values() if g}),
                                **summary(runs(records, tmp / "mix", "mix", [0], encoder), mixed_score)}
        if "msrp" in only:
            sentences, labelled = msrp_sentences()
            msrp = [{"url": f"https://msrp.example/msrp-{sid}", "text": text} for sid, text in sentences.items()]
            results["msrp"] = {"documents": len(msrp),
                               **summary(runs(msrp, tmp / "msrp", "msrp", [0], encoder), msrp_score(labelled))}
    results[f"cpu_s_{'+'.join(only)}"] = round(time.process_time() - t, 1)
    out.write_text(json.dumps(results, indent=2) + "\n")
    print(json.dumps(results, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
