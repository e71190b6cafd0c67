"""The zero-dependency n-gram language model (`thresher.lang.ngram`): languages, abstention,
determinism, the shipped file, and a bare install's demo (no `lang` extra importable)."""

from __future__ import annotations

import hashlib
import random
import subprocess
import sys
import time
import tomllib
from pathlib import Path

import pytest
from tests.conftest import shared_path

from thresher.core.document import Document
from thresher.core.stats import Stats
from thresher.lang.config import LangConfig
from thresher.lang.detection import EMPTY, LOW_CONFIDENCE, NO_LETTERS, TOO_SHORT, UNKNOWN_LANGUAGE
from thresher.lang.ngram import MODEL_PATH, NgramDetector, load_model, shipped_model
from thresher.lang.stage import LanguageAnnotator
from thresher.write.card import render_card

REPO = Path(__file__).resolve().parents[3]

SENTENCES = {
    "en": "The council approved the new budget after a long debate about schools and roads.",
    "de": "Der Stadtrat hat den neuen Haushalt nach einer langen Debatte über Schulen und Straßen beschlossen.",
    "fr": "Le conseil municipal a approuvé le nouveau budget après un long débat sur les écoles et les routes.",
    "es": "El ayuntamiento aprobó el nuevo presupuesto tras un largo debate sobre escuelas y carreteras.",
    "it": "Il consiglio comunale ha approvato il nuovo bilancio dopo un lungo dibattito su scuole e strade.",
    "pt": "A câmara municipal aprovou o novo orçamento depois de um longo debate sobre escolas e estradas.",
    "nl": "De gemeenteraad heeft de nieuwe begroting goedgekeurd na een lang debat over scholen en wegen.",
    "pl": "Rada miasta zatwierdziła nowy budżet po długiej debacie na temat szkół i dróg.",
    "tr": "Belediye meclisi, okullar ve yollar hakkındaki uzun bir tartışmanın ardından yeni bütçeyi onayladı.",
    "ru": "Городской совет утвердил новый бюджет после долгих споров о школах и дорогах.",
    "uk": "Міська рада затвердила новий бюджет після тривалої дискусії про школи та дороги.",
    "ar": "وافق مجلس المدينة على الميزانية الجديدة بعد نقاش طويل حول المدارس والطرق.",
    "hi": "नगर परिषद ने स्कूलों और सड़कों के बारे में लंबी बहस के बाद नए बजट को मंजूरी दी।",
    "el": "Το δημοτικό συμβούλιο ενέκρινε τον νέο προϋπολογισμό μετά από μακρά συζήτηση.",
    "ja": "市議会は学校と道路についての長い議論の後、新しい予算を承認しました。",
}


@pytest.fixture(scope="module")
def detector() -> NgramDetector:
    return NgramDetector()


@pytest.mark.parametrize("code", sorted(SENTENCES))
def test_sentence_gets_its_language(detector, code):
    detection = detector.detect(SENTENCES[code])
    assert (detection.code, detection.reason) == (code, None)
    assert 0.5 < detection.score <= 1.0


@pytest.mark.parametrize(
    ("text", "reason"),
    [
        ("", EMPTY),
        ("   \n", EMPTY),
        ("1234 5678 !!! ... 42%", NO_LETTERS),
        ("ok", TOO_SHORT),
        ("aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa", TOO_SHORT),
        ("kjsdf lkjweoiru mnbvcx poiuy trewq lkjhg", UNKNOWN_LANGUAGE),
        ("xqzv jjjk wwwp qqxz", UNKNOWN_LANGUAGE),
    ],
)
def test_short_text_and_noise_are_undetermined_with_a_reason(detector, text, reason):
    detection = detector.detect(text)
    assert (detection.code, detection.reason, detection.score) == ("und", reason, 0.0)


def test_low_probability_abstains_and_lists_the_best_guess():
    model = shipped_model()
    strict = NgramDetector(model=load_model(model.to_bytes()).__class__(
        model.groups, model.step, model.max_n, model.temperature, 0.999, model.max_mean_cost, model.min_letters,
        model.version))
    detection = strict.detect("the")
    assert (detection.code, detection.reason) == ("und", LOW_CONFIDENCE)
    assert detection.alternatives and detection.alternatives[0][0] == "en"


BAD_INPUT = {
    "ten_megabytes": "a" * 10_000_000,
    "ten_megabytes_of_words": "Haus und Hof " * 800_000,
    "mixed_scripts_in_a_word": "Mοscоw",  # Latin with Greek omicron and Cyrillic o
    "unsupported_script": "ⵜⴰⵎⴰⵣⵉⵖⵜ ⵜⴰⵏⴰⵡⴰⵢⵜ",  # Tifinagh
    "surrogates": "text \udc80\ud800 with lone surrogates in English words",
    "c1_controls": "\x80\x81\x9f",
    "emoji": "😀🎉👍 🙈",
}


