"""Value histograms of the per-document measurements (`quality.*` annotations), kept as counters.

A value falls in a fixed bin that depends on the value alone (ten a decade, 26% wide), so the
histograms of any partitioning sum to the same counts: `hist/<metric>/<passed|dropped>/<bin>`.

Bins are found by comparing with `BOUNDARIES` (10^(k/10), computed once in decimal arithmetic, so
the same floats on every platform), never with a logarithm: `bisect` for one value and NumPy's
`searchsorted` over the same array for many give the same bin by construction (exact comparisons).

`ValueHistograms` is on the build's hot path: about 30 measurements a document. Documents of a
build carry the same annotation keys in the same order, so a document is handled by C-level calls
planned once per key layout (`_Layout`): take the metric values out, check their types are the
layout's, append them to a buffer; the buffer is binned by NumPy when it is full and when the task
ends. Without NumPy (no `fast` extra), or for a document that does not fit its layout (another
type), each value is binned at once; the counts are the same either way.
"""

from __future__ import annotations

import math
import operator
from array import array
from bisect import bisect_right
from decimal import Context, Decimal
from typing import Any

HIST = "hist"
BINS_PER_DECADE = 10
_K_MIN, _K_MAX = -400, 400  # bins from 1e-40 to 1e40; values beyond fall in the end bins


def _boundaries() -> tuple[float, ...]:
    ctx = Context(prec=40)
    ten = Decimal(10)
    return tuple(float(ctx.power(ten, Decimal(k) / BINS_PER_DECADE)) for k in range(_K_MIN, _K_MAX + 1))


BOUNDARIES = _boundaries()  # BOUNDARIES[i] = 10^((_K_MIN + i) / 10), rounded once


def _bin_index(magnitude: float) -> int:
    """k of the bin [10^(k/10), 10^((k+1)/10)) holding a positive finite magnitude."""
    return _K_MIN - 1 + bisect_right(BOUNDARIES, magnitude)


def value_bin(value: float) -> str:
    """The histogram bin of a value: `z` for 0 (and for NaN and infinities), else `p<k>`/`n<k>` for
    |value| in [10^(k/10), 10^((k+1)/10)) (below 1e-40 and from 1e40 on: the end bins)."""
    try:
        x = float(value)
    except OverflowError:  # an int beyond any float
        x = math.inf if value > 0 else -math.inf
        return f"{'p' if x > 0 else 'n'}{_K_MAX}"
    if x == 0 or not math.isfinite(x):
        return "z"
    return f"{'p' if x > 0 else 'n'}{_bin_index(abs(x))}"


def bin_range(name: str) -> tuple[float, float]:
    """The [low, high) range a bin stands for (0, 0 for the zero bin)."""
    if name == "z":
        return (0.0, 0.0)
    sign = 1.0 if name[0] == "p" else -1.0
    k = int(name[1:])
    a, b = _boundary(k), _boundary(k + 1)
    return (a, b) if sign > 0 else (-b, -a)


def _boundary(k: int) -> float:
    i = k - _K_MIN
    return BOUNDARIES[i] if 0 <= i < len(BOUNDARIES) else 10 ** (k / BINS_PER_DECADE)


def _tuple_getter(indices: list[int]) -> Any:
    """`operator.itemgetter` that always returns a tuple (itemgetter of one index returns the item)."""
    if not indices:
        return lambda seq: ()
    if len(indices) == 1:
        i = indices[0]
        return lambda seq: (seq[i],)
    return operator.itemgetter(*indices)


class _Layout:
    """How documents with one order of annotation keys are read: `pick` takes the metric values
    out of the values, `types` are the types they had in the first such document, `numeric` keeps
    the measurements (int or float) among them, named `metrics`; `buffers` hold picked rows per side."""

    __slots__ = ("pick", "types", "numeric", "metrics", "buffers", "_keys")

    def __init__(self, layout: tuple[str, ...]) -> None:
        positions = [i for i, key in enumerate(layout) if key.startswith("quality.")]
        self.pick: Any = _tuple_getter(positions) if positions else None
        self._keys = [layout[i] for i in positions]
        self.types: tuple[type, ...] | None = None
        self.numeric: Any = None
        self.metrics: list[str] = []
        self.buffers = (array("d"), array("d"))

    def fit(self, values: tuple[Any, ...]) -> None:
        self.types = tuple(map(type, values))
        numeric = [i for i, t in enumerate(self.types) if t is float or t is int]
        self.numeric = _tuple_getter(numeric)
        self.metrics = [self._keys[i] for i in numeric]


