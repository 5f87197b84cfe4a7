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
* Every passage is labelled with the deepest ``#``..``###`` section its content belongs to. A
  section whose own content is under ``MIN_TOKENS`` merges forward into the next section
  (several small ones accumulate) and the passage takes that next section's breadcrumb and
  heading; whatever is still too small at the end of the page merges backward into the
  previous section and keeps the previous section's. A page that is small as a whole is one
  passage under the heading path all its sections share. Heading lines stay in the body, so a
  merged heading is still visible in the text.
* A section longer than the target is split between top-level blocks (paragraphs, lists,
  tables, fenced code, ``:::`` callouts, ...) into pieces of roughly equal size no larger than
  the target where the blocks allow it, and never over the maximum; every piece keeps the
  section's breadcrumb. A piece does not end as a stub under the minimum (a heading alone)
  when the next block fits beside it.
* Only a fenced code block, a table or a ``:::`` callout is never cut: one of these that is
  itself over the maximum is emitted whole as its own passage rather than truncated. Any
  other block over the maximum (a long paragraph, list, quote, HTML block, indented code) is
  cut into pieces of at most the target: between list items, else at blank lines, else at
  line ends, else after sentences, else at spaces, and as a last resort between tokens.
* Every passage starts with its breadcrumb (``Product › Section › Page › Heading``): the
  caller's crumbs followed by the ``#``..``###`` heading path of the section, consecutive
  duplicates collapsed. ``Chunk.text`` is ``breadcrumb + "\\n\\n" + body`` (the body alone
  if there are no crumbs at all). Heading crumbs are plain text (emphasis, code spans and
  links unwrapped), clipped to 160 characters.

MDX: a page where a line outside fenced code opens or closes a JSX component (a capitalised
tag such as ``<Tabs>``, ``<TabItem>``, ``<Accordion>``) is parsed without indented code blocks,
as MDX itself does, so prose indented inside components is prose (paragraphs, lists,
headings) and a fence indented inside a component is still fenced code. Turning the rule off
rather than dedenting the text keeps the stored text the author's and needs no JSX parser;
plain Markdown pages keep CommonMark's indented code.

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
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from itertools import pairwise
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
_ATOMIC: Final = 2  # fences, callouts, tables, quotes, html, headings: the overlap never cuts them

#: Top-level block types that stay whole even over the maximum: a code listing, a table or a
#: callout cut in two is broken. Every other block over the maximum is split (see _split_block).
_KEEP_WHOLE: Final = frozenset({"fence", "table_open", "container_callout_open"})


@dataclass(slots=True)
class _Block:
    text: str
    tokens: int
    kind: int
    # Offsets in ``text`` where a tail may start (list items); paragraphs compute theirs lazily.
    cuts: tuple[int, ...] = ()
    #: fenced code, a table or a callout: emitted whole on its own when over the maximum
    keep: bool = False


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


def _build_parser(tables: bool, callouts: bool, mdx: bool = False) -> MarkdownIt:
    md = MarkdownIt("commonmark")
    if mdx:
        # MDX has no indented code blocks: indentation inside JSX components is layout. With the
        # rule off, markdown-it also stops treating 4+ spaces as code in its other rules, so
        # indented paragraphs, lists, headings and fences parse as what they are.
        md.disable("code")
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
# every line). The full parser is used whenever the characters appear. The third key is MDX.
_BLOCK_PARSERS: Final = {
    (tables, callouts, mdx): _build_parser(tables, callouts, mdx)
    for tables in (False, True)
    for callouts in (False, True)
    for mdx in (False, True)
}
# A line opening or closing a JSX component (``<Tabs>``, ``</TabItem>``, ``<Accordion title=..``):
# HTML elements are lowercase, components are capitalised.
_JSX_LINE_RE: Final = re.compile(r"^[ \t]*</?[A-Z][\w.]*(?=[\s/>]|$)", re.MULTILINE)
_FENCE_LINE_RE: Final = re.compile(r"^[ \t]*(`{3,}|~{3,})")
_INLINE_MD: Final = MarkdownIt("commonmark")
# A trailing attribute list such as ``{#connect-http}`` or ``{: .note}`` (Hugo, Pandoc, MkDocs)
# is an anchor for the renderer, not part of the heading's words.
_HEADING_ATTRS_RE: Final = re.compile(r"\s*\{[#.:][^{}]*\}\s*$")
# Characters that can start inline markup; a heading without any is already plain text.
_INLINE_MARKUP_RE: Final = re.compile(r"[\\`*_\[\]<>&!~]")
_HEADING_TAGS: Final = {"h1": 1, "h2": 2, "h3": 3}
#: a heading crumb longer than this is clipped (it is repeated at the top of every passage)
_HEADING_MAX_CHARS: Final = 160
_LIST_OPEN: Final = frozenset({"bullet_list_open", "ordered_list_open"})


