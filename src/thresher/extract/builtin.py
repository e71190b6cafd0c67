"""The built-in main-content extractor (standard library only).

1. Parse iteratively (`tree.parse`) and read the page's declared metadata.
2. Mark boilerplate subtrees (`boilerplate`): non-text tags, page furniture, hidden elements,
   class/id vocabulary, and small `<article>` cards beside the main article.
3. Cut the page into blocks (`blocks.segment`) and give each a goodness (`scoring`).
4. The main content is the subtree with the largest total goodness (`region`), with a bonus for
   containers that name themselves as the text; it moves into a child holding nearly all of its
   positive mass, and takes in a lead paragraph set just before it.
5. Inside it, drop link lists, captions, stock phrases and trailing furniture; render text or
   Markdown (`assemble`).

When that keeps next to nothing, the page is looked at again: its comment threads (a forum), the
element holding its declared description (a video page), its JSON-LD's declared text (a page that
renders its text in the browser), and last every link-poor block.
"""

from __future__ import annotations

import gc
from typing import TYPE_CHECKING, Any

from thresher.extract.assemble import choose_title, filter_blocks, render
from thresher.extract.base import Extraction
from thresher.extract.blocks import REMOVED, Block, segment
from thresher.extract.boilerplate import DESCRIBED, described_inside, mark_article_cards, mark_boilerplate
from thresher.extract.comments import comment_metadata, find_threads, thread_blocks
from thresher.extract.hints import DROP_TAGS
from thresher.extract.metadata import article_body_hint, declared_text, extract_metadata
from thresher.extract.region import best_subtree, container_bonus, extend_to_neighbours, widen_to_pane_set
from thresher.extract.scoring import block_scores, hint_scores, word_tokens
from thresher.extract.tree import HtmlDocument, Node, parse, release
from thresher.version import __version__

if TYPE_CHECKING:
    from thresher.extract.config import ExtractConfig

# Comment threads (removed for their class words alone) are the page's content when they hold at
# least this many characters while the selection beside them keeps fewer than
# `_THREADS_AS_PAGE_MAX_KEPT` characters and less than `_THREADS_AS_PAGE_SHARE` of theirs: a forum
# thread or a live ticker, not an article with comments under it.
_THREADS_AS_PAGE_CHARS = 1000
_THREADS_AS_PAGE_MAX_KEPT = 300
_THREADS_AS_PAGE_SHARE = 0.1
# When the selection keeps fewer than this many characters, an element whose whole text is the
# page's declared description is the page's text (`boilerplate.described_inside` says when and why).
_DESCRIPTION_RETRY_MAX_KEPT = 300
# A page whose selection keeps less than this share of the text its JSON-LD declares (an article's
# `articleBody`, a HowTo's or Recipe's description and steps: `metadata.declared_text`), when that
# is at least `_DECLARED_TEXT_MIN_CHARS` long, renders its text in the browser: the declared text is
# the content (trafilatura-eval: a DIY page whose steps exist only as script data, beside an
# "outdated browser" notice).
_DECLARED_TEXT_SHARE = 0.25
_DECLARED_TEXT_MIN_CHARS = 500
# A region that names itself the post (`container_bonus`) with at least this many characters, of
# which the link-density filter would keep less than this share, is a post made of links: its
# links are kept.
_LINK_POST_MIN_CHARS = 500
_LINK_POST_KEPT_SHARE = 0.1


def _threads_are_the_page(chosen: list[Block], thread_chars: int) -> bool:
    """The selection beside the removed comment threads is no article: a few lines (a "log in to
    comment" form, a match timeline) next to thousands of characters of posts."""
    kept = sum(b.text_len for b in chosen)
    return kept < _THREADS_AS_PAGE_MAX_KEPT and kept < _THREADS_AS_PAGE_SHARE * thread_chars



