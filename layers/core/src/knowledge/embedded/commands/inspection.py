"""``kb chunk`` and ``kb extract``: show the passages a Markdown file becomes and the text
(or error code) any file becomes, without indexing anything."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from .common import print_json


def cmd_chunk(args: argparse.Namespace) -> int:
    from ...chunking import chunk_markdown
    from ...sources.frontmatter import split_frontmatter

    path = Path(args.file)
    text = path.read_text(encoding="utf-8", errors="replace")
    meta, body = split_frontmatter(text)
    title = meta.get("title") or path.stem
    chunks = chunk_markdown(body, [title])
    if args.json:
        print_json([{"breadcrumb": c.breadcrumb, "text": c.text, "tokens": c.tokens} for c in chunks])
    else:
        for n, c in enumerate(chunks, start=1):
            print(f"--- passage {n}: {c.tokens} tokens — {c.breadcrumb}")
            print(c.text)
    return 0


def cmd_extract(args: argparse.Namespace) -> int:
    from ...extract import extract_result_json

    result = extract_result_json(args.file)
    if args.json:
        print_json(result)
    elif result["error"]:
        print(f"error: {result['error']['code']}", file=sys.stderr)
    else:
        print(result["text"])
    return 1 if result["error"] else 0
