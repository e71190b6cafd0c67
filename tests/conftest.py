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


def write_jsonl(path: Path, records: list, raw_lines: list[str] | None = None) -> Path:
    """Write records (dicts) as JSONL, then any raw lines verbatim (for malformed input)."""
    import json

    with open(path, "w", encoding="utf-8") as f:
        for r in records:
            f.write(json.dumps(r, ensure_ascii=False) + "\n")
        for line in raw_lines or ():
            f.write(line + "\n")
    return path


def article_html(i: int, words: int = 120) -> str:
    """A page with boilerplate around a distinct article body."""
    body = " ".join(f"sentence{i} word{j % 37} and more text here." for j in range(words // 6))
    return (
        f"<html><head><title>Article {i}</title></head><body>"
        f"<nav><a href='/'>Home</a><a href='/about'>About</a></nav>"
        f"<article><h1>Article {i}</h1><p>{body}</p></article>"
        f"<footer>Copyright example. Privacy policy.</footer></body></html>"
    )


def local_config(**sections):
    """A RunConfig for tests: in-process engine, no quality filtering unless asked."""
    from thresher.config import RunConfig
    from thresher.core.config import merge

    data = {"exec": {"engine": "local"}, "quality": {"preset": None}}
    return RunConfig.from_dict(merge(data, sections))


@pytest.fixture(autouse=True)
def _user_cache_in_tmp(tmp_path_factory, monkeypatch):
    """Compiled URL lists (`thresher.quality.list_store`) go to the user cache when no work dir
    names a folder: never the real one from a test."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path_factory.getbasetemp() / "xdg-cache"))
