"""The `consent` stage: each page's opt-out signals recorded as `consent.*` annotations, and under
`consent.mode = "enforce"` opted-out pages dropped with attribution.

Runs first among the document stages: it reads the page's HTML (meta tags), which extraction
consumes, and the response headers the WARC reader hands on (`Document.derived["http_headers"]`).

Annotates (only what a page has: a page with no signal gets no `consent.*` key at all, so a build's
output without signals is byte-identical to one without the stage):
- `consent.noai`, `consent.noimageai`: the sources that say so (`meta`, `header`, `meta:GPTBot`);
- `consent.tdm_reservation`: source -> 0 or 1; `consent.tdm_policy`: source -> policy URL;
- `consent.robots`: `{"file", "date", "disallow": {agent: why}}` for the configured agents that the
  applicable robots.txt snapshot disallows (why: `line N: Disallow: /x`, or the fetch status that
  disallows everything); written only when at least one agent is disallowed;
- `consent.problems`: values that could not be read (a `tdm-reservation` that is not 0 or 1, a
  snapshot without a date).

Drops (stage `consent`, enforce only, for the signals in `consent.signals`), all recorded, the first
attributed: `robots_disallow` (value: the agent, limit: the rule, detail: the snapshot), `noai` and
`noimageai` (value: the first source, detail: all sources), `tdm_reservation` (value: the source,
detail: the policy URL when given).
"""

from __future__ import annotations

from typing import Any
from urllib.parse import urlsplit

from thresher.consent.config import ConsentConfig
from thresher.consent.robots import normalise_path, status_verdict
from thresher.consent.signals import PageSignals, SignalReader
from thresher.consent.snapshots import RobotsSnapshots, host_of
from thresher.core.document import Document, Drop
from thresher.core.stages import Evaluation


class Consent:
    """See the module docstring."""

    name = "consent"
    annotates = ("consent.noai", "consent.noimageai", "consent.tdm_reservation", "consent.tdm_policy",
                 "consent.robots", "consent.problems")

    def __init__(self, config: ConsentConfig, snapshots: RobotsSnapshots | None = None) -> None:
        self.config = config
        self.enforce = config.mode == "enforce"
        self.reader = SignalReader(config.agents)
        if snapshots is None and config.robots:
            snapshots = RobotsSnapshots(config.robots, config.cache_files)
        self.snapshots = snapshots

    def evaluate(self, doc: Document) -> Evaluation:
        html = doc.html
        signals = self.reader.read(html, doc.derived.get("http_headers"))
        annotations: dict[str, Any] = {}
        if signals.noai:
            annotations["consent.noai"] = signals.noai
        if signals.noimageai:
            annotations["consent.noimageai"] = signals.noimageai
        problems = list(signals.problems)
        robots = None
        if self.snapshots is not None and (host := host_of(doc.url)) is not None:
            try:
                path = _path_of(doc.url)
                robots = self._robots(host, path, doc.fetched_at, problems)
                self._tdmrep(host, path, doc.fetched_at, signals, problems)
            except Exception as exc:  # noqa: BLE001 - a lookup that fails is recorded; it must not drop the page
                problems.append(f"snapshot lookup failed: {type(exc).__name__}: {exc}"[:500])
        if signals.tdm_reservation:
            annotations["consent.tdm_reservation"] = signals.tdm_reservation
        if signals.tdm_policy:
            annotations["consent.tdm_policy"] = signals.tdm_policy
        if robots is not None:
            annotations["consent.robots"] = robots
        if problems:
            annotations["consent.problems"] = problems
        drops = self._drops(annotations) if self.enforce and annotations else []
        return Evaluation(annotations, drops)

    def check_all(self, doc: Document) -> list[Drop]:
        return self.evaluate(doc).drops

    def _robots(self, host: str, path: str, fetched_at: str | None, problems: list[str]) -> dict[str, Any] | None:
        assert self.snapshots is not None
        snapshot = self.snapshots.pick(host, fetched_at, self.config.as_of)
        if snapshot is None:
            return None
        problems.extend(self.snapshots.host_problems.get(host, ()))
        disallow: dict[str, str] = {}
        verdict = status_verdict(snapshot.status)
        if verdict == "disallow_all":
            why = f"status {snapshot.status}" if snapshot.status is not None else "unreachable"
            disallow = dict.fromkeys(self.config.agents, why)
        elif verdict == "parse":
            robots, read_problems = self.snapshots.parsed(snapshot)
            problems.extend(read_problems)
            if robots is not None:
                for agent in self.config.agents:
                    found = robots.verdict(agent, path)
                    if not found.allowed and found.rule is not None:
                        disallow[agent] = f"line {found.rule.line}: {found.rule.text}"
        if not disallow:
            return None
        return {"file": snapshot.where, "date": snapshot.date, "disallow": disallow}

    def _tdmrep(self, host: str, path: str, fetched_at: str | None, signals: PageSignals,
                problems: list[str]) -> None:
        """The first rule of the host's `tdmrep.json` (in force at the fetch) whose location matches."""
        assert self.snapshots is not None
        snapshot = self.snapshots.pick(host, fetched_at, self.config.as_of, kind="tdmrep")
        if snapshot is None:
            return
        rules, read_problems = self.snapshots.tdmrep_rules(snapshot)
        problems.extend(read_problems)
        normalised = normalise_path(path)
        for rule in rules:
            if rule.matches(normalised):
                signals.tdm_reservation.setdefault("tdmrep.json", rule.reservation)
                if rule.policy:
                    signals.tdm_policy.setdefault("tdmrep.json", rule.policy)
                return

    def _drops(self, annotations: dict[str, Any]) -> list[Drop]:
        counted = self.config.signals
        drops = []
        robots = annotations.get("consent.robots")
        if "robots" in counted and robots:
            agent, why = next(iter(robots["disallow"].items()))
            drops.append(Drop(self.name, "robots_disallow", value=agent, limit=why,
                              detail={"file": robots["file"], "date": robots["date"]}))
        for key in ("noai", "noimageai"):
            sources = annotations.get(f"consent.{key}")
            if key in counted and sources:
                drops.append(Drop(self.name, key, value=sources[0], detail={"sources": sources}))
        reserved = [source for source, value in annotations.get("consent.tdm_reservation", {}).items() if value == 1]
        if "tdm" in counted and reserved:
            policy = annotations.get("consent.tdm_policy")
            drops.append(Drop(self.name, "tdm_reservation", value=reserved[0], limit=None,
                              detail={"policy": policy} if policy else None))
        return drops


def _path_of(url: str | None) -> str:
    parts = urlsplit(url or "")
    return (parts.path or "/") + (f"?{parts.query}" if parts.query else "")


def build_consent_stages(config: ConsentConfig) -> list[Consent]:
    return [Consent(config)] if config.enabled else []
