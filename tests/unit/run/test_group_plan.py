from hypothesis import given
from hypothesis import strategies as st

from thresher.run.plan import GROUP_TASK_BYTES, GROUP_TASK_MIN_BYTES, MIN_GROUP_TASKS, plan_group_ranges


@given(st.lists(st.integers(0, 10_000_000), min_size=1, max_size=1024), st.one_of(st.none(), st.integers(1, 64)))
def test_ranges_are_contiguous_and_cover_every_bucket(sizes, tasks):
    ranges = plan_group_ranges(sizes, tasks)
    assert ranges[0][0] == 0 and ranges[-1][1] == len(sizes)
    assert all(a[1] == b[0] for a, b in zip(ranges, ranges[1:], strict=False))
    assert all(lo < hi for lo, hi in ranges)
    assert len(ranges) <= (tasks or max(MIN_GROUP_TASKS, -(-sum(sizes) // GROUP_TASK_BYTES)))


def test_ranges_balance_key_bytes_and_scale_with_them():
    uniform = [MIN_GROUP_TASKS * GROUP_TASK_MIN_BYTES // 1024] * 1024
    assert len(plan_group_ranges(uniform)) == MIN_GROUP_TASKS  # small: one task per worker at least
    # smaller still: no task under GROUP_TASK_MIN_BYTES, down to one for a few KB of keys
    assert len(plan_group_ranges([GROUP_TASK_MIN_BYTES * 3 // 1024] * 1024)) == 3
    assert len(plan_group_ranges([5] * 1024)) == 1
    assert plan_group_ranges([0] * 1024) == [(0, 1024)]
    big = [GROUP_TASK_BYTES // 16] * 1024  # 64 x the task target in all
    ranges = plan_group_ranges(big)
    assert len(ranges) == 64
    loads = [sum(big[lo:hi]) for lo, hi in ranges]
    assert max(loads) <= GROUP_TASK_BYTES
    skewed = [0] * 1000 + [5_000_000] * 24
    ranges = plan_group_ranges(skewed, 4)
    assert [sum(skewed[lo:hi]) for lo, hi in ranges] == [30_000_000] * 4
