"""Markdown-aware passages with breadcrumbs.

Retrieval searches passages, not pages. This module turns one page of Markdown (frontmatter
already removed) into passages, and turns an article, FAQ entry, instruction or fact into
exactly one passage.

Sizes (none configurable):

* target ``TARGET_TOKENS`` (700) per passage, hard maximum ``MAX_TOKENS`` (1,200) including the
  breadcrumb and the overlap, and ``MIN_TOKENS`` (120) for a section to stand alone;
* overlap: the tail of each passage (at most ``OVERLAP_TOKENS``, 120, taken at a block, list
  item or sentence boundary) opens the next passage of the same page, across section
  boundaries too. A trailing fence, callout, table or other block that cannot be cut is
  carried whole when it fits, otherwise nothing is carried. The overlap is dropped rather
  than push a passage over the maximum.

Structure:

* The page is split only at ``#``, ``##`` and ``###`` headings. Deeper headings stay inside the
  section they appear in.
* A section whose own content is under ``MIN_TOKENS`` merges forward into the next section
  (several small ones accumulate) and takes that section's breadcrumb; whatever is still too
  small at the end of the page merges backward into the previous section. A page that is small
  as a whole is one passage under the heading path all its sections share. Heading lines stay
  in the body, so a merged heading is still visible in the text.
* A section longer than the target is split between top-level blocks (paragraphs, lists,
  tables, fenced code, ``:::`` callouts, ...) into pieces of roughly equal size no larger than
  the target where the blocks allow it, and never over the maximum. A fenced code block or a
  callout is never cut; a single block that is itself over the maximum is emitted whole as its
  own passage rather than truncated.
* Every passage starts with its breadcrumb (``Product › Section › Page › Heading``): the
  caller's crumbs followed by the ``#``..``###`` heading path of the section, consecutive
  duplicates collapsed. ``Chunk.text`` is ``breadcrumb + "\\n\\n" + body`` (the body alone
  if there are no crumbs at all). Heading crumbs are plain text (emphasis, code spans and
  links unwrapped).

Parsing uses markdown-it-py (CommonMark, plus the table rule and the container plugin for
``:::``). The page is parsed once at block level (inline parsing is switched off) and each
top-level block is sliced from the source lines by its ``map`` line range, so the stored text
is the author's Markdown, never a re-rendering. Text before the first heading is a section
without a heading crumb. For speed the GFM table rule is wrapped so that it keeps
markdown-it's header validation and body extent but skips building per-cell tokens, and the
table and container rules are only switched on for pages containing ``|`` or ``:::``
(without those characters they cannot match, so the result is identical).

Token counting: :func:`count_tokens` counts runs of word characters and individual
punctuation marks with one compiled regular expression (``\\w+|[^\\w\\s]``). On English prose
this tracks the counts of subword tokenisers used by embedding models to within about 20%,
and costs one regex pass, with no model or vocabulary to load. Because neither kind of match
can span whitespace, the count of texts joined by whitespace is the sum of their counts, which
the chunker relies on to add up passage sizes without recounting.
"""

from __future__ import annotations

import re
import string
from collections.abc import Sequence
from dataclasses import dataclass, field
from math import ceil
from typing import Final

from markdown_it import MarkdownIt
from markdown_it.rules_block import StateBlock
from markdown_it.rules_block import table as gfm_table
from markdown_it.token import Token
from mdit_py_plugins.container import container_plugin

__all__ = [
    "MAX_TOKENS",
    "MIN_TOKENS",
    "OVERLAP_TOKENS",
    "TARGET_TOKENS",
    "Chunk",
    "breadcrumb",
    "chunk_markdown",
    "count_tokens",
    "single_passage",
]

TARGET_TOKENS: Final = 700
MAX_TOKENS: Final = 1200
MIN_TOKENS: Final = 120
OVERLAP_TOKENS: Final = 120

CRUMB_SEPARATOR: Final = " › "
_BODY_SEPARATOR: Final = "\n\n"

_TOKEN_RE: Final = re.compile(r"\w+|[^\w\s]")
_ASCII_WORD: Final = frozenset(string.ascii_letters + string.digits + "_")
_NONWORD_TO_SPACE: Final = str.maketrans({c: " " for c in map(chr, range(128)) if c not in _ASCII_WORD})
_DROP_WORD_AND_SPACE: Final = str.maketrans(dict.fromkeys([*_ASCII_WORD, *" \t\n\r\x0b\x0c"]))
_SPACE_RE: Final = re.compile(r"\s+")
# A sentence ends with . ! or ? (optionally followed by closing quotes or brackets), then
# whitespace, then something that does not look like the continuation of the same sentence
# (a lowercase letter usually follows an abbreviation such as "e.g.").
_SENTENCE_END_RE: Final = re.compile(r"[.!?][\"'”’)\]]*\s+(?=[^\sa-z])")


