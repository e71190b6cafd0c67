"""The WHATWG HTML tokenizer, as regular expressions that cannot backtrack (standard library only).

The HTML standard (section 13.2.5, "Tokenization") defines a state machine read one character at a
time. Run that way in Python it is far too slow, so each stretch the machine spends in one family of
states is one regular expression here:

- a start or end tag, from `<` through the tag name, before/after attribute name, attribute value
  (double-quoted, single-quoted, unquoted), after attribute value and self-closing start tag states,
  up to the `>` that ends it;
- a comment (comment start, comment, comment end, comment end bang), a bogus comment, a DOCTYPE;
- the text of the data state up to the next `<`.

Every pattern is written so that each character decides the next state by itself, the way the state
machine does: the alternatives inside a repetition start with disjoint characters and every
repetition is possessive (`*+`) or inside an atomic group, so the engine never revisits a decision.
A match therefore costs time linear in what it reads, and a failed match (a tag that reaches the end
of the input, which the standard drops) costs one scan. Nothing here is quadratic in any input.

Where the tokenizer's state depends on the tree builder (RCDATA for `<title>`/`<textarea>`, RAWTEXT
for `<style>` and friends, script data with its escaped and double-escaped states, PLAINTEXT),
`raw_text_end` finds the appropriate end tag with literal searches.

`tokenize` is the reference tokenizer: it emits the standard's tokens and is what the html5lib
conformance suite checks. `tree.parse` uses the same patterns directly in its own loop, for speed.

Deliberate differences from the standard (they change no extracted text):
- parse errors are not reported;
- the tree builder's choices of tokenizer state are `tree.parse`'s, not this module's;
- CDATA sections are recognised only when asked for (the standard needs foreign content for them).
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from html.entities import html5 as _NAMED
from typing import Any

# -- the patterns ---------------------------------------------------------------------------------

# ASCII whitespace as the tokenizer knows it (a CR never reaches it: input preprocessing turns it
# into LF; it is listed so that unpreprocessed input splits the same way).
_WS = r"\t\n\f\r "
# One attribute, from the before-attribute-name state. The first character of a name may be "=",
# a quote or "<" (parse errors, kept in the name); after the name, optional whitespace and "=" lead to
# the value. A quoted value runs to its closing quote or to the end of the input (the tag is then
# unfinished, see `_TAG`); an unquoted one cannot start with a quote.
_ATTRIBUTE = (
    rf"[^{_WS}/>][^{_WS}/>=]*+"
    rf"(?:[{_WS}]*+=[{_WS}]*+(?:\"[^\"]*+\"?|'[^']*+'?|[^{_WS}>\"'][^{_WS}>]*+)?)?"
)
# What follows a tag name: attributes and separators (whitespace, or "/" in the self-closing start
# tag state when no ">" follows it). The repetition stops only at ">" or at the end of the input.
_ATTRIBUTES = rf"(?:{_ATTRIBUTE}|[{_WS}/]++)*+"  # disjoint first characters: order is speed only
# A complete tag: (end tag "/")(name)(attribute text). An unfinished one (the end of the input comes
# first) does not match: the standard drops it.
_TAG = rf"(/?)([a-zA-Z][^{_WS}/>]*+)({_ATTRIBUTES})>"
# Comment: "<!-->" and "<!--->" end at once (abrupt closing); otherwise "-->" or "--!>" ends it.
# The other markup declarations (DOCTYPE, CDATA outside foreign content, bogus comments), "<?"
# and "</" not followed by a letter all end at the first ">" whatever comes between: every DOCTYPE
# state, the bogus comment state and "</>" go back to data on ">".
_COMMENT = r"!--(?:-?>|.*?--!?>)"
_OTHER_MARKUP = r"!(?!--)[^>]*+>|\?[^>]*+>|/(?:[^a-zA-Z>][^>]*+)?>"
TOKEN_ALTERNATIVES = rf"{_TAG}|{_COMMENT}|{_OTHER_MARKUP}"
# The same tag for the tree builder, its "/" kept in the name group: (/name)(attribute text).
_TREE_TAG = rf"(/?[a-zA-Z][^{_WS}/>]*+)({_ATTRIBUTES})>"
# A token with the text before it, matched anchored one after another: group 1 (empty, at the end
# of that text) when the text is whitespace only (`\s`, as `str.isspace` sees it: the tree builder
# writes one space for it, so it is not copied out), else group 2 (possibly empty); group 3 the tag
# name as written, with a leading "/" for an end tag, group 4 its attribute text (both None for a
# comment or declaration). Fails where a "<" starts no complete token: `markup_at` then says what
# it is.
TEXT_TOKEN = re.compile(rf"(?:\s++()|([^<]*+))<(?:{_TREE_TAG}|{_COMMENT}|{_OTHER_MARKUP})", re.S)
_TAG_AT = re.compile(rf"<{_TAG}", re.S)
_COMMENT_AT = re.compile(r"<!--(?:(-?)>|(.*?)--!?>)", re.S)
_ATTRIBUTE_PARTS = re.compile(
    rf"([^{_WS}/>][^{_WS}/>=]*+)"
    rf"(?:[{_WS}]*+=[{_WS}]*+(?:\"([^\"]*+)\"?|'([^']*+)'?|([^{_WS}>\"'][^{_WS}>]*+))?)?"
)
_ATTRIBUTES_AT = re.compile(_ATTRIBUTES, re.S)


def lower_ascii(name: str) -> str:
    """ASCII upper-case letters lowered, nothing else (the standard's rule for tag and attribute
    names: `str.lower` would also fold "İ" and "K")."""
    if name.isascii():
        return name.lower()
    return "".join(c.lower() if "A" <= c <= "Z" else c for c in name)


# -- character references (13.2.5.72 - 13.2.5.80) --------------------------------------------------

# Numeric references to C1 controls mean the windows-1252 character (the standard's table).
_C1_REPLACEMENT = {
    0x80: "\u20ac", 0x82: "\u201a", 0x83: "\u0192", 0x84: "\u201e", 0x85: "\u2026", 0x86: "\u2020",
    0x87: "\u2021", 0x88: "\u02c6", 0x89: "\u2030", 0x8A: "\u0160", 0x8B: "\u2039", 0x8C: "\u0152",
    0x8E: "\u017d", 0x91: "\u2018", 0x92: "\u2019", 0x93: "\u201c", 0x94: "\u201d", 0x95: "\u2022",
    0x96: "\u2013", 0x97: "\u2014", 0x98: "\u02dc", 0x99: "\u2122", 0x9A: "\u0161", 0x9B: "\u203a",
    0x9C: "\u0153", 0x9E: "\u017e", 0x9F: "\u0178",
}
# The longest name in the table has 31 characters before its ";": a longer run of alphanumerics
# can only match by a prefix of at most that length.
_LONGEST_NAME = max(len(k.rstrip(";")) for k in _NAMED)
_CHARREF = re.compile(r"&(?:#[xX]([0-9a-fA-F]++)(;?)|#([0-9]++)(;?)|([a-zA-Z0-9]++)(;?))")


def _numeric(digits: str, base: int) -> str:
    digits = digits.lstrip("0")
    # past 0x10FFFF (6 hex or 7 decimal digits) without converting a run of any length
    if len(digits) > (6 if base == 16 else 7):
        return "\ufffd"
    code = int(digits, base) if digits else 0
    if code == 0 or code > 0x10FFFF or 0xD800 <= code <= 0xDFFF:
        return "\ufffd"  # null, out of range, surrogate
    return _C1_REPLACEMENT.get(code) or chr(code)


def _named(m: re.Match[str], in_attribute: bool) -> str:
    name, semicolon = m.group(5), m.group(6)
    if semicolon:
        value = _NAMED.get(name + ";")
        if value is not None:
            return value
    # the longest prefix that is a name valid without ";" (the legacy ones: "&amp", "&copy"...)
    for size in range(min(len(name), _LONGEST_NAME), 1, -1):
        value = _NAMED.get(name[:size])
        if value is not None:
            rest = name[size:] + semicolon
            # in an attribute, "&copy=" and "&copyx" are kept as written (URL query strings)
            if in_attribute and rest and (rest[0] == "=" or rest[0].isascii() and rest[0].isalnum()):
                break
            return value + rest
    return m.group(0)


def _decode(m: re.Match[str], in_attribute: bool) -> str:
    hex_digits = m.group(1)
    if hex_digits is not None:
        return _numeric(hex_digits, 16)
    dec_digits = m.group(3)
    if dec_digits is not None:
        return _numeric(dec_digits, 10)
    if in_attribute:
        # `&name=` right after a name with no ";" is not a reference; the regex does not see the "="
        end = m.end()
        if not m.group(6) and end < len(m.string) and m.string[end] == "=":
            value = _NAMED.get(m.group(5))
            if value is not None:
                return m.group(0)
    return _named(m, in_attribute)


def _decode_text_match(m: re.Match[str]) -> str:
    """`_decode` outside attributes, the commonest case (a name with its ";") first: this runs once
    per character reference of every page."""
    name = m.group(5)
    if name is not None:
        if m.group(6):
            value = _NAMED.get(name + ";")
            if value is not None:
                return value
        return _named(m, False)
    hex_digits = m.group(1)
    if hex_digits is not None:
        return _numeric(hex_digits, 16)
    return _numeric(m.group(3), 10)


def _decode_attribute_match(m: re.Match[str]) -> str:
    return _decode(m, True)


def decode_text(text: str) -> str:
    """Character references in text (data and RCDATA states) replaced by what they stand for."""
    if "&" not in text:
        return text
    return _CHARREF.sub(_decode_text_match, text)


def decode_attribute(value: str) -> str:
    """Character references in an attribute value replaced, with the standard's exception for
    legacy names followed by "=" or an alphanumeric."""
    if "&" not in value:
        return value
    return _CHARREF.sub(_decode_attribute_match, value)


# -- attributes -----------------------------------------------------------------------------------

def parse_attributes(raw: str) -> dict[str, str]:
    """The attributes of a tag's attribute text (group 4 of `TEXT_TOKEN`): names lowered, values
    decoded, the first of duplicated names kept, NUL replaced by U+FFFD."""
    attrs: dict[str, str] = {}
    if not raw:
        return attrs
    if "\0" in raw:
        raw = raw.replace("\0", "\ufffd")
    for name, dq, sq, unquoted in _ATTRIBUTE_PARTS.findall(raw):
        name = name.lower() if name.isascii() else lower_ascii(name)
        if name in attrs:
            continue
        value = dq or sq or unquoted
        attrs[name] = decode_attribute(value) if "&" in value else value
    return attrs


def is_self_closing(raw: str) -> bool:
    """Whether the tag ended in the self-closing start tag state: its attribute text ends with a
    "/" that is a separator, not the end of an unquoted value or name (`<a href=x/>` is not)."""
    if not raw.endswith("/"):
        return False
    last_end = 0
    for m in _ATTRIBUTE_PARTS.finditer(raw):
        last_end = m.end()
    return last_end < len(raw)


# -- raw text: RCDATA, RAWTEXT, script data, PLAINTEXT ---------------------------------------------

RCDATA = frozenset(("title", "textarea"))
RAWTEXT = frozenset(("style", "xmp", "iframe", "noembed", "noframes"))
_END_TAG_CACHE: dict[str, re.Pattern[str]] = {}
_SCRIPT_PATTERNS: dict[str, tuple[re.Pattern[str], re.Pattern[str], re.Pattern[str]]] = {}


def _script_patterns(tag: str) -> tuple[re.Pattern[str], re.Pattern[str], re.Pattern[str]]:
    """The searches of the script data, escaped and double-escaped states, for the end tag `tag`
    (always "script" under the tree builder; the conformance suite tries others)."""
    pats = _SCRIPT_PATTERNS.get(tag)
    if pats is None:
        name = re.escape(tag)
        after = r"(?=[\t\n\f\r />])"
        # each search factored behind one first character: an alternation of whole branches
        # (or a named group around one) makes `re` try every position (10x slower on real pages)
        pats = _SCRIPT_PATTERNS[tag] = (
            re.compile(rf"<(?:(/){name}{after}|!--)", re.I | re.A),
            re.compile(rf"-->|<(?:(/){name}|(script)){after}", re.I | re.A),
            re.compile(rf"-->|</script{after}", re.I | re.A),
        )
    return pats


def _end_tag_pattern(tag: str) -> re.Pattern[str]:
    pat = _END_TAG_CACHE.get(tag)
    if pat is None:
        # the appropriate end tag: its name exactly (case folded), then whitespace, "/" or ">"
        pat = _END_TAG_CACHE[tag] = re.compile(r"</" + re.escape(tag) + r"(?=[\t\n\f\r />])", re.I | re.A)
    return pat


def _finish_end_tag(html: str, name_end: int) -> int:
    """Where an appropriate end tag whose name ends at `name_end` ends: after its ">", or -1 when
    the input ends first (the standard then drops the tag)."""
    if html.startswith(">", name_end):
        return name_end + 1
    m = _ATTRIBUTES_AT.match(html, name_end)
    end = m.end() if m else name_end
    return end + 1 if end < len(html) else -1


def _script_end(html: str, pos: int, tag: str = "script") -> int:
    """Start of the `</script` that ends script data begun at `pos` (or -1): the script data,
    escaped (after `<!--`) and double-escaped (after `<!--<script>`) states of 13.2.5.4-5, 15-32."""
    state = 0  # 0 script data, 1 escaped, 2 double escaped
    data, escaped, double_escaped = _script_patterns(tag)
    n = len(html)
    while pos < n:
        if state == 0:
            m = data.search(html, pos)
            if m is None:
                return -1
            if m.group(1):
                return m.start()
            state, pos = 1, m.start() + 2  # the "--" of "<!--" already counts toward "-->"
        elif state == 1:
            m = escaped.search(html, pos)
            if m is None:
                return -1
            if m.group(0) == "-->":
                state = 0
            elif m.group(1):
                return m.start()
            else:
                state = 2
            pos = m.end()
        else:
            m = double_escaped.search(html, pos)
            if m is None:
                return -1
            state = 0 if m.group(0) == "-->" else 1
            pos = m.end()
    return -1


def raw_text_end(html: str, pos: int, tag: str, script: bool | None = None) -> tuple[int, int]:
    """(end of the content, end of the end tag) of the raw text of `tag` that starts at `pos`:
    script data for `script`, PLAINTEXT for `plaintext` (to the end), otherwise the content runs to
    the appropriate end tag. Without one, both are the end of the input."""
    n = len(html)
    if tag == "plaintext":
        return n, n
    m = _end_tag_pattern(tag).search(html, pos)
    start = m.start() if m else -1
    if (script or script is None and tag == "script") and html.find("<!--", pos, start if m else n) >= 0:
        start = _script_end(html, pos, tag)  # escaped script data: walk its states
    if start < 0:
        return n, n
    end = _finish_end_tag(html, start + 2 + len(tag))
    return (start, end) if end >= 0 else (start, n)


# -- the reference tokenizer ----------------------------------------------------------------------

Token = tuple[Any, ...]  # ("StartTag", name, attrs, self_closing) | ("EndTag", name) | ("Comment", data) |
# ("Character", data) | ("DOCTYPE", name, public_id, system_id, correct)


def preprocess(html: str) -> str:
    """The input stream's newline normalization (13.2.3.5): CRLF and lone CR become LF."""
    if "\r" in html:
        html = html.replace("\r\n", "\n").replace("\r", "\n")
    return html