def _is_mdx(source: str) -> bool:
    """True when a line outside fenced code opens or closes a JSX component."""
    if not _JSX_LINE_RE.search(source):
        return False
    fence = ""
    for line in source.split("\n"):
        opener = _FENCE_LINE_RE.match(line)
        if fence:
            if opener and opener.group(1)[0] == fence[0] and len(opener.group(1)) >= len(fence):
                fence = ""
        elif opener:
            fence = opener.group(1)
        elif _JSX_LINE_RE.match(line):
            return True
    return False


def _clip(title: str) -> str:
    """A heading crumb of at most ``_HEADING_MAX_CHARS`` characters, cut at a space."""
    if len(title) <= _HEADING_MAX_CHARS:
        return title
    cut = title.rfind(" ", 0, _HEADING_MAX_CHARS)
    return title[: cut if cut > 0 else _HEADING_MAX_CHARS].rstrip() + "…"


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
    tokens = _BLOCK_PARSERS["|" in source, ":::" in source, _is_mdx(source)].parse(source)
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
                title = _clip(_heading_text(tokens[index + 1].content))
                path_levels = [(lvl, name) for lvl, name in path_levels if lvl < level]
                path_levels.append((level, title))
                current = _Section(path=tuple(name for _, name in path_levels), heading=title or None)
        elif token.type == "paragraph_open":
            kind = _PARAGRAPH
        elif token.type in _LIST_OPEN:
            kind = _LIST
            cuts = _list_item_cuts(tokens, index, lines, start, end)

        block = _Block(text=text, tokens=count_tokens(text), kind=kind, cuts=cuts, keep=token.type in _KEEP_WHOLE)
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
    """Sections under MIN_TOKENS merge forward and take the next section's heading path; a
    small remainder at the end merges backward and takes the previous section's."""
    merged: list[_Section] = []
    pending: _Section | None = None
    for section in sections:
        if pending is not None:
            # the small sections lead into this one: the passage is labelled with it
            section = _Section(section.path, section.heading, pending.blocks + section.blocks,
                               pending.tokens + section.tokens)
            pending = None
        if section.tokens < MIN_TOKENS:
            pending = section
            continue
        merged.append(section)
    if pending is not None:
        if merged:
            last = merged[-1]
            merged[-1] = _Section(last.path, last.heading, last.blocks + pending.blocks, last.tokens + pending.tokens)
        else:
            # The whole page is small: one passage under the headings all of it shares.
            path = _common_prefix([section.path for section in sections])
            heading = (path[-1] or None) if path else None
            merged.append(_Section(path, heading, pending.blocks, pending.tokens))
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
        # (an absurdly long breadcrumb cannot leave the body nothing)
        body_max = max(MAX_TOKENS - crumb_tokens, MIN_TOKENS)
        blocks = _fit(section.blocks, body_max)
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
                # itself over the maximum (code, a table or a callout) stands alone.
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
            # take the block when it lands nearer the goal, or when the piece would otherwise
            # be a stub under the minimum (a heading line alone, say)
            if last == first or size < MIN_TOKENS or grown - goal <= goal - size:
                last += 1
                size = grown
            break
        size = grown
        last += 1
    if last == first:
        return first + 1  # a single block over the budget (kept whole) is emitted on its own
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


# --------------------------------------------------------------------------- oversized blocks

_BLANK_LINE_RE: Final = re.compile(r"\n[ \t]*\n")
_NEWLINE_RE: Final = re.compile(r"\n")
_WHITESPACE_RE: Final = re.compile(r"\s+")
_LEADING_BLANK_LINES_RE: Final = re.compile(r"\A(?:[ \t]*\n)+")


