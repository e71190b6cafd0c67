"""trim_heap: freed memory handed back to the system where the C library allows it."""

import platform

import pytest

from thresher.run.heap import trim_heap


@pytest.mark.skipif(platform.libc_ver()[0] != "glibc", reason="malloc_trim is a glibc function")
def test_trim_heap_returns_freed_memory_on_glibc() -> None:
    def rss_kib() -> int:
        with open("/proc/self/status") as f:
            return next(int(line.split()[1]) for line in f if line.startswith("VmRSS:"))

    # many medium blocks (below the mmap threshold, so they live in the heap), then freed
    blocks = [bytearray(64 * 1024) for _ in range(800)]  # ~50 MiB
    for b in blocks:
        b[::4096] = b"x" * len(b[::4096])  # touch every page
    held = rss_kib()
    del blocks
    assert trim_heap() is True
    assert rss_kib() < held - 20 * 1024  # most of the 50 MiB is back


def test_trim_heap_is_safe_to_call_repeatedly() -> None:
    first = trim_heap()
    assert trim_heap() is first
