"""How much of each dataset a pack takes: `DATASET=WEIGHT` arguments parsed, and, once the datasets'
token counts are known, each one's token target and how many times it must be repeated to meet it.

With a budget (`--max-tokens N`) a dataset of weight w gets w / sum(weights) of N. Without one, every
dataset is taken once when no weights are given; with weights, the budget is the largest total that
holds the shares without repeating any dataset.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

from thresher.core.errors import ConfigError


@dataclass(frozen=True, slots=True)
class Source:
    path: str
    weight: float | None  # None: not given


@dataclass(frozen=True, slots=True)
class Target:
    tokens: int  # at most this many of the dataset's tokens (all epochs)
    epochs: int  # passes over the dataset the target needs (1: no repeat)


def parse_sources(arguments: Sequence[str]) -> list[Source]:
    """`PATH` or `PATH=WEIGHT` each (a path that itself holds `=` takes a weight after its last one)."""
    sources = []
    for arg in arguments:
        path, sep, weight_text = arg.rpartition("=")
        if not sep:
            sources.append(Source(arg, None))
            continue
        try:
            weight = float(weight_text)
        except ValueError:
            raise ConfigError(f"{arg!r}: the weight after '=' must be a number, not {weight_text!r}") from None
        if not math.isfinite(weight) or weight < 0:
            raise ConfigError(f"{arg!r}: a weight must be a finite number >= 0")
        sources.append(Source(path, weight))
    if not sources:
        raise ConfigError("thresher pack needs at least one dataset")
    given = [s.weight is not None for s in sources]
    if any(given) and not all(given):
        raise ConfigError("give every dataset a weight (DATASET=WEIGHT), or none")
    if all(given) and sum(s.weight or 0.0 for s in sources) <= 0:
        raise ConfigError("the weights sum to zero: nothing would be packed")
    return sources


def plan_targets(
    sources: Sequence[Source], totals: Sequence[int], max_tokens: int | None, allow_repeat: bool
) -> list[Target]:
    """Each dataset's target given its token count (`totals`, all its documents once)."""
    weighted = all(s.weight is not None for s in sources)
    if not weighted and max_tokens is None:
        return [Target(t, 1) for t in totals]
    weights = [s.weight if weighted else float(t) for s, t in zip(sources, totals, strict=True)]
    total_weight = sum(w or 0.0 for w in weights)
    shares = [(w or 0.0) / total_weight for w in weights]
    if max_tokens is None:  # the largest budget every dataset fills once
        max_tokens = int(min(t / s for t, s in zip(totals, shares, strict=True) if s > 0))
    targets = []
    for source, total, share in zip(sources, totals, shares, strict=True):
        want = int(share * max_tokens)
        if want == 0:
            targets.append(Target(0, 1))
            continue
        if total == 0:
            raise ConfigError(f"{source.path}: no tokens to pack (an empty dataset cannot take a share)")
        if want > total and not allow_repeat:
            raise ConfigError(
                f"{source.path} has {total:,} tokens, but its share ({share:.3f}) of {max_tokens:,} is {want:,}: "
                "lower --max-tokens or its weight, or allow repeating it (--allow-repeat)"
            )
        targets.append(Target(want, max(1, math.ceil(want / total))))
    return targets
