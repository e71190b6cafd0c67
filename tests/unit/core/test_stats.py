from hypothesis import given
from hypothesis import strategies as st

from thresher.core.document import Drop, Malformed
from thresher.core.stats import Stats


def test_totals_reconcile_and_breakdown_by_stage_and_reason():
    s = Stats()
    for _ in range(3):
        s.record_seen()
        s.record_kept()
    s.record_seen()
    s.record_drop(
        Drop("quality.gopher", "too_few_words", 3, 50),
        [Drop("quality.gopher", "too_few_words", 3, 50), Drop("quality.gopher", "no_stop_words", 0, 2)],
    )
    s.record_seen()
    s.record_malformed(Malformed("invalid_json", "f:1"))
    assert (s.seen, s.kept, s.dropped, s.malformed) == (5, 3, 1, 1)
    assert s.reconciles()
    d = s.to_dict()
    assert d["drops"] == {"quality.gopher": {"too_few_words": 1}}
    assert d["rule_failures"] == {"quality.gopher": {"no_stop_words": 1, "too_few_words": 1}}
    assert d["malformed_reasons"] == {"invalid_json": 1}
    assert "quality.gopher/too_few_words" in s.render()


def test_render_warns_when_counts_do_not_reconcile():
    s = Stats()
    s.record_seen()
    assert "do not reconcile" in s.render()


counters = st.dictionaries(st.sampled_from(["seen", "kept", "drop/a/b", "event/x"]), st.integers(0, 1000))


@given(counters, counters, counters)
def test_merging_is_associative_and_commutative(a, b, c):
    sa, sb, sc = (Stats() for _ in range(3))
    for s, d in ((sa, a), (sb, b), (sc, c)):
        for k, v in d.items():
            s.count(k, v)
    assert ((sa + sb) + sc).counters == (sa + (sb + sc)).counters
    assert (sa + sb).counters == (sb + sa).counters
    assert sum([sa, sb, sc], Stats()).counters == (sa + sb + sc).counters


def test_dict_round_trip_keeps_counters():
    s = Stats()
    s.count("drop/x/y", 2)
    s.add_time("extract", 0.5)
    back = Stats.from_dict(s.to_dict())
    assert back.counters == s.counters and back.timings == {"extract": 0.5}
