"""robots.txt: fetched once per host (the first URL of a host waits for it), cached on the host's
state, honoured for every URL and redirect hop, Crawl-delay applied.

Outcomes follow RFC 9309: a 2xx is parsed (only the first `max_robots_bytes`, so a 100 MB file costs
512 KiB); a 4xx means no rules; a 5xx, 429 or network failure after the retries means the host is
unreachable and nothing of it is fetched (2.3.1.4: assume complete disallow)."""

from __future__ import annotations

from typing import Any

ALLOW_ALL = "allow_all"
PARSED = "parsed"
UNREACHABLE = "unreachable"


def parse_robots(body: bytes) -> Any:
    """A protego parser for a robots.txt body, or None when it cannot be parsed (then no rules)."""
    from protego import Protego

    text = body.decode("utf-8", "replace")
    try:
        return Protego.parse(text)
    except Exception:  # protego raises on pathological input; no usable rules
        return None


def robots_verdict(status: int | None, reason: str | None) -> str:
    """What a robots.txt fetch that ended in `status` / failure `reason` means for the host."""
    if status is not None and 200 <= status < 300:
        return PARSED
    if status is not None and 400 <= status < 500 and status != 429:
        return ALLOW_ALL
    if reason is not None and reason.startswith(("refused_",)):
        return UNREACHABLE
    return UNREACHABLE
