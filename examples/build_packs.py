"""Build the example documentation packs into ``<slug>.ndjson.gz`` files.

Usage::

    python examples/build_packs.py OUTDIR [--src examples/packs]

Every folder under the source directory is one product (its name is the slug) and every
``.md`` file inside it is one page, whose path relative to the folder is the page path. The
output is one gzipped NDJSON line per page, sorted by path::

    {"path": "help/deposits/monero.md", "title": "...", "body": "<file text>", "url": "..."}

``url`` is written only for stamped packs (packs in which at least one page declares an
``audience`` in its frontmatter); legacy packs carry no URL. The bytes are deterministic:
pages are sorted, JSON keys keep a fixed order and the gzip header has no name or mtime.

Standard library only, so the packs can be rebuilt on any machine.
"""

from __future__ import annotations

import argparse
import gzip
import io
import json
import re
import sys
from pathlib import Path

DEFAULT_SRC = Path(__file__).resolve().parent / "packs"

_SLUG_RE = re.compile(r"^[a-z0-9][a-z0-9-]*$")
_HEADING_RE = re.compile(r"^#[ \t]+(.+?)[ \t]*#*[ \t]*$")
_FENCE_RE = re.compile(r"^[ \t]{0,3}(`{3,}|~{3,})")


def split_frontmatter(text: str) -> tuple[dict[str, str], str]:
    """Return ``(frontmatter, rest)``. Only flat ``key: value`` lines are understood.

    A block that opens with ``---`` on the first line but is never closed is not
    frontmatter: the whole text is returned as the rest.
    """
    lines = text.split("\n")
    if not lines or lines[0].strip() != "---":
        return {}, text
    for end in range(1, len(lines)):
        if lines[end].strip() == "---":
            meta: dict[str, str] = {}
            for line in lines[1:end]:
                key, sep, value = line.partition(":")
                if not sep or not key.strip() or line[:1].isspace():
                    continue
                meta[key.strip()] = _unquote(value.strip())
            return meta, "\n".join(lines[end + 1 :])
    return {}, text


def _unquote(value: str) -> str:
    if len(value) >= 2 and value[0] == value[-1] and value[0] in "\"'":
        return value[1:-1]
    return value


def first_heading(markdown: str) -> str | None:
    """The text of the first level-1 ATX heading outside fenced code, if any."""
    fence: str | None = None
    for line in markdown.split("\n"):
        opener = _FENCE_RE.match(line)
        if fence is not None:
            if opener and opener.group(1)[0] == fence[0] and len(opener.group(1)) >= len(fence):
                fence = None
            continue
        if opener:
            fence = opener.group(1)
            continue
        match = _HEADING_RE.match(line)
        if match:
            return match.group(1).strip()
    return None


def page_title(text: str, page_path: str) -> str:
    """Title from the frontmatter, else the first ``#`` heading, else the file name."""
    meta, rest = split_frontmatter(text)
    title = meta.get("title", "").strip()
    if title:
        return title
    heading = first_heading(rest)
    if heading:
        return heading
    stem = page_path.rsplit("/", 1)[-1].removesuffix(".md")
    words = stem.replace("-", " ").replace("_", " ").strip()
    return words[:1].upper() + words[1:] if words else page_path


def read_pages(folder: Path) -> list[tuple[str, str]]:
    """``(page path, text)`` for every ``.md`` file under ``folder``, sorted by path.

    Hidden files and folders (a name starting with ``.``) are ignored. Line endings are
    normalised to ``\\n`` so a checkout with CRLF endings builds the same bytes.
    """
    pages: list[tuple[str, str]] = []
    for file in folder.rglob("*.md"):
        relative = file.relative_to(folder)
        if any(part.startswith(".") for part in relative.parts) or not file.is_file():
            continue
        text = file.read_bytes().decode("utf-8").replace("\r\n", "\n").replace("\r", "\n")
        pages.append((relative.as_posix(), text))
    pages.sort(key=lambda page: page[0])
    return pages


def is_stamped(pages: list[tuple[str, str]]) -> bool:
    """A pack is stamped when at least one page declares an audience."""
    return any(split_frontmatter(text)[0].get("audience", "").strip() for _, text in pages)


def build_pack(folder: Path) -> bytes:
    """The gzipped NDJSON bytes of the pack in ``folder`` (slug = folder name)."""
    slug = folder.name
    if not _SLUG_RE.match(slug):
        raise ValueError(f"pack folder name is not a valid slug: {slug!r}")
    pages = read_pages(folder)
    if not pages:
        raise ValueError(f"pack folder has no .md pages: {folder}")
    stamped = is_stamped(pages)
    lines: list[str] = []
    for page_path, text in pages:
        record: dict[str, str] = {
            "path": page_path,
            "title": page_title(text, page_path),
            "body": text,
        }
        if stamped:
            record["url"] = f"https://docs.{slug}.example/{page_path.removesuffix('.md')}"
        lines.append(json.dumps(record, ensure_ascii=False) + "\n")
    raw = "".join(lines).encode("utf-8")
    buffer = io.BytesIO()
    with gzip.GzipFile(filename="", mode="wb", fileobj=buffer, compresslevel=9, mtime=0) as gz:
        gz.write(raw)
    return buffer.getvalue()


def pack_folders(src: Path) -> list[Path]:
    """The product folders under ``src``, sorted by name (files such as README are skipped)."""
    return sorted(
        (child for child in src.iterdir() if child.is_dir() and not child.name.startswith((".", "_"))),
        key=lambda child: child.name,
    )


def build_all(src: Path, out: Path) -> list[Path]:
    """Write ``out/<slug>.ndjson.gz`` for every product folder in ``src``; return the paths."""
    folders = pack_folders(src)
    if not folders:
        raise ValueError(f"no pack folders under {src}")
    out.mkdir(parents=True, exist_ok=True)
    written: list[Path] = []
    for folder in folders:
        target = out / f"{folder.name}.ndjson.gz"
        target.write_bytes(build_pack(folder))
        written.append(target)
    return written


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Build example documentation packs.")
    parser.add_argument("outdir", type=Path, help="folder that receives <slug>.ndjson.gz files")
    parser.add_argument("--src", type=Path, default=DEFAULT_SRC, help="folder of pack folders")
    args = parser.parse_args(argv)
    try:
        written = build_all(args.src, args.outdir)
    except (OSError, ValueError, UnicodeDecodeError) as exc:
        print(f"build_packs: {exc}", file=sys.stderr)
        return 1
    for path in written:
        print(path)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
