"""Encode a sequence of texts in batches planned on the encoder's real token lengths.

`thresher.batching.plan_batches` sorts by length and caps each batch by items and by padded tokens;
each batch's rows are put back in input order, so the result is in document order whatever the
plan. The plan is made over one shard (the unit a worker embeds), so it depends on the data only,
never on the worker count.

Two kinds of failure, two answers:
- a batch the encoder raises on is retried by halves, so one bad text costs only itself (it is
  listed in `failed`; the build drops it as `embed.encoder_failed`);
- a batch that runs out of memory (torch's `OutOfMemoryError`, ONNX Runtime's failed allocation,
  `MemoryError`: `is_out_of_memory`) is not the texts' fault: the token budget is halved (from that
  batch's padded tokens), the encoder asked to release what it cached (`release_memory`, when it
  has one), and the batch and every one after it re-planned under the new budget. Each halving is
  counted (`oom_backoffs`) with the budget it ended at, for the manifest. A text that does not fit
  even alone fails like any other.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from thresher.batching import BatchPlan, plan_batches
from thresher.embed.encoder import Encoder, PreTokenizing


@dataclass(frozen=True, slots=True)
class Encoded:
    vectors: Any  # (n, dimension) float32, document order
    plan: BatchPlan
    truncated: int  # texts longer than the encoder's max_len (only their first max_len tokens count)
    empty: int  # texts with no tokens (zero rows)
    failed: tuple[int, ...] = ()  # positions the encoder raised on even alone (zero rows)
    oom_backoffs: int = 0  # times the token budget was halved after an out-of-memory error
    batch_tokens: int | None = None  # the token budget the last batch ran under (None: never reduced)


def is_out_of_memory(exc: BaseException) -> bool:
    """An accelerator (or host) allocation failure, told apart without importing torch: torch's
    `OutOfMemoryError` (torch.cuda's, and torch's own since 2.5), `MemoryError`, or a runtime
    error whose message says so (ONNX Runtime's CUDA provider, older torch)."""
    if isinstance(exc, MemoryError) or any(c.__name__ == "OutOfMemoryError" for c in type(exc).__mro__):
        return True
    message = str(exc).lower()
    return "out of memory" in message or "failed to allocate memory" in message


def encode_texts(
    encoder: Encoder, texts: Sequence[str], *, max_batch_size: int = 64, max_batch_tokens: int | None = None
) -> Encoded:
    import numpy as np

    token_ids = encoder.tokenize(texts) if isinstance(encoder, PreTokenizing) else None
    lengths = [len(t) for t in token_ids] if token_ids is not None else encoder.tokenize_lengths(texts)
    if token_ids is not None:  # only the first max_len ids are read: hold no more of a long text
        token_ids = [t[: encoder.max_len] for t in token_ids]
    plan = plan_batches(
        lengths, max_len=encoder.max_len, max_batch_size=max_batch_size, max_batch_tokens=max_batch_tokens
    )
    out = np.zeros((len(texts), encoder.dimension), dtype=np.float32)
    failed: list[int] = []
    budget = max_batch_tokens
    backoffs = 0

    def replanned(indices: list[int], tokens: int) -> list[list[int]]:
        """`indices` as batches under a budget of `tokens`, as a stack (next batch last)."""
        sub = plan_batches([lengths[i] for i in indices], max_len=encoder.max_len, max_batch_size=max_batch_size,
                           max_batch_tokens=tokens)
        return [[indices[k] for k in batch.indices] for batch in reversed(sub.batches)]

    # an explicit stack, not a recursive closure: a closure that calls itself is a reference
    # cycle, and it kept every chunk's texts, token ids and vectors alive until the cyclic GC ran
    # (embed's memory grew shard after shard: docs/embeddings.md)
    pending = [list(batch.indices) for batch in reversed(plan.batches)]
    while pending:
        indices = pending.pop()
        try:
            if token_ids is not None and isinstance(encoder, PreTokenizing):
                rows = encoder.encode_tokens([token_ids[i] for i in indices])
            else:
                rows = encoder.encode([texts[i] for i in indices])
        except Exception as exc:  # noqa: BLE001 - any model error; the document is named, not lost silently
            if len(indices) > 1 and is_out_of_memory(exc):
                release = getattr(encoder, "release_memory", None)
                if callable(release):
                    release()
                padded = len(indices) * max(min(max(lengths[i], 1), encoder.max_len) for i in indices)
                budget = max(1, padded // 2)
                backoffs += 1
                rest = [i for batch in reversed(pending) for i in batch]
                pending = replanned(indices + rest, budget)
            elif len(indices) == 1:
                failed.append(indices[0])
            else:
                half = len(indices) // 2
                pending += [indices[half:], indices[:half]]
            continue
        out[indices] = rows
    return Encoded(
        vectors=out,
        plan=plan,
        truncated=sum(1 for n in lengths if n > encoder.max_len),
        empty=sum(1 for n in lengths if n == 0),
        failed=tuple(sorted(failed)),
        oom_backoffs=backoffs,
        batch_tokens=budget if backoffs else None,
    )
