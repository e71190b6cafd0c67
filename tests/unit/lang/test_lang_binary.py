"""The trainable "target vs other" detector built on thresher.classify."""

import random

from tests.conftest import shared_path

from thresher.lang.binary import load_binary_detector, prose_of, train_binary_detector

CODE = "```\nimport os\nfor name in os.listdir('.'):\n    print(name)\n```"


def _lines(code: str) -> list[str]:
    path = shared_path("language", "lingua", "sentences", f"{code}.txt")
    lines = [x.strip() for x in path.read_text(encoding="utf-8").splitlines() if x.strip()]
    random.Random(f"thresher-lang-{code}").shuffle(lines)
    return lines[-60:]  # outside the benchmark's test and dev splits


def test_prose_of_leaves_the_code_out():
    assert (
        prose_of(f"Hello there, this is prose.\n\n{CODE}\n\nMore prose here.")
        == "Hello there, this is prose.\nMore prose here."
    )


def test_binary_detector_learns_english_against_close_languages_and_survives_code(tmp_path):
    en = _lines("en")
    others = [s for code in ("nl", "de", "af", "da", "fr") for s in _lines(code)[:24]]
    detector = train_binary_detector("en", en[:40], others[::2], epochs=10, word_ngrams=2)
    held_en, held_other = en[40:], others[1::2]
    hits = sum(detector.is_target(t) for t in held_en) + sum(not detector.is_target(t) for t in held_other)
    assert hits / (len(held_en) + len(held_other)) >= 0.85
    page = f"{held_en[0]}\n\n{CODE}\n\n{held_en[1]}"
    assert abs(detector.score(page) - detector.score(f"{held_en[0]}\n{held_en[1]}")) < 1e-9
    detector.save(str(tmp_path / "en.thc"))
    again = load_binary_detector(str(tmp_path / "en.thc"), "en")
    assert again.score(page) == detector.score(page)