@pytest.mark.parametrize("name", sorted(BAD_INPUT))
def test_bad_input_gets_a_defined_result_in_bounded_time(detector, name):
    t0 = time.process_time()
    d = detector.detect(BAD_INPUT[name])
    whole, codes = detector.detect_paragraphs([BAD_INPUT[name]] * 3)
    assert time.process_time() - t0 < 1.0
    for result in (d, whole):
        assert 0.0 <= result.score <= 1.0
        assert result.decided or result.reason
    assert len(codes) == 3
    if name == "unsupported_script":
        assert (d.code, d.script) == ("und", "Tfng")


def test_held_out_sentences_of_all_languages_are_mostly_right(detector):
    """Four sentences per language from lingua's dev split (never trained on), 300 in all."""
    data = []
    for path in sorted(shared_path("language", "lingua", "sentences").glob("*.txt")):
        lines = [x.strip() for x in path.read_text(encoding="utf-8").splitlines() if x.strip()]
        random.Random(f"thresher-lang-{path.stem}").shuffle(lines)  # as benchmarks/train_lang_fallback.py
        data += [(path.stem, x) for x in lines[134:138]]
    assert sum(detector.detect(t).code == g for g, t in data) / len(data) >= 0.93


def test_detection_is_deterministic_across_detectors_and_calls(detector):
    texts = list(SENTENCES.values()) + ["qwertyuiop asdfghjkl", "lorem ipsum dolor sit amet"]
    first = [detector.detect(t) for t in texts]
    assert [detector.detect(t) for t in texts] == first
    assert [NgramDetector().detect(t) for t in texts] == first


def test_a_subprocess_with_another_hash_seed_agrees(detector):
    code = ("from thresher.lang.ngram import NgramDetector; d = NgramDetector();"
            f"print([tuple(d.detect(t)[:2]) for t in {list(SENTENCES.values())!r}])")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                         env={"PYTHONHASHSEED": "12345", "PYTHONPATH": str(REPO / "src")})
    assert out.stdout.strip() == str([tuple(detector.detect(t)[:2]) for t in SENTENCES.values()])


def test_shipped_model_is_small_versioned_and_in_the_package_data():
    data = MODEL_PATH.read_bytes()
    assert len(data) < 2 * 1024 * 1024
    model = shipped_model()
    assert model.version == "ngram-" + hashlib.sha256(data).hexdigest()[:12]
    languages = {c for g in model.groups for c in g.languages}
    assert len(languages) >= 60
    assert load_model(model.to_bytes()).groups == model.groups  # the format round-trips
    pyproject = tomllib.loads((REPO / "pyproject.toml").read_text())
    assert MODEL_PATH.name in pyproject["tool"]["setuptools"]["package-data"]["thresher.lang"]


def test_paragraphs_in_another_language_get_their_own_code(detector):
    whole, codes = detector.detect_paragraphs([SENTENCES["de"], SENTENCES["en"], SENTENCES["de"] + " Danke."])
    assert whole.code == "de"
    assert codes == ["de", "en", "de"]


def test_ngram_stage_names_the_model_in_the_stats_and_the_card():
    stats = Stats()
    annotator = LanguageAnnotator(LangConfig(detector="ngram"))
    annotator.bind_stats(stats)
    doc = Document(id="1", text=SENTENCES["fr"])
    annotator.annotate(doc)
    assert doc.annotations["lang.code"] == "fr"
    version = shipped_model().version
    assert stats.to_dict()["events"][f"lang.detector.{version}"] == 1
    manifest = {"thresher_version": "0", "config_hash": "x", "records": 1, "shards": [], "format": "jsonl",
                "bytes": 0, "inputs": [], "config": {"lang": {"detector": "ngram"}}}
    card = render_card(manifest, stats.to_dict())
    assert f"Language detector: `{version}` (thresher's built-in character n-gram model" in card


BARE_DEMO = """
import builtins, collections, json, re, sys
real = builtins.__import__
allowed = set(sys.stdlib_module_names) | {"thresher"}
def guard(name, globals=None, locals=None, fromlist=(), level=0):
    if level == 0 and name.split(".")[0] not in allowed:
        raise ImportError("blocked " + name)
    return real(name, globals, locals, fromlist, level)
builtins.__import__ = guard
from thresher.config import RunConfig
from thresher.demo import generate_crawl
from thresher.pipeline import Pipeline
pages = [json.loads(line) for line in generate_crawl() if line.endswith("}")]
page_lang = {p["url"]: re.search(r'<html lang="([a-z]+)"', p["html"]).group(1) for p in pages}
config = RunConfig()
pipeline = Pipeline(config)
docs = list(pipeline.process(pages))
counters = pipeline.stats.to_dict()["counters"]
print(json.dumps({
    "detector": config.lang.detector,
    "stage": {k[5:]: n for k, n in counters.items() if k.startswith("lang/")},
    "english": collections.Counter(d.annotations["lang.code"] for d in docs if page_lang.get(d.url) == "en"),
    "kept": collections.Counter(d.annotations["lang.code"] for d in docs),
}))
"""


