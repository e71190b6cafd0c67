"""Cut a parsed page into text blocks (paragraphs, headings, list items, code, quotes, tables).

A block is the text between two block-level boundaries, attributed to the nearest block-level
element that owns it. Content selection scores blocks; rendering turns the chosen ones into plain
text or Markdown. The walk is iterative; removed subtrees (flag `REMOVED`) are skipped.
"""

from __future__ import annotations

import re
from typing import Any

from thresher.extract.base import ExtractionTimeout, cpu_clock
from thresher.extract.tree import BR, TABLE_INSIDE, LinkText, Node, iter_text

REMOVED = 1

BLOCK_TAGS = frozenset(
    "address article aside blockquote body center dd details dialog dir div dl dt fieldset figcaption figure "
    "footer form frame frameset h1 h2 h3 h4 h5 h6 header hgroup hr li main menu nav noframes noscript ol p pre "
    "section summary table tbody td tfoot th thead tr ul caption legend option output #root".split()
)
_HEADING_LEVEL = {"h1": 1, "h2": 2, "h3": 3, "h4": 4, "h5": 5, "h6": 6}
_CHECK_EVERY = 1024
# An attribute named so has these letters, in any case (Unicode's: "ſ" matches "s"); an ASCII
# attribute text is searched lowered instead, which is the same test without a regex per cell.
_COLSPAN = re.compile("colspan", re.I)


class Block:
    __slots__ = ("kind", "text", "owner", "text_len", "link_len", "level", "ordered", "score", "table")

    def __init__(self, kind: str, text: str, owner: Node, text_len: int, link_len: int, level: int = 0,
                 ordered: bool = False, table: list[list[str]] | None = None) -> None:
        self.kind = kind  # p, heading, li, pre, quote, table, caption
        self.text = text
        self.owner = owner
        self.text_len = text_len
        self.link_len = link_len
        self.level = level  # heading level, or list nesting depth
        self.ordered = ordered
        self.score = 0.0
        self.table = table

    @property
    def link_density(self) -> float:
        return self.link_len / self.text_len if self.text_len else 0.0

    def __repr__(self) -> str:
        return f"Block({self.kind}, {self.text[:40]!r})"


# Invisible format characters that split words for any tokenizer: soft hyphen, zero-width space,
# word joiner, zero-width no-break space (BOM).
_INVISIBLE = dict.fromkeys(map(ord, "\u00ad\u200b\u2060\ufeff"))


def _clean_lines(parts: list[str]) -> str:
    raw = "".join(parts)
    if raw.isascii():  # no invisible character and no <br> (both are non-ASCII): a constant-time test
        return " ".join(raw.split())
    if "\u00ad" in raw or "\u200b" in raw or "\u2060" in raw or "\ufeff" in raw:
        raw = raw.translate(_INVISIBLE)
    if BR not in raw:
        return " ".join(raw.split())
    lines = [" ".join(line.split()) for line in raw.split(BR)]
    return "\n".join(line for line in lines if line)


def _nonspace(text: str) -> int:
    return len(text) - text.count(" ") - text.count("\n")


_TEXT_CONTAINERS = frozenset(
    ("p", "div", "ul", "ol", "pre", "blockquote", "h1", "h2", "h3", "form", "section", "article")
)


def is_data_table(table: Node) -> bool:
    """A table of data (rendered as a pipe table) rather than page layout (walked as blocks)."""
    if table.flags & TABLE_INSIDE:
        return False  # nested tables: layout (known from the parse, without walking the subtree)
    rows = 0
    max_cells = 0
    cells = 0
    # every test below only rejects, so the subtree may be visited in any order
    pending: list[list[Node | str]] = [table.children]
    while pending:
        for item in pending.pop():
            if item.__class__ is not Node:
                continue
            tag = item.tag
            if tag == "td" or tag == "th":
                cells += 1
                if item.text_len > 600:
                    return False  # a cell holding an article: layout
            elif tag == "tr":
                # its cells are counted and tested here, in the one pass over the row that counts
                # them (a data table's cells are most of its elements); anything else is visited
                rows += 1
                n = 0
                for c in item.children:
                    if c.__class__ is Node:
                        ctag = c.tag
                        if ctag == "td" or ctag == "th":
                            n += 1
                            cells += 1
                            if c.text_len > 600:
                                return False  # a cell holding an article: layout
                            if c.end - c.index > 1:
                                pending.append(c.children)
                        else:
                            pending.append([c])
                if n > max_cells:
                    max_cells = n
                continue
            elif tag == "table":
                return False  # nested tables: layout
            elif tag in _TEXT_CONTAINERS:
                if item.text_len > 200:
                    return False
            if item.end - item.index > 1:  # elements below (text alone needs no visit)
                pending.append(item.children)
    if rows < 2 or max_cells < 2:
        return False
    return table.text_len / max(cells, 1) < 400


