"""Duplicate clusters from verified edges: components, keepers, attribution, decisions.

Pure functions over an *edge source* (a callable that iterates every verified edge again, in the
same order each time: the build reads them from the work dir three times rather than holding them),
so they are tested without a build (tests/unit/test_clusters.py). The build's cluster task
(`thresher.run.cluster.cluster_task`) only reads the edge files and writes the decisions. Every
clustering corpus stage (exact and near dedup here, semantic dedup over its own vectors) ranks the
members of a cluster by the one keep-policy table (`KEEP_POLICIES`), so `--keep` means the same in all.

- `colliding_ordinals`: the distinct documents that take part in any edge, ascending;
- `components`: union-find over them; each component's root is its lowest ordinal;
- `keepers`: the member each component keeps, by a keep policy (`KEEP_POLICIES`: the fields a
  member is ranked by; `KeepPolicy.sort_keys` ranks columns of rows the same way);
- `attribute`: every other member's reason: its direct edge to the keeper when there is one (an
  earlier stage, e.g. exact, wins over a later one, then the higher similarity), else its strongest
  edge, with `via` naming the neighbour that linked it;
- `decide`: one `Decision` per member, in ordinal order.

Only colliding documents are in memory, each as slots of typed arrays indexed by its rank among the
colliding ordinals (~80 bytes measured; see benchmarks/cluster_memory.py), never as objects.

`link_identical` is the group phase's shortcut for members of one key bucket whose payloads are
byte-identical: they need no verification (similarity(a, a) is 1.0).
"""

from __future__ import annotations

from array import array
from bisect import bisect_left
from collections.abc import Callable, Hashable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any, NamedTuple

from thresher.core.document import Drop
from thresher.core.stages import CorpusStage


class Node(NamedTuple):
    """One end of an edge: the document's ordinal, its 8-byte id and what keep policies rank by.
    A named tuple, not a frozen dataclass: the cluster phase makes two per edge on each of its
    three passes over the edges, and a frozen dataclass costs ~0.5 us more to build (each field set
    through `object.__setattr__`)."""

    ordinal: int
    doc_id: bytes
    length: int
    quality: float

    @property
    def id_hex(self) -> str:
        return self.doc_id.hex()


# (index of the corpus stage that verified it, node a, node b, similarity)
Edge = tuple[int, Node, Node, float]
EdgeSource = Callable[[], Iterable[Edge]]


class DistinctOrdinals:
    """Collects ordinals and returns the distinct ones, ascending, as an array('Q'). A set holds
    them (~100 bytes per value) until it has SET_LIMIT; from then on, with NumPy (the fast extra),
    values are deduplicated a chunk at a time and merged into the running result, so the peak is
    ~3 x 8 bytes per distinct value plus one chunk. Small builds never import NumPy (~0.13 s)."""

    CHUNK = 1 << 20
    SET_LIMIT = 1 << 16

    def __init__(self) -> None:
        self.np: Any = None
        self.seen: set[int] | None = set()
        self.chunk = array("Q")

    def add(self, ordinal: int) -> None:
        seen = self.seen
        if seen is not None:
            seen.add(ordinal)
            if len(seen) >= self.SET_LIMIT:
                self._to_numpy()
            return
        self.chunk.append(ordinal)
        if len(self.chunk) >= self.CHUNK:
            self._merge()

    def _to_numpy(self) -> None:
        try:
            import numpy
        except ImportError:
            self.SET_LIMIT = 1 << 62  # the set it is, to the end
            return
        self.np = numpy
        assert self.seen is not None
        self.distinct = numpy.array(sorted(self.seen), dtype=numpy.uint64)
        self.seen = None

    def _merge(self) -> None:
        np = self.np
        fresh = np.unique(np.frombuffer(self.chunk, dtype=np.uint64))
        self.chunk = array("Q")
        self.distinct = np.union1d(self.distinct, fresh) if self.distinct.size else fresh

    def result(self) -> array[int]:
        if self.seen is not None:
            values = array("Q", sorted(self.seen))
            self.seen = set()
            return values
        self._merge()
        values = array("Q", self.distinct.astype(self.np.uint64).tobytes())
        self.distinct = self.np.empty(0, dtype=self.np.uint64)
        return values


