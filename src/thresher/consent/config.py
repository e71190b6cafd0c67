"""Consent settings: which opt-out signals are read, for which crawlers, and what is done with them.

The default agents are the product tokens of crawlers that collect for model training or AI
products: OpenAI (GPTBot, ChatGPT-User), Common Crawl (CCBot), Google (Google-Extended, the token
that governs Gemini training), Anthropic (ClaudeBot, and the older anthropic-ai), Apple
(Applebot-Extended), Perplexity (PerplexityBot), ByteDance (Bytespider), Meta (meta-externalagent),
Amazon (Amazonbot) and Cohere (cohere-ai). docs/consent.md names the source of each (the operator's
crawler page where there is one, else the "Consent in Crisis" study's agent list).
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from thresher.core.config import setting

DEFAULT_AGENTS = (
    "GPTBot", "ChatGPT-User", "CCBot", "Google-Extended", "ClaudeBot", "anthropic-ai", "Applebot-Extended",
    "PerplexityBot", "Bytespider", "meta-externalagent", "Amazonbot", "cohere-ai",
)
SIGNALS = ("robots", "noai", "noimageai", "tdm")


@dataclass(frozen=True, slots=True, kw_only=True)
class ConsentConfig:
    mode: Literal["record", "enforce", "off"] = setting(
        "record", "record: annotate each page's opt-out signals (consent.*); enforce: also drop opted-out pages; "
        "off: read nothing", flag="--consent",
    )
    agents: tuple[str, ...] = setting(
        DEFAULT_AGENTS, "crawler product tokens whose robots.txt verdicts and scoped directives count",
        flag="--consent-agents",
    )
    signals: tuple[str, ...] = setting(
        ("robots", "noai", "tdm"), "signals that drop a page under enforce (robots, noai, noimageai, tdm)",
        flag="--consent-signals",
    )
    robots: str | None = setting(
        None, "robots.txt snapshots: a folder (HOST or HOST.txt files, or HOST/DATE.txt), a JSONL of "
        "{host or url, fetched_at, status, text}, or a WARC of robots.txt responses", flag="--consent-robots",
    )
    as_of: Literal["fetch", "latest"] = setting(
        "fetch", "fetch: the robots.txt in force when the page was fetched (nearest snapshot at or before "
        "fetched_at); latest: the newest snapshot, applied retroactively", flag="--consent-as-of",
    )
    cache_files: int = setting(1024, "parsed robots.txt files held in memory (least recently used dropped)")
    robots_sha256: str = setting(
        "", "sha256 of the robots.txt snapshots (a folder: of its file names and contents), filled in when "
        "empty, so the config hash and a resume see a changed snapshot source"
    )

    def __post_init__(self) -> None:
        unknown = sorted(set(self.signals) - set(SIGNALS))
        if unknown:
            raise ValueError(f"consent.signals: unknown {unknown}; choose from {list(SIGNALS)}")
        if self.cache_files < 1:
            raise ValueError(f"consent.cache_files must be >= 1, got {self.cache_files}")
        if not all(self.agents):
            raise ValueError("consent.agents: an agent name is empty")
        if self.robots and self.mode != "off" and not self.robots_sha256:
            object.__setattr__(self, "robots_sha256", source_sha256(self.robots))

    @property
    def enabled(self) -> bool:
        return self.mode != "off"


def source_sha256(path: str) -> str:
    """sha256 of a snapshot source: a file's bytes, or a folder's relative file names and their bytes
    in name order ("" when the path is missing: the stage reports that when it starts)."""
    root = Path(path)
    files = [root] if root.is_file() else sorted(p for p in root.rglob("*") if p.is_file()) if root.is_dir() else []
    h = hashlib.sha256()
    for file in files:
        if file != root:
            h.update(file.relative_to(root).as_posix().encode("utf-8", "surrogateescape") + b"\x00")
        try:
            with open(file, "rb") as f:
                while chunk := f.read(1 << 20):
                    h.update(chunk)
        except OSError:
            return ""
    return h.hexdigest() if files else ""
