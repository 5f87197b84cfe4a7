"""The operator console's files, served by ``kb serve`` beside the API.

``console_response(path)`` maps a GET/HEAD path outside the API to ``(status, headers,
body)`` from the built console folder (``console/dist`` of the source tree, or
``$KB_CONSOLE_DIR``). It knows nothing about the HTTP server that calls it, so any server
can serve the console with a few lines. Only regular files inside the folder are served:
the path is decoded, checked segment by segment and resolved (symlinks included) before
anything is opened.
"""

from __future__ import annotations

import os
from pathlib import Path
from urllib.parse import unquote

#: Paths the API owns; everything else a GET/HEAD may ask for is the console's.
API_PREFIXES = ("/api/", "/openapi.json", "/metrics")

#: The page loads its own scripts and styles and talks to its own origin only.
CONTENT_SECURITY_POLICY = (
    "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self'; font-src 'self'; "
    "connect-src 'self'; object-src 'none'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'"
)

SECURITY_HEADERS = {
    "Content-Security-Policy": CONTENT_SECURITY_POLICY,
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
    "X-Frame-Options": "DENY",
    "Cross-Origin-Opener-Policy": "same-origin",
}

CONTENT_TYPES = {
    ".html": "text/html; charset=utf-8",
    ".js": "text/javascript; charset=utf-8",
    ".mjs": "text/javascript; charset=utf-8",
    ".css": "text/css; charset=utf-8",
    ".json": "application/json",
    ".map": "application/json",
    ".svg": "image/svg+xml",
    ".png": "image/png",
    ".ico": "image/x-icon",
    ".webp": "image/webp",
    ".woff2": "font/woff2",
    ".txt": "text/plain; charset=utf-8",
}

#: Files under assets/ carry a content hash in their name (Vite's build): cached for a year.
IMMUTABLE = "public, max-age=31536000, immutable"
REVALIDATE = "no-cache"

NOT_BUILT = (
    b"The kb console is not built.\n\n"
    b"From the repository: make console (or: cd console && npm ci && npm run build),\n"
    b"then reload this page. make run builds it too. The API answers under /api.\n"
)

ENV_DIR = "KB_CONSOLE_DIR"


def is_console_path(path: str) -> bool:
    """True for paths the console answers (the caller still checks the method)."""
    return path != "/api" and not path.startswith(API_PREFIXES)


def console_dir() -> Path:
    """``$KB_CONSOLE_DIR``, else ``console/dist`` of the source tree this package lives in
    (kb is installed editable from the repository)."""
    configured = os.environ.get(ENV_DIR)
    if configured:
        return Path(configured)
    return Path(__file__).resolve().parents[5] / "console" / "dist"


def _plain(status: int, body: bytes) -> tuple[int, dict[str, str], bytes]:
    headers = {**SECURITY_HEADERS, "Content-Type": "text/plain; charset=utf-8", "Cache-Control": REVALIDATE}
    return status, headers, body


def _resolve(root: Path, path: str) -> Path | None:
    """The file under ``root`` that ``path`` names, or None when it names none safely."""
    decoded = unquote(path, errors="strict") if "%" in path else path
    if "\x00" in decoded or "\\" in decoded:
        return None
    segments = decoded.split("/")[1:]
    if segments == [""]:
        segments = ["index.html"]
    for segment in segments:
        # no empty, relative or hidden segment: "a//b", "..", ".", ".env"
        if not segment or segment.startswith("."):
            return None
    candidate = (root / Path(*segments)).resolve()
    if not candidate.is_relative_to(root) or not candidate.is_file():
        return None
    return candidate


def console_response(path: str, root: Path | None = None) -> tuple[int, dict[str, str], bytes]:
    """(status, headers, body) for a GET of ``path`` (a HEAD sends the same headers and no
    body). ``/`` is the console's index page; an unknown file is 404."""
    folder = root if root is not None else console_dir()
    try:
        base = folder.resolve(strict=True)
    except OSError:
        base = None
    if base is None or not (base / "index.html").is_file():
        if path in ("/", "/index.html"):
            return _plain(404, NOT_BUILT)
        return _plain(404, b"Not found.\n")
    try:
        file = _resolve(base, path)
    except (UnicodeDecodeError, ValueError):
        file = None
    if file is None:
        return _plain(404, b"Not found.\n")
    try:
        body = file.read_bytes()
    except OSError:
        return _plain(404, b"Not found.\n")
    relative = file.relative_to(base)
    headers = {
        **SECURITY_HEADERS,
        "Content-Type": CONTENT_TYPES.get(file.suffix.lower(), "application/octet-stream"),
        "Cache-Control": IMMUTABLE if relative.parts[0] == "assets" and len(relative.parts) > 1 else REVALIDATE,
    }
    return 200, headers, body