def colliding_ordinals(edges: EdgeSource) -> array[int]:
    """The distinct ordinals of every edge's ends, ascending (a node's index is its rank here)."""
    collected = DistinctOrdinals()
    for _, a, b, _ in edges():
        collected.add(a.ordinal)
        collected.add(b.ordinal)
    return collected.result()


class Components:
    """Union-find over the colliding documents, with what keep policies rank by. Index order is
    ordinal order, and a component's root is its member with the lowest ordinal."""

    def __init__(self, ordinals: array[int]) -> None:
        n = len(ordinals)
        self.ordinals = ordinals
        self.ids = array("Q", bytes(8 * n))
        self.lengths = array("I", bytes(4 * n))
        self.qualities = array("f", bytes(4 * n))
        self.parent = array("q", range(n))

    def __len__(self) -> int:
        return len(self.ordinals)

    def index(self, node: Node) -> int:
        return bisect_left(self.ordinals, node.ordinal)

    def find(self, x: int) -> int:
        parent = self.parent
        root = x
        while parent[root] != root:
            root = parent[root]
        while parent[x] != root:
            parent[x], x = root, parent[x]
        return root

    def union(self, a: Node, b: Node) -> None:
        ia, ib = self.index(a), self.index(b)
        for i, node in ((ia, a), (ib, b)):
            self.ids[i] = int.from_bytes(node.doc_id, "big")
            self.lengths[i] = min(node.length, 0xFFFFFFFF)
            self.qualities[i] = node.quality
        ra, rb = self.find(ia), self.find(ib)
        if ra != rb:  # the root is the member with the lowest ordinal, i.e. the lowest index
            if ra < rb:
                self.parent[rb] = ra
            else:
                self.parent[ra] = rb

    def id_hex(self, i: int) -> str:
        return self.ids[i].to_bytes(8, "big").hex()

    def roots(self) -> int:
        return sum(1 for i in range(len(self)) if self.parent[i] == i)


def components(edges: EdgeSource, ordinals: array[int] | None = None) -> Components:
    """The connected components of the edges (`ordinals`: their `colliding_ordinals`, if known)."""
    comps = Components(colliding_ordinals(edges) if ordinals is None else ordinals)
    for _, a, b, _ in edges():
        comps.union(a, b)
    return comps


# -- keep policies ------------------------------------------------------------------------------

# A keep policy ranks the members of a component: the smallest rank is kept. Every rank ends with the
# ordinal, so ties go to the earliest document and the choice never depends on edge order.
Rank = Callable[[int], tuple[Any, ...]]


@dataclass(frozen=True, slots=True)
class KeepPolicy:
    """Which member of a cluster is kept: the lowest by `fields` in order, each a property every
    member has (`length`, `quality`, ...), highest first when `descending`, ties by ordinal (dataset
    order). Declared as data so that the cluster phase (members one at a time) and a stage ranking
    columns of rows at once (`sort_keys`) rank by the same rule."""

    fields: tuple[str, ...] = ()
    descending: tuple[bool, ...] = ()

    def rank(self, c: Components) -> Rank:
        columns: dict[str, Sequence[float]] = {"length": c.lengths, "quality": c.qualities}
        picked = [(columns[f], d) for f, d in zip(self.fields, self.descending, strict=True)]
        ordinals = c.ordinals
        return lambda i: (*(-col[i] if d else col[i] for col, d in picked), ordinals[i])

    def sort_keys(self, rows: Any) -> list[Any]:
        """The same rank over columns of rows at once (a NumPy structured array with an `ordinal`
        column and the policy's fields): keys for `numpy.lexsort`, whose order puts the member to
        keep first (lexsort sorts by the last key first)."""
        keys = [rows["ordinal"]]
        for name, descending in reversed(list(zip(self.fields, self.descending, strict=True))):
            column = rows[name]
            if descending:  # negated; unsigned columns widened first so that they can be
                column = -(column.astype("int64") if column.dtype.kind in "iu" else column)
            keys.append(column)
        return keys


