"""Why the built-in extractor chose the region it chose: for finding all-or-nothing misses.

`explain(html)` runs the extractor's steps and reports the chosen region and the strongest rejected
candidates, each with its subtree goodness, its positive mass, how much of its text was marked as
boilerplate (and by which class words), and why it lost. Used by `benchmarks/extraction_misses.py`.
"""

from __future__ import annotations

from typing import Any

from thresher.extract import region as region_choice
from thresher.extract.blocks import REMOVED, segment
from thresher.extract.boilerplate import mark_article_cards, mark_boilerplate
from thresher.extract.hints import class_id
from thresher.extract.scoring import block_scores
from thresher.extract.tree import HtmlDocument, Node, parse, text_of


def _describe(node: Node) -> str:
    ci = class_id(node) if node.raw_attrs else ""
    return f"<{node.tag}{' ' + ci if ci else ''}>#{node.index}"


def _removed_text(doc: HtmlDocument, node: Node) -> int:
    """Characters of `node`'s text inside subtrees marked as boilerplate."""
    total = 0
    i = node.index + 1
    while i < node.end:
        n = doc.nodes[i]
        if n.flags & REMOVED:
            total += n.text_len
            i = n.end
        else:
            i += 1
    return total


def explain(html: str, candidates: int = 5) -> dict[str, Any]:
    """The chosen region and the best rejected candidates (largest positive mass), with reasons."""
    doc = parse(html)
    mark_boilerplate(doc)
    mark_article_cards(doc)
    blocks = segment(doc.root)
    scores = block_scores(blocks)
    region = region_choice.widen_to_pane_set(doc, region_choice.best_subtree(doc, blocks, scores))
    acc = [0.0] * len(doc.nodes)
    pos = [0.0] * len(doc.nodes)
    for b, s in zip(blocks, scores, strict=True):
        acc[b.owner.index] += s if s > 0 else region_choice._NEGATIVE_WEIGHT * s
        if s > 0:
            pos[b.owner.index] += s
    for node in reversed(doc.nodes):
        if node.parent is not None:
            acc[node.parent.index] += acc[node.index]
            pos[node.parent.index] += pos[node.index]
    # the largest text-holding subtrees that are neither the region nor around it
    others = [n for n in doc.nodes[1:] if not n.contains(region) and not region.contains(n) and n.text_len >= 200]
    others.sort(key=lambda n: -n.text_len)
    picked: list[Node] = []
    for n in others:
        if any(p.contains(n) or n.contains(p) for p in picked):
            continue
        picked.append(n)
        if len(picked) >= candidates:
            break
    rejected = []
    for n in picked:
        removed = _removed_text(doc, n) + (n.text_len if n.flags & REMOVED else 0)
        if n.flags & REMOVED or removed > 0.5 * n.text_len:
            why = "marked as boilerplate (tag, role or class/id words)"
        elif acc[n.index] <= 0:
            why = "non-positive goodness (link-dense, short or teaser-like blocks)"
        elif acc[n.index] < acc[region.index]:
            why = f"lower goodness ({acc[n.index]:.0f} < {acc[region.index]:.0f})"
        else:
            why = "region rule (share floor, descent or climb)"
        rejected.append({"node": _describe(n), "text_chars": n.text_len, "removed_chars": removed,
                         "goodness": round(acc[n.index], 1), "positive": round(pos[n.index], 1),
                         "why": why, "text_start": text_of(n)[:120]})
    return {
        "region": _describe(region), "region_text_chars": region.text_len,
        "region_goodness": round(acc[region.index], 1), "page_positive": round(pos[0], 1),
        "region_text_start": text_of(region)[:120], "rejected": rejected,
    }
