"""The RFC 9309 robots.txt parser (`thresher.consent.robots`): the RFC's own examples, a conformance
set written after public robots.txt test suites, and robustness on bad input."""

from __future__ import annotations

import time

import pytest

from thresher.consent.robots import MAX_BYTES, RobotsTxt, normalise_path, product_token, status_verdict

# RFC 9309 section 5.1, "Simple Example"
RFC_SIMPLE = """\
User-Agent: *
Disallow: *.gif$
Disallow: /example/
Allow: /publications/

User-Agent: foobot
Disallow:/
Allow:/example/page.html
Allow:/example/allowed.gif

User-Agent: barbot
User-Agent: bazbot
Disallow: /example/page.html

User-Agent: quxbot
"""


@pytest.mark.parametrize(("agent", "path", "allowed"), [
    # foobot: everything disallowed but the two allowed files
    ("foobot", "/example/page.html", True),
    ("foobot", "/example/allowed.gif", True),
    ("foobot", "/", False),
    ("foobot", "/publications/", False),
    # barbot and bazbot share one group: only /example/page.html is disallowed
    ("barbot", "/example/page.html", False),
    ("bazbot", "/example/page.html", False),
    ("barbot", "/example/other.html", True),
    ("bazbot", "/image.gif", True),
    # quxbot has a group with no rules: everything allowed, the * group does not apply
    ("quxbot", "/example/", True),
    ("quxbot", "/image.gif", True),
    # any other crawler follows the * group
    ("otherbot", "/image.gif", False),
    ("otherbot", "/a/b.gif", False),
    ("otherbot", "/a/b.gif?x", True),  # $ anchors at the end of the path and query
    ("otherbot", "/example/x", False),
    ("otherbot", "/publications/x", True),
    ("otherbot", "/", True),
])
def test_rfc9309_simple_example_gives_the_rfc_verdicts(agent, path, allowed):
    assert RobotsTxt.parse(RFC_SIMPLE).allowed(agent, path) is allowed


def test_rfc9309_longest_match_example_gives_the_rfc_verdicts():
    """RFC 9309 section 5.2: the longer disallow beats the shorter allow."""
    robots = RobotsTxt.parse("User-Agent: foobot\nAllow: /example/page/\nDisallow: /example/page/disallowed.gif\n")
    assert robots.allowed("foobot", "/example/page/")
    assert robots.allowed("foobot", "/example/page/other.gif")
    verdict = robots.verdict("foobot", "/example/page/disallowed.gif")
    assert not verdict.allowed and verdict.rule is not None
    assert (verdict.rule.line, verdict.rule.text) == (3, "Disallow: /example/page/disallowed.gif")


def test_rfc9309_groups_naming_one_agent_are_combined():
    """RFC 9309 section 2.2.1: two groups for ExampleBot are one."""
    robots = RobotsTxt.parse("user-agent: ExampleBot\ndisallow: /foo\ndisallow: /bar\n\n"
                             "user-agent: ExampleBot\ndisallow: /baz\n")
    assert [robots.allowed("ExampleBot", p) for p in ("/foo", "/bar", "/baz", "/qux")] == [False, False, False, True]


def test_rfc9309_product_token_is_matched_case_insensitively_from_the_user_agent_string():
    """RFC 9309 section 2.2.1: the crawler's product token, not its whole user-agent string."""
    robots = RobotsTxt.parse("User-agent: examplebot\nDisallow: /\n")
    assert product_token("ExampleBot/0.1 (+https://www.example.com/bot.html)") == "examplebot"
    assert not robots.allowed("ExampleBot/0.1", "/x")
    assert robots.allowed("ExampleBotTwo", "/x")  # a longer token is another crawler


def test_rfc9309_special_characters():
    """RFC 9309 section 2.2.3: `#` comments, `$` end of path, `*` any sequence."""
    robots = RobotsTxt.parse("User-agent: *  # everyone\nDisallow: /  # nothing\n"
                             "Allow: /this/path/exactly$\nAllow: /this/*/exactly\n")
    assert robots.allowed("a", "/this/path/exactly")
    assert robots.allowed("a", "/this/path/exactly/more")  # by the unanchored `*` rule
    assert not robots.allowed("a", "/this/path/exact")
    assert robots.allowed("a", "/this/a/b/exactly")
    assert not robots.allowed("a", "/that/")


