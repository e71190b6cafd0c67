"""Value histograms of the per-document measurements (`quality.*` annotations), kept as counters.

A value falls in a fixed bin that depends on the value alone (ten a decade, 26% wide), so the
histograms of any partitioning sum to the same counts: `hist/<metric>/<passed|dropped>/<bin>`.

Bins are found by comparing with `BOUNDARIES` (10^(k/10), computed once in decimal arithmetic, so
the same floats on every platform), never with a logarithm: `bisect` for one value and NumPy's
`searchsorted` over the same array for many give the same bin by construction (exact comparisons).

`ValueHistograms` is on the build's hot path: about 30 measurements a document. A document is
handled by C-level calls planned once per key set (`_Plan`): take every planned value out by key
(which also proves the document has the plan's keys: a missing one raises, an extra one changes the
length), check the `quality.*` values' types are the plan's, pack the measurements as doubles onto
a buffer. The buffer is binned when it is full and when the task ends: by NumPy where it is
installed and either imported by the build already or worth its import (the task binned
`NUMPY_AFTER_VALUES` values), else value by value (one `bisect` per distinct value). A document that
does not fit its plan (another type) is binned value by value at once. The counts are the same
either way.
"""

from __future__ import annotations

import math
import operator
import struct
import sys
from bisect import bisect_right
from collections import Counter
from typing import Any

from thresher.run.histogram_boundaries import BINS_PER_DECADE, BOUNDARIES
from thresher.run.histogram_boundaries import K_MAX as _K_MAX  # bins from 1e-40 to 1e40; beyond: the end bins
from thresher.run.histogram_boundaries import K_MIN as _K_MIN

HIST = "hist"


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


def _one_getter(key: str) -> Any:
    getter = operator.itemgetter(key)
    return lambda d: (getter(d),)


class _Plan:
    """How documents with one set of annotation keys are read. `get` takes every value out by key,
    in the order: the measurements (int or float in the first such document, named `metrics`), the
    other `quality.*` values, the rest; `types` are the types of the first `checked` of them in that
    first document; `pack` turns the measurements into doubles. `buffers` hold packed rows per side."""

    __slots__ = ("get", "size", "checked", "types", "metrics", "pack", "buffers")

    def __init__(self, annotations: dict[str, Any]) -> None:
        quality = [k for k in annotations if k.startswith("quality.")]
        self.metrics = [k for k in quality if type(annotations[k]) is float or type(annotations[k]) is int]
        measured = set(self.metrics)
        others = [k for k in quality if k not in measured]
        rest = [k for k in annotations if not k.startswith("quality.")]
        keys = self.metrics + others + rest
        # itemgetter of one key returns the value, not a tuple (and of none is not allowed)
        self.get: Any = (operator.itemgetter(*keys) if len(keys) > 1 else
                         _one_getter(keys[0]) if keys else (lambda d: ()))
        self.size = len(annotations)
        self.checked = len(quality)
        self.types = tuple(type(annotations[k]) for k in self.metrics + others)
        self.pack = struct.Struct(f"={len(self.metrics)}d").pack  # native doubles: read back by cast("d")
        self.buffers = (bytearray(), bytearray())


