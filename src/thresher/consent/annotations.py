"""What a document's `consent.*` annotations (written by `thresher.consent.stage`) say, for the
ledger, the card and the policy check."""

from __future__ import annotations

from typing import Any

SIGNALS = ("robots", "noai", "noimageai", "tdm")
KEYS = ("consent.robots", "consent.noai", "consent.noimageai", "consent.tdm_reservation")


def has_consent(annotations: dict[str, Any] | None) -> bool:
    """Whether any opt-out annotation is there (four dict lookups: cheap on the hot path)."""
    return annotations is not None and any(key in annotations for key in KEYS)


def signals_of(annotations: dict[str, Any]) -> tuple[list[str], list[str]]:
    """(the opt-out signals a document carries, in `SIGNALS` order; the agents its robots.txt
    snapshot disallows). `tdm` is a reservation of 1 from any source."""
    found = []
    robots = annotations.get("consent.robots")
    agents = list(robots.get("disallow", {})) if isinstance(robots, dict) else []
    if agents:
        found.append("robots")
    for key in ("noai", "noimageai"):
        if annotations.get(f"consent.{key}"):
            found.append(key)
    reservation = annotations.get("consent.tdm_reservation")
    if isinstance(reservation, dict) and 1 in reservation.values():
        found.append("tdm")
    return found, agents


def card_names(annotations: dict[str, Any]) -> tuple[str, ...]:
    """The names the dataset card counts a kept document under: its signals, and `robots:AGENT`
    for each agent its robots.txt disallows (none: no opt-out annotation)."""
    if not has_consent(annotations):
        return ()
    signals, agents = signals_of(annotations)
    return (*signals, *(f"robots:{agent}" for agent in agents))
