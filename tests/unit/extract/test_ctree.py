"""The compiled tree builder (`thresher.extract._ctree`) builds exactly the tree of the Python
reference (`tree._parse_python`): same document fields, same nodes with the same values, the same
children (strings of the same type, the same node objects) in the same order.

Compared on every evaluation page, every input of the html5lib tokenizer suite, the bad inputs of
issue 15 and thousands of seeded random nasty documents. Skipped when the extension is not built
(`python setup.py build_ext --inplace`, or an install with a C compiler).
"""

from __future__ import annotations

import gzip
import json
import random
import re
import sys
import time
from pathlib import Path

import pytest

from thresher import compiled
from thresher.extract import tree
from thresher.extract.base import ExtractionTimeout, cpu_clock

_ctree = pytest.importorskip("thresher.extract._ctree", reason="the C tree builder is not built (optional)")

SHARED = Path(__file__).resolve().parents[3] / ".." / "shared" / "data"
EXTRACTION = SHARED / "extraction"
TOKENIZER_SUITE = SHARED / "html5lib-tests" / "tokenizer"
# The random documents: how many, and the seed that makes them the same on every run.
RANDOM_CASES = 3000
SEED = 15


def signature(doc: tree.HtmlDocument) -> list:
    """Everything the tree holds, with nodes named by their position in `doc.nodes`."""
    position = {id(node): i for i, node in enumerate(doc.nodes)}
    out: list = [doc.title, doc.lang, doc.metas, doc.links, doc.json_ld, len(doc.nodes), doc.nodes[0] is doc.root]
    for node in doc.nodes:
        children = []
        for child in node.children:
            if type(child) is tree.Node:
                children.append(("node", position[id(child)]))
            else:
                children.append((type(child).__name__, child))
        parent = None if node.parent is None else position[id(node.parent)]
        out.append((type(node).__name__, type(node.tag).__name__, node.tag, type(node.raw_attrs).__name__,
                    node.raw_attrs, node._attrs, node.index, node.end, node.text_len, node.link_len, node.flags,
                    parent, children))
    return out


def assert_same_tree(html: str) -> None:
    expected = signature(tree._parse_python(html))
    got = signature(_ctree.parse(html))
    if got != expected:
        for i, (a, b) in enumerate(zip(expected, got, strict=False)):
            assert b == a, f"first difference at item {i} for {html[:200]!r}"
        assert len(got) == len(expected), f"different node counts for {html[:200]!r}"


def test_parse_is_the_compiled_builder_unless_switched_off():
    import os

    if os.environ.get(compiled.PURE_PYTHON_ENV, "") in ("", "0"):
        assert tree.parse is _ctree.parse
    else:
        assert tree.parse is tree._parse_python


def test_pure_python_switch_makes_parse_the_reference():
    import subprocess

    code = "from thresher.extract import tree; print(tree.parse is tree._parse_python)"
    env = {**__import__("os").environ, compiled.PURE_PYTHON_ENV: "1"}
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "True"


@pytest.mark.parametrize("html", [
    "", " ", "x", "<", "<<", "</", "</ ", "<!", "<!-", "<!--", "<!---", "<!-->", "<!--->", "<a", "<a ", "</a",
    "<p>a</p>", "<P>A<p>b", " \n <b> x </b> ", "<pre> a\n  b </pre>  c", "<div/>x", "<table><tr><td>a<td>b</table>",
    "<ul><li>a<li>b</ul>", "<dl><dt>a<dd>b</dl>", "<h1>a<h2>b</h2></h1>", "<select><option>a<option>b</select>",
    "<a href=x>link<a>again</a>", "<br></br><hr/>", "a & b &amp; c &#0; &#xD800; &notin; &notit;",
    "<meta charset=utf-8><link rel=x href=y><html lang=' en '>", "<title> T &amp; </title><title>2</title>",
    "<script>x</script><script type=application/ld+json>{}</script><style>a</STYLE >b",
    "<script><!--<script></script>--></script>t", "<plaintext><p>x", "<textarea>&lt;</textarea>",
    "<b class=x>a</b></b></i>", "<span>\u00a0\u2028\u3000</span>", "<d\u00edv>x</d\u00edv>", "\ud800<p>\udfff",
    "<p>\U0001f600</p>", "a\x00b<p\x00>c", "<x =y 'z\"=w>t", "<a b='>'>c", '<p a="b">', "<?x>y", "</ >z", "</>w",
    "<!doctype html><!-- c --><p>t", "<P CLASS=A>x</P>", "<div\u3000a>x</div\u3000a>", "<\u00e9>x",
])
def test_small_documents(html):
    assert_same_tree(html)


