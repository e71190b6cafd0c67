"""Length-sorted, token-budgeted batches for models that pad their inputs (transformers, embedders).

A padded batch costs `len(batch) × longest item` tokens, so batching texts of mixed length in input
order wastes most of the work on padding. `plan_batches` sorts items by their real token length and
cuts the sorted run greedily so that no batch exceeds the token budget (by default
`max_len × max_batch_size`: the cost of a full batch of the longest allowed items) nor
`max_batch_size` items. Short texts then travel in large batches and long ones in small batches,
at about the same cost per batch.

The plan depends only on the lengths and the limits (ties keep input order), so it is
deterministic; `padding_efficiency` (real tokens / padded tokens) says how much of the work is real.
Callers score each batch and put the results back with `Batch.indices`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Batch:
    indices: tuple[int, ...]  # positions of the items in the caller's sequence, shortest first
    padded_len: int  # the longest item's length (after truncation to max_len): every row is padded to it

    @property
    def padded_tokens(self) -> int:
        return len(self.indices) * self.padded_len


@dataclass(frozen=True, slots=True)
class BatchPlan:
    batches: tuple[Batch, ...]
    real_tokens: int
    padded_tokens: int

    @property
    def padding_efficiency(self) -> float:
        """Real tokens / padded tokens (1.0: no padding at all)."""
        return self.real_tokens / self.padded_tokens if self.padded_tokens else 1.0


def plan_batches(
    lengths: Sequence[int], *, max_len: int, max_batch_size: int, max_batch_tokens: int | None = None
) -> BatchPlan:
    """Batches over items of the given token `lengths` (each truncated to `max_len`).

    A batch holds at most `max_batch_size` items and at most `max_batch_tokens` padded tokens
    (default `max_len × max_batch_size`); an item is never split, so one longer than the budget
    travels alone.
    """
    if max_len < 1 or max_batch_size < 1:
        raise ValueError("max_len and max_batch_size must be positive")
    budget = max_batch_tokens if max_batch_tokens is not None else max_len * max_batch_size
    if budget < 1:
        raise ValueError("max_batch_tokens must be positive")
    clipped = [min(max(int(n), 1), max_len) for n in lengths]  # an empty text still takes one position
    order = sorted(range(len(clipped)), key=lambda i: (clipped[i], i))
    batches: list[Batch] = []
    current: list[int] = []
    longest = 0
    for i in order:
        n = clipped[i]
        if current and ((len(current) + 1) * n > budget or len(current) >= max_batch_size):
            batches.append(Batch(tuple(current), longest))
            current = []
        current.append(i)
        longest = n  # sorted ascending: the newest item is the longest
    if current:
        batches.append(Batch(tuple(current), longest))
    return BatchPlan(tuple(batches), sum(clipped), sum(b.padded_tokens for b in batches))