KEEP_POLICIES: dict[str, KeepPolicy] = {
    "first": KeepPolicy(),
    "longest": KeepPolicy(("length",), (True,)),
    "best_quality": KeepPolicy(("quality",), (True,)),
}


def keep_policy(name: str) -> KeepPolicy:
    try:
        return KEEP_POLICIES[name]
    except KeyError:
        raise ValueError(f"unknown keep policy {name!r}; known: {', '.join(sorted(KEEP_POLICIES))}") from None


@dataclass(frozen=True, slots=True)
class Keepers:
    """Per component root: the index of its keeper and its size."""

    keeper: array[int]
    members: array[int]


def keepers(c: Components, policy: str) -> Keepers:
    rank = keep_policy(policy).rank(c)
    n = len(c)
    keeper = array("q", [-1]) * n
    members = array("I", [0]) * n
    for i in range(n):
        root = c.find(i)
        members[root] += 1
        if keeper[root] < 0 or rank(i) < rank(keeper[root]):
            keeper[root] = i
    return Keepers(keeper, members)


# -- attribution --------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Attribution:
    """Per member: the edge it is dropped for. `indirect` is 0 for a direct edge to the keeper
    (1: the strongest edge to another member, named by `via`); `stage` the verifying stage's index."""

    indirect: array[int]
    stage: array[int]
    similarity: array[float]
    via: array[int]


def attribute(edges: EdgeSource, c: Components, keep: Keepers) -> Attribution:
    """Each non-keeper's best edge as (indirect, stage, -similarity, neighbour ordinal), smaller is
    better: a direct edge to the keeper, then the earlier stage, the higher similarity (compared as
    stored, in float32), the lower neighbour."""
    n = len(c)
    ordinals = c.ordinals
    keeper = keep.keeper
    b_indirect = array("b", [2]) * n
    b_stage = array("b", [0]) * n
    b_sim = array("f", [0.0]) * n
    b_via = array("q", [-1]) * n
    for si, a, b, sim in edges():
        ia, ib = c.index(a), c.index(b)
        k = keeper[c.find(ia)]
        sim32 = array("f", [sim])[0]
        for x, y in ((ia, ib), (ib, ia)):
            if x == k:
                continue
            candidate = (0 if y == k else 1, si, -sim32, ordinals[y])
            current = (b_indirect[x], b_stage[x], -b_sim[x], ordinals[b_via[x]] if b_via[x] >= 0 else -1)
            if b_via[x] < 0 or candidate < current:
                b_indirect[x], b_stage[x], b_sim[x], b_via[x] = candidate[0], si, sim32, y
    return Attribution(b_indirect, b_stage, b_sim, b_via)


