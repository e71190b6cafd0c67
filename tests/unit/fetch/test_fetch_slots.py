"""The global slots go to the waiter whose host has the most URLs left; stats render."""

from __future__ import annotations

import asyncio

from thresher.fetch.politeness import GlobalSlots
from thresher.fetch.stats import FetchStats


def test_global_slots_serve_the_largest_backlog_first_and_never_exceed_the_size() -> None:
    async def main() -> list[int]:
        slots = GlobalSlots(1)
        order: list[int] = []
        await slots.acquire()  # the one slot is taken: everyone else waits

        async def waiter(backlog: int) -> None:
            await slots.acquire(backlog)
            order.append(backlog)
            await asyncio.sleep(0)
            slots.release()

        tasks = [asyncio.create_task(waiter(b)) for b in (3, 40, 1, 7)]
        await asyncio.sleep(0)
        slots.release()
        await asyncio.gather(*tasks)
        return order

    assert asyncio.run(main()) == [40, 7, 3, 1]


def test_a_cancelled_waiter_passes_its_slot_on() -> None:
    async def main() -> bool:
        slots = GlobalSlots(1)
        await slots.acquire()
        doomed = asyncio.create_task(slots.acquire(5))
        other = asyncio.create_task(slots.acquire(1))
        await asyncio.sleep(0)
        doomed.cancel()
        slots.release()
        await asyncio.wait_for(other, 1.0)
        return other.done() and not other.cancelled()

    assert asyncio.run(main())


def test_progress_line_and_summary_show_rates_errors_and_hosts() -> None:
    stats = FetchStats(planned=10)
    for reason in (None, None, "http_404", "timeout_read"):
        stats.add("fetched" if reason is None else "failed", reason, 1000 if reason is None else 0)
    stats.hosts_parked, stats.hosts_active = 1, 3
    line = stats.progress_line()
    assert line.startswith("fetch 4/10") and "pages/s" in line and "MB/s" in line
    assert "http_404 1" in line and "timeout_read 1" in line and "hosts active 3 parked 1" in line and "ETA 0:" in line
    table = stats.render()
    assert "fetched" in table and "  http_404" in table and "hosts parked" in table
    assert stats.as_dict()["outcomes"] == {"failed": 2, "fetched": 2}