def table_rows(table: Node) -> list[list[str]]:
    """Cell texts, row by row; `colspan` cells are followed by empty cells to keep columns aligned."""
    rows: list[list[str]] = []
    stack: list[Node | str] = list(reversed(table.children))
    pop = stack.pop
    extend = stack.extend
    while stack:
        item = pop()
        if item.__class__ is not Node or item.flags & REMOVED:
            continue
        if item.tag == "tr":
            row: list[str] = []
            for cell in item.children:
                if cell.__class__ is not Node:
                    continue
                tag = cell.tag
                if (tag != "td" and tag != "th") or cell.flags & REMOVED:
                    continue
                # no non-space character below: the text is whitespace only (spaces, newlines, <br>)
                if cell.text_len:
                    # a cell with no element below holds text alone
                    # (children, not `cast(...)` of them: a function call per cell of a 20,000-cell table)
                    parts = cell.children if cell.end - cell.index == 1 else iter_text(cell)
                    text = " ".join("".join(parts).split())  # type: ignore[arg-type]  # text only (no element below)
                    if "|" in text:
                        text = text.replace("|", "\\|")
                else:
                    text = ""
                row.append(text)
                raw = cell.raw_attrs
                if raw and ("colspan" in raw.lower() if raw.isascii() else _COLSPAN.search(raw)):
                    try:
                        span = int(cell.get("colspan", "1") or 1)
                    except ValueError:
                        span = 1
                    row.extend([""] * max(0, min(span, 50) - 1))
            if any(row):
                rows.append(row)
        elif item.end - item.index > 1:  # elements below: walk them (text outside rows is not a cell)
            extend(reversed(item.children))
    return rows


def render_table(rows: list[list[str]]) -> str:
    width = max(len(r) for r in rows)
    lines = []
    for i, row in enumerate(rows):
        cells = row + [""] * (width - len(row))
        lines.append("| " + " | ".join(cells) + " |")
        if i == 0:
            lines.append("|" + "|".join(["---"] * width) + "|")
    return "\n".join(lines)


def segment(root: Node, deadline: float | None = None, skip_flags: int = REMOVED) -> list[Block]:
    """The blocks under `root`, in document order."""
    blocks: list[Block] = []
    parts: list[str] = []
    link_chars = 0
    owners: list[Node] = [root]
    list_stack: list[bool] = []  # ordered?
    ticks = 0

    def flush() -> None:
        nonlocal link_chars
        if not parts:
            return
        text = _clean_lines(parts)
        parts.clear()
        links = link_chars
        link_chars = 0
        if not text:
            return
        owner = owners[-1]
        tag = owner.tag
        n = _nonspace(text)
        if tag in _HEADING_LEVEL:
            blocks.append(Block("heading", text, owner, n, links, _HEADING_LEVEL[tag]))
        elif tag == "li":
            blocks.append(Block("li", text, owner, n, links, len(list_stack), bool(list_stack and list_stack[-1])))
        elif tag == "blockquote":
            blocks.append(Block("quote", text, owner, n, links))
        elif tag in ("figcaption", "caption"):
            blocks.append(Block("caption", text, owner, n, links))
        elif tag in ("dt",):
            blocks.append(Block("dt", text, owner, n, links))
        else:
            blocks.append(Block("p", text, owner, n, links))

    # stack items: a Node to enter, a text, or -1 marking the exit of owners[-1]
    stack: list[Node | str | int] = [root]
    pop = stack.pop
    add = parts.append
    while stack:
        ticks += 1
        if ticks >= _CHECK_EVERY:
            ticks = 0
            if deadline is not None and cpu_clock() > deadline:
                raise ExtractionTimeout("segmentation passed the deadline")
        item: Any = pop()  # a Node, str, LinkText or an int marker: `cls` dispatches
        cls = item.__class__
        if cls is str:  # children are Nodes, str and LinkText; the stack adds -1 markers
            add(item)
            continue
        if cls is LinkText:
            add(item)
            link_chars += len(item) - item.count(" ") - item.count("\n")
            continue
        if cls is int:
            if parts:
                flush()
            node = owners.pop()
            if node.tag in ("ul", "ol", "menu", "dir") and list_stack:
                list_stack.pop()
            continue
        node = item
        if node.flags & skip_flags:
            continue
        tag = node.tag
        if tag not in BLOCK_TAGS or node is root:
            if tag in ("img", "input", "image"):
                continue
            if tag == "hr":
                if parts:
                    flush()
                continue
            if node is root:
                stack.append(-1)
                owners.append(node)
            elif node.end - node.index == 1:
                # no element below: its children are text, taken in order as the walk would pop them
                children = node.children
                ticks += len(children)
                parts.extend(children)
                for text in children:
                    if text.__class__ is LinkText:
                        link_chars += len(text) - text.count(" ") - text.count("\n")
                continue
            stack.extend(reversed(node.children))
            continue
        if parts:
            flush()
        if tag == "pre":
            text = "".join(iter_text(node)).replace(BR, "\n").strip("\n")
            if text.strip():
                blocks.append(Block("pre", text, node, _nonspace(text), 0))
            continue
        if tag == "table" and is_data_table(node):
            rows = table_rows(node)
            if rows:
                rendered = render_table(rows)
                n = _nonspace("".join(["".join(r) for r in rows]))
                blocks.append(Block("table", rendered, node, n, node.link_len, table=rows))
            continue
        if node.end - node.index == 1:
            # a block with no element below: its text is one block (or none), as entering it, popping
            # each text and then its exit marker would give
            children = node.children
            if children:
                ticks += len(children)
                parts.extend(children)
                for text in children:
                    if text.__class__ is LinkText:
                        link_chars += len(text) - text.count(" ") - text.count("\n")
                owners.append(node)
                flush()
                owners.pop()
            continue
        if tag in ("ul", "ol", "menu", "dir"):
            list_stack.append(tag == "ol")
        owners.append(node)
        stack.append(-1)
        stack.extend(reversed(node.children))
    flush()
    for b in blocks:
        if b.link_len > b.text_len:
            b.link_len = b.text_len
    return blocks
