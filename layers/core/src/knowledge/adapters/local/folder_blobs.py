"""BlobStore over a folder (embedded mode). Writes are atomic (temp file + rename)."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path, PurePosixPath

from ...errors import InvalidInput, NotFound


class FolderBlobStore:
    def __init__(self, root: str | Path):
        self.root = Path(root)
        self.root.mkdir(parents=True, exist_ok=True)

    def _path(self, key: str) -> Path:
        pure = PurePosixPath(key)
        if not key or pure.is_absolute() or any(part in ("", ".", "..") for part in pure.parts):
            raise InvalidInput(f"invalid blob key {key!r}")
        return self.root.joinpath(*pure.parts)

    def put(self, key: str, data: bytes) -> None:
        path = self._path(key)
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".tmp-")
        try:
            with os.fdopen(fd, "wb") as fh:
                fh.write(data)
            os.replace(tmp, path)
        except BaseException:
            Path(tmp).unlink(missing_ok=True)
            raise

    def get(self, key: str) -> bytes:
        try:
            return self._path(key).read_bytes()
        except FileNotFoundError as exc:
            raise NotFound(f"blob {key} not found") from exc

    def exists(self, key: str) -> bool:
        return self._path(key).is_file()

    def delete(self, key: str) -> None:
        self._path(key).unlink(missing_ok=True)

    def list(self, prefix: str) -> list[str]:
        base = self.root
        head = prefix.rsplit("/", 1)[0] if "/" in prefix else ""
        start = self._path(head) if head else base
        if not start.is_dir():
            return []
        out = []
        for path in start.rglob("*"):
            if path.is_file() and not path.name.startswith(".tmp-"):
                key = path.relative_to(base).as_posix()
                if key.startswith(prefix):
                    out.append(key)
        return sorted(out)
