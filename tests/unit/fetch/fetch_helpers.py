"""Helpers of the fetch tests (settings for the farm, URL lists)."""

from __future__ import annotations

from pathlib import Path

from thresher.fetch.config import FetchConfig

FARM_ADDRESS = "127.0.0.2"  # the farm; a redirect to 127.0.0.1 is then a target the policy refuses


def farm_config(**overrides: object) -> FetchConfig:
    """Fast settings for the farm: short delays and timeouts, the farm's address exempted."""
    values: dict[str, object] = dict(
        contact="tests@thresher.invalid", allow_networks=(f"{FARM_ADDRESS}/32",), per_host_delay_s=0.0,
        connect_timeout_s=2.0, read_timeout_s=1.0, total_timeout_s=3.0, backoff_base_s=0.02, backoff_max_s=0.1,
        host_backoff_s=0.01, max_attempts=2, progress_every_s=60.0, fsync_every_s=60.0,
    )
    values.update(overrides)
    return FetchConfig(**values)  # type: ignore[arg-type]


def write_urls(path: Path, urls: list[str]) -> Path:
    path.write_text("\n".join(urls) + "\n", encoding="utf-8")
    return path
