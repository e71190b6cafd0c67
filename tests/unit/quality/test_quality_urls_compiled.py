"""Large URL lists compiled once into a file (`thresher.quality.list_store`): the same answers as
the in-memory list, a damaged file recompiled, one file per content, safe when compiled by several
processes at once, and in a second process neither private copies nor the file's pages mapped."""

from __future__ import annotations

import multiprocessing
import subprocess
import sys
import textwrap
from array import array
from collections import OrderedDict
from pathlib import Path

import pytest
from tests.conftest import shared_path

from thresher.mapped_file import PagedDigests
from thresher.quality import list_store, url_lists, urls
from thresher.quality.urls import DomainDigests, UrlFilter, UrlFilterConfig

LINES = [f"site{i}.example" for i in range(3000)] + [
    "www.spaced.example.",
    "WWW.Upper.Example",
    "# a comment",
    "",
    "  padded.example  ",
    "trail.example...",
    "www.",
    "caf\u00e9.example",
    "\u0130stanbul.example",
    "bad\udcff".encode("utf-8", "surrogateescape").decode("utf-8", "replace"),
    "cr.example\r",
    "#hash-not-first.example",
    "x#y.example",
]
HOSTS = ["site17.example", "a.b.site2999.example", "spaced.example", "upper.example", "padded.example", "trail.example",
         "caf\u00e9.example", "i\u0307stanbul.example", "cr.example", "x#y.example", "site3000.example", "example"]


@pytest.fixture
def big_list(tmp_path, monkeypatch):
    """A UT1 folder whose `domains` file counts as large (digests) and as worth compiling."""
    monkeypatch.setattr(url_lists, "_loaded", OrderedDict())
    monkeypatch.setattr(url_lists, "DIGEST_FILE_BYTES", 1000)
    monkeypatch.setattr(list_store, "COMPILE_MIN_BYTES", 1000)
    folder = tmp_path / "adult"
    folder.mkdir()
    (folder / "domains").write_text("\n".join(LINES) + "\n", encoding="utf-8")
    (folder / "urls").write_text("example.org/bad\nwww.example.net/worse/\n", encoding="utf-8")
    return (str(folder),)


def answers(lists: urls.UrlLists) -> list:
    return [urls._host_listed(h, lists.domains) for h in HOSTS] + [
        urls._prefix_listed(loc, lists.urls) for loc in ("example.org/bad/page", "example.net/worse", "example.org")]


def test_compiled_list_answers_as_the_in_memory_list(big_list, tmp_path):
    memory = urls.load_url_lists(big_list)
    compiled = list_store.shared_url_lists(big_list, tmp_path / "lists")
    assert isinstance(compiled.domains, DomainDigests) and isinstance(compiled.domains.digests, PagedDigests)
    assert list(compiled.domains.digests) == list(memory.domains.digests)
    # the URL prefixes are digests in the file too (format 2), one per prefix of the in-memory set
    assert isinstance(compiled.urls, DomainDigests) and isinstance(compiled.urls.digests, PagedDigests)
    assert list(compiled.urls.digests) == sorted(DomainDigests.digest(u) for u in memory.urls)
    assert all(u in compiled.urls for u in memory.urls) and "example.org" not in compiled.urls
    assert answers(compiled) == answers(memory)
    assert answers(compiled)[:5] == [
        "site17.example",
        "site2999.example",
        "spaced.example",
        "upper.example",
        "padded.example",
    ]


def test_list_kept_as_strings_compiles_to_the_same_strings(big_list, tmp_path, monkeypatch):
    monkeypatch.setattr(url_lists, "DIGEST_FILE_BYTES", 1 << 30)
    memory = urls.load_url_lists(big_list)
    compiled = list_store.shared_url_lists(big_list, tmp_path / "lists")
    assert isinstance(compiled.domains, set) and compiled.domains == memory.domains
    assert sorted(compiled.urls.digests) == sorted(DomainDigests.digest(u) for u in memory.urls)
    assert answers(compiled) == answers(memory)


