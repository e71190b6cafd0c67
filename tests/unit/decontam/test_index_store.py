"""The benchmark n-gram index compiled once into a mapped file (`thresher.decontam.index_store`): the
same matches and attributions as the index built in memory, one file per shape, a damaged file
compiled again, and shared pages, not a private copy, in a second process."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from tests.conftest import shared_path

from thresher.core.document import Document
from thresher.decontam import index as index_module
from thresher.decontam import index_store
from thresher.decontam.config import DecontamConfig
from thresher.decontam.index import build_index
from thresher.decontam.index_store import load_index
from thresher.decontam.stage import DecontamCut, DecontamFilter

WORDS = ("alpha bravo charlie delta echo foxtrot golf hotel india juliet kilo lima mike november oscar papa quebec "
         "romeo sierra tango uniform victor whiskey xray yankee zulu").split()


def item_text(i: int) -> str:
    return " ".join(WORDS[(i * 7 + k * (i % 5 + 1)) % len(WORDS)] + str(k % 3) for k in range(30))


@pytest.fixture
def bench(tmp_path):
    path = tmp_path / "bench.jsonl"
    rows = [{"id": f"q{i}", "question": item_text(i), "answer": "the answer is " + item_text(i + 100)}
            for i in range(60)]
    rows.append({"id": "shared", "question": item_text(1)})  # n-grams in two items: the first one is named
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return str(path)


def config(bench, folder=None, **kw):
    return DecontamConfig(benchmarks=(bench,), fields=("question", "answer"), ngram=8,
                          compiled_dir=None if folder is None else str(folder), **kw)


def probes() -> list[str]:
    return ["Intro. " + item_text(3) + " outro", item_text(1).upper(), " ".join(item_text(7).split()[5:14]),
            "nothing of it here at all, " * 5, "the answer is " + item_text(140)]


def test_compiled_index_matches_as_the_built_one(bench, tmp_path):
    built = build_index(config(bench))
    mapped = index_store.shared_index(config(bench, tmp_path), tmp_path)
    assert isinstance(mapped.hashes, memoryview) and isinstance(mapped.bitmap, memoryview)
    assert list(mapped.hashes) == list(built.hashes) and list(mapped.items_of) == list(built.items_of)
    assert bytes(mapped.bitmap) == bytes(built.bitmap) and mapped.exempt == built.exempt and mapped.n == built.n
    assert [mapped.matches(t) for t in probes()] == [built.matches(t) for t in probes()]
    assert list(mapped.items) == list(built.items) and len(mapped.items) == len(built.items)
    assert any(built.matches(t) for t in probes()) and not all(built.matches(t) for t in probes())


def test_stages_decide_the_same_with_the_compiled_index(bench, tmp_path, monkeypatch):
    monkeypatch.setattr(index_store, "_cache", index_store.OrderedDict())
    for stage in (DecontamFilter, DecontamCut):
        mode = "drop" if stage is DecontamFilter else "cut"
        plain = stage(config(bench, mode=mode))
        shared = stage(config(bench, tmp_path, mode=mode))
        assert isinstance(shared.index.hashes, memoryview) and not isinstance(plain.index.hashes, memoryview)
        for text in probes():
            a, b = Document(id="d", text=text), Document(id="d", text=text)
            if mode == "drop":
                assert plain.check(a) == shared.check(b)
            else:
                assert plain.transform(a) == shared.transform(b)
                assert (a.text, a.annotations) == (b.text, b.annotations)


def test_pure_python_lookup_over_the_mapped_pages(bench, tmp_path, monkeypatch):
    monkeypatch.setattr(index_module, "numpy_available", lambda: False)
    built = build_index(config(bench))
    mapped = index_store.shared_index(config(bench, tmp_path), tmp_path)
    assert not mapped.use_numpy
    assert [mapped.matches(t) for t in probes()] == [built.matches(t) for t in probes()]


def test_one_file_per_shape_and_a_damaged_file_compiled_again(bench, tmp_path):
    folder = tmp_path / "lists"
    index_store.shared_index(config(bench, folder), folder)
    index_store.shared_index(config(bench, folder, max_items_per_ngram=1), folder)  # another shape
    files = sorted(folder.glob(f"*{index_store.SUFFIX}"))
    assert len(files) == 2
    key = index_store.index_key(config(bench, folder))
    path = folder / f"{key}{index_store.SUFFIX}"
    assert index_store.open_index(path, key) is not None
    data = bytearray(path.read_bytes())
    data[index_store.HEADER_BYTES + 40] ^= 1
    path.write_bytes(bytes(data))
    assert index_store.open_index(path, key) is None  # fails its checksum
    again = index_store.shared_index(config(bench, folder), folder)
    assert index_store.open_index(path, key) is not None  # replaced by a sound file
    assert [again.matches(t) for t in probes()] == [build_index(config(bench)).matches(t) for t in probes()]
    path.write_bytes(path.read_bytes()[:-1])  # truncated
    assert index_store.open_index(path, key) is None


def test_changed_benchmark_file_is_a_new_key(bench, tmp_path):
    before = index_store.index_key(config(bench))
    with open(bench, "a", encoding="utf-8") as f:
        f.write(json.dumps({"id": "late", "question": item_text(55) + " more"}) + "\n")
    assert index_store.index_key(config(bench)) != before  # the config's sha256 of the file changed


def test_unwritable_folder_builds_in_memory(bench, tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("not a folder")
    index = index_store.shared_index(config(bench, blocker / "lists"), blocker / "lists")
    assert not isinstance(index.hashes, memoryview)
    assert [index.matches(t) for t in probes()] == [build_index(config(bench)).matches(t) for t in probes()]


def test_load_index_uses_the_compiled_file_when_given_a_folder(bench, tmp_path, monkeypatch):
    monkeypatch.setattr(index_store, "_cache", index_store.OrderedDict())
    assert isinstance(load_index(config(bench, tmp_path)).hashes, memoryview)
    assert not isinstance(load_index(config(bench)).hashes, memoryview)


_CHILD = textwrap.dedent("""
    import json, sys
    def private_kib():
        fields = {}
        with open("/proc/self/smaps_rollup") as f:
            for line in f:
                parts = line.split()
                if len(parts) >= 2 and parts[0].endswith(":") and parts[1].isdigit():
                    fields[parts[0][:-1]] = int(parts[1])
        return fields["Private_Clean"] + fields["Private_Dirty"]
    import numpy  # the fork server preloads it: not the index's cost
    from thresher.decontam.config import DecontamConfig
    from thresher.decontam.index_store import load_index
    bench, folder = sys.argv[1], sys.argv[2]
    config = DecontamConfig(benchmarks=(bench,), fields=("question", "answer"), compiled_dir=folder or None)
    texts = [json.loads(line)["question"] for line in open(bench, encoding="utf-8")]
    before = private_kib()
    index = load_index(config)
    hits = sum(bool(index.matches(t)) for t in texts[::10])
    print(json.dumps({"private_kib": private_kib() - before, "hits": hits, "ngrams": len(index)}), flush=True)
    sys.stdin.readline()  # the first worker stays while the second one maps the same pages