def _evaluation_pages() -> list[Path]:
    if not EXTRACTION.is_dir():
        pytest.skip(f"evaluation data missing: {EXTRACTION}")
    paths: list[Path] = []
    for pattern in ("aeb/html/*.html.gz", "trafilatura-eval/pages/*", "readability/*/source.html.gz"):
        paths += sorted(EXTRACTION.glob(pattern))
    return paths


def _read_page(path: Path) -> str:
    sys.path.insert(0, str(Path(__file__).resolve().parents[3] / "benchmarks"))
    from extraction_worker import read_page  # decodes as the digests benchmark does

    return read_page(str(path))


def test_every_evaluation_page():
    paths = _evaluation_pages()
    for path in paths:
        assert_same_tree(_read_page(path))
    assert len(paths) > 1000


_ESCAPE = re.compile(r"\\u([0-9a-fA-F]{4})")


def test_every_input_of_the_html5lib_tokenizer_suite():
    if not TOKENIZER_SUITE.is_dir():
        pytest.skip(f"conformance data missing: {TOKENIZER_SUITE}")
    count = 0
    for path in sorted(TOKENIZER_SUITE.glob("*.test")):
        for test in json.loads(path.read_text()).get("tests", []):
            html = test["input"]
            if test.get("doubleEscaped"):
                html = _ESCAPE.sub(lambda m: chr(int(m.group(1), 16)), html)  # lone surrogates included
            assert_same_tree(html)
            count += 1
    assert count > 1000


BAD_INPUTS = {
    "10 MB attribute value": '<div title="' + "v" * 10_000_000 + '">text</div>',
    "1e6 unclosed quotes": "<p a=\"" + '"' * 1_000_000 + "x",
    "1e6 stray quotes in text": '<p>' + "\"'" * 500_000 + "</p>",
    "script never closed": "<p>before</p><script>" + "var x = 1;<!-- " * 100_000,
    "NUL and lone surrogates in references": "<p>a&#0;b&#xD800;c&#xDFFF;\x00d\ud800e&#x110000;</p>" * 20_000,
    "99% br": "<p>x" + "<br>" * 500_000 + "</p>",
    "100,000-deep nesting": "<div>" * 100_000 + "deep" + "</div>" * 100_000,
    "100,000-deep unclosed inline": "<span class=a>" * 100_000 + "deep",
    "100,000 unclosed comments": "<!--" * 100_000,
    "100,000 stray lt": "< " * 100_000,
}


@pytest.mark.parametrize("name", sorted(BAD_INPUTS))
def test_bad_inputs_of_issue_15(name):
    html = BAD_INPUTS[name]
    t0 = cpu_clock()
    got = signature(_ctree.parse(html))
    c_seconds = cpu_clock() - t0
    assert got == signature(tree._parse_python(html))
    assert c_seconds < 2.0


def test_tiny_deadline_raises_from_the_compiled_path():
    html = "<p>x</p>" * 10_000
    with pytest.raises(ExtractionTimeout):
        _ctree.parse(html, cpu_clock() - 1.0)
    with pytest.raises(ExtractionTimeout):
        _ctree.parse(html, deadline=0.0)
    assert signature(_ctree.parse(html, cpu_clock() + 60.0)) == signature(tree._parse_python(html))


def test_nodes_made_by_calling_the_class_are_the_same():
    html = "<div class=a><p>x<table><tr><td>y</table><hr><pre> z </pre><div/></div>"
    _ctree._force_class_call(True)
    try:
        assert _ctree._node_allocation() == "class call"
        assert_same_tree(html)
    finally:
        _ctree._force_class_call(False)
    assert _ctree._node_allocation() == "slots"


def test_input_must_be_a_str():
    with pytest.raises(TypeError):
        _ctree.parse(b"<p>x")  # type: ignore[arg-type]


def test_tag_names_past_the_cache_bound():
    # more distinct names than either cache keeps: the uncached path gives the same tree
    html = "".join(f"<t{i} a=1>x<p>y</T{i}>" for i in range(5000)) + "</p>" + "<T4999>z</t4999>"
    assert_same_tree(html)


# -- seeded random nasty HTML -----------------------------------------------------------------------

_NAMES = ("div", "DIV", "p", "P", "span", "b", "i", "a", "A", "li", "ul", "ol", "td", "th", "tr", "table", "tbody",
          "dl", "dt", "dd", "h1", "h2", "H3", "h6", "option", "select", "pre", "PRE", "section", "article", "form",
          "br", "hr", "img", "meta", "link", "html", "head", "body", "title", "script", "style", "textarea", "svg",
          "template", "plaintext", "xmp", "iframe", "noembed", "font", "button", "blockquote", "d\u00edv", "x-y",
          "\u00e9l\u00e9ment", "menu", "datalist", "p\x0b", "b\u00a0", "tfoot", "thead", "main", "nav")
