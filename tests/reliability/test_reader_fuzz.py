"""Property tests (hypothesis, run in CI): no byte string makes a reader raise, and whatever JSON
input holds, the line writer emits strict UTF-8 JSON. The long coverage-guided runs are in
benchmarks/fuzz_readers.py (atheris)."""

from __future__ import annotations

import json

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from thresher.read.base import Partition
from thresher.read.config import InputConfig
from thresher.read.sources import read_partition
from thresher.write.atomic import dumps_line

CONFIG = InputConfig()
SEEDS = [
    b'{"url": "https://e.example/", "html": "<p>hi</p>"}\n',
    b"WARC/1.0\r\nWARC-Type: response\r\nContent-Length: 10\r\n\r\nHTTP/1.1 2",
    b"\x1f\x8b\x08\x00\x00\x00\x00\x00\x00\x03",
    b"\x28\xb5\x2f\xfd\x00",
    b"<html><meta charset=\x00>",
]


def _mutations() -> st.SearchStrategy[bytes]:
    seeded = st.tuples(st.sampled_from(SEEDS), st.binary(max_size=200), st.integers(0, 80)).map(
        lambda t: t[0][: t[2]] + t[1] + t[0][t[2] :]
    )
    return st.one_of(st.binary(max_size=400), seeded)


@pytest.mark.parametrize("kind", ["jsonl", "warc", "html"])
@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=_mutations())
def test_no_bytes_make_a_reader_raise(tmp_path, kind, data):
    path = tmp_path / f"input.{kind}"
    path.write_bytes(data)
    for _ in read_partition(Partition(0, kind, (str(path),)), CONFIG):  # type: ignore[arg-type]
        pass


json_values = st.recursive(
    st.none()
    | st.booleans()
    | st.floats()
    | st.integers()
    | st.text(alphabet=st.characters(min_codepoint=0, max_codepoint=0x10FFFF)),
    lambda children: st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=5), children, max_size=4),
    max_leaves=12,
)


@settings(max_examples=100, deadline=None)
@given(value=st.dictionaries(st.text(max_size=5), json_values, max_size=4))
def test_line_writer_always_emits_strict_utf8_json(value):
    line = dumps_line(value)
    json.loads(line.decode("utf-8"), parse_constant=lambda name: pytest.fail(f"{name} written"))
