"""A small synthetic labelled corpus: each label has its own cue words among shared filler."""

from __future__ import annotations

import random

CUES = {
    "good": "fine lovely excellent careful thorough insightful".split(),
    "bad": "awful spam clickbait scam cheap garbage".split(),
    "meh": "okay average plain ordinary middling so-so".split(),
}
FILLER = "the a of and to is it was this that with for on as".split()


def corpus(n: int = 600, labels: tuple[str, ...] = ("good", "bad"), seed: int = 1) -> list[tuple[str, str]]:
    rng = random.Random(seed)
    out = []
    for _ in range(n):
        label = rng.choice(labels)
        words = [rng.choice(FILLER) for _ in range(8)] + [rng.choice(CUES[label]) for _ in range(2)]
        rng.shuffle(words)
        out.append((" ".join(words), label))
    return out