def test_compiled_kernel_and_python_reference_give_the_same_digests(big_list, monkeypatch):
    if url_lists._KERNEL is None:
        pytest.skip("thresher.quality._domainlist is not built (no C compiler at install)")
    chunk = ("\n".join(f"Www.Site{i}.Example.." if i % 7 == 0 else f"site{i}.example" for i in range(5000))
             + "\n#c\n\nwww.\n" + "a" * 300 + "\n").encode()
    assert url_lists._KERNEL.digest_lines(chunk) is not None
    reference = url_lists.array("Q", url_lists._chunk_digests(chunk))
    if sys.byteorder == "little":
        reference.byteswap()
    assert url_lists._KERNEL.digest_lines(chunk) == reference.tobytes()
    assert (
        url_lists._KERNEL.digest_lines("caf\u00e9.example\n".encode()) is None
    )  # not ASCII: the Python reference decides
    with_kernel = urls.load_url_lists(big_list)
    monkeypatch.setattr(url_lists, "_KERNEL", None)
    assert list(urls.load_url_lists(big_list).domains.digests) == list(with_kernel.domains.digests)


def test_digests_pin_blake2b_64(big_list):
    assert DomainDigests.digest("example.com") == int.from_bytes(
        __import__("hashlib").blake2b(b"example.com", digest_size=8).digest(), "big")
    values = url_lists.array("Q", [5, 3, 5, 2**64 - 1, 0, 3])
    assert list(urls.sort_unique(values)) == [0, 3, 5, 2**64 - 1]


@pytest.mark.parametrize("damage", ["truncate", "flip_body", "flip_header", "empty"])
def test_damaged_compiled_file_is_detected_and_compiled_again(big_list, tmp_path, damage):
    folder = tmp_path / "lists"
    expected = answers(list_store.shared_url_lists(big_list, folder))
    (path,) = folder.glob("*.urllist")
    key = path.stem
    data = bytearray(path.read_bytes())
    if damage == "truncate":
        data = data[:-9]
    elif damage == "flip_body":
        data[list_store.HEADER_BYTES + 100] ^= 1
    elif damage == "flip_header":
        data[20] ^= 1
    else:
        data = bytearray()
    damaged = tmp_path / "damaged"
    damaged.write_bytes(bytes(data))
    damaged.replace(path)  # a new file, as a recompile writes: open readers keep the old one
    assert list_store.open_compiled(path, key) is None
    assert answers(list_store.shared_url_lists(big_list, folder)) == expected
    assert list_store.open_compiled(path, key) is not None  # replaced by a sound file


def test_changed_list_gets_a_new_file_and_the_same_content_the_same_file(big_list, tmp_path):
    folder = tmp_path / "lists"
    first = list_store.content_key(big_list)
    list_store.shared_url_lists(big_list, folder)
    Path(big_list[0], "domains").write_text("\n".join(LINES[1:]) + "\n", encoding="utf-8")
    second = list_store.content_key(big_list)
    changed = list_store.shared_url_lists(big_list, folder)
    assert first != second
    assert sorted(p.stem for p in folder.glob("*.urllist")) == sorted([first, second])
    assert urls._host_listed("site0.example", changed.domains) is None
    copy = tmp_path / "copy"
    copy.mkdir()
    Path(copy, "domains").write_bytes(Path(big_list[0], "domains").read_bytes())
    Path(copy, "urls").write_bytes(Path(big_list[0], "urls").read_bytes())
    assert list_store.content_key((str(copy),)) == second  # content, not path, names the file


def _compile_in_child(paths: tuple[str, ...], folder: str, queue) -> None:
    url_lists.DIGEST_FILE_BYTES = 1000
    lists = list_store.shared_url_lists(paths, folder)
    queue.put(bytes(array("Q", lists.domains.digests)))


def test_processes_compiling_at_once_do_not_clash(big_list, tmp_path):
    folder = tmp_path / "lists"
    ctx = multiprocessing.get_context("spawn")
    queue = ctx.Queue()
    procs = [ctx.Process(target=_compile_in_child, args=(big_list, str(folder), queue)) for _ in range(4)]
    for p in procs:
        p.start()
    results = [queue.get(timeout=60) for _ in procs]
    for p in procs:
        p.join(60)
        assert p.exitcode == 0
    expected = bytes(array("Q", urls.load_url_lists(big_list).domains.digests))
    assert results == [expected] * 4
    assert [p.suffix for p in folder.iterdir() if not p.name.endswith(".lock")] == [".urllist"]  # no temporary left


def test_unwritable_folder_falls_back_to_the_in_memory_list(big_list, tmp_path):
    blocker = tmp_path / "a-file"
    blocker.write_text("not a folder")
    lists = list_store.shared_url_lists(big_list, blocker / "lists")
    assert answers(lists) == answers(urls.load_url_lists(big_list))


