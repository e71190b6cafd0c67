"""The near-dedup corpus stages against the CorpusStage protocol, including issue 4's bad input."""

from __future__ import annotations

import time
from collections import defaultdict

import pytest

from thresher.core.config import from_dict
from thresher.core.document import Document
from thresher.core.errors import ConfigError
from thresher.core.stages import CorpusStage
from thresher.dedup.near import PREFILTER_MARGIN, MinHashDedup, SimHashDedup, build_near_stage
from thresher.dedup.near_config import NearDedupConfig

BASE = (
    "The city council met on Tuesday evening to discuss the new budget for the coming year. Members "
    "argued for more than three hours about the cost of repairing the old bridge over the river, "
    "which engineers say is no longer safe for heavy traffic. The mayor proposed raising parking "
    "fees in the centre to pay for the work, while the opposition wanted to delay the project until "
    "a federal grant is approved. A final vote is expected next month after a public hearing in the "
    "town hall, where residents will be able to ask questions and suggest alternatives to the plan. "
    "Local businesses have already said that higher fees would keep shoppers away from the high "
    "street, which has lost a dozen shops in the last two years alone."
)
OTHER = (
    "Researchers at the university have developed a battery that charges in under five minutes and "
    "keeps most of its capacity after thousands of cycles. The team used a new electrode material "
    "made from layered carbon sheets and tiny silicon particles. Commercial production could begin "
    "within three years if the manufacturing process can be scaled up at a reasonable cost, the "
    "lead author said in an interview with reporters on Friday afternoon at the laboratory."
)


def doc(text: str, ordinal: int = 0) -> Document:
    return Document(id=f"d{ordinal}", text=text, ordinal=ordinal)


def run_stage(stage: CorpusStage, texts: list[str]) -> dict[tuple[int, int], float]:
    """Group keys in memory like the group phase: verified edges (i, j) -> similarity."""
    buckets: dict[bytes, list[int]] = defaultdict(list)
    payloads: dict[int, bytes] = {}
    for i, text in enumerate(texts):
        ck = stage.scan(doc(text, i))
        if ck is None:
            continue
        payloads[i] = ck.payload
        for key in set(ck.keys):
            buckets[key].append(i)
    edges: dict[tuple[int, int], float] = {}
    for members in buckets.values():
        if len(members) < 2:
            continue
        for a, b in stage.candidate_pairs(len(members)):
            i, j = members[a], members[b]
            if (i, j) in edges:
                continue
            sim = stage.similarity(payloads[i], payloads[j])
            if sim is not None:
                edges[(i, j)] = sim
    return edges


@pytest.mark.parametrize("stage", [MinHashDedup(), SimHashDedup()], ids=["minhash", "simhash"])
def test_stage_implements_the_corpus_stage_protocol(stage: CorpusStage) -> None:
    assert isinstance(stage, CorpusStage)
    assert stage.name == "dedup.near"
    assert stage.reason == "near_duplicate"


def test_build_near_stage_follows_method() -> None:
    assert isinstance(build_near_stage(NearDedupConfig()), MinHashDedup)
    assert isinstance(build_near_stage(NearDedupConfig(method="simhash")), SimHashDedup)
    assert build_near_stage(NearDedupConfig(method=None)) is None


def test_minhash_finds_light_edit_and_rejects_unrelated_text() -> None:
    edited = BASE.replace("three hours", "four hours") + " Subscribe to our newsletter."
    edges = run_stage(MinHashDedup(), [BASE, edited, OTHER])
    assert list(edges) == [(0, 1)]
    assert 0.8 <= edges[(0, 1)] < 1.0


def test_minhash_similarity_is_exact_jaccard_for_small_documents() -> None:
    stage = MinHashDedup()
    a, b = stage.scan(doc(BASE)), stage.scan(doc(BASE.replace("budget", "plan")))
    assert a is not None and b is not None
    words = BASE.lower().replace(".", " ").replace(",", " ").split()
    shingles = {tuple(words[i : i + 5]) for i in range(len(words) - 4)}
    words_b = [("plan" if w == "budget" else w) for w in words]
    shingles_b = {tuple(words_b[i : i + 5]) for i in range(len(words_b) - 4)}
    expected = len(shingles & shingles_b) / len(shingles | shingles_b)
    assert stage.similarity(a.payload, b.payload) == pytest.approx(expected, abs=1e-12)


def test_minhash_derives_bands_rows_from_threshold_and_honours_escape_hatch() -> None:
    derived = MinHashDedup(NearDedupConfig(threshold=0.8))
    assert derived.bands * derived.rows <= 128
    fixed = MinHashDedup(NearDedupConfig(bands=32, rows=4))
    assert (fixed.bands, fixed.rows) == (32, 4)
    ck = fixed.scan(doc(BASE))
    assert ck is not None and len(ck.keys) == 32 and all(len(k) == 16 for k in ck.keys)


def test_prefilter_margin_is_wider_than_four_standard_errors_at_128_hashes() -> None:
    assert PREFILTER_MARGIN >= 4 * (0.25 / 128) ** 0.5


