"""Clustering without a build: components, keep policies and their ties, attribution on chains and
stars, all-identical buckets, and the decision record's JSON form."""

from types import SimpleNamespace

import numpy as np
import pytest

from thresher.clusters import (
    KEEP_POLICIES,
    Decision,
    KeepPolicy,
    Node,
    cluster,
    decide,
    link_identical,
)
from thresher.core.document import Drop
from thresher.embed.semantic_phase import keep_order

EXACT = SimpleNamespace(name="dedup.exact", reason="exact_duplicate", threshold=None)
NEAR = SimpleNamespace(name="dedup.near", reason="near_duplicate", threshold=0.8)
STAGES = [EXACT, NEAR]


def node(ordinal, length=100, quality=0.0):
    return Node(ordinal, ordinal.to_bytes(8, "big"), length, quality)


def hex_id(ordinal):
    return ordinal.to_bytes(8, "big").hex()


def source(*edges):
    return lambda: iter(edges)


def decisions(edges, policy="first"):
    return {d.ordinal: d for d in decide(cluster(source(*edges), policy), STAGES)}


def test_chain_is_one_cluster_kept_at_the_lowest_ordinal_with_indirect_links_named():
    a, b, c, d = node(10), node(20), node(30), node(40)
    got = decisions([(1, a, b, 0.9), (1, b, c, 0.85), (1, c, d, 0.95)])
    assert got[10] == Decision(ordinal=10, cluster=hex_id(10), duplicates=3)
    assert got[20].drop == Drop(
        "dedup.near", "near_duplicate", 0.9, 0.8, {"kept_id": hex_id(10), "cluster": hex_id(10)}
    )
    # 30 is linked to the keeper only through 20 and 40: its strongest edge (0.95 to 40) names 40
    assert got[30].drop.detail == {"kept_id": hex_id(10), "cluster": hex_id(10), "via_id": hex_id(40)}
    assert got[30].drop.value == 0.95
    assert got[40].drop.detail["via_id"] == hex_id(30)
    assert list(got) == [10, 20, 30, 40]  # ordinal order


def test_star_attributes_every_member_to_the_hub_directly():
    hub = node(5)
    got = decisions([(0, hub, node(o), 1.0) for o in (7, 9, 11)])
    assert got[5].duplicates == 3
    for o in (7, 9, 11):
        assert got[o].drop == Drop(
            "dedup.exact", "exact_duplicate", 1.0, None, {"kept_id": hex_id(5), "cluster": hex_id(5)}
        )


def test_separate_components_are_separate_clusters():
    result = cluster(source((0, node(1), node(2), 1.0), (0, node(3), node(4), 1.0)), "first")
    assert result.clusters == 2 and result.nodes == 4


def test_longest_policy_keeps_the_longest_and_ties_go_to_the_earliest():
    a, b, c = node(1, length=50), node(2, length=80), node(3, length=80)
    got = decisions([(0, a, b, 1.0), (0, b, c, 1.0)], "longest")
    assert got[2].kept and got[2].duplicates == 2
    assert not got[1].kept and not got[3].kept


def test_best_quality_policy_keeps_the_highest_score_and_ties_go_to_the_earliest():
    a, b, c = node(1, quality=0.5), node(2, quality=0.25), node(3, quality=0.5)
    got = decisions([(0, a, b, 1.0), (0, a, c, 1.0)], "best_quality")
    assert got[1].kept and not got[3].kept
    got = decisions([(0, node(1, quality=0.1), node(2, quality=0.9), 1.0)], "best_quality")
    assert got[2].kept and got[1].drop.detail["kept_id"] == hex_id(2)


def test_an_earlier_stage_wins_the_attribution_over_a_stronger_later_one():
    a, b = node(1), node(2)
    got = decisions([(1, a, b, 0.99), (0, a, b, 1.0)])
    assert got[2].drop.stage == "dedup.exact"


def test_all_identical_bucket_links_each_member_to_the_first_of_its_kind():
    same = link_identical([b"x", b"x", b"y", b"x", b"y"])
    assert same.leaders == [0, 2]
    assert same.links == [(0, 1), (0, 3), (2, 4)]
    assert link_identical([b"z"] * 4).links == [(0, 1), (0, 2), (0, 3)]
    assert link_identical([]).leaders == []


def test_keep_policies_are_one_table_a_new_one_is_one_entry_and_ranks_alike_in_both_forms():
    assert set(KEEP_POLICIES) >= {"first", "longest", "best_quality"}
    KEEP_POLICIES["shortest"] = KeepPolicy(("length",), (False,))
    try:
        got = decisions([(0, node(1, length=50), node(2, length=10), 1.0)], "shortest")
        assert got[2].kept and not got[1].kept
        rows = np.array([(1, 50, 0.0), (2, 10, 0.0), (3, 10, 0.0)],
                        dtype=[("ordinal", "<u8"), ("length", "<u4"), ("quality", "<f4")])
        assert keep_order(rows, "shortest").tolist() == [1, 2, 0]
    finally:
        del KEEP_POLICIES["shortest"]
    with pytest.raises(ValueError, match="unknown keep policy 'nope'"):
        cluster(source((0, node(1), node(2), 1.0)), "nope")


def test_keep_order_over_rows_matches_the_cluster_phase_for_every_policy():
    rows = np.array([(7, 30, 0.2), (3, 30, 0.9), (5, 80, 0.9), (9, 80, 0.1)],
                    dtype=[("ordinal", "<u8"), ("length", "<u4"), ("quality", "<f4")])
    for policy in ("first", "longest", "best_quality"):
        order = keep_order(rows, policy).tolist()
        nodes = [node(int(r["ordinal"]), length=int(r["length"]), quality=float(r["quality"])) for r in rows]
        edges = [(0, nodes[order[0]], nodes[i], 1.0) for i in order[1:]]
        got = decisions(edges, policy)
        assert got[int(rows[order[0]]["ordinal"])].kept, policy
        assert sum(d.kept for d in got.values()) == 1, policy


def test_decision_json_round_trips_in_its_one_form():
    kept = Decision(ordinal=3, cluster="00ab", duplicates=2)
    assert kept.to_json() == {"o": 3, "keep": {"duplicates": 2, "cluster": "00ab"}}
    dropped = Decision(
        ordinal=4,
        cluster="00ab",
        drop=Drop("dedup.near", "near_duplicate", 0.9, 0.8, {"kept_id": "00ab", "cluster": "00ab"}),
    )
    assert dropped.to_json()["drop"]["detail"]["cluster"] == "00ab"
    for d in (kept, dropped):
        assert Decision.from_json(d.to_json()) == d


def test_no_edges_no_decisions():
    assert decisions([]) == {}