""")


def test_second_process_mapping_the_gsm8k_index_adds_little_private_memory(tmp_path):
    """Private_Clean + Private_Dirty (smaps_rollup) of a second worker before and after it loads the
    GSM8K index and looks up every tenth question, while the first still maps it; against a worker
    that builds the index itself."""
    if not Path("/proc/self/smaps_rollup").exists():
        pytest.skip("needs /proc/<pid>/smaps_rollup (Linux) to measure private memory")
    bench = shared_path("benchmarks-for-decontamination", "gsm8k", "test.jsonl")
    env = {"PYTHONPATH": str(Path(index_store.__file__).resolve().parents[2]), "PATH": "/usr/bin:/bin"}

    def run(folder: str) -> list[str]:
        return [sys.executable, "-c", _CHILD, str(bench), folder]

    first = subprocess.Popen(run(str(tmp_path)), stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, env=env)
    try:
        json.loads(first.stdout.readline())  # compiled and mapped by the first worker
        second = json.loads(subprocess.run(run(str(tmp_path)), input="\n", check=True, capture_output=True, text=True,
                                           env=env).stdout)
    finally:
        first.communicate("\n", timeout=60)
    alone = json.loads(subprocess.run(run(""), input="\n", check=True, capture_output=True, text=True, env=env).stdout)
    assert second["hits"] == alone["hits"] > 0 and second["ngrams"] == alone["ngrams"] > 100_000
    # measured: 0.8 MiB mapped (the lookup code and its first pages) against 8.6 MiB built in the process
    assert second["private_kib"] <= 1536, second
    assert alone["private_kib"] >= second["private_kib"] + 4096, (alone, second)