# -- decisions ----------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True, kw_only=True)
class Decision:
    """What a corpus stage decided for one document: kept as its cluster's keeper (with the number
    of duplicates removed for it), dropped with an attributed `Drop` whose detail names the cluster
    (and, for a duplicate, the kept document and, for an indirect link, the neighbour), or kept with
    an `edit`: its new text and the annotations that changed with it (line dedup removes spans).

    One JSON form, written one per line to the work dir's decisions files:
    `{"o": ordinal, "keep": {"duplicates": n, "cluster": id}}`, `{"o": ordinal, "drop": drop record}`
    or `{"o": ordinal, "edit": {"text": ..., "annotations": {...}}}` (a keep and an edit of one
    document, merged from two stages, carry both keys)."""

    ordinal: int
    cluster: str = ""  # "": no cluster (an edit alone)
    duplicates: int = 0
    drop: Drop | None = None
    edit: dict[str, Any] | None = None

    @property
    def kept(self) -> bool:
        return self.drop is None

    def to_json(self) -> dict[str, Any]:
        if self.drop is not None:
            return {"o": self.ordinal, "drop": self.drop.to_record()}
        data: dict[str, Any] = {"o": self.ordinal}
        if self.cluster:
            data["keep"] = {"duplicates": self.duplicates, "cluster": self.cluster}
        if self.edit is not None:
            data["edit"] = self.edit
        return data

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Decision:
        if "drop" in data:
            drop = Drop.from_record(data["drop"])
            return cls(ordinal=data["o"], cluster=(drop.detail or {})["cluster"], drop=drop)
        keep = data.get("keep") or {"cluster": "", "duplicates": 0}
        return cls(ordinal=data["o"], cluster=keep["cluster"], duplicates=keep["duplicates"], edit=data.get("edit"))

    def then(self, later: Decision) -> Decision:
        """This document's decision once a later stage's `later` applies: a later drop replaces a
        keep; an edit keeps the cluster and replaces an earlier edit; an earlier drop stands."""
        if self.drop is not None or later.drop is not None:  # a dropped document is seen by no later stage
            return self if self.drop is not None else later
        edit = later.edit if later.edit is not None else self.edit
        return Decision(ordinal=self.ordinal, cluster=self.cluster or later.cluster,
                        duplicates=self.duplicates or later.duplicates, edit=edit)


@dataclass(frozen=True, slots=True)
class Clustering:
    components: Components
    keepers: Keepers
    attribution: Attribution

    @property
    def nodes(self) -> int:
        return len(self.components)

    @property
    def clusters(self) -> int:
        return self.components.roots()


def cluster(edges: EdgeSource, policy: str) -> Clustering:
    """Components, keepers and attribution of the edges: three passes over `edges()`."""
    comps = components(edges)
    keep = keepers(comps, policy)
    return Clustering(comps, keep, attribute(edges, comps, keep))


def decide(clustering: Clustering, stages: Sequence[CorpusStage]) -> Iterator[Decision]:
    """One decision per colliding document, in ordinal order; `stages[i]` names the drops of the
    edges stage i verified (its name, reason and threshold)."""
    c, keep, att = clustering.components, clustering.keepers, clustering.attribution
    for i in range(len(c)):
        root = c.find(i)
        cluster_id = c.id_hex(keep.keeper[root])
        if i == keep.keeper[root]:
            yield Decision(ordinal=c.ordinals[i], cluster=cluster_id, duplicates=keep.members[root] - 1)
            continue
        stage = stages[att.stage[i]]
        detail: dict[str, Any] = {"kept_id": cluster_id, "cluster": cluster_id}
        if att.indirect[i]:
            detail["via_id"] = c.id_hex(att.via[i])
        drop = Drop(stage.name, stage.reason, value=round(att.similarity[i], 4), limit=stage.threshold, detail=detail)
        yield Decision(ordinal=c.ordinals[i], cluster=cluster_id, drop=drop)


# -- identical payloads (group phase) -----------------------------------------------------------


@dataclass(frozen=True, slots=True)
class IdenticalLinks:
    """Of one key bucket's members: the first member of each distinct payload (`leaders`, which go
    on to the candidate pairs) and (leader, member) for each later member with the same payload."""

    leaders: list[int]
    links: list[tuple[int, int]]


def link_identical(digests: Iterable[Hashable]) -> IdenticalLinks:
    """Members (by index) with equal payload digests join the first of their kind: an all-identical
    bucket of n documents costs n - 1 links, not a pair per band, and only one digest per distinct
    payload is held."""
    leader_of: dict[Hashable, int] = {}
    leaders: list[int] = []
    links: list[tuple[int, int]] = []
    for idx, digest in enumerate(digests):
        first = leader_of.setdefault(digest, idx)
        if first == idx:
            leaders.append(idx)
        else:
            links.append((first, idx))
    return IdenticalLinks(leaders, links)
