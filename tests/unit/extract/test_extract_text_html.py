"""Plain text, Markdown and HTML extraction."""

from __future__ import annotations

import pytest

from knowledge.errors import Code
from knowledge.extract import extract_bytes, extract_html
from knowledge.extract.limits import MAX_HTML_ELEMENTS, MAX_TEXT_CHARS

from .hostile import expect_failure

PAGE = """<!doctype html>
<html><head><title>  Deposit   guide </title><style>.x{color:red}</style>
<script>document.write("tracking")</script><meta name="description" content="meta text"></head>
<body>
<header>Site banner</header>
<nav><a href="/">Home</a> <a href="/pricing">Pricing</a></nav>
<main>
  <h1>Deposits <small>overview</small></h1>
  <p>Send funds to your <a href="https://evil.example/steal">personal address</a> only.<br>Then wait.</p>
  <h2>Steps</h2>
  <ol><li>Open the wallet</li><li>Copy the <b>address</b>
      <ul><li>check the network</li></ul></li></ol>
  <ul><li>fast</li><li>cheap</li></ul>
  <h3>Fees</h3>
  <table><thead><tr><th>Coin</th><th>Fee</th></tr></thead>
         <tbody><tr><td>BTC</td><td><p>0.0001</p></td></tr></tbody></table>
  <p># hashtag is not a heading</p>
  <pre>line one
    line two</pre>
  <template><p>template text</p></template>
  <noscript>enable js</noscript>
  <iframe src="https://ads.example/"></iframe>
  <form action="/login"><label>Password</label><input name="p"></form>
  <svg><title>icon title</title><text>svg text</text></svg>
  <div hidden>hidden text</div>
  <!-- a comment -->
</main>
<aside>Related posts</aside>
<footer>Copyright</footer>
</body></html>"""


def test_html_keeps_structure_and_drops_chrome() -> None:
    result = extract_html(PAGE)
    assert result.kind == "html"
    assert result.title == "Deposit guide"
    assert result.text.splitlines() == [
        "# Deposits overview",
        "",
        "Send funds to your personal address only.",
        "Then wait.",
        "",
        "## Steps",
        "",
        "1. Open the wallet",
        "2. Copy the address",
        "   - check the network",
        "- fast",
        "- cheap",
        "",
        "### Fees",
        "",
        "Coin | Fee",
        "BTC | 0.0001",
        "",
        "\\# hashtag is not a heading",
        "",
        "line one",
        "    line two",
    ]
    for dropped in (
        "tracking", "color", "meta text", "banner", "Home", "Pricing", "evil.example", "template",
        "enable js", "Password", "icon", "svg", "hidden", "comment", "Related", "Copyright",
    ):  # fmt: skip
        assert dropped not in result.text


def test_html_title_falls_back_to_first_h1() -> None:
    result = extract_html(b"<html><body><h2>Intro</h2><h1>Real  title</h1><h1>Other</h1></body></html>")
    assert result.title == "Real title"
    assert result.text == "## Intro\n\n# Real title\n\n# Other"


def test_html_without_title_or_h1_has_no_title() -> None:
    assert extract_html("<p>just text</p>").title is None


@pytest.mark.parametrize(
    ("data", "content_type", "expected"),
    [
        ('<meta charset="windows-1252"><p>caf\xe9</p>'.encode("cp1252"), None, "café"),
        ("<p>caf\xe9</p>".encode("cp1252"), "text/html; charset=iso-8859-1", "café"),
        ("<p>café</p>".encode(), None, "café"),
        (b"\xef\xbb\xbf<p>bom</p>", None, "bom"),
        (b'<meta charset="unicode_escape"><p>\\u0041</p>', None, "\\u0041"),  # refused codec
        (b'<meta charset="zlib"><p>x</p>', None, "x"),  # not a text codec
    ],
)
def test_html_bytes_are_decoded_safely(data: bytes, content_type: str | None, expected: str) -> None:
    result = extract_bytes(data, filename="page.html", content_type=content_type)
    assert expected in result.text


@pytest.mark.timeout(20)
def test_deeply_nested_html_does_not_recurse() -> None:
    depth = 50_000
    html = "<div>" * depth + "<p>deep text</p>" + "</div>" * depth
    result = extract_html(html)  # libxml2 may cap the depth; it must not crash either way
    assert result.kind == "html"


@pytest.mark.timeout(20)
def test_html_with_too_many_elements_is_rejected_before_parsing() -> None:
    html = "<b>x</b>" * (MAX_HTML_ELEMENTS + 1)
    failure = expect_failure(Code.EXPANDED_TOO_LARGE, lambda: extract_html(html))
    assert failure.details["limit"] == "html_elements"


@pytest.mark.timeout(20)
def test_html_with_too_much_text_is_rejected() -> None:
    html = "<p>" + "word " * (MAX_TEXT_CHARS // 5 + 10) + "</p>"
    failure = expect_failure(Code.EXPANDED_TOO_LARGE, lambda: extract_html(html))
    assert failure.details["limit"] == "text_chars"
    assert "word" not in failure.message


def test_plain_text_is_kept_as_is_with_replacement_for_bad_utf8() -> None:
    data = "Line one\r\nLine two — ok\n".encode() + b"\xff tail"
    result = extract_bytes(data, filename="notes.txt")
    assert result.kind == "text"
    assert result.title is None
    assert result.text == "Line one\nLine two — ok\n\ufffd tail"


def test_markdown_keeps_markup_and_takes_first_h1_as_title() -> None:
    data = b"Intro line\n\n# Refund policy\n\n## Details\n\n- item *one*\n"
    result = extract_bytes(data, filename="policy.md")
    assert result.kind == "markdown"
    assert result.title == "Refund policy"
    assert result.text == data.decode().strip("\n")


def test_nul_heavy_text_is_malformed() -> None:
    data = b"ab\x00\x00cd\x00" * 100
    expect_failure(Code.MALFORMED_FILE, lambda: extract_bytes(data, filename="notes.txt"))


def test_binary_garbage_as_text_is_malformed() -> None:
    data = bytes(range(128, 256)) * 20
    expect_failure(Code.MALFORMED_FILE, lambda: extract_bytes(data, content_type="text/plain"))


def test_overlong_text_is_rejected() -> None:
    data = b"a" * (MAX_TEXT_CHARS + 1)
    failure = expect_failure(Code.EXPANDED_TOO_LARGE, lambda: extract_bytes(data, filename="big.txt"))
    assert failure.details["limit"] == "text_chars"
    assert extract_bytes(b"a" * MAX_TEXT_CHARS, filename="big.txt").text == "a" * MAX_TEXT_CHARS


def test_preformatted_text_survives_nested_blocks() -> None:
    result = extract_html("<p>a</p><pre>x<div>in div</div>  y<br>z</pre><p>b</p>")
    assert result.text == "a\n\nxin div  y\nz\n\nb"