class ValueHistograms:
    """Counts measurements into `counters` (see the module doc); `flush` before reading them."""

    FLUSH_VALUES = 1 << 16  # values buffered per layout and side (512 KiB) before they are binned
    MAX_LAYOUTS = 64  # key orders planned per task (a build has a handful)
    VALUE_CACHE_MAX = 2048  # values a metric remembers the counter key of, per side (value by value)

    def __init__(self, counters: Any, vectorized: bool | None = None) -> None:
        self.counters = counters
        self.vectorized = _numpy_available() if vectorized is None else vectorized
        self._layouts: dict[tuple[str, ...], _Layout] = {}
        self._names: dict[tuple[str, int, str], str] = {}
        # value by value: per side, per metric, value -> its counter key (built and hashed once)
        self._value_names: tuple[dict[str, dict[Any, str]], dict[str, dict[Any, str]]] = ({}, {})

    def add(self, annotations: dict[str, Any], passed: bool) -> None:
        if not self.vectorized:
            self._add_each(annotations, passed)
            return
        layout = tuple(annotations)
        plan = self._layouts.get(layout)
        if plan is None:
            if len(self._layouts) >= self.MAX_LAYOUTS:
                self.flush()
                self._layouts.clear()
            plan = self._layouts[layout] = _Layout(layout)
        if plan.pick is None:
            return
        values = plan.pick(tuple(annotations.values()))
        if plan.types is None:
            plan.fit(values)
        if tuple(map(type, values)) != plan.types:
            self._add_each(annotations, passed)
            return
        buffer = plan.buffers[0 if passed else 1]
        try:
            buffer.extend(plan.numeric(values))
        except OverflowError:  # an int beyond any float: this document alone, value by value
            del buffer[len(buffer) - len(buffer) % max(1, len(plan.metrics)):]
            self._add_each(annotations, passed)
            return
        if len(buffer) >= self.FLUSH_VALUES:
            self._bin_buffer(plan, 0 if passed else 1)

    def flush(self) -> None:
        for plan in self._layouts.values():
            for side in (0, 1):
                self._bin_buffer(plan, side)

    def _name(self, metric: str, side: int, bin_name: str) -> str:
        key = (metric, side, bin_name)
        name = self._names.get(key)
        if name is None:
            name = self._names[key] = f"{HIST}/{metric}/{'passed' if side == 0 else 'dropped'}/{bin_name}"
        return name

    def _add_each(self, annotations: dict[str, Any], passed: bool) -> None:
        counters = self.counters
        side = 0 if passed else 1
        caches = self._value_names[side]
        for key, value in annotations.items():
            cls = type(value)
            if cls is not float and cls is not int:  # exact types: a bool is not a measurement
                continue
            cache = caches.get(key)
            if cache is None:
                if not key.startswith("quality."):
                    continue
                cache = caches[key] = {}
            name = cache.get(value)
            if name is None:
                name = self._name(key, side, value_bin(value))
                if len(cache) < self.VALUE_CACHE_MAX:
                    cache[value] = name
            counters[name] += 1

    def _bin_buffer(self, plan: _Layout, side: int) -> None:
        buffer = plan.buffers[side]
        if not buffer:
            return
        import numpy as np

        n = len(plan.metrics)
        rows = np.frombuffer(buffer, dtype=np.float64).reshape(-1, n).copy()  # a view would pin the buffer
        bounds = _numpy_boundaries()
        counters = self.counters
        for j, metric in enumerate(plan.metrics):
            column = rows[:, j]
            finite = np.isfinite(column)
            zero = int(np.count_nonzero((column == 0) | ~finite))
            if zero:
                counters[self._name(metric, side, "z")] += zero
            for sign, mask in (("p", finite & (column > 0)), ("n", finite & (column < 0))):
                magnitudes = np.abs(column[mask])
                if not magnitudes.size:
                    continue
                ks = np.searchsorted(bounds, magnitudes, side="right") + (_K_MIN - 1)
                found, counts = np.unique(ks, return_counts=True)
                for k, c in zip(found.tolist(), counts.tolist(), strict=True):
                    counters[self._name(metric, side, f"{sign}{k}")] += c
        del buffer[:]


_NUMPY_BOUNDS: Any = None


def _numpy_boundaries() -> Any:
    global _NUMPY_BOUNDS
    if _NUMPY_BOUNDS is None:
        import numpy as np

        _NUMPY_BOUNDS = np.array(BOUNDARIES, dtype=np.float64)
    return _NUMPY_BOUNDS


def _numpy_available() -> bool:
    try:
        import numpy  # noqa: F401
    except ImportError:
        return False
    return True