def tokenize(html: str, state: str = "data", last_start_tag: str | None = None) -> Iterator[Token]:
    """The tokens of `html` (already preprocessed), starting in `state` ("data", "rcdata", "rawtext",
    "script", "plaintext", "cdata"). The tree builder is not simulated: the state never changes
    on a start tag. Adjacent character tokens are not merged."""
    n = len(html)
    pos = 0
    if state != "data":
        if state == "cdata":
            end = html.find("]]>")
            content_end, pos = (n, n) if end < 0 else (end, end + 3)
        elif last_start_tag is None or state == "plaintext":
            content_end = pos = n
        elif state == "script":
            content_end, pos = raw_text_end(html, 0, last_start_tag, script=True)
        else:
            content_end, pos = raw_text_end(html, 0, last_start_tag)
        text = html[:content_end]
        if state == "rcdata":
            text = decode_text(text)
        if text:
            yield ("Character", text if state == "cdata" else text.replace("\0", "\ufffd"))
        if (
            state != "cdata"
            and content_end < n
            and _finish_end_tag(html, content_end + 2 + len(last_start_tag or "")) >= 0
        ):
            yield ("EndTag", last_start_tag)
    while pos < n:
        lt = html.find("<", pos)
        if lt < 0:
            lt = n
        if lt > pos:
            yield ("Character", decode_text(html[pos:lt]))
        if lt >= n:
            return
        token, pos = markup_at(html, lt)
        if token is not None:
            yield token


