"""The example documentation packs and their builder (examples/build_packs.py).

The packs are fixtures other tests and demos rely on, so their structural promises
(audiences, legacy pack, release notes, empty page, long page, oversized block,
distinctive phrases, question set) are checked here against the built ``.ndjson.gz`` files.
"""

from __future__ import annotations

import gzip
import importlib.util
import json
import re
import sys
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "examples"
PACKS_SRC = EXAMPLES / "packs"
QUESTIONS = EXAMPLES / "questions.jsonl"
STAMPED = ("coinvault", "stakehouse")
LEGACY = "ticketdesk"
OPERATOR_SECTIONS = {"admin", "reference", "install", "operate", "configure"}

_TOKEN_RE = re.compile(r"\w+|[^\w\s]")
_FENCE_OPEN_RE = re.compile(r"^(`{3,}|~{3,})\s*([\w+-]*)")


def _load_builder() -> ModuleType:
    spec = importlib.util.spec_from_file_location("example_build_packs", EXAMPLES / "build_packs.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


builder = _load_builder()


def count_tokens(text: str) -> int:
    """Rough token count: words plus punctuation marks."""
    return len(_TOKEN_RE.findall(text))


def frontmatter(body: str) -> dict[str, str]:
    meta: dict[str, str] = builder.split_frontmatter(body)[0]
    return meta


def content(body: str) -> str:
    rest: str = builder.split_frontmatter(body)[1]
    return rest


def read_pack(path: Path) -> list[dict[str, Any]]:
    lines = gzip.decompress(path.read_bytes()).decode("utf-8").split("\n")
    assert lines[-1] == "", "every line, including the last, ends with a newline"
    return [json.loads(line) for line in lines[:-1]]


def blocks(markdown: str) -> Iterator[tuple[str, str]]:
    """Yield ``(kind, text)`` for fenced code blocks, ``:::`` callouts and tables."""
    lines = markdown.split("\n")
    i = 0
    while i < len(lines):
        line = lines[i]
        opener = _FENCE_OPEN_RE.match(line)
        if opener:
            fence = opener.group(1)
            end = i + 1
            while end < len(lines) and not lines[end].startswith(fence):
                end += 1
            assert end < len(lines), f"unclosed fence starting at line {i + 1}"
            yield "fence:" + opener.group(2), "\n".join(lines[i : end + 1])
            i = end + 1
            continue
        if line.startswith(":::") and line.strip() != ":::":
            end = i + 1
            while end < len(lines) and lines[end].strip() != ":::":
                end += 1
            assert end < len(lines), f"unclosed callout starting at line {i + 1}"
            yield "callout:" + line[3:].strip(), "\n".join(lines[i : end + 1])
            i = end + 1
            continue
        if line.startswith("|"):
            end = i
            while end < len(lines) and lines[end].startswith("|"):
                end += 1
            yield "table", "\n".join(lines[i:end])
            i = end
            continue
        i += 1


def page_audience(slug: str, page: dict[str, Any]) -> str:
    """The audience the design assigns: stamp if any, else legacy inference from the section."""
    declared = frontmatter(page["body"]).get("audience")
    if declared:
        return declared.lower()
    if slug in STAMPED:
        return "operator"
    return "customer" if page["path"].startswith("help/") else "operator"


def is_release_notes(page: dict[str, Any]) -> bool:
    return (
        frontmatter(page["body"]).get("type") == "release-notes"
        or page["path"].startswith("release-notes/")
        or "/release-notes/" in page["path"]
    )


def is_empty(page: dict[str, Any]) -> bool:
    return not content(page["body"]).strip()


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> dict[str, list[dict[str, Any]]]:
    out = tmp_path_factory.mktemp("packs")
    written = builder.build_all(PACKS_SRC, out)
    assert [p.name for p in written] == [f"{slug}.ndjson.gz" for slug in sorted((*STAMPED, LEGACY))]
    return {p.name.removesuffix(".ndjson.gz"): read_pack(p) for p in written}


@pytest.fixture(scope="module")
def all_pages(built: dict[str, list[dict[str, Any]]]) -> dict[str, tuple[str, dict[str, Any]]]:
    return {f"{slug}/{page['path']}": (slug, page) for slug, pages in built.items() for page in pages}


def _readme_table(section: str) -> list[tuple[str, str]]:
    text = (PACKS_SRC / "README.md").read_text(encoding="utf-8")
    match = re.search(rf"^## {re.escape(section)}\n(.*?)(?=^## |\Z)", text, re.M | re.S)
    assert match, f"README has no '{section}' section"
    rows = []
    for line in match.group(1).splitlines():
        cells = [cell.strip() for cell in line.strip().strip("|").split("|")]
        if line.startswith("|") and len(cells) == 2 and cells[0].endswith(".md"):
            rows.append((cells[0], cells[1]))
    return rows


def _readme_list(section: str) -> list[str]:
    text = (PACKS_SRC / "README.md").read_text(encoding="utf-8")
    match = re.search(rf"^## {re.escape(section)}\n(.*?)(?=^## |\Z)", text, re.M | re.S)
    assert match, f"README has no '{section}' section"
    return [line[2:].strip() for line in match.group(1).splitlines() if line.startswith("- ")]


# --- the built packs ---------------------------------------------------------------------


def test_lines_are_pages_with_path_title_body(built: dict[str, list[dict[str, Any]]]) -> None:
    for slug, pages in built.items():
        paths = [page["path"] for page in pages]
        assert paths == sorted(paths), slug
        assert len(set(paths)) == len(paths), slug
        for page in pages:
            assert isinstance(page["path"], str) and page["path"].endswith(".md")
            assert not page["path"].startswith("/") and ".." not in page["path"].split("/")
            assert isinstance(page["title"], str) and page["title"].strip()
            assert isinstance(page["body"], str)
            source = (PACKS_SRC / slug / page["path"]).read_text(encoding="utf-8")
            assert page["body"] == source


def test_page_counts(built: dict[str, list[dict[str, Any]]]) -> None:
    assert sum(len(pages) for pages in built.values()) >= 30
    assert len(built[LEGACY]) >= 5
    for slug in STAMPED:
        help_pages = [p for p in built[slug] if p["path"].startswith("help/") and not is_empty(p)]
        assert len(help_pages) >= 5, slug


def test_stamped_packs_stamp_every_page(built: dict[str, list[dict[str, Any]]]) -> None:
    for slug in STAMPED:
        audiences = set()
        for page in built[slug]:
            meta = frontmatter(page["body"])
            assert meta.get("audience") in {"CUSTOMER", "OPERATOR"}, page["path"]
            assert meta.get("title"), page["path"]
            assert page["title"] == meta["title"]
            audiences.add(meta["audience"])
            section = page["path"].split("/", 1)[0]
            if section == "help":
                assert meta["audience"] == "CUSTOMER", page["path"]
            if section in OPERATOR_SECTIONS:
                assert meta["audience"] == "OPERATOR", page["path"]
        assert audiences == {"CUSTOMER", "OPERATOR"}, slug


def test_both_audiences_well_represented(all_pages: dict[str, tuple[str, dict[str, Any]]]) -> None:
    indexable = [
        page_audience(slug, page)
        for slug, page in all_pages.values()
        if not is_release_notes(page) and not is_empty(page)
    ]
    assert indexable.count("customer") >= 12
    assert indexable.count("operator") >= 12


def test_urls_only_for_stamped_packs(built: dict[str, list[dict[str, Any]]]) -> None:
    for slug in STAMPED:
        for page in built[slug]:
            assert page["url"] == f"https://docs.{slug}.example/{page['path'].removesuffix('.md')}"
    assert all("url" not in page for page in built[LEGACY])


def test_legacy_pack_has_no_stamps_and_inferable_sections(built: dict[str, list[dict[str, Any]]]) -> None:
    pages = built[LEGACY]
    for page in pages:
        assert "audience" not in frontmatter(page["body"]), page["path"]
        assert not re.search(r"^audience\s*:", page["body"], re.M), page["path"]
    sections = {page["path"].split("/", 1)[0] for page in pages}
    assert {"help", "admin", "reference", "install"} <= sections
    # titles come from frontmatter where present and from the first heading otherwise
    no_frontmatter = [p for p in pages if not p["body"].startswith("---")]
    assert no_frontmatter, "the legacy pack should exercise heading-derived titles"
    for page in no_frontmatter:
        assert page["body"].startswith(f"# {page['title']}\n")


def test_release_notes_present_per_stamped_product(built: dict[str, list[dict[str, Any]]]) -> None:
    for slug in STAMPED:
        notes = {p["path"]: p for p in built[slug]}.get("release-notes/2-4.md")
        assert notes is not None, slug
        assert frontmatter(notes["body"]).get("type") == "release-notes"
        assert content(notes["body"]).strip()


def test_exactly_one_empty_page(all_pages: dict[str, tuple[str, dict[str, Any]]]) -> None:
    empty = [key for key, (_, page) in all_pages.items() if is_empty(page)]
    assert empty == ["coinvault/help/coming-soon.md"]
    _, page = all_pages[empty[0]]
    meta = frontmatter(page["body"])
    assert meta.get("title") and meta.get("audience")


def test_fences_and_callouts_in_several_pages(all_pages: dict[str, tuple[str, dict[str, Any]]]) -> None:
    kinds_by_page = {
        key: {kind for kind, _ in blocks(content(page["body"]))} for key, (_, page) in all_pages.items()
    }
    with_bash = [key for key, kinds in kinds_by_page.items() if "fence:bash" in kinds]
    with_json = [key for key, kinds in kinds_by_page.items() if "fence:json" in kinds]
    with_warning = [key for key, kinds in kinds_by_page.items() if "callout:warning" in kinds]
    with_tip = [key for key, kinds in kinds_by_page.items() if "callout:tip" in kinds]
    assert len(with_bash) >= 3 and len(with_json) >= 3
    assert len(with_warning) >= 3 and len(with_tip) >= 3
    # callouts occur in both stamped products and in the legacy pack
    callout_packs = {key.split("/", 1)[0] for key in with_warning + with_tip}
    assert callout_packs == {*STAMPED, LEGACY}


def test_heading_levels(all_pages: dict[str, tuple[str, dict[str, Any]]]) -> None:
    levels: set[int] = set()
    for _, page in all_pages.values():
        text = content(page["body"])
        # headings inside fenced code are not headings
        for kind, block in blocks(text):
            if kind.startswith("fence:"):
                text = text.replace(block, "")
        levels.update(len(m.group(1)) for m in re.finditer(r"^(#{1,6}) \S", text, re.M))
    assert {1, 2, 3, 4} <= levels


def test_every_nonempty_page_has_one_h1(all_pages: dict[str, tuple[str, dict[str, Any]]]) -> None:
    for key, (_, page) in all_pages.items():
        if is_empty(page):
            continue
        assert builder.first_heading(content(page["body"])), key


def test_long_page_and_oversized_block(all_pages: dict[str, tuple[str, dict[str, Any]]]) -> None:
    long_pages = [
        key
        for key, (_, page) in all_pages.items()
        if not is_release_notes(page) and count_tokens(page["body"]) > 1200
    ]
    assert "coinvault/reference/settings.md" in long_pages
    settings = content(all_pages["coinvault/reference/settings.md"][1]["body"])
    assert len(re.findall(r"^## ", settings, re.M)) >= 6
    assert re.search(r"^#### ", settings, re.M)

    oversized = {
        (key, kind)
        for key, (_, page) in all_pages.items()
        for kind, block in blocks(content(page["body"]))
        if count_tokens(block) >= 1300
    }
    assert ("coinvault/reference/withdrawal-error-codes.md", "table") in oversized
    assert ("stakehouse/reference/config-file.md", "fence:yaml") in oversized


def test_distinctive_phrases_are_unique(all_pages: dict[str, tuple[str, dict[str, Any]]]) -> None:
    rows = _readme_table("Distinctive phrases")
    assert len(rows) >= 30
    lowered = {key: page["body"].lower() for key, (_, page) in all_pages.items()}
    for expected, phrase in rows:
        hits = [key for key, text in lowered.items() if phrase.lower() in text]
        assert hits == [expected], (phrase, hits)
        assert not is_release_notes(all_pages[expected][1])
    # the brief's anchor pages carry their vocabulary
    monero_out = lowered["coinvault/help/withdrawals/monero.md"]
    assert all(word in monero_out for word in ("withdraw", "payout", "xmr", "subaddress"))
    monero_in = lowered["coinvault/help/deposits/monero.md"]
    assert "deposit" in monero_in and "confirmations" in monero_in


def test_excluded_phrases_only_in_release_notes(all_pages: dict[str, tuple[str, dict[str, Any]]]) -> None:
    rows = _readme_table("Excluded phrases")
    assert {page for page, _ in rows} == {f"{slug}/release-notes/2-4.md" for slug in STAMPED}
    for expected, phrase in rows:
        hits = [key for key, (_, page) in all_pages.items() if phrase.lower() in page["body"].lower()]
        assert hits == [expected], (phrase, hits)


def test_operator_vocabulary_never_in_customer_pages(
    all_pages: dict[str, tuple[str, dict[str, Any]]],
) -> None:
    words = _readme_list("Operator-only vocabulary")
    assert "hot wallet" in words and len(words) >= 5
    by_audience: dict[str, list[str]] = {"customer": [], "operator": []}
    for slug, page in all_pages.values():
        by_audience[page_audience(slug, page)].append(page["body"].lower())
    customer, operator = by_audience["customer"], by_audience["operator"]
    for word in words:
        assert not any(word in text for text in customer), word
        assert any(word in text for text in operator), word


# --- the question set --------------------------------------------------------------------


def test_questions_point_at_one_answerable_page(all_pages: dict[str, tuple[str, dict[str, Any]]]) -> None:
    lines = QUESTIONS.read_text(encoding="utf-8").splitlines()
    assert len(lines) >= 20
    questions = [json.loads(line) for line in lines]
    ids = [q["id"] for q in questions]
    assert len(set(ids)) == len(ids)
    assert len({q["query"].lower() for q in questions}) == len(questions)
    audiences = set()
    for q in questions:
        assert set(q) == {"id", "query", "audience", "expected"}, q["id"]
        assert isinstance(q["query"], str) and 10 <= len(q["query"]) <= 300
        assert q["audience"] in {"customer", "operator"}
        assert isinstance(q["expected"], list) and len(q["expected"]) == 1
        key = q["expected"][0]
        assert key in all_pages, (q["id"], key)
        slug, page = all_pages[key]
        assert not is_release_notes(page) and not is_empty(page), q["id"]
        assert page_audience(slug, page) == q["audience"], q["id"]
        audiences.add(q["audience"])
    assert audiences == {"customer", "operator"}
    assert {q["expected"][0].split("/", 1)[0] for q in questions} == {*STAMPED, LEGACY}


# --- the builder itself ------------------------------------------------------------------


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