class BuiltinExtractor:
    """Main content, title and metadata of a page, standard library only. See the module docstring."""

    name = "builtin"

    def __init__(self, text_format: str = "text", tables: str = "keep", comments: str = "drop") -> None:
        self.text_format = text_format
        self.tables = tables
        self.comments = comments

    def version(self) -> str:
        return __version__

    def extract(self, html: str, url: str | None = None, deadline: float | None = None) -> Extraction:
        # A page's tree is thousands of objects that live only for this call. The cyclic garbage
        # collector would scan them again and again while they are built (its passes are triggered
        # by allocation counts, ~20% of extraction time); it is paused for the call instead, and the
        # tree's only cycles (parent links) are cut at the end so reference counting frees it at once.
        gc_was_enabled = gc.isenabled()
        if gc_was_enabled:
            gc.disable()
        doc = None
        try:
            doc = parse(html, deadline)
            metadata = extract_metadata(doc, url)
            thread_chars = mark_boilerplate(doc, deadline)
            mark_article_cards(doc)
            title = choose_title(doc)
            blocks = segment(doc.root, deadline)
            chosen, region = self._select(doc, blocks, title)
            if thread_chars >= _THREADS_AS_PAGE_CHARS and _threads_are_the_page(chosen, thread_chars):
                # what is left beside the threads is a form or a timeline: the posts are the page
                chosen, region = self._reselect(doc, deadline, title, keep_threads=True)
            if sum(b.text_len for b in chosen) < _DESCRIPTION_RETRY_MAX_KEPT:
                described = described_inside(doc)
                if described is not None and not any(b.owner.flags & DESCRIBED for b in chosen):
                    # the page's description is outside a near-empty selection: it is the page's text
                    chosen, region = self._reselect(doc, deadline, title, described=described)
            if not chosen:
                chosen, region = self._fallback(doc, deadline), doc.root
            declared = self._declared_instead(doc, chosen, deadline)
            if declared:
                chosen, region = declared, doc.root
            text, tables = render(chosen, self.text_format, self.tables)
            if self.comments == "keep":
                text = self._append_comments(doc, region, text, metadata, deadline)
            return Extraction(text=text, title=title, metadata=metadata, tables=tables)
        finally:
            if doc is not None:
                release(doc)
            if gc_was_enabled:
                gc.enable()

    def _append_comments(self, doc: HtmlDocument, region: Node, text: str, metadata: dict[str, Any],
                         deadline: float | None) -> str:
        """The comment threads' text after the main content; their authors and dates in
        `metadata["comments"]`."""
        threads = find_threads(doc, region)
        blocks = [b for thread in threads for b in thread_blocks(doc, thread, deadline)]
        comment_text, _ = render(blocks, self.text_format, "keep")
        if not comment_text:
            return text
        metadata["comments"] = comment_metadata(doc, threads)
        if not text:
            return comment_text
        return text + ("\n\n## Comments\n\n" if self.text_format == "markdown" else "\n") + comment_text

    def _reselect(self, doc: HtmlDocument, deadline: float | None, title: str | None,
                  **boilerplate: Any) -> tuple[list[Block], Node]:
        """Select again after undoing the boilerplate marks and redoing them with `boilerplate`'s
        options (`mark_boilerplate`'s keywords)."""
        for node in doc.nodes:
            node.flags &= ~REMOVED
        mark_boilerplate(doc, deadline, **boilerplate)
        mark_article_cards(doc)
        return self._select(doc, segment(doc.root, deadline), title)

    def _select(self, doc: HtmlDocument, blocks: list[Block], title: str | None) -> tuple[list[Block], Node]:
        if not blocks:
            return [], doc.root
        hint = article_body_hint(doc)
        shares: list[float] | None = None
        root = best_subtree(doc, blocks, block_scores(blocks))
        if hint:
            # Trusted only when it is about as long as what the page shows (not a teaser).
            generic = sum(len(word_tokens(b.text)) for b in blocks if root.contains(b.owner))
            if len(word_tokens(hint)) >= 0.6 * generic:
                scores, shares = hint_scores(blocks, hint)
                root = best_subtree(doc, blocks, scores, use_bonus=False)
                covered = sum(len(word_tokens(b.text)) for b in blocks if root.contains(b.owner))
                if covered == 0:
                    shares = None
                    root = best_subtree(doc, blocks, block_scores(blocks))
                elif len(word_tokens(hint)) < 0.7 * covered:
                    shares = None
        if shares is None:
            root = widen_to_pane_set(doc, root)
        inside = [root.contains(b.owner) for b in blocks]
        if shares is None:
            extend_to_neighbours(blocks, inside, root)
        chosen = []
        for i, b in enumerate(blocks):
            if not inside[i]:
                continue
            if shares is not None and b.kind not in ("heading", "table") and len(b.text) > 20 and shares[i] < 0.5:
                continue
            chosen.append(b)
        kept = filter_blocks(chosen, title)
        region_chars = sum(b.text_len for b in chosen)
        if (
            region_chars >= _LINK_POST_MIN_CHARS
            and sum(b.text_len for b in kept) < _LINK_POST_KEPT_SHARE * region_chars
            and container_bonus(root) > 0
        ):
            # the region names itself the post and is nearly all links: a post that is a link
            # roll (a bookmark digest, a reading list), not a sidebar
            kept = filter_blocks(chosen, title, keep_links=True)
        return kept, root

    @staticmethod
    def _declared_instead(doc: HtmlDocument, chosen: list[Block], deadline: float | None) -> list[Block]:
        """The JSON-LD's declared text when the selection keeps less than `_DECLARED_TEXT_SHARE` of
        it (`declared_blocks`), else []."""
        if not doc.json_ld:
            return []
        kept = sum(b.text_len for b in chosen)
        items = declared_text(doc)
        # the markup's length bounds its text's: most pages stop here without parsing anything
        if not items or kept >= _DECLARED_TEXT_SHARE * sum(len(t) for t in items):
            return []
        declared = declared_blocks(items, doc.root, deadline)
        if sum(b.text_len for b in declared) < _DECLARED_TEXT_MIN_CHARS or kept >= _DECLARED_TEXT_SHARE * sum(
                b.text_len for b in declared):
            return []
        return declared

    def _fallback(self, doc: HtmlDocument, deadline: float | None) -> list[Block]:
        """Nothing looked like main content: keep every link-poor block, noscript fallbacks included."""
        for node in doc.nodes:
            node.flags &= ~REMOVED
        for node in doc.nodes[1:]:
            if (
                node.parent is not None
                and node.parent.flags & REMOVED
                or node.tag in DROP_TAGS
                and node.tag != "noscript"
            ):
                node.flags |= REMOVED
        blocks = segment(doc.root, deadline)
        kept = [b for b in blocks if b.link_density <= 0.5 or b.text_len > 200]
        return kept or blocks  # a page that is all links is still its links


def declared_blocks(items: list[str], owner: Node, deadline: float | None = None) -> list[Block]:
    """Blocks of the text a page's JSON-LD declares (`metadata.declared_text`; markup in it is
    parsed as HTML), each owned by `owner`."""
    out: list[Block] = []
    for item in items:
        if "<" in item:
            fragment = parse(item, deadline)
            try:
                found = segment(fragment.root, deadline)
            finally:
                release(fragment)
        else:
            text = " ".join(item.split())
            found = [Block("p", text, owner, len(text) - text.count(" "), 0)]
        for b in found:
            b.owner = owner
        out.extend(found)
    return out


def from_config(config: ExtractConfig) -> BuiltinExtractor:
    """The registry's factory (`thresher.extract.registry`): the extractor with the config's options."""
    return BuiltinExtractor(text_format=config.text_format, tables=config.tables, comments=config.comments)
