"""The RFC 9309 parser on the 4,231 real robots.txt files of ../shared/data/robots/top-sites (scrapy/protego
test data; see ../shared/data/README.md): none crashes or hangs it, and its verdicts for a fixed list of
agents and paths equal protego's except in three kinds of file, where RFC 9309 reads them otherwise:

- `bom`: the file starts with a UTF-8 byte order mark. protego reads the first line as an unknown key
  (`\\ufeffUser-agent`), so that group's rules belong to no group. A BOM is the UTF-8 signature, not
  content (RFC 3629 section 6; RFC 9309 2.2 requires UTF-8); Google's reference parser skips it too.
- `other_records`: a line that is neither a user-agent nor a rule (`Crawl-delay`, `Sitemap`, `Host`)
  stands between user-agent lines or between them and the rules. protego ends the user-agent list
  there; in RFC 9309's grammar (2.2) a group is user-agent lines followed by rules, and a new group
  starts only with a user-agent line after a rule, so the agents share the rules that follow.
- `token`: protego applies a group whose product token is part of the crawler's (`google` for
  `Google-Extended`, `bing` for `Bingbot`); RFC 9309 2.2.1 matches the product token exactly.

The test removes each cause in turn from the text it gives protego (strip the BOM, drop the other
records, rename the partial-token groups) and requires full agreement after that; the number of files
of each kind is pinned, so a parser change that moves any verdict shows here."""

from __future__ import annotations

import re
import time
from pathlib import Path

import pytest

from thresher.consent.robots import RobotsTxt, product_token

protego = pytest.importorskip("protego")

FILES = Path(__file__).resolve().parents[4] / "shared" / "data" / "robots" / "top-sites"
AGENTS = ("GPTBot", "CCBot", "Google-Extended", "ClaudeBot", "anthropic-ai", "Googlebot", "Bingbot")
PATHS = ("/", "/index.html", "/search?q=a", "/admin/", "/private/x.html", "/wp-admin/admin-ajax.php",
         "/a%3Cb", "/%7Euser/", "/img/x.jpg", "/cgi-bin/x", "/tag/news?page=2", "/api/v1/", "/caf%C3%A9")
KINDS = {"bom": 7, "other_records": 24, "token": 5}

_GROUP_OR_RULE = re.compile(r"\s*(user-?agent|allow|disallow)\s*:", re.I)
_AGENT_LINE = re.compile(r"(\s*user-?agent\s*:\s*)([A-Za-z_-]+)", re.I)
_TOKENS = {product_token(a) for a in AGENTS}


def _differs(ours: RobotsTxt, text: str) -> bool:
    theirs = protego.Protego.parse(text)
    return any(ours.allowed(a, p) != theirs.can_fetch("https://example.com" + p, a) for a in AGENTS for p in PATHS)


def _without_other_records(text: str) -> str:
    return "\n".join(line for line in text.splitlines()
                     if not line.split("#", 1)[0].strip() or _GROUP_OR_RULE.match(line))


def _rename_partial(match: re.Match[str]) -> str:
    token = match.group(2).lower()
    partial = token not in _TOKENS and any(token in t for t in _TOKENS)
    return match.group(1) + ("unmatched-" + token if partial else match.group(2))


def _without_partial_tokens(text: str) -> str:
    return "\n".join(_AGENT_LINE.sub(_rename_partial, line) for line in text.splitlines())


@pytest.mark.slow
def test_real_robots_files_parse_fast_and_agree_with_protego_where_rfc9309_does():
    if not FILES.is_dir():
        pytest.skip(f"{FILES} is absent (the shared data set of real robots.txt files)")
    kinds = dict.fromkeys(KINDS, 0)
    unexplained = []
    files = sorted(FILES.iterdir())
    assert len(files) == 4231
    for path in files:
        body = path.read_bytes()
        t0 = time.perf_counter()
        ours = RobotsTxt.parse(body)
        for agent in AGENTS:
            for p in PATHS:
                ours.verdict(agent, p)
        assert time.perf_counter() - t0 < 2.0, path.name
        text = body.decode("utf-8", "replace")
        if not _differs(ours, text):
            continue
        text = text.lstrip("\ufeff")
        for kind, fix in (("bom", None), ("other_records", _without_other_records), ("token", _without_partial_tokens)):
            text = fix(text) if fix is not None else text
            if not _differs(ours, text):
                kinds[kind] += 1
                break
        else:
            unexplained.append(path.name)
    assert unexplained == []
    assert kinds == KINDS
