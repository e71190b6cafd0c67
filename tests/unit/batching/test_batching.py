import pytest

from thresher.batching import plan_batches


def test_batches_are_sorted_by_length_and_capped_by_tokens_and_size():
    lengths = [5, 100, 3, 40, 3, 7, 90, 1]
    plan = plan_batches(lengths, max_len=64, max_batch_size=3, max_batch_tokens=128)
    order = [i for b in plan.batches for i in b.indices]
    assert sorted(order) == list(range(len(lengths)))
    clipped = [min(n, 64) for n in lengths]
    assert [clipped[i] for i in order] == sorted(clipped)  # shortest first, ties in input order
    assert order[:2] == [7, 2] and order.index(2) < order.index(4)
    for batch in plan.batches:
        assert len(batch.indices) <= 3 and batch.padded_tokens <= 128
        assert batch.padded_len == max(clipped[i] for i in batch.indices)
    assert plan.real_tokens == sum(clipped)
    assert plan.padding_efficiency == pytest.approx(plan.real_tokens / sum(b.padded_tokens for b in plan.batches))


def test_the_default_budget_is_max_len_times_batch_size_and_plans_are_deterministic():
    lengths = [(i * 37) % 200 for i in range(500)]
    plan = plan_batches(lengths, max_len=128, max_batch_size=16)
    assert all(b.padded_tokens <= 128 * 16 for b in plan.batches)
    assert plan == plan_batches(lengths, max_len=128, max_batch_size=16)
    # sorting makes padding small: over 90% of the padded tokens are real
    assert plan.padding_efficiency > 0.9
    unsorted_padded = sum(16 * max(min(n, 128) for n in lengths[i:i + 16]) for i in range(0, 500, 16))
    assert plan.padded_tokens < unsorted_padded


def test_an_item_longer_than_the_budget_travels_alone():
    plan = plan_batches([10, 1000, 10], max_len=1000, max_batch_size=8, max_batch_tokens=100)
    assert [b.indices for b in plan.batches] == [(0, 2), (1,)]


def test_nonsense_limits_are_refused():
    with pytest.raises(ValueError):
        plan_batches([1], max_len=0, max_batch_size=1)