_ATTRS = ("", " class=x", ' id="a b"', " href='u?a=1&amp;b'", " lang=en", " xml:lang='fr '", " content=\"c\"",
          " type=application/ld+json", " TYPE=APPLICATION/LD+JSON", " charset=utf-8", " rel=canonical",
          " a=\"unclosed", " b='", ' c="x>y"', " =x", " d=", " /", "/", " \u00a0", " \"q\"", " e=&#0;", " f=x/",
          " g='>'", "\t\nh\f=\ri",
          "\x0bk=v", " \u00a0k=v", " k\x0b=v", " k=\x0bv", "\u3000")
_TEXTS = ("text", " ", "  \n  ", "\u00a0", "\u2028", "\u3000", "\u0085", "\x1c", "\x0b", "&amp;", "&lt;p&gt;",
          "&#0;", "&#xD800;", "&#x110000;", "&notin", "&copy=", "&", "<", " < ", "<3", "'", '"', "\x00", "\ud800",
          "\udfff", "\U0001f600", "caf\u00e9", "\u4e2d\u6587", "a\nb", ">", "/", "=")
_MARKUP = ("<!-- c -->", "<!-->", "<!--->", "<!-- a --!>", "<!-- x", "<!--", "<!doctype html>", "<!x>", "<?pi?>",
           "</>", "</ x>", "</3>", "<!", "</", "<", "<![CDATA[x]]>", "<!-- <script> -->",
           "<script><!--<script>x</script>--></script>", "<script>a</script >", "<script>a</script/x>",
           "<style>p{}</STYLE>", "<title>T &amp; t</title>", "<textarea><p></textarea>", "<svg><p></svg>",
           "<plaintext>", "<div/>", "<p/>", "<table/>", "<pre/>", "</br>", "</p>", "</a>", "</b>", "</div>")


def _real_fragments(rng: random.Random) -> list[str]:
    """Slices of a few real pages, when the evaluation data is there."""
    if not EXTRACTION.is_dir():
        return []
    paths = sorted(EXTRACTION.glob("aeb/html/*.html.gz"))[:8]
    out = []
    for path in paths:
        html = gzip.decompress(path.read_bytes()).decode("utf-8", "replace")
        for _ in range(40):
            start = rng.randrange(max(1, len(html)))
            out.append(html[start:start + rng.randrange(1, 400)])
    return out


def _piece(rng: random.Random, fragments: list[str]) -> str:
    kind = rng.random()
    if kind < 0.35:
        name = rng.choice(_NAMES)
        end = rng.random() < 0.35
        attrs = "".join(rng.choice(_ATTRS) for _ in range(rng.randrange(3))) if not end else ""
        return f"<{'/' if end else ''}{name}{attrs}>"
    if kind < 0.65:
        return rng.choice(_TEXTS)
    if kind < 0.85:
        return rng.choice(_MARKUP)
    if kind < 0.92 and fragments:
        return rng.choice(fragments)
    if kind < 0.96:  # deep nesting past MAX_DEPTH, closed or not
        name = rng.choice(("div", "span", "b", "li", "a", "p", "td"))
        depth = rng.randrange(tree.MAX_DEPTH - 5, tree.MAX_DEPTH + 60)
        closes = f"</{name}>" * rng.randrange(depth + 2) if rng.random() < 0.6 else ""
        return f"<{name}>" * depth + "x" + closes
    return "<a href=1>" + rng.choice(_TEXTS) + "<a>" + rng.choice(_TEXTS) + "</a>"


def random_documents(count: int, seed: int) -> list[str]:
    rng = random.Random(seed)
    fragments = _real_fragments(rng)
    docs = []
    for _ in range(count):
        html = "".join(_piece(rng, fragments) for _ in range(rng.randrange(1, 60)))
        if rng.random() < 0.3:  # cut anywhere: unclosed comments, tags, quotes, raw text
            html = html[: rng.randrange(len(html) + 1)]
        if rng.random() < 0.1:  # spliced: a cut of one document pasted into the middle of another
            cut = rng.randrange(len(html) + 1)
            html = html[:cut] + rng.choice(docs or [html])[cut // 2:] + html[cut:]
        docs.append(html)
    return docs


def test_seeded_random_nasty_documents():
    t0 = time.monotonic()
    docs = random_documents(RANDOM_CASES, SEED)
    for html in docs:
        assert_same_tree(html)
    assert time.monotonic() - t0 < 60


def test_the_tree_is_tracked_by_the_collector_once_built():
    # built untracked (speed), tracked before it is returned: its parent cycles stay collectable
    import gc

    doc = _ctree.parse("<div><p>x<hr><div/><table><tr><td>y</table></div>" + "<b class=c>z" * 300)
    assert all(gc.is_tracked(node) and gc.is_tracked(node.children) for node in doc.nodes)