def test_bare_install_demo_names_a_language_for_nine_documents_in_ten():
    """Without any third-party module (the `lang` extra not importable), `auto` resolves to the
    n-gram model, and the demo crawl's documents get a language, English pages `en`."""
    import json

    out = subprocess.run([sys.executable, "-c", BARE_DEMO], capture_output=True, text=True, check=True)
    result = json.loads(out.stdout)
    assert result["detector"] == "ngram"
    stage = result["stage"]
    assert 1 - stage.get("und", 0) / sum(stage.values()) >= 0.9, stage
    kept = result["kept"]
    assert 1 - kept.get("und", 0) / sum(kept.values()) >= 0.9, kept
    english = result["english"]
    assert english["en"] / sum(english.values()) >= 0.95, english


def test_pool_fork_server_preloads_the_score_tables_of_an_ngram_build():
    import importlib

    from thresher.config import RunConfig
    from thresher.lang import ngram
    from thresher.pipeline import fork_server_preloads

    assert "thresher.lang.ngram_tables" in fork_server_preloads(RunConfig.from_dict({"lang": {"detector": "ngram"}}))
    importlib.import_module("thresher.lang.ngram_tables")
    version = shipped_model().version
    built = {script for v, script, flat in ngram._scorers if v == version and not flat}
    assert built >= {"Latn", "Cyrl", "Arab", "Deva"}


def _lingua_lines(per_language: int) -> list[str]:
    root = shared_path("language", "lingua")
    lines: list[str] = []
    for f in sorted((root / "sentences").glob("*.txt")):
        lines += f.read_text(encoding="utf-8", errors="replace").splitlines()[:per_language]
    return lines


def test_flat_score_tables_give_the_same_detections_as_the_integer_rows():
    lines = _lingua_lines(20)
    fast, flat = NgramDetector(), NgramDetector(flat=True)
    assert [flat.detect(t) for t in lines] == [fast.detect(t) for t in lines]
    paragraphs = [lines[i:i + 4] for i in range(0, len(lines), 4)]
    assert [flat.detect_paragraphs(p) for p in paragraphs] == [fast.detect_paragraphs(p) for p in paragraphs]


_PRIVATE_GROWTH = """
import json, multiprocessing, sys
from thresher.lang import ngram
flat = sys.argv[1] == "flat"
lines = json.loads(sys.stdin.read())
ngram.preload(flat=flat)
detector = ngram.NgramDetector(flat=flat)

def private_mib():
    with open("/proc/self/smaps_rollup") as f:
        return sum(int(l.split()[1]) for l in f if l.startswith(("Private_Clean", "Private_Dirty"))) / 1024

def child(conn):
    detector.detect("warm the interpreter's own caches first")
    before = private_mib()
    for text in lines:
        detector.detect(text)
    conn.send(private_mib() - before)

ctx = multiprocessing.get_context("fork")
parent_end, child_end = ctx.Pipe()
process = ctx.Process(target=child, args=(child_end,))
process.start()
print(parent_end.recv())
process.join()
"""


def _private_growth_after_scoring(flat: bool, lines: list[str]) -> float:
    """MiB of memory a forked child makes private by scoring `lines` with tables its parent built:
    measured in a fresh interpreter, so that what the test runner's own heap costs a fork (its
    garbage collector touches every object it tracks) does not blur the tables' share."""
    import json

    out = subprocess.run([sys.executable, "-c", _PRIVATE_GROWTH, "flat" if flat else "rows"],
                         input=json.dumps(lines), capture_output=True, text=True, check=True)
    return float(out.stdout.strip())


@pytest.mark.skipif(not Path("/proc/self/smaps_rollup").exists(), reason="needs Linux /proc smaps_rollup")
def test_a_forked_worker_keeps_sharing_the_flat_tables_it_reads():
    """The open-set gate's tables (flat rows) stay shared with the fork server however many texts a
    worker scores; the integer rows (the fast form) become private page by page as they are used,
    which is what made the gate's memory grow with the corpus (issue 29)."""
    lines = _lingua_lines(40)
    flat = _private_growth_after_scoring(True, lines)
    rows = _private_growth_after_scoring(False, lines)
    # flat: 4-5 MiB, the row offsets' integer objects (~1.8 MiB) and the working memory any forked
    # interpreter writes while it scores; integer rows: ~14 MiB, ~9 MiB more
    assert flat <= 7.5, f"flat tables: {flat:.1f} MiB made private"
    assert rows >= flat + 5.0, f"integer rows {rows:.1f} MiB vs flat {flat:.1f} MiB: the measure shows nothing"
