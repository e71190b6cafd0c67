"""The example plugins in examples/plugins/ work: each package is installed with pip (no index, no
build isolation: setuptools from this environment) into one target folder, and builds select
every plugin by name: the CSV reader, the alltext extractor, the caps rule set, the words
classifier kind, the chargram encoder, the TSV format and the shuffle engine. The assertions are on
what the plugins did: the documents and their text, the drops and whom they are attributed to, the
scores, the vectors, the shard bytes (the shuffle engine's equal the local engine's)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SRC = ROOT / "src"
EXAMPLES = ROOT / "examples" / "plugins"
PACKAGES = {  # folder -> (entry-point group, name)
    "reader-csv": ("thresher.readers", "csv"),
    "extractor-alltext": ("thresher.extractors", "alltext"),
    "rules-caps": ("thresher.stages", "caps"),
    "classifier-words": ("thresher.classifiers", "words"),
    "encoder-chargram": ("thresher.encoders", "chargram"),
    "format-tsv": ("thresher.formats", "tsv"),
    "engine-shuffle": ("thresher.engines", "shuffle"),
}

pytest.importorskip("numpy")  # the classifier and the encoder examples need it
pytest.importorskip("setuptools")  # builds the examples' wheels, offline


def page(title: str, body: str) -> str:
    return (f"<html><head><title>{title}</title><style>p {{ color: red }}</style></head><body>"
            f"<nav><a href='/'>Home</a></nav>{body}<script>var tags = 'flour oven simmer';</script></body></html>")


BREAD = page("Bread", "<h1>Country bread</h1><p>Mix the flour with water and salt, knead the dough, "
                      "then bake it in a hot oven.</p><p>This recipe makes one loaf.</p>")
SOUP = page("Soup", "<p>Simmer the onions slowly, add stock and simmer again.</p><ul><li>onions</li>"
                    "<li>stock</li></ul>")
SHOUT = page("Deal", "<p>" + "BUY THIS OVEN NOW, THE BEST RECIPE BOOK AND FLOUR DEAL EVER. " * 6 + "</p>")
MARKETS = page("Markets", "<p>Stock markets fell sharply today as investors sold bank shares.</p>")
HTML_ROWS = [("https://a.example/bread", BREAD), ("https://a.example/shout", SHOUT), ("https://a.example/soup", SOUP)]
MODEL = {
    "labels": ["other", "cooking"],
    "bias": {"cooking": -2.0},
    "weights": {"cooking": {"flour": 1.5, "oven": 1.5, "dough": 1.0, "bake": 1.0, "recipe": 1.0, "simmer": 2.0,
                            "soup": 1.0, "onions": 0.5, "stock": 0.5}},
}

SCRIPT = r"""
import contextlib, gzip, io, json, logging, sys
from pathlib import Path

from thresher.cli import main
from thresher.config import RunConfig
from thresher.run.build import build
from thresher.write.manifest import read_shards, verify_dataset
from thresher_chargram import CharGramEncoder

work = Path(sys.argv[1])
inputs = [str(work / "a.csv"), str(work / "b.csv")]
orders = []


class Orders(logging.Handler):  # the shuffle engine logs each phase's order: (seed, tasks, order)
    def emit(self, record):
        orders.append(record.args[2])


logging.getLogger("thresher_shuffle").addHandler(Orders())
logging.getLogger("thresher_shuffle").setLevel(logging.INFO)

help_text = io.StringIO()
with contextlib.redirect_stdout(help_text), contextlib.suppress(SystemExit):
    main(["build", "--help"])

# every plugin chosen by name on the command line (the CSV files are recognised by their suffix too)
code = main(["build", *inputs, "-o", str(work / "shuffle"), "--rejects", str(work / "rejects"), "-q",
             "--input-format", "csv", "--extractor", "alltext",
             "--quality-rule-sets", "caps", "--classifier", f"topic={work / 'cooking.words.json'}",
             "--classifier-keep", "cooking", "--embed", "chargram", "--embed-dtype", "float32", "--format", "tsv",
             "--shard-size", "2", "--dedup-near-method", "none", "--engine", "shuffle"])
assert code == 0, code
# the same build through the library on the built-in local engine
config = RunConfig.from_dict({
    "input": {"format": "csv"}, "extract": {"extractor": "alltext"}, "quality": {"rule_sets": ["caps"]},
    "classify": {"models": [f"topic={work / 'cooking.words.json'}"], "keep": ["cooking"]},
    "embed": {"encoder": "chargram", "dtype": "float32"}, "output": {"format": "tsv", "shard_max_records": 2},
    "dedup": {"near": {"method": None}}, "exec": {"engine": "local"},
})
result = build(inputs, work / "local", config)

