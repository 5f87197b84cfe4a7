"""The pack builder (examples/build_packs.py): Markdown folders in, ``.ndjson.gz`` packs out.

Only the builder's code is tested here; what the example pages say is content, and the
functional tests that ingest them assert what kb does with it.
"""

from __future__ import annotations

import gzip
import json
from pathlib import Path
from typing import Any

import pytest

from tests.scripts import load_script

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "examples"
PACKS_SRC = EXAMPLES / "packs"


builder = load_script("examples/build_packs.py", "example_build_packs")


def test_build_is_deterministic(tmp_path: Path) -> None:
    first = builder.build_all(PACKS_SRC, tmp_path / "a")
    second = builder.build_all(PACKS_SRC, tmp_path / "b")
    for one, two in zip(first, second, strict=True):
        data = one.read_bytes()
        assert data == two.read_bytes()
        assert data[:2] == b"\x1f\x8b" and data[4:8] == b"\x00\x00\x00\x00"  # gzip, mtime 0
        assert data[3] & 0x08 == 0  # no file name stored in the header


def _write(folder: Path, rel: str, text: str) -> None:
    target = folder / rel
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(text, encoding="utf-8")


def _pages(data: bytes) -> list[dict[str, Any]]:
    return [json.loads(line) for line in gzip.decompress(data).decode("utf-8").splitlines()]


def test_build_pack_titles_urls_and_order(tmp_path: Path) -> None:
    pack = tmp_path / "demo"
    _write(pack, "help/b.md", "---\naudience: CUSTOMER\ntitle: \"Quoted: title\"\n---\n# Ignored\n")
    _write(pack, "admin/a.md", "---\naudience: OPERATOR\n---\n\n```bash\n# not a heading\n```\n# Real\n")
    _write(pack, "help/plain-page.md", "No heading at all.\n")
    _write(pack, "notes.txt", "not a page")
    _write(pack, ".hidden/x.md", "# hidden")
    pages = _pages(builder.build_pack(pack))
    assert [p["path"] for p in pages] == ["admin/a.md", "help/b.md", "help/plain-page.md"]
    assert [p["title"] for p in pages] == ["Real", "Quoted: title", "Plain page"]
    assert pages[0]["url"] == "https://docs.demo.example/admin/a"
    assert list(pages[0]) == ["path", "title", "body", "url"]


def test_build_pack_legacy_has_no_url_and_crlf_is_normalised(tmp_path: Path) -> None:
    pack = tmp_path / "old"
    _write(pack, "help/x.md", "---\ntitle: X\n---\r\nbody\r\n")
    (pack / "help" / "y.md").write_bytes(b"# Why\r\ntext\r\n")
    pages = _pages(builder.build_pack(pack))
    assert all("url" not in p for p in pages)
    assert pages[1] == {"path": "help/y.md", "title": "Why", "body": "# Why\ntext\n"}


def test_unterminated_frontmatter_is_not_frontmatter() -> None:
    meta, rest = builder.split_frontmatter("---\naudience: CUSTOMER\n# Title\n")
    assert meta == {} and rest.startswith("---")


def test_build_pack_rejects_empty_folder_and_bad_slug(tmp_path: Path) -> None:
    empty = tmp_path / "empty"
    empty.mkdir()
    with pytest.raises(ValueError, match=r"no \.md pages"):
        builder.build_pack(empty)
    bad = tmp_path / "Bad Slug"
    _write(bad, "help/a.md", "# A\n")
    with pytest.raises(ValueError, match="slug"):
        builder.build_pack(bad)


def test_main_writes_packs_and_reports_errors(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    src = tmp_path / "src"
    _write(src / "alpha", "help/a.md", "---\naudience: CUSTOMER\ntitle: A\n---\n# A\n")
    _write(src, "README.md", "not a pack")
    out = tmp_path / "out"
    assert builder.main([str(out), "--src", str(src)]) == 0
    assert sorted(p.name for p in out.iterdir()) == ["alpha.ndjson.gz"]
    assert str(out / "alpha.ndjson.gz") in capsys.readouterr().out

    assert builder.main([str(out), "--src", str(tmp_path / "missing")]) == 1
    assert "build_packs:" in capsys.readouterr().err