def _fit(blocks: list[_Block], limit: int) -> list[_Block]:
    """``blocks`` with every block over ``limit`` split, except those kept whole."""
    if all(block.tokens <= limit or block.keep for block in blocks):
        return blocks
    out: list[_Block] = []
    for block in blocks:
        if block.tokens <= limit or block.keep:
            out.append(block)
        else:
            out.extend(_split_block(block, limit))
    return out


def _split_block(block: _Block, limit: int) -> list[_Block]:
    """Pieces of one block, each at most ``min(TARGET_TOKENS, limit)`` tokens where the text
    allows and never over ``limit``: cut between list items, else at blank lines, else at line
    ends, else after sentences, else at spaces, else between tokens. Each piece is the
    author's text between two cuts (only the whitespace at a cut is dropped)."""
    text = block.text
    cap = min(TARGET_TOKENS, limit)
    tiers: list[_Tier] = [_blank_lines, _lines, _sentences, _spaces, _every_tokens(cap)]
    if block.kind == _LIST and block.cuts:
        items = block.cuts
        tiers.insert(0, lambda _text, lo, hi: [cut for cut in items if lo < cut < hi])
    spans = _spans(text, 0, len(text), block.tokens, limit, tiers)

    # pack consecutive spans into pieces of at most ``cap`` tokens (a bigger span stands alone)
    groups: list[tuple[int, int, int]] = []
    start, end, size = spans[0]
    for lo, hi, tokens in spans[1:]:
        if size + tokens > cap:
            groups.append((start, end, size))
            start, size = lo, 0
        end = hi
        size += tokens
    groups.append((start, end, size))

    pieces: list[_Block] = []
    for lo, hi, tokens in groups:
        raw = text[lo:hi].rstrip()
        piece = _LEADING_BLANK_LINES_RE.sub("", raw)
        if not piece.strip():
            continue
        offset = lo + len(raw) - len(piece)
        cuts = tuple(cut - offset for cut in block.cuts if offset < cut < offset + len(piece))
        pieces.append(_Block(text=piece, tokens=tokens, kind=block.kind, cuts=cuts))
    return pieces


_Tier = Callable[[str, int, int], Sequence[int]]


def _spans(text: str, lo: int, hi: int, tokens: int, limit: int, tiers: Sequence[_Tier]) -> list[tuple[int, int, int]]:
    """``text[lo:hi]`` as consecutive (start, end, tokens) spans of at most ``limit`` tokens,
    cut at the first tier that has a cut inside the range, and so on inside each span."""
    if tokens <= limit:
        return [(lo, hi, tokens)]
    depth = 0
    cuts: Sequence[int] = ()
    while depth < len(tiers) and not cuts:
        cuts = tiers[depth](text, lo, hi)
        depth += 1
    if not cuts:
        return [(lo, hi, tokens)]  # one token: cannot be cut
    out: list[tuple[int, int, int]] = []
    for start, end in pairwise([lo, *cuts, hi]):
        if start < end:
            out.extend(_spans(text, start, end, count_tokens(text[start:end]), limit, tiers[depth:]))
    return out


def _blank_lines(text: str, lo: int, hi: int) -> list[int]:
    return [match.end() for match in _BLANK_LINE_RE.finditer(text, lo, hi) if match.end() < hi]


def _lines(text: str, lo: int, hi: int) -> list[int]:
    return [match.end() for match in _NEWLINE_RE.finditer(text, lo, hi) if match.end() < hi]


def _sentences(text: str, lo: int, hi: int) -> list[int]:
    return [match.end() for match in _SENTENCE_END_RE.finditer(text, lo, hi) if match.end() < hi]


def _spaces(text: str, lo: int, hi: int) -> list[int]:
    return [match.end() for match in _WHITESPACE_RE.finditer(text, lo, hi) if lo < match.start() and match.end() < hi]


def _every_tokens(size: int) -> _Tier:
    """The last resort: a cut before every ``size``-th token (a run of word characters or one
    punctuation mark), for text without any whitespace."""

    def tier(text: str, lo: int, hi: int) -> list[int]:
        starts = [match.start() for match in _TOKEN_RE.finditer(text, lo, hi)]
        return starts[size::size]

    return tier