@dataclass(frozen=True)
class Chunk:
    """One passage: the breadcrumb is stored as the first line of ``text``."""

    breadcrumb: str
    text: str
    tokens: int
    heading: str | None


def count_tokens(text: str) -> int:
    """Approximate token count: word runs plus individual punctuation marks."""
    if text.isascii():
        # the same count as the ASCII pattern, from two str.translate passes (about twice as
        # fast, and this runs for every block of every page): word runs are what is left
        # after every non-word character becomes a space; every remaining non-word,
        # non-space character is one punctuation token
        return len(text.translate(_NONWORD_TO_SPACE).split()) + len(text.translate(_DROP_WORD_AND_SPACE))
    return len(_TOKEN_RE.findall(text))


def breadcrumb(crumbs: Sequence[str]) -> str:
    """Join crumbs with `` › ``; blank crumbs are dropped, consecutive duplicates collapse."""
    parts: list[str] = []
    last_key: str | None = None
    for crumb in crumbs:
        clean = _SPACE_RE.sub(" ", crumb).strip()
        if not clean:
            continue
        key = clean.casefold()
        if key == last_key:
            continue
        parts.append(clean)
        last_key = key
    return CRUMB_SEPARATOR.join(parts)


def single_passage(text: str, crumbs: Sequence[str]) -> Chunk:
    """Exactly one passage for ``text`` whatever its length (articles, FAQ rows, facts)."""
    crumb = breadcrumb(crumbs)
    full = _compose(crumb, text.strip())
    return Chunk(breadcrumb=crumb, text=full, tokens=count_tokens(full), heading=None)


def chunk_markdown(markdown: str, crumbs: Sequence[str]) -> list[Chunk]:
    """Cut one Markdown page (no frontmatter) into passages, in page order."""
    source = markdown.replace("\r\n", "\n").replace("\r", "\n")
    if not source.strip():
        return []
    sections = _merge_small(_sections(source))
    return _emit(sections, list(crumbs))


# --------------------------------------------------------------------------- parsing

_PARAGRAPH: Final = 0
_LIST: Final = 1
_ATOMIC: Final = 2  # fences, callouts, tables, quotes, html, headings: never cut


@dataclass(slots=True)
class _Block:
    text: str
    tokens: int
    kind: int
    # Offsets in ``text`` where a tail may start (list items); paragraphs compute theirs lazily.
    cuts: tuple[int, ...] = ()


@dataclass(slots=True)
class _Section:
    path: tuple[str, ...]
    heading: str | None
    blocks: list[_Block] = field(default_factory=list)
    tokens: int = 0


def _table_extent(state: StateBlock, start_line: int, end_line: int, silent: bool) -> bool:
    """The GFM table rule, reduced to what chunking needs: the table's line range.

    markdown-it's own rule validates the header and delimiter rows (in silent mode that is all
    it does); the body then extends exactly as in that rule (until a blank line, an indented
    code line, a line indented less than the table, or the start of another block), but the
    rows are not split into cell tokens, which is most of the rule's cost and unused here.
    """
    if not gfm_table(state, start_line, end_line, True):
        return False
    if silent:
        return True
    old_parent = state.parentType
    state.parentType = "table"
    terminators = state.md.block.ruler.getRules("blockquote")
    line = start_line + 2
    while line < end_line:
        if state.sCount[line] < state.blkIndent:
            break
        if any(rule(state, line, end_line, True) for rule in terminators):
            break
        if not state.src[state.bMarks[line] + state.tShift[line] : state.eMarks[line]].strip():
            break
        if state.is_code_block(line):
            break
        line += 1
    token = state.push("table_open", "table", 1)
    token.map = [start_line, line]
    state.push("table_close", "table", -1)
    state.parentType = old_parent
    state.line = line
    return True


def _build_parser(tables: bool, callouts: bool) -> MarkdownIt:
    md = MarkdownIt("commonmark")
    if tables:
        md.enable("table")
        # Same options as the stock rule: a table may interrupt a paragraph.
        md.block.ruler.at("table", _table_extent, {"alt": ["paragraph", "reference"]})
    if callouts:
        # One container rule accepts any named ``:::`` block (warning, note, tip, ...). A bare
        # ``:::`` line only closes; it never opens a container.
        md.use(container_plugin, name="callout", validate=lambda params, _markup: bool(params.strip()))
    # Only the block structure is needed; inline parsing is most of markdown-it's cost.
    md.disable(["inline", "text_join"])
    return md