def markup_at(html: str, i: int) -> tuple[Token | None, int]:
    """The token that the "<" at `i` starts in the data state and where it ends. A "<" that starts
    no markup is a character token; an unfinished tag reaches the end and yields nothing."""
    n = len(html)
    nxt = html[i + 1] if i + 1 < n else ""
    if nxt.isascii() and nxt.isalpha():
        m = _TAG_AT.match(html, i)
        if m is None:
            return None, n  # eof-in-tag: dropped
        name = lower_ascii(m.group(2)).replace("\0", "\ufffd")
        if m.group(1):
            return ("EndTag", name), m.end()
        raw = m.group(3)
        return ("StartTag", name, parse_attributes(raw), is_self_closing(raw)), m.end()
    if nxt == "!":
        if html.startswith("<!--", i):
            m = _COMMENT_AT.match(html, i)
            if m is None:
                return ("Comment", _comment_data(html[i + 4:])), n  # eof-in-comment
            return ("Comment", (m.group(2) or "").replace("\0", "\ufffd")), m.end()
        end = html.find(">", i)
        end = n if end < 0 else end
        body = html[i + 2:end]
        after = min(end + 1, n)
        if body[:7].upper() == "DOCTYPE":
            return _doctype(body[7:], end < n), after
        return ("Comment", body.replace("\0", "\ufffd")), after
    if nxt == "?":
        end = html.find(">", i)
        end = n if end < 0 else end
        return ("Comment", html[i + 1:end].replace("\0", "\ufffd")), min(end + 1, n)
    if nxt == "/":
        third = html[i + 2] if i + 2 < n else ""
        if third.isascii() and third.isalpha():
            m = _TAG_AT.match(html, i)
            if m is None:
                return None, n
            return ("EndTag", lower_ascii(m.group(2)).replace("\0", "\ufffd")), m.end()
        if third == ">":
            return None, i + 3  # missing-end-tag-name: nothing
        if third == "":
            return ("Character", "</"), n  # eof-before-tag-name
        end = html.find(">", i)
        end = n if end < 0 else end
        return ("Comment", html[i + 2:end].replace("\0", "\ufffd")), min(end + 1, n)
    return ("Character", "<"), i + 1