@pytest.mark.parametrize("stage", [MinHashDedup(), SimHashDedup()], ids=["minhash", "simhash"])
@pytest.mark.parametrize("text", ["", "   ", "word", "only four words here", "!!! ... ???"])
def test_documents_without_a_shingle_do_not_take_part(stage: CorpusStage, text: str) -> None:
    assert stage.scan(doc(text)) is None


@pytest.mark.parametrize("stage", [MinHashDedup(), SimHashDedup()], ids=["minhash", "simhash"])
def test_one_repeated_token_documents_have_one_shingle(stage: CorpusStage) -> None:
    edges = run_stage(stage, ["spam " * 1000, "spam " * 20, "eggs " * 1000, BASE])
    if isinstance(stage, MinHashDedup):  # one shingle (spam x5) each: identical shingle sets
        assert edges == {(0, 1): 1.0}
    else:  # one feature is below simhash_min_shingles: only identical token sequences match
        assert edges == {}


def test_mixed_scripts_use_char_shingles_for_cjk_and_match_edits() -> None:
    zh = "北京市政府周二宣布，将在未来三年内投资五百亿元改善城市公共交通系统，包括新建地铁线路和电动公交车。" * 3
    zh_edit = zh.replace("五百亿", "六百亿")
    mixed = "BBC: " + zh  # Latin letters inside a Chinese page: still char shingles
    edges = run_stage(MinHashDedup(), [zh, zh_edit, mixed, BASE])
    assert (0, 1) in edges and (0, 2) in edges
    assert all(3 not in pair for pair in edges)


def test_ten_megabyte_document_is_sketched_in_bounded_time() -> None:
    words = BASE.split()
    big = " ".join(f"{w}{i % 997}" for i, w in enumerate(words * (10_000_000 // len(BASE) + 1)))[:10_000_000]
    stage = MinHashDedup()
    start = time.perf_counter()
    ck = stage.scan(doc(big))
    elapsed = time.perf_counter() - start
    assert ck is not None and len(ck.payload) == 8 + 4 * (128 + 1024)
    assert elapsed < 30, f"10 MB document took {elapsed:.1f} s"


@pytest.mark.parametrize("stage", [MinHashDedup(), SimHashDedup()], ids=["minhash", "simhash"])
def test_all_identical_corpus_yields_linear_pairs(stage: CorpusStage) -> None:
    n = 2000
    pairs = list(stage.candidate_pairs(n))
    reps = stage.config.max_bucket_representatives  # type: ignore[attr-defined]
    assert len(pairs) <= reps * n
    assert all(0 <= i < j < n for i, j in pairs)
    assert {j for _, j in pairs} == set(range(1, n))  # every member reaches a representative
    edges = run_stage(stage, [BASE] * 200)
    assert len(edges) <= reps * 200
    assert all(sim == 1.0 for sim in edges.values())


def test_simhash_finds_identical_and_near_identical_documents() -> None:
    edited = BASE.replace("three hours", "three long hours")
    edges = run_stage(SimHashDedup(), [BASE, BASE, edited, OTHER])
    assert (0, 1) in edges and edges[(0, 1)] == 1.0
    assert all(3 not in pair for pair in edges)


def test_simhash_short_documents_match_only_identical_token_sequences() -> None:
    short = "The meeting starts at nine tomorrow morning in room four."
    edges = run_stage(SimHashDedup(), [short, short.upper() + "!", short.replace("nine", "ten")])
    assert list(edges) == [(0, 1)]


@pytest.mark.parametrize(
    "data, message",
    [
        ({"threshold": 1.5}, "threshold"),
        ({"bands": 4}, "both bands and rows"),
        ({"bands": 64, "rows": 4}, "exceeds num_hashes"),
        ({"num_hashes": 100}, "power of two"),
        ({"method": "lsh"}, "method"),
    ],
)
def test_config_rejects_contradictions_with_a_message(data: dict[str, object], message: str) -> None:
    with pytest.raises(ConfigError, match=message):
        from_dict(NearDedupConfig, data)


def test_config_accepts_k_permutation_with_any_num_hashes() -> None:
    cfg = from_dict(NearDedupConfig, {"scheme": "k_permutation", "num_hashes": 100})
    stage = MinHashDedup(cfg)
    ck = stage.scan(doc(BASE))
    assert ck is not None and len(ck.keys) == stage.bands


def test_pure_kernel_never_imports_numpy() -> None:
    import subprocess
    import sys

    code = (
        "import sys\n"
        "from thresher.core.document import Document\n"
        "from thresher.dedup.near import MinHashDedup, SimHashDedup\n"
        "from thresher.dedup.near_config import NearDedupConfig\n"
        "for cls, method in ((MinHashDedup, 'minhash'), (SimHashDedup, 'simhash')):\n"
        "    stage = cls(NearDedupConfig(method=method, kernel='pure'))\n"
        f"    assert stage.scan(Document('a', {BASE!r})) is not None\n"
        "assert 'numpy' not in sys.modules, 'numpy imported'\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True)