out = work / "shuffle"
manifest = json.loads((out / "manifest.json").read_text())
stats = json.loads((out / "stats.json").read_text())
pairs = list(read_shards(out, with_embeddings=True))
encoder = CharGramEncoder()
print(json.dumps({
    "help": help_text.getvalue(),
    "orders": orders,
    "stats": {k: stats[k] for k in ("seen", "kept", "dropped", "malformed", "drops", "malformed_reasons")},
    "local_kept": result.stats.kept,
    "records": [record for record, _ in pairs],
    "vectors_match": [vector.tobytes() == encoder.encode([record["text"]])[0].tobytes() for record, vector in pairs],
    "norms": [float((vector.astype("float64") ** 2).sum()) for _, vector in pairs],
    "manifest": {k: manifest.get(k) for k in ("format", "extractor", "classifiers")},
    "embeddings": {k: manifest["embeddings"][k] for k in ("encoder", "version", "dimension", "records")},
    "shards": [s["path"] for s in manifest["shards"]],
    "problems": [p.describe() for p in verify_dataset(out, count_records=True)],
    "rejects": [(r["url"], r["drop"]) for r in map(json.loads, gzip.open(work / "rejects" / "rejects.jsonl.gz"))],
    "malformed": [json.loads(line) for line in gzip.open(work / "rejects" / "malformed.jsonl.gz")],
}))
"""


def _csv(rows: list[list[str]]) -> str:
    import csv
    import io

    buf = io.StringIO()
    csv.writer(buf, lineterminator="\n").writerows(rows)
    return buf.getvalue()


@pytest.fixture(scope="module")
def plugins(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One folder holding all seven example plugins, installed by pip from copies (a setuptools
    build writes build/ and *.egg-info beside the sources)."""
    root = tmp_path_factory.mktemp("plugins")
    copies = [shutil.copytree(EXAMPLES / name, root / "src" / name) for name in PACKAGES]
    target = root / "site"
    install = subprocess.run(
        [sys.executable, "-m", "pip", "install", "--quiet", "--no-deps", "--no-build-isolation", "--no-index",
         "--disable-pip-version-check", "--target", str(target), *map(str, copies)],
        capture_output=True, text=True,
    )
    assert install.returncode == 0, install.stderr
    return target


def test_every_example_declares_its_entry_point_and_says_how_to_install_it() -> None:
    # host-cap, the corpus-stage example, is run in a build by tests/unit/test_stage_table.py
    corpus_stage = {"host-cap": ("thresher.corpus_stages", "host_cap")}
    assert sorted(p.name for p in EXAMPLES.iterdir() if p.is_dir()) == sorted({**PACKAGES, **corpus_stage})
    for name, (group, entry) in {**PACKAGES, **corpus_stage}.items():
        pyproject = (EXAMPLES / name / "pyproject.toml").read_text(encoding="utf-8")
        assert f'[project.entry-points."{group}"]\n{entry} = ' in pyproject, name
        assert f"pip install examples/plugins/{name}" in (EXAMPLES / name / "README.md").read_text(encoding="utf-8")


