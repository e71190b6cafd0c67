"""The consent ledger of a built dataset: how many kept documents, words and hosts carry each opt-out
signal (the `consent.*` annotations of `thresher.consent.stage`) and each agent's robots.txt
disallow, the hosts that opt out with the most kept words, and what `--consent enforce` would have
removed. `thresher consent DATASET` prints it; `thresher check --consent-policy` asserts on it.

Words are whitespace-separated words of the kept text (the ledger reads no tokenizer)."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit

from thresher.consent.annotations import SIGNALS, has_consent, signals_of


@dataclass(slots=True)
class Tally:
    documents: int = 0
    words: int = 0
    hosts: set[str] = field(default_factory=set)

    def add(self, words: int, host: str) -> None:
        self.documents += 1
        self.words += words
        self.hosts.add(host)

    def to_dict(self) -> dict[str, int]:
        return {"documents": self.documents, "words": self.words, "hosts": len(self.hosts)}


@dataclass(slots=True)
class ConsentLedger:
    enforced: tuple[str, ...]  # the signals "what enforce would remove" counts
    documents: int = 0
    words: int = 0
    by_signal: dict[str, Tally] = field(default_factory=dict)
    by_agent: dict[str, Tally] = field(default_factory=dict)
    removable: Tally = field(default_factory=Tally)
    host_words: dict[str, int] = field(default_factory=dict)  # opted-out hosts -> their kept words

    def add(self, record: dict[str, Any]) -> None:
        words = len((record.get("text") or "").split())
        self.documents += 1
        self.words += words
        annotations = record.get("annotations") or {}
        if not has_consent(annotations):
            return
        signals, agents = signals_of(annotations)
        host = (urlsplit(record.get("url") or "").hostname or "(no host)").lower()
        for signal in signals:
            self.by_signal.setdefault(signal, Tally()).add(words, host)
        for agent in agents:
            self.by_agent.setdefault(agent, Tally()).add(words, host)
        if signals:
            self.host_words[host] = self.host_words.get(host, 0) + words
        if any(s in self.enforced for s in signals):
            self.removable.add(words, host)

    def to_dict(self, top: int = 10) -> dict[str, Any]:
        hosts = sorted(self.host_words.items(), key=lambda kv: (-kv[1], kv[0]))[:top]
        removable = self.removable.to_dict()
        return {
            "documents": self.documents,
            "words": self.words,
            "signals": {s: self.by_signal[s].to_dict() for s in SIGNALS if s in self.by_signal},
            "robots_disallow_by_agent": {a: t.to_dict() for a, t in sorted(self.by_agent.items())},
            "top_opted_out_hosts": [{"host": h, "words": w} for h, w in hosts],
            "enforce_would_remove": {
                **removable,
                "signals": list(self.enforced),
                "document_share": round(removable["documents"] / self.documents, 6) if self.documents else 0.0,
                "word_share": round(removable["words"] / self.words, 6) if self.words else 0.0,
            },
        }


def consent_ledger(records: Iterable[dict[str, Any]], enforced: Sequence[str] = ("robots", "noai", "tdm")
                   ) -> ConsentLedger:
    ledger = ConsentLedger(tuple(enforced))
    for record in records:
        ledger.add(record)
    return ledger


def render_ledger(data: dict[str, Any]) -> str:
    lines = [f"consent ledger: {data['documents']} kept documents, {data['words']} words"]
    if not data["signals"]:
        lines.append("  no kept document carries an opt-out signal")
    for signal, t in data["signals"].items():
        lines.append(f"  {signal:<10} {t['documents']:>8} documents {t['words']:>10} words {t['hosts']:>6} hosts")
    if data["robots_disallow_by_agent"]:
        lines.append("robots.txt disallows, by agent:")
        for agent, t in data["robots_disallow_by_agent"].items():
            lines.append(f"  {agent:<20} {t['documents']:>8} documents {t['words']:>10} words {t['hosts']:>6} hosts")
    if data["top_opted_out_hosts"]:
        lines.append("hosts that opt out, most kept words first:")
        lines.extend(f"  {h['host']:<40} {h['words']:>10} words" for h in data["top_opted_out_hosts"])
    e = data["enforce_would_remove"]
    lines.append(f"--consent enforce ({','.join(e['signals'])}) would remove {e['documents']} documents "
                 f"({e['document_share']:.2%}), {e['words']} words ({e['word_share']:.2%}), {e['hosts']} hosts")
    return "\n".join(lines)


def parse_policy(text: str) -> list[str]:
    """`robots:GPTBot,noai,tdm` -> its items; each is a signal, or `robots:AGENT`."""
    items = [item.strip() for item in text.split(",") if item.strip()]
    for item in items:
        name = item.split(":", 1)[0]
        if name not in SIGNALS or (":" in item and name != "robots"):
            raise ValueError(f"consent policy item {item!r}: use one of {', '.join(SIGNALS)} or robots:AGENT")
    return items


def policy_violations(ledger: ConsentLedger, items: Sequence[str]) -> dict[str, int]:
    """Kept documents that break each policy item (only items with any)."""
    out = {}
    for item in items:
        if item.startswith("robots:"):
            agent = item.split(":", 1)[1].lower()
            count = sum(t.documents for a, t in ledger.by_agent.items() if a.lower() == agent)
        else:
            tally = ledger.by_signal.get(item)
            count = tally.documents if tally else 0
        if count:
            out[item] = count
    return out