@pytest.mark.parametrize(("written", "compared"), [
    # RFC 9309 section 2.2.2, the table of percent-encoding examples (rows that need no URI parsing)
    ("/foo/bar?baz=quz", "/foo/bar?baz=quz"),
    ("/foo/bar/\u30c4", "/foo/bar/%E3%83%84"),
    ("/foo/bar/%E3%83%84", "/foo/bar/%E3%83%84"),
    ("/foo/bar/%62%61%7A", "/foo/bar/baz"),
    # our additions: lower-case escapes are upper-cased, a stray % is itself encoded
    ("/a%e3%83%84", "/a%E3%83%84"),
    ("/100%", "/100%25"),
    ("/a b<c>", "/a%20b%3Cc%3E"),
])
def test_rfc9309_percent_encoding_normalisation(written, compared):
    assert normalise_path(written) == compared


def test_rfc9309_status_verdicts():
    """RFC 9309 section 2.3.1: 2xx parse; 4xx unavailable, allow all; 5xx unreachable, disallow all."""
    assert [status_verdict(s) for s in (200, 404, 403, 500, 503, 429, None, 301)] == [
        "parse", "allow_all", "allow_all", "disallow_all", "disallow_all", "disallow_all", "disallow_all",
        "allow_all"]


# -- conformance set: cases written after public suites, each cited ---------------------------------

def test_allow_wins_a_tie_of_equal_length():
    """After google/robotstxt robots_test.cc, `ID_LongestMatch`: equal-length allow and disallow."""
    robots = RobotsTxt.parse("user-agent: FooBot\ndisallow: /page\nallow: /page\n")
    assert robots.allowed("FooBot", "/page")
    robots = RobotsTxt.parse("user-agent: FooBot\nallow: /page$\ndisallow: /page\n")
    assert not robots.allowed("FooBot", "/page.html") and robots.allowed("FooBot", "/page")


def test_keys_are_case_insensitive_and_values_are_case_sensitive():
    """After google/robotstxt robots_test.cc, `ID_REPLineNamesCaseInsensitive` and
    `ID_AllowDisallow_Value_CaseSensitive`."""
    robots = RobotsTxt.parse("USER-AGENT: FooBot\nDISALLOW: /x/\n")
    assert not robots.allowed("foobot", "/x/y") and robots.allowed("foobot", "/X/y")


def test_rules_before_any_user_agent_line_are_ignored():
    """After google/robotstxt robots_test.cc, `ID_LineSyntax_Groups` (rules outside groups)."""
    robots = RobotsTxt.parse("Disallow: /\nUser-agent: FooBot\nDisallow: /private\n")
    assert robots.allowed("FooBot", "/public") and robots.allowed("OtherBot", "/")


def test_a_user_agent_line_after_rules_starts_a_new_group_and_blank_lines_do_not():
    """After google/robotstxt robots_test.cc, `ID_LineSyntax_Groups` (a blank line between agent
    lines keeps one group; a rule after blank lines still belongs to the group above)."""
    robots = RobotsTxt.parse("User-agent: a\n\nUser-agent: b\nDisallow: /x\nUser-agent: c\nDisallow: /y\n\n\n"
                             "Disallow: /z\n")
    assert not robots.allowed("a", "/x") and not robots.allowed("b", "/x") and robots.allowed("c", "/x")
    assert robots.allowed("a", "/y") and not robots.allowed("c", "/z") and robots.allowed("a", "/z")


def test_specific_group_replaces_the_wildcard_group():
    """After scrapy/protego tests (`test_user_agent_specific_rules`) and RFC 9309 2.2.1."""
    robots = RobotsTxt.parse("User-agent: *\nDisallow: /\n\nUser-agent: GPTBot\nDisallow: /private/\n")
    assert robots.allowed("GPTBot", "/page") and not robots.allowed("CCBot", "/page")


def test_a_star_inside_a_user_agent_value_is_not_the_wildcard():
    """After google/robotstxt robots.cc (`*` is global only alone), and the real file of
    www.asb.co.nz in ../shared/data/robots (`User-agent: *OrkashBot*`)."""
    robots = RobotsTxt.parse("User-agent: *OrkashBot*\nDisallow: /\n")
    assert robots.allowed("GPTBot", "/") and robots.wildcard is None


def test_empty_rule_values_are_no_rules():
    """After CPython's Lib/test/test_robotparser.py, `CrawlDelayAndCustomAgentTest` (an agent whose
    group says only `Disallow:` may fetch everything)."""
    robots = RobotsTxt.parse("User-agent: *\nDisallow:\n")
    assert robots.allowed("x", "/anything") and robots.rules_for("x") == []


