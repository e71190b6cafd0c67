"""core/serial.py: the typed JSON form of dataclasses, its schema version, and every task result's
round trip through JSON text (issue 30)."""

from __future__ import annotations

import dataclasses
import json
import typing
from collections import Counter
from dataclasses import dataclass
from typing import Any, ClassVar, get_args, get_origin, get_type_hints

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from thresher.core import serial
from thresher.core.serial import SchemaError, SchemaVersionError, Serializable, dump, from_data, load, to_data
from thresher.core.stats import HIST_PREFIX, Stats
from thresher.dedup import url_stage
from thresher.embed import results as embed_results
from thresher.embed.stage import PHASES as EMBED_PHASES
from thresher.run import results as run_results
from thresher.run.phases import BUILD_PHASES

# -- every task result, from examples generated from its own field types ---------------------------

# Stats travels in its stats.json form, which keeps nonzero counters and timings to the microsecond
STATS = st.builds(
    Stats,
    st.dictionaries(
        st.sampled_from(["seen", "kept", "dropped", "malformed", "drop/a/b", "fail/a/c", "event/x",
                         f"{HIST_PREFIX}chars/kept/100", "malformed/bad_json", "other"]),
        st.integers(1, 10**12),
    ).map(Counter),
    st.dictionaries(st.sampled_from(["scan", "extract", "dedup"]), st.integers(0, 10**10).map(lambda n: n / 10**6)),
)


def strategy(tp: Any) -> st.SearchStrategy[Any]:
    """Values of the annotated type `tp`, as a task result's fields hold them."""
    origin, args = get_origin(tp), get_args(tp)
    if tp is Stats:
        return STATS
    if dataclasses.is_dataclass(tp):
        hints = get_type_hints(tp)
        return st.builds(tp, **{f.name: strategy(hints[f.name]) for f in dataclasses.fields(tp)})
    if origin in (typing.Union, type(int | None)):
        return st.one_of(*(strategy(a) for a in args))
    if origin is tuple and args[-1] is Ellipsis:
        return st.lists(strategy(args[0]), max_size=6).map(tuple)
    if origin is dict:
        return st.dictionaries(strategy(args[0]), strategy(args[1]), max_size=6)
    simple = {int: st.integers(-(2**53), 2**53), str: st.text(max_size=20), type(None): st.none(),
              float: st.floats(allow_nan=False, allow_infinity=False), bool: st.booleans()}
    return simple[tp]


def result_classes() -> list[type]:
    return [cls for module in (run_results, embed_results, url_stage) for cls in vars(module).values()
            if isinstance(cls, type) and issubclass(cls, Serializable) and cls is not Serializable]


def test_every_result_class_is_a_phase_result():
    assert set(result_classes()) == {phase.result for phase in (*BUILD_PHASES, *EMBED_PHASES, *url_stage.PHASES)}


@pytest.mark.parametrize("cls", result_classes(), ids=lambda c: c.__name__)
def test_every_result_round_trips_through_json_text(cls):
    @settings(max_examples=60, deadline=None)
    @given(strategy(cls))
    def round_trip(value):
        marker = json.loads(json.dumps(dump(value)))
        assert marker["v"] == cls.SCHEMA
        assert load(cls, marker) == value
        assert cls.from_json(json.loads(json.dumps(value.to_json()))) == value

    round_trip()


# -- the form ---------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True, kw_only=True)
class Point:
    x: int
    y: float


@dataclass(frozen=True, slots=True, kw_only=True)
class Shape(Serializable):
    SCHEMA: ClassVar[int] = 3

    name: str
    corners: tuple[Point, ...]
    centre: Point | None
    weights: dict[int, int]
    pair: tuple[int, str]
    tags: list[str]
    label: str | None = None


SQUARE = Shape(
    name="square",
    corners=(Point(x=0, y=0.5), Point(x=1, y=-2.25)),
    centre=Point(x=3, y=1.0),
    weights={0: 4, 17: -1},
    pair=(7, "seven"),
    tags=["a", "b"],
)


def test_nested_dataclasses_int_keys_and_optionals_round_trip():
    data = to_data(SQUARE)
    assert data == {
        "name": "square",
        "corners": [{"x": 0, "y": 0.5}, {"x": 1, "y": -2.25}],
        "centre": {"x": 3, "y": 1.0},
        "weights": {"0": 4, "17": -1},  # JSON object keys are strings...
        "pair": [7, "seven"],
        "tags": ["a", "b"],
        "label": None,
    }
    back = from_data(Shape, json.loads(json.dumps(data)))
    assert back == SQUARE
    assert list(back.weights) == [0, 17]  # ...and come back as ints
    empty = dataclasses.replace(SQUARE, centre=None, label="x", corners=(), weights={})
    assert from_data(Shape, json.loads(json.dumps(to_data(empty)))) == empty


