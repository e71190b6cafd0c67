"""Shared fixtures. Real evaluation data lives in ../shared/data beside the checkout; tests that
need it skip with a clear reason when it is absent."""

from __future__ import annotations

from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
SHARED_DATA = ROOT.parent / "shared" / "data"


@pytest.fixture(scope="session")
def shared_data() -> Path:
    if not SHARED_DATA.is_dir():
        pytest.skip(f"real evaluation data not found at {SHARED_DATA} (expected ../shared/data beside the checkout)")
    return SHARED_DATA


def shared_path(*parts: str) -> Path:
    """A path under ../shared/data, or a pytest skip naming what is missing."""
    path = SHARED_DATA.joinpath(*parts)
    if not path.exists():
        pytest.skip(f"evaluation data missing: {path}")
    return path
