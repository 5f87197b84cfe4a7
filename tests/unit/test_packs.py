"""Pack parsing rules: audience stamps, legacy inference, exclusions, weights, limits."""

from __future__ import annotations

import gzip

import pytest

from knowledge.errors import Code, SourceFailure
from knowledge.sources.frontmatter import split_frontmatter
from knowledge.sources.packs import (
    iter_lines,
    pack_documents,
    page_audiences,
    read_pack,
    slug_of,
)
from tests.conftest import pack_bytes, page


def docs_by_path(pages: list[dict]) -> dict:
    content = pack_documents("src", "coin-vault", pack_bytes(pages))
    return {d.path: d for d in content.documents}


def test_stamp_decides_audience():
    docs = docs_by_path([
        page("help/a.md", "# A\n\nalpha", audience="CUSTOMER"),
        page("admin/b.md", "# B\n\nbeta", audience="OPERATOR"),
        page("help/c.md", "# C\n\ngamma", audience="OPERATOR"),
    ])
    assert docs["help/a.md"].visibility == "public"
    assert docs["admin/b.md"].visibility == "operator"
    # a stamp beats the help/ path
    assert docs["help/c.md"].visibility == "operator"


def test_unstamped_page_in_stamped_pack_is_operator():
    docs = docs_by_path([
        page("help/a.md", "# A\n\nalpha", audience="CUSTOMER"),
        page("help/b.md", "# B\n\nbeta"),  # no stamp, even under help/
    ])
    assert docs["help/b.md"].visibility == "operator"


def test_legacy_pack_is_inferred_from_sections():
    docs = docs_by_path([
        page("help/a.md", "alpha"),
        page("admin/b.md", "beta"),
        page("reference/c.md", "gamma"),
        page("install/d.md", "delta"),
        page("operate/e.md", "eps"),
        page("configure/f.md", "zeta"),
        page("guides/g.md", "eta"),
    ])
    assert docs["help/a.md"].visibility == "public"
    for path in ["admin/b.md", "reference/c.md", "install/d.md", "operate/e.md", "configure/f.md", "guides/g.md"]:
        assert docs[path].visibility == "operator", path


def test_page_audiences_unit():
    pages, _ = read_pack(pack_bytes([page("help/x.md", "x"), page("admin/y.md", "y")]))
    assert page_audiences(pages) == ["CUSTOMER", "OPERATOR"]


def test_release_notes_never_indexed_by_path_or_type():
    content = pack_documents("src", "p", pack_bytes([
        page("release-notes/2-4.md", "# 2.4\n\nchanges", audience="CUSTOMER"),
        page("help/whats-new.md", "# New\n\nchanges", audience="CUSTOMER", type_="release-notes"),
        page("help/ok.md", "# Ok\n\nkept", audience="CUSTOMER"),
    ]))
    assert [d.path for d in content.documents] == ["help/ok.md"]
    assert content.skipped == 2


def test_empty_body_is_skipped():
    content = pack_documents("src", "p", pack_bytes([
        page("help/empty.md", "   \n\n", audience="CUSTOMER", title="Empty"),
        page("help/ok.md", "text", audience="CUSTOMER"),
    ]))
    assert [d.path for d in content.documents] == ["help/ok.md"]
    assert content.skipped == 1


def test_help_pages_weigh_more():
    docs = docs_by_path([
        page("help/a.md", "alpha", audience="CUSTOMER"),
        page("guides/b.md", "beta", audience="CUSTOMER"),
    ])
    assert docs["help/a.md"].weight == pytest.approx(1.2)
    assert docs["guides/b.md"].weight == pytest.approx(1.0)


def test_breadcrumb_crumbs_product_sections_title():
    docs = docs_by_path([page("help/deposits/monero.md", "x", audience="CUSTOMER", title="Deposit Monero")])
    assert docs["help/deposits/monero.md"].crumbs == ["Coin Vault", "Help", "Deposits", "Deposit Monero"]


def test_bad_line_fails_that_page_only():
    data = gzip.compress(b'{"path": "help/a.md", "body": "alpha"}\nnot json\n{"body": "no path"}\n', mtime=0)
    content = pack_documents("src", "p", data)
    assert [d.path for d in content.documents] == ["help/a.md"]
    assert [code for _, code in content.failed] == [Code.MALFORMED_FILE, Code.MALFORMED_FILE]


def test_not_gzip_is_malformed():
    with pytest.raises(SourceFailure) as err:
        read_pack(b"plain text, not a pack")
    assert err.value.code == Code.MALFORMED_FILE


def test_expansion_bounded_while_reading(monkeypatch):
    import knowledge.sources.packs as packs

    monkeypatch.setattr(packs, "MAX_PACK_EXPANDED", 10_000)
    line = b'{"path": "help/a.md", "body": "' + b"a" * 1000 + b'"}\n'
    bomb = gzip.compress(line * 1000)  # ~1 MB expanded, a few KB compressed
    with pytest.raises(SourceFailure) as err:
        list(iter_lines(bomb))
    assert err.value.code == Code.EXPANDED_TOO_LARGE


def test_slug_from_filename():
    assert slug_of("payment-gateway.ndjson.gz") == "payment-gateway"
    with pytest.raises(SourceFailure) as err:
        slug_of("notes.txt")
    assert err.value.code == Code.UNSUPPORTED_TYPE
    with pytest.raises(SourceFailure):
        slug_of("Bad Slug!.ndjson.gz")


def test_frontmatter_reader():
    meta, body = split_frontmatter("---\naudience: CUSTOMER\ntitle: \"Hello: world\"\n---\n# Body\n")
    assert meta == {"audience": "CUSTOMER", "title": "Hello: world"}
    assert body == "# Body\n"
    assert split_frontmatter("# no block\n") == ({}, "# no block\n")
    # an unterminated block is body, not metadata
    assert split_frontmatter("---\naudience: CUSTOMER\n# body")[0] == {}