def _comment_data(rest: str) -> str:
    """An unclosed comment's data: everything to the end, less the dashes of an unfinished end."""
    if rest in ("", "-"):
        return ""
    for ending in ("--!", "--", "-"):
        if rest.endswith(ending):
            rest = rest[: -len(ending)]
            break
    return rest.replace("\0", "\ufffd")


_DOCTYPE_WS = "\t\n\f\r "


def _doctype(body: str, closed: bool) -> Token:
    """A DOCTYPE token from the text between "<!DOCTYPE" and ">" (13.2.5.53 - 13.2.5.68). It always
    ends at the first ">": every DOCTYPE state goes back to data on one."""
    body = body.replace("\0", "\ufffd")
    n = len(body)
    i = 0
    quirks = not closed

    def skip(j: int) -> int:
        while j < n and body[j] in _DOCTYPE_WS:
            j += 1
        return j

    i = skip(i)
    if i >= n:
        return ("DOCTYPE", None, None, None, False)  # missing name (or eof)
    j = i
    while j < n and body[j] not in _DOCTYPE_WS:
        j += 1
    name = lower_ascii(body[i:j])
    i = skip(j)
    public = system = None
    if i >= n:
        return ("DOCTYPE", name, None, None, not quirks)
    keyword = body[i:i + 6].upper()
    if keyword not in ("PUBLIC", "SYSTEM"):
        return ("DOCTYPE", name, None, None, False)  # bogus doctype
    i += 6

    def quoted(j: int) -> tuple[str | None, int, bool]:
        """An identifier at `j` (after optional whitespace): (value, next index, ok)."""
        j = skip(j)
        if j >= n or body[j] not in "\"'":
            return None, j, False
        q = body[j]
        k = body.find(q, j + 1)
        if k < 0:
            return body[j + 1:], n, False  # abrupt (">" came first) or eof: quirks
        return body[j + 1:k], k + 1, True

    if keyword == "PUBLIC":
        public, i, ok = quoted(i)
        if not ok:
            return ("DOCTYPE", name, public, None, False)
        if i < n and body[i] not in _DOCTYPE_WS + "\"'":
            return ("DOCTYPE", name, public, None, False)  # bogus after the public identifier
        i = skip(i)
        if i >= n:
            return ("DOCTYPE", name, public, None, not quirks)
        system, i, ok = quoted(i)
        if not ok:
            return ("DOCTYPE", name, public, system, False)
    else:
        system, i, ok = quoted(i)
        if not ok:
            return ("DOCTYPE", name, None, system, False)
    # after the system identifier: anything but whitespace starts a bogus doctype, which keeps the
    # mode even when the input ends inside it
    return ("DOCTYPE", name, public, system, skip(i) < n or not quirks)