def test_filter_reads_the_list_from_its_configured_folder(big_list, tmp_path):
    folder = tmp_path / "work" / "lists"
    f = UrlFilter(UrlFilterConfig(blocklists=big_list, compiled_dir=str(folder)))
    assert isinstance(f.block.domains.digests, PagedDigests)
    assert len(list(folder.glob("*.urllist"))) == 1


_CHILD = textwrap.dedent("""
    import json, sys
    def memory_kib():
        fields = {}
        with open("/proc/self/smaps_rollup") as f:
            for line in f:
                parts = line.split()
                if len(parts) >= 2 and parts[0].endswith(":") and parts[1].isdigit():
                    fields[parts[0][:-1]] = int(parts[1])
        return fields["Private_Clean"] + fields["Private_Dirty"], fields["Rss"]
    from thresher.quality import list_store, url_lists, urls
    paths, folder = (sys.argv[1],), sys.argv[2]
    private_before, rss_before = memory_kib()
    lists = list_store.shared_url_lists(paths, folder)
    # 3 lookups each (www.hostN.example.com, hostN.example.com, example.com): ~90% of the file's
    # 8,905 blocks read, which through a map would have put nearly all its 36 MB in this process
    hits = sum(urls._host_listed(f"www.host{i}.example.com", lists.domains) is not None for i in range(20000))
    paged = type(lists.domains.digests).__name__
    listed = urls._host_listed("0-1sex.com", lists.domains)
    private_after, rss_after = memory_kib()
    print(json.dumps({"private_kib": private_after - private_before, "rss_kib": rss_after - rss_before,
                      "paged": paged, "size": len(lists.domains), "listed": listed}), flush=True)
    sys.stdin.readline()  # the first worker stays while the second one maps the same pages
""")


def test_second_process_reading_the_fineweb_list_adds_at_most_1_mib(tmp_path):
    """Private_Clean + Private_Dirty and Rss (smaps_rollup) of a second worker, before and after it
    opens the list and looks up 20,000 hosts in it, while the first worker still has it open (as a
    pool's workers do)."""
    if not Path("/proc/self/smaps_rollup").exists():
        pytest.skip("needs /proc/<pid>/smaps_rollup (Linux) to measure private memory")
    tarball = shared_path("blocklists", "fineweb-url-blocklist.tar.gz")
    folder = tmp_path / "lists"
    env_src = str(Path(urls.__file__).resolve().parents[2])
    run = [sys.executable, "-c", _CHILD, str(tarball), str(folder)]
    env = {"PYTHONPATH": env_src, "PATH": "/usr/bin:/bin"}
    import json

    first = subprocess.Popen(run, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, env=env)
    try:
        json.loads(first.stdout.readline())  # compiled and read through by the first worker
        second = json.loads(subprocess.run(run, input="\n", check=True, capture_output=True, text=True, env=env).stdout)
    finally:
        first.communicate("\n", timeout=60)
    assert second["paged"] == "PagedDigests" and second["size"] == 4_558_940 and second["listed"] == "0-1sex.com"
    # the bound is 8 MiB of private memory; ~3 MiB while the URL prefixes were a set of
    # strings, 96 KiB once mapped, and then the mapped pages put ~35 MiB in the worker's RSS
    assert second["private_kib"] <= 1024, second
    assert second["rss_kib"] <= 2048, second


def test_a_big_domain_list_is_read_holding_one_array_of_its_digests(tmp_path, monkeypatch):
    """Reading (or compiling) a large list holds its digests once: the FineWeb list's compile peaked
    at 93 MiB when the array was copied to merge an empty set of small-file names into it, 61 after."""
    import tracemalloc

    monkeypatch.setattr(url_lists, "_loaded", OrderedDict())
    monkeypatch.setattr(url_lists, "DIGEST_FILE_BYTES", 1000)
    n = 2_000_000
    folder = tmp_path / "adult"
    folder.mkdir()
    with open(folder / "domains", "w", encoding="utf-8") as f:
        for start in range(0, n, 100_000):
            f.write("".join(f"site{i}.example\n" for i in range(start, start + 100_000)))
    tracemalloc.start()
    try:
        lists = urls.load_url_lists((str(folder),))
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert len(lists.domains) == n
    digests = 8 * n  # 16 MB: a copy of them would take the peak past 32
    assert peak <= 1.5 * digests, f"peak {peak / 2**20:.1f} MiB for {digests / 2**20:.1f} MiB of digests"