# The table rule needs a "|" in the header row and a container needs ":::", so a page without
# them parses identically without those rules, and faster (the table rule is tried at almost
# every line). The full parser is used whenever the characters appear.
_BLOCK_PARSERS: Final = {
    (tables, callouts): _build_parser(tables, callouts) for tables in (False, True) for callouts in (False, True)
}
_INLINE_MD: Final = MarkdownIt("commonmark")
# A trailing attribute list such as ``{#connect-http}`` or ``{: .note}`` (Hugo, Pandoc, MkDocs)
# is an anchor for the renderer, not part of the heading's words.
_HEADING_ATTRS_RE: Final = re.compile(r"\s*\{[#.:][^{}]*\}\s*$")
# Characters that can start inline markup; a heading without any is already plain text.
_INLINE_MARKUP_RE: Final = re.compile(r"[\\`*_\[\]<>&!~]")
_HEADING_TAGS: Final = {"h1": 1, "h2": 2, "h3": 3}
_LIST_OPEN: Final = frozenset({"bullet_list_open", "ordered_list_open"})


def _heading_text(raw: str) -> str:
    """Plain text of a heading's inline Markdown (emphasis, code and links unwrapped)."""
    raw = _HEADING_ATTRS_RE.sub("", raw)
    if not _INLINE_MARKUP_RE.search(raw):
        return _SPACE_RE.sub(" ", raw).strip()
    parsed = _INLINE_MD.parseInline(raw)
    pieces: list[str] = []
    for inline in parsed:
        for child in inline.children or ():
            if child.type in ("text", "code_inline", "image"):
                pieces.append(child.content)
            elif child.type in ("softbreak", "hardbreak"):
                pieces.append(" ")
    return _SPACE_RE.sub(" ", "".join(pieces)).strip()


def _sections(source: str) -> list[_Section]:
    tokens = _BLOCK_PARSERS["|" in source, ":::" in source].parse(source)
    lines = source.split("\n")

    # Top-level blocks in order: (start line, token index). A block runs until the next one
    # starts, which also picks up a callout's closing ``:::`` line (not inside its map).
    starts: list[tuple[int, int]] = []
    for index, token in enumerate(tokens):
        if token.level == 0 and token.nesting >= 0 and token.map is not None:
            starts.append((token.map[0], index))

    sections: list[_Section] = []
    current = _Section(path=(), heading=None)
    path_levels: list[tuple[int, str]] = []
    for position, (start, index) in enumerate(starts):
        token = tokens[index]
        if position == 0:
            start = 0  # link reference definitions before the first block
        end = starts[position + 1][0] if position + 1 < len(starts) else len(lines)
        while end > start and not lines[end - 1].strip():
            end -= 1
        while start < end and not lines[start].strip():
            start += 1
        if start >= end:
            continue
        text = "\n".join(lines[start:end])

        kind = _ATOMIC
        cuts: tuple[int, ...] = ()
        if token.type == "heading_open":
            level = _HEADING_TAGS.get(token.tag)
            if level is not None:
                if current.blocks:
                    sections.append(current)
                title = _heading_text(tokens[index + 1].content)
                path_levels = [(lvl, name) for lvl, name in path_levels if lvl < level]
                path_levels.append((level, title))
                current = _Section(path=tuple(name for _, name in path_levels), heading=title or None)
        elif token.type == "paragraph_open":
            kind = _PARAGRAPH
        elif token.type in _LIST_OPEN:
            kind = _LIST
            cuts = _list_item_cuts(tokens, index, lines, start, end)

        block = _Block(text=text, tokens=count_tokens(text), kind=kind, cuts=cuts)
        current.blocks.append(block)
        current.tokens += block.tokens
    if current.blocks:
        sections.append(current)
    return sections


def _list_item_cuts(tokens: Sequence[Token], index: int, lines: list[str], start: int, end: int) -> tuple[int, ...]:
    """Character offsets (within the block text) of the list's second and later items."""
    item_lines: list[int] = []
    depth = 0
    for position in range(index, len(tokens)):
        token = tokens[position]
        token_map = token.map
        if token.type == "list_item_open" and token.level == 1 and token_map and start < token_map[0] < end:
            item_lines.append(token_map[0])
        depth += token.nesting
        if depth == 0:
            break
    offsets: list[int] = []
    offset = 0
    line = start
    for item_line in item_lines:
        while line < item_line:
            offset += len(lines[line]) + 1
            line += 1
        offsets.append(offset)
    return tuple(offsets)


# --------------------------------------------------------------------------- assembly


