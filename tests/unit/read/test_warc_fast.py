"""The FastWARC-backed reader gives exactly the pure reader's items: on every sample and on every
built bad-input archive, and it really frames the clean files itself."""

from __future__ import annotations

from pathlib import Path

import pytest

pytest.importorskip("fastwarc.warc")

from test_warc_bad_input import BAD_CASES  # noqa: E402
from test_warc_samples import PURE_COUNTS  # noqa: E402

from thresher.read.archive import read_warc  # noqa: E402
from thresher.read.base import Partition  # noqa: E402
from thresher.read.config import InputConfig  # noqa: E402
from thresher.read.warc import read_warc_pure  # noqa: E402
from thresher.read.warc_config import WarcConfig  # noqa: E402
from thresher.read.warc_fast import _FastFramer, read_warc_fast  # noqa: E402


def both(path: Path, index: int = 5, **input_kw: object) -> tuple[list, list]:
    part = Partition(index, "warc", (str(path),))
    config = InputConfig(**input_kw)
    return list(read_warc_pure(part, config, WarcConfig())), list(read_warc_fast(part, config, WarcConfig()))


@pytest.mark.parametrize("name", sorted(PURE_COUNTS))
def test_fast_reader_equals_pure_reader_on_sample(shared_data: Path, name: str) -> None:
    pure, fast = both(shared_data / "warc" / name)
    assert fast == pure


@pytest.mark.parametrize("name", sorted(BAD_CASES))
def test_fast_reader_equals_pure_reader_on_bad_input(tmp_path: Path, name: str) -> None:
    for suffix, data in ((".warc", BAD_CASES[name]()),):
        path = tmp_path / f"{name}{suffix}"
        path.write_bytes(data)
        pure, fast = both(path)
        assert fast == pure


def test_fast_reader_equals_pure_with_a_small_size_cap(shared_data: Path) -> None:
    pure, fast = both(shared_data / "warc" / "aut" / "example.warc.gz", max_record_bytes=20_000)
    assert fast == pure
    assert any(getattr(getattr(i, "drop", None), "reason", None) == "too_large" for i in fast)


@pytest.mark.parametrize(
    "name",
    ["aut/example.warc.gz", "pywb/iana.warc.gz", "resiliparse/warcfile.warc", "resiliparse/clueweb-quirk.warc.gz"],
)
def test_fastwarc_frames_clean_files_to_the_end(shared_data: Path, name: str) -> None:
    framer = _FastFramer(str(shared_data / "warc" / name), 64 * 1024 * 1024)
    n = sum(1 for _ in framer.records())
    assert n > 0 and framer.resume_at is None


def test_auto_engine_uses_the_fast_reader_and_pure_engine_does_not(
    shared_data: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import thresher.read.warc_fast as fast_module

    calls = []
    real = fast_module.read_warc_fast

    def spy(*args: object, **kwargs: object):  # type: ignore[no-untyped-def]
        calls.append(1)
        return real(*args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(fast_module, "read_warc_fast", spy)
    part = Partition(0, "warc", (str(shared_data / "warc" / "whirlwind" / "whirlwind.warc.gz"),))
    list(read_warc(part, InputConfig()))
    assert calls == [1]


def test_fast_reader_skips_a_record_over_the_cap_like_the_pure_reader(tmp_path: Path) -> None:
    from test_warc_bad_input import B

    path = tmp_path / "big.warc"
    size = 8 * 1024 * 1024
    head = (
        "WARC/1.0\r\nWARC-Type: response\r\nWARC-Target-URI: http://big.example/\r\n"
        f"Content-Type: application/http; msgtype=response\r\nContent-Length: {size}\r\n\r\n"
    ).encode()
    with open(path, "wb") as fh:
        fh.write(head)
        fh.seek(len(head) + size)  # a sparse hole
        fh.write(b"\r\n\r\n" + B)
    pure, fast = both(path, max_record_bytes=1024 * 1024)
    assert fast == pure
    assert [type(i).__name__ for i in fast] == ["Skip", "Document"]
    framer = _FastFramer(str(path), 1024 * 1024)
    assert [r.block is None for r in framer.records()] == [True, False] and framer.resume_at is None