class ValueHistograms:
    """Counts measurements into `counters` (see the module doc); `flush` before reading them.

    `vectorized`: None bins with NumPy where it pays (see the module doc), True always (NumPy must
    be installed), False never."""

    FLUSH_VALUES = 1 << 16  # values buffered per plan and side (512 KiB) before they are binned
    NUMPY_AFTER_VALUES = 1 << 16  # values binned one by one before NumPy is worth importing (~0.13 s)
    MAX_PLANS = 64  # key sets planned per task (a build has a handful)
    VALUE_CACHE_MAX = 2048  # values a metric remembers the counter key of, per side (value by value)

    def __init__(self, counters: Any, vectorized: bool | None = None) -> None:
        self.counters = counters
        self.vectorized = vectorized
        self._plan: _Plan | None = None  # the plan the last document fitted
        self._plans: dict[tuple[tuple[str, ...], tuple[type, ...]], _Plan] = {}
        self._binned = 0  # values binned value by value so far
        self._names: dict[tuple[str, int, str], str] = {}
        # value by value: per side, per metric, value -> its counter key (built and hashed once)
        self._value_names: tuple[dict[str, dict[Any, str]], dict[str, dict[Any, str]]] = ({}, {})

    def add(self, annotations: dict[str, Any], passed: bool) -> None:
        plan = self._plan
        if plan is None or len(annotations) != plan.size:
            plan = self._find_plan(annotations)
        try:
            values = plan.get(annotations)
        except KeyError:  # another key set of the same size
            plan = self._find_plan(annotations)
            values = plan.get(annotations)
        if tuple(map(type, values[:plan.checked])) != plan.types:
            plan = self._find_plan(annotations)
            values = plan.get(annotations)
            if tuple(map(type, values[:plan.checked])) != plan.types:  # no plan left for it
                self._add_each(annotations, passed)
                return
        side = 0 if passed else 1
        buffer = plan.buffers[side]
        try:
            buffer += plan.pack(*values[:len(plan.metrics)])
        except (OverflowError, struct.error):  # an int beyond any float: this document value by value
            self._add_each(annotations, passed)
            return
        if len(buffer) >= 8 * self.FLUSH_VALUES:
            self._bin_buffer(plan, side)

    def _find_plan(self, annotations: dict[str, Any]) -> _Plan:
        """The plan of this document's keys and types (made on first sight); the current one after."""
        key = (tuple(annotations), tuple(map(type, annotations.values())))
        plan = self._plans.get(key)
        if plan is None:
            if len(self._plans) >= self.MAX_PLANS:
                self.flush()
                self._plans.clear()
            plan = self._plans[key] = _Plan(annotations)
        self._plan = plan
        return plan

    def flush(self) -> None:
        for plan in self._plans.values():
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
        for key, value in annotations.items():
            cls = type(value)
            if (cls is float or cls is int) and key.startswith("quality."):  # exact types: a bool is no measurement
                counters[self._counter_name(key, side, value)] += 1

    def _counter_name(self, metric: str, side: int, value: Any) -> str:
        """The counter key of a value's bin, remembered per metric and side (value by value)."""
        cache = self._value_names[side].get(metric)
        if cache is None:
            cache = self._value_names[side][metric] = {}
        name = cache.get(value)
        if name is None:
            name = self._name(metric, side, value_bin(value))
            if len(cache) < self.VALUE_CACHE_MAX:
                cache[value] = name
        return name

    def _use_numpy(self) -> bool:
        if self.vectorized is not None:
            return self.vectorized
        if sys.modules.get("numpy") is not None:  # imported by the build already: free to use (None: blocked)
            return True
        return self._binned >= self.NUMPY_AFTER_VALUES and _numpy_available()

    def _bin_buffer(self, plan: _Plan, side: int) -> None:
        buffer = plan.buffers[side]
        n = len(plan.metrics)
        if not buffer or not n:
            return
        if self._use_numpy():
            self._bin_numpy(plan, side)
        else:
            rows = memoryview(buffer).cast("d")
            for j, metric in enumerate(plan.metrics):
                self._bin_each(metric, rows[j::n].tolist(), side)
            rows.release()
        del buffer[:]

    def _bin_each(self, metric: str, column: Any, side: int) -> None:
        """Value by value: one bin lookup per distinct value (most repeat: zeros, small counts)."""
        counters = self.counters
        self._binned += len(column)
        for value, count in Counter(column).items():
            counters[self._counter_name(metric, side, value)] += count

    def _bin_numpy(self, plan: _Plan, side: int) -> None:
        """Every metric at once: each value gets a code (metric, sign, boundary index), all
        counted by one `bincount`."""
        import numpy as np

        n = len(plan.metrics)
        values = np.frombuffer(plan.buffers[side], dtype=np.float64).copy()  # a view would pin the buffer
        # boundary index 0..len(BOUNDARIES) of |value| (bin k = _K_MIN - 1 + index); per metric the
        # codes [0, stride) are positive bins, [stride, 2 stride) negative ones, 2 stride the zero bin;
        # only the finite non-zero values are searched (zeros are most values of many metrics)
        stride = len(BOUNDARIES) + 1
        per_metric = 2 * stride + 1
        nonzero = np.flatnonzero(np.isfinite(values) & (values != 0))
        measured = values[nonzero]
        code = np.full(len(values), 2 * stride, dtype=np.int64)
        code[nonzero] = np.searchsorted(_numpy_boundaries(), np.abs(measured), side="right") + (measured < 0) * stride
        code = (code.reshape(-1, n) + np.arange(0, n * per_metric, per_metric, dtype=np.int64)).ravel()
        counts = np.bincount(code, minlength=n * per_metric)
        found = np.flatnonzero(counts)
        counters = self.counters
        for c, count in zip(found.tolist(), counts[found].tolist(), strict=True):
            j, r = divmod(c, per_metric)
            if r == 2 * stride:
                bin_name = "z"
            elif r >= stride:
                bin_name = f"n{_K_MIN - 1 + r - stride}"
            else:
                bin_name = f"p{_K_MIN - 1 + r}"
            counters[self._name(plan.metrics[j], side, bin_name)] += count


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