def test_robots_txt_itself_is_always_allowed():
    """RFC 9309 section 2.2.2: /robots.txt is implicitly allowed."""
    assert RobotsTxt.parse("User-agent: *\nDisallow: /\n").allowed("x", "/robots.txt")


def test_wildcards_and_anchor_match_in_path_and_query():
    """After google/robotstxt robots_test.cc, `GoogleOnly_DocumentationChecks` (`/*.php`, `/*.php$`),
    written anew."""
    robots = RobotsTxt.parse("User-agent: *\nDisallow: /*?sessionid=\nDisallow: /*.php$\nDisallow: /a*b*c\n")
    assert not robots.allowed("x", "/shop/item?sessionid=1")
    assert robots.allowed("x", "/shop/item?id=1")
    assert not robots.allowed("x", "/index.php") and robots.allowed("x", "/index.php?x=1")
    assert not robots.allowed("x", "/a-b-c-d") and robots.allowed("x", "/a-c-b")


@pytest.mark.parametrize(("pattern", "matches", "misses"), [
    # after CPython's Lib/test/test_robotparser.py, `PercentEncodingTest` and `DisallowQueryStringTest`
    ("/a/%5A%2D%2E%5F%7E", ["/a/Z-._~", "/a/%5a%2d%2e%5f%7e"], []),
    ("/u/%f0%9f%90%8d", ["/u/\U0001f40d", "/u/%F0%9F%90%8D"], ["/u/%F0"]),
    ("/p%", ["/p%", "/p%25", "/p%2525"], ["/p", "/p%24"]),
    ("/john doe", ["/john%20doe", "/john doe"], []),
    ("/some/path?name=value", ["/some/path?name=value"], ["/some/path%3Fname=value", "/some/path?name%3Dvalue"]),
    ("/slash%2F", ["/slash%2f"], ["/slash/"]),
])
def test_percent_encoded_and_raw_forms_are_compared_alike(pattern, matches, misses):
    robots = RobotsTxt.parse(f"User-agent: *\nDisallow: {pattern}\n")
    assert [robots.allowed("x", p) for p in matches] == [False] * len(matches)
    assert [robots.allowed("x", p) for p in misses] == [True] * len(misses)


def test_a_byte_order_mark_and_crlf_or_cr_line_ends_are_read():
    """After google/robotstxt robots_test.cc, `ID_UTF8ByteOrderMarkIsSkipped` and `ID_LinesNumbersAreCountedCorrectly`
    (CR, LF and CRLF line ends)."""
    for body in (b"\xef\xbb\xbfUser-agent: *\nDisallow: /x\n", b"User-agent: *\r\nDisallow: /x\r\n",
                 b"User-agent: *\rDisallow: /x\r"):
        assert not RobotsTxt.parse(body).allowed("a", "/x/y"), body


# -- robustness --------------------------------------------------------------------------------------

def test_binary_and_garbage_input_never_raises():
    for body in (b"\x00\xff\xfe" * 1000, bytes(range(256)) * 100, b"<html><body>Not found</body></html>",
                 "User-agent: \ud800\nDisallow: /\ud800".encode("utf-8", "surrogatepass"), b"", b":::\n::\n:",
                 b"User-agent:\nDisallow:\n" * 100):
        robots = RobotsTxt.parse(body)
        robots.verdict("GPTBot", "/x")


def test_only_the_first_500_kib_are_parsed_and_a_cut_line_is_dropped():
    head = b"User-agent: *\nDisallow: /a\n"
    filler = b"# " + b"x" * 1000 + b"\n"
    body = head + filler * (MAX_BYTES // len(filler) + 1) + b"Disallow: /zz-after-the-limit\n"
    robots = RobotsTxt.parse(body)
    assert robots.truncated and not robots.allowed("x", "/a") and robots.allowed("x", "/zz-after-the-limit")
    cut = head + b"#" * (MAX_BYTES - len(head) - 12) + b"\nDisallow: /qbcdefghijklmnop\n"
    robots = RobotsTxt.parse(cut)
    assert robots.allowed("x", "/qbcd") and robots.allowed("x", "/qbcdefghijklmnop")


def test_pathological_patterns_take_linear_time():
    star = "*a" * 20_000
    body = f"User-agent: *\nDisallow: /{star}$\n" + "Disallow: /*x*y*z*w\n" * 20_000
    t0 = time.perf_counter()
    robots = RobotsTxt.parse(body)
    robots.verdict("bot", "/" + "a" * 5000 + "b")
    robots.verdict("bot", "/" + "x" * 2000)
    assert time.perf_counter() - t0 < 5.0