def test_a_dict_of_int_to_int_round_trips():
    result = run_results.ClusterResult(dropped={3: 1, 0: 2, 12: 0}, clusters=2, nodes=5)
    text = json.dumps(dump(result))
    assert json.loads(text)["dropped"] == {"3": 1, "0": 2, "12": 0}
    assert load(run_results.ClusterResult, json.loads(text)).dropped == {3: 1, 0: 2, 12: 0}


def test_dump_carries_the_class_schema_version_first():
    record = dump(SQUARE)
    assert list(record)[0] == "v" and record["v"] == 3
    assert load(Shape, record) == SQUARE
    assert "v" not in SQUARE.to_json()  # the bare form, as a manifest entry


@pytest.mark.parametrize("version", [2, 4, "3", 3.0, None])
def test_a_record_of_another_schema_version_is_refused(version):
    record = dump(SQUARE)
    if version is None:
        del record["v"]
    else:
        record["v"] = version
    with pytest.raises(SchemaVersionError, match="Shape record has .*this thresher reads version 3"):
        load(Shape, record)


def test_unknown_and_missing_fields_are_schema_errors_and_defaults_fill_in():
    record = dump(SQUARE)
    with pytest.raises(SchemaError, match="unknown fields: colour"):
        load(Shape, {**record, "colour": "red"})
    with pytest.raises(SchemaError, match="missing 1 required keyword-only argument: 'name'"):
        load(Shape, {k: v for k, v in record.items() if k != "name"})
    assert load(Shape, {k: v for k, v in record.items() if k != "label"}).label is None
    with pytest.raises(SchemaError, match="must be a JSON object"):
        load(Shape, [1, 2])
    with pytest.raises(SchemaError, match="Point record must be a JSON object"):
        from_data(Shape, {**SQUARE.to_json(), "centre": 5})
    assert not isinstance(SchemaError("x"), SchemaVersionError)  # a damaged record is not a stale one


def test_stats_use_their_own_record_form():
    stats = Stats(Counter({"seen": 2, "kept": 1, "dropped": 1, "drop/q/short": 1}), {"scan": 0.25})
    result = run_results.VerifyResult(stats=stats, edges=4)
    assert result.to_json()["stats"] == stats.to_dict()
    assert load(run_results.VerifyResult, json.loads(json.dumps(dump(result)))) == result


def test_manifest_entries_keep_their_form():
    shard = run_results.ShardFile(path="shard-00000.jsonl.gz", records=3, bytes=120, sha256="ab")
    assert json.dumps(shard.to_json()) == (
        '{"path": "shard-00000.jsonl.gz", "records": 3, "bytes": 120, "sha256": "ab"}'
    )
    vectors = embed_results.VectorFile(shard="s", path="s.npy", rows=3, bytes=9, sha256="cd")
    assert list(vectors.to_json()) == ["shard", "path", "rows", "bytes", "sha256"]


def test_types_without_a_json_form_are_refused():
    @dataclass(frozen=True)
    class Odd:
        where: set[int]

    with pytest.raises(TypeError, match="no JSON form"):
        to_data(Odd(where={1}))

    @dataclass(frozen=True)
    class Either:
        value: int | str

    with pytest.raises(TypeError, match="only `X | None`"):
        to_data(Either(value=1))


def test_type_hints_are_resolved_once_per_class(monkeypatch):
    @dataclass(frozen=True)
    class Fresh:
        n: int
        inner: Point

    calls: list[type] = []
    real = serial.get_type_hints

    def counting(cls):
        calls.append(cls)
        return real(cls)

    monkeypatch.setattr(serial, "get_type_hints", counting)
    for n in range(20):
        assert from_data(Fresh, to_data(Fresh(n=n, inner=Point(x=n, y=0.0)))) == Fresh(n=n, inner=Point(x=n, y=0.0))
    assert calls.count(Fresh) == 1


class OwnForm:
    """A result type with its own to_json/from_json and no SCHEMA (as a plugin stage may declare)."""

    def __init__(self, n: int) -> None:
        self.n = n

    def to_json(self) -> dict[str, Any]:
        return {"count": self.n}

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> OwnForm:
        return cls(data["count"])


def test_a_class_with_its_own_json_form_is_dumped_and_loaded_through_it():
    record = dump(OwnForm(4))
    assert record == {"v": 1, "count": 4}
    assert load(OwnForm, json.loads(json.dumps(record))).n == 4
    with pytest.raises(SchemaVersionError, match="OwnForm record has no schema version"):
        load(OwnForm, {"count": 4})
