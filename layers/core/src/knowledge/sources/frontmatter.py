"""A small, strict reader for the ``---`` frontmatter block of pack pages.

Only flat ``key: value`` scalars are read (that is all packs use: audience, title, type);
anything else in the block is ignored rather than evaluated.
"""

from __future__ import annotations


def split_frontmatter(text: str) -> tuple[dict[str, str], str]:
    """Return (frontmatter keys lower-cased, body). No block -> ({}, text)."""
    stripped = text.lstrip("\ufeff")
    if not stripped.startswith("---"):
        return {}, text
    lines = stripped.split("\n")
    if lines[0].strip() != "---":
        return {}, text
    for end in range(1, len(lines)):
        if lines[end].strip() in ("---", "..."):
            meta: dict[str, str] = {}
            for line in lines[1:end]:
                if ":" not in line or line.startswith((" ", "\t", "#", "-")):
                    continue
                key, _, value = line.partition(":")
                value = value.strip()
                if len(value) >= 2 and value[0] == value[-1] and value[0] in "\"'":
                    value = value[1:-1]
                meta[key.strip().lower()] = value
            return meta, "\n".join(lines[end + 1 :])
    return {}, text