def test_the_installed_examples_build_a_dataset_selected_by_name(plugins: Path, tmp_path: Path) -> None:
    (tmp_path / "a.csv").write_text(_csv([["url", "html", "text", "lang"], *[[u, h, "", "en"] for u, h in HTML_ROWS],
                                          ["https://a.example/markets", MARKETS, "", "en"]]), encoding="utf-8")
    (tmp_path / "b.csv").write_text(
        _csv([["url", "html", "text", "lang"],
              ["https://b.example/bread-again", BREAD, "", "en"],  # the same page again: an exact duplicate
              ["https://b.example/note", "", "Bake the dough in a hot oven; a recipe from a note.", "en"],
              ["https://b.example/short-row", "<p>a row with a missing cell</p>"]]),
        encoding="utf-8")
    (tmp_path / "cooking.words.json").write_text(json.dumps(MODEL), encoding="utf-8")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(SRC), str(plugins)]), "THRESHER_SHUFFLE_SEED": "3"}
    run = subprocess.run([sys.executable, "-c", textwrap.dedent(SCRIPT), str(tmp_path)],
                         capture_output=True, text=True, env=env)
    assert run.returncode == 0, run.stderr[-4000:]
    got = json.loads(run.stdout.strip().splitlines()[-1])

    # the CLI lists the plugins' names beside the built-ins
    help_text = " ".join(got["help"].split())
    assert "--extractor {builtin,alltext,resiliparse,trafilatura}" in help_text
    assert "--engine {pool,local,ray,shuffle}" in help_text
    assert "--format {jsonl.gz,jsonl.zst,parquet,tsv}" in help_text
    assert "--input-format {auto,csv,html,jsonl,parquet,signals,warc}" in help_text

    # reader: 7 rows, one of them malformed; rule set, classifier and exact dedup drop one page each
    stats = got["stats"]
    assert stats["malformed_reasons"] == {"wrong_columns": 1}
    assert (stats["seen"], stats["kept"], stats["malformed"]) == (7, 3, 1) and got["local_kept"] == 3
    assert stats["drops"] == {"caps": {"too_much_uppercase": 1}, "classify": {"low_score": 1},
                              "dedup.exact": {"exact_duplicate": 1}}
    assert [(m["reason"], Path(m["location"]).name) for m in got["malformed"]] == [("wrong_columns", "b.csv:4")]
    # each drop attributed to the plugin that decided it, with the measure and the bound
    (shout, shout_drop), (markets, markets_drop), (again, again_drop) = got["rejects"]
    assert shout == "https://a.example/shout" and shout_drop["stage"] == "caps"
    assert shout_drop["reason"] == "too_much_uppercase" and shout_drop["value"] > 0.9 and shout_drop["limit"] == 0.5
    assert markets == "https://a.example/markets" and markets_drop == {  # cooking: softmax(-2 + 0.5 for "stock")
        "stage": "classify", "reason": "low_score", "value": 0.1824, "limit": 0.5,
        "detail": {"model": "topic", "label": "cooking"}}

    # extractor: every visible text of the page, blocks as paragraphs; no script, style or title in it
    records = got["records"]
    assert [r["url"] for r in records] == ["https://a.example/bread", "https://a.example/soup", "https://b.example/note"]
    assert records[0]["title"] == "Bread" and records[0]["text"] == (
        "Home\n\nCountry bread\n\nMix the flour with water and salt, knead the dough, then bake it in a hot oven."
        "\n\nThis recipe makes one loaf.")
    assert records[1]["text"] == "Home\n\nSimmer the onions slowly, add stock and simmer again.\n\nonions\n\nstock"
    assert records[2]["text"] == "Bake the dough in a hot oven; a recipe from a note." and records[2]["title"] is None
    assert again == "https://b.example/bread-again" and again_drop["stage"] == "dedup.exact"
    assert again_drop["detail"]["kept_id"] == records[0]["id"] and records[0]["annotations"]["dedup.duplicates"] == 1
    assert all("var tags" not in r["text"] and "color" not in r["text"] for r in records)

    # format: the TSV shards read back with the records' other fields, metadata from the CSV included
    assert got["shards"] == ["shard-00000.tsv", "shard-00001.tsv"] and got["problems"] == []
    assert all(r["metadata"]["lang"] == "en" and r["source"]["row"] >= 0 for r in records)
    assert (tmp_path / "shuffle" / "shard-00000.tsv").read_text(encoding="utf-8").startswith(
        "id\turl\ttitle\ttext\textra\n")
    assert "thresher-tsv-format plugin" in (tmp_path / "shuffle" / "README.md").read_text(encoding="utf-8")
    assert got["manifest"]["format"] == "tsv"

    # rule set and classifier: their measures on every kept document
    for r in records:
        annotations = r["annotations"]
        assert annotations["caps.upper_ratio"] < 0.5 and annotations["caps.exclamation_ratio"] == 0.0
        assert annotations["classify.topic.cooking"] >= 0.5
        assert annotations["classify.topic.cooking"] + annotations["classify.topic.other"] == pytest.approx(1, abs=2e-4)
    assert got["manifest"]["extractor"] == {"name": "alltext", "version": "0.1.0"}
    (classifier,) = got["manifest"]["classifiers"]
    assert classifier["kind"] == "words" and classifier["labels"] == ["other", "cooking"]

    # encoder: a vector per kept document, the encoder's own (in any batch), unit length
    assert got["embeddings"] == {"encoder": "chargram", "version": "1/d256/n3", "dimension": 256, "records": 3}
    assert got["vectors_match"] == [True, True, True]
    assert got["norms"] == [pytest.approx(1.0, abs=1e-5)] * 3

    # engine: it ran the tasks out of order, and the dataset is the local engine's, byte for byte
    assert any(order != sorted(order) for order in got["orders"])
    shuffled, local = tmp_path / "shuffle", tmp_path / "local"
    files = sorted(p.name for p in shuffled.iterdir() if p.name.startswith("shard-"))
    assert files == sorted(p.name for p in local.iterdir() if p.name.startswith("shard-")) and len(files) == 4
    for name in files:
        assert (shuffled / name).read_bytes() == (local / name).read_bytes(), name