def _merge_small(sections: list[_Section]) -> list[_Section]:
    """Sections under MIN_TOKENS merge forward; a small remainder at the end merges backward."""
    merged: list[_Section] = []
    pending: list[_Section] = []
    for section in sections:
        if pending:
            # the merged passage is about what its sections share: their common heading path
            blocks = [block for small in pending for block in small.blocks] + section.blocks
            total = sum(small.tokens for small in pending) + section.tokens
            path = _common_prefix([small.path for small in pending] + [section.path])
            section = _Section(path, (path[-1] or None) if path else None, blocks, total)
        if section.tokens < MIN_TOKENS:
            pending = [section]
            continue
        pending = []
        merged.append(section)
    if pending:
        rest = pending[0]
        if merged:
            last = merged[-1]
            path = _common_prefix([last.path, rest.path])
            merged[-1] = _Section(path, (path[-1] or None) if path else None, last.blocks + rest.blocks,
                                  last.tokens + rest.tokens)
        else:
            # The whole page is small: one passage under the headings all of it shares.
            path = _common_prefix([section.path for section in sections])
            heading = (path[-1] or None) if path else None
            merged.append(_Section(path, heading, rest.blocks, rest.tokens))
    return merged


def _common_prefix(paths: list[tuple[str, ...]]) -> tuple[str, ...]:
    prefix = paths[0]
    for path in paths[1:]:
        size = 0
        for mine, theirs in zip(prefix, path, strict=False):
            if mine != theirs:
                break
            size += 1
        prefix = prefix[:size]
    return prefix


def _compose(crumb: str, body: str) -> str:
    return f"{crumb}{_BODY_SEPARATOR}{body}" if crumb else body


def _emit(sections: list[_Section], crumbs: list[str]) -> list[Chunk]:
    chunks: list[Chunk] = []
    previous: list[_Block] = []  # the previous passage's own blocks, for the overlap
    for section in sections:
        crumb = breadcrumb([*crumbs, *section.path])
        crumb_tokens = count_tokens(crumb)
        body_max = MAX_TOKENS - crumb_tokens
        blocks = section.blocks
        count = len(blocks)
        suffix = [0] * (count + 1)
        for position in range(count - 1, -1, -1):
            suffix[position] = suffix[position + 1] + blocks[position].tokens

        first = 0
        while first < count:
            overlap, overlap_tokens = _tail(previous)
            head = blocks[first].tokens
            if head + overlap_tokens > body_max:
                # The overlap never pushes a passage over the maximum, and a block that is
                # itself over the maximum stands alone.
                overlap, overlap_tokens = "", 0
            last = _cut(blocks, suffix, first, body_max - overlap_tokens)
            own = blocks[first:last]
            parts = [overlap] if overlap else []
            parts.extend(block.text for block in own)
            text = _compose(crumb, _BODY_SEPARATOR.join(parts))
            tokens = crumb_tokens + overlap_tokens + suffix[first] - suffix[last]
            chunks.append(Chunk(breadcrumb=crumb, text=text, tokens=tokens, heading=section.heading))
            previous = own
            first = last
    return chunks


def _cut(blocks: list[_Block], suffix: list[int], first: int, budget: int) -> int:
    """End index of the piece starting at ``first``: about the target, within ``budget``."""
    count = len(blocks)
    remaining = suffix[first]
    if remaining <= TARGET_TOKENS and remaining <= budget:
        return count
    # Aim at equal pieces no larger than the target rather than a full piece and a stub.
    goal = remaining / ceil(remaining / TARGET_TOKENS)
    size = 0
    last = first
    while last < count:
        grown = size + blocks[last].tokens
        if grown > budget:
            break
        if grown >= goal:
            if last == first or grown - goal <= goal - size:
                last += 1
                size = grown
            break
        size = grown
        last += 1
    if last == first:
        return first + 1  # a single block over the budget is emitted whole, on its own
    # Do not leave a stub under the minimum behind when everything fits in this piece.
    if last < count and suffix[last] < MIN_TOKENS and size + suffix[last] <= budget:
        last = count
    return last


def _tail(blocks: list[_Block]) -> tuple[str, int]:
    """The last ~OVERLAP_TOKENS of a passage, cut at a block, list item or sentence boundary."""
    parts: list[str] = []
    size = 0
    for block in reversed(blocks):
        if size + block.tokens <= OVERLAP_TOKENS:
            parts.append(block.text)
            size += block.tokens
            continue
        # The block is too big to carry whole: take its trailing sentences or list items,
        # or nothing at all for blocks that must not be cut (code, callouts, tables, ...).
        if block.kind == _PARAGRAPH:
            cuts: Sequence[int] = [match.end() for match in _SENTENCE_END_RE.finditer(block.text)]
        elif block.kind == _LIST:
            cuts = block.cuts
        else:
            cuts = ()
        room = OVERLAP_TOKENS - size
        best = ""
        best_tokens = 0
        end = len(block.text)
        taken = 0
        for cut in reversed(cuts):
            taken += count_tokens(block.text[cut:end])
            if taken > room:
                break
            best, best_tokens, end = block.text[cut:], taken, cut
        if best:
            parts.append(best)
            size += best_tokens
        break
    parts.reverse()
    return _BODY_SEPARATOR.join(parts), size
