"""robots.txt decisions checked against the rules of RFC 9309."""

from __future__ import annotations

import json

import pytest

from knowledge.crawl.robots import RobotsPolicy, allowed

BOT = "KnowledgeBot"
SITE = "https://site.example"


def ok(robots: str, path: str, agent: str = BOT) -> bool:
    return allowed(robots, agent, SITE + path)


def test_disallow_prefix() -> None:
    robots = "User-agent: *\nDisallow: /private\n"
    assert not ok(robots, "/private")
    assert not ok(robots, "/private/deeper/page.html")
    assert not ok(robots, "/private-notes")  # a prefix, not a path segment
    assert ok(robots, "/public")
    assert ok(robots, "/")


def test_longest_match_wins_either_way() -> None:
    robots = "User-agent: *\nDisallow: /docs\nAllow: /docs/public\nDisallow: /docs/public/drafts\n"
    assert not ok(robots, "/docs/internal")
    assert ok(robots, "/docs/public/guide")
    assert not ok(robots, "/docs/public/drafts/next")
    # wildcards count by their length in the file, too
    assert not ok("User-agent: *\nAllow: /p*e\nDisallow: /page\n", "/page")


@pytest.mark.parametrize(
    "robots",
    [
        "User-agent: *\nDisallow: /page\nAllow: /page\n",
        "User-agent: *\nAllow: /page\nDisallow: /page\n",
        "User-agent: *\nAllow: /pa*e\nDisallow: /page\n",  # same length with a wildcard
    ],
)
def test_allow_wins_ties(robots: str) -> None:
    assert ok(robots, "/page")


def test_dollar_anchors_the_end() -> None:
    robots = "User-agent: *\nDisallow: /*.pdf$\n"
    assert not ok(robots, "/files/guide.pdf")
    assert ok(robots, "/files/guide.pdf?download=1")
    assert ok(robots, "/files/guide.pdfx")
    only_root = "User-agent: *\nDisallow: /$\n"
    assert not ok(only_root, "/")
    assert ok(only_root, "/about")


def test_star_matches_any_sequence() -> None:
    robots = "User-agent: *\nDisallow: /shop*/cart\nDisallow: /*?session=\n"
    assert not ok(robots, "/shop/cart")
    assert not ok(robots, "/shop-eu/x/cart/1")
    assert ok(robots, "/shop/basket")
    assert not ok(robots, "/a?session=1")
    assert ok(robots, "/a?page=1")


def test_agent_and_field_names_are_case_insensitive_paths_are_not() -> None:
    robots = "USER-AGENT: knowledgebot\nDISALLOW: /Secret\n"
    assert not ok(robots, "/Secret")
    assert ok(robots, "/secret")


def test_own_group_replaces_the_star_group() -> None:
    robots = "User-agent: *\nDisallow: /\n\nUser-agent: KnowledgeBot\nDisallow: /tmp\n"
    assert ok(robots, "/guide")
    assert not ok(robots, "/tmp/x")


def test_groups_for_the_same_agent_are_merged() -> None:
    robots = (
        "User-agent: KnowledgeBot\nDisallow: /a\n\n"
        "User-agent: other\nDisallow: /b\n\n"
        "User-agent: knowledgebot\nDisallow: /c\n"
    )
    assert not ok(robots, "/a")
    assert ok(robots, "/b")
    assert not ok(robots, "/c")


def test_a_group_may_name_several_agents() -> None:
    robots = "User-agent: other\nUser-agent: KnowledgeBot\nDisallow: /x\n\nUser-agent: *\nDisallow: /\n"
    assert not ok(robots, "/x")
    assert ok(robots, "/y")


def test_only_the_product_token_matches() -> None:
    # A group for a prefix of our name is somebody else's group (Protego alone would apply it).
    robots = "User-agent: Knowledge\nDisallow: /\n\nUser-agent: *\nDisallow: /private\n"
    assert ok(robots, "/page")
    assert not ok(robots, "/private")
    assert ok("User-agent: KnowledgeBotPro\nDisallow: /\n", "/page")
    # the version in our User-Agent string is not an agent name either
    assert ok("User-agent: 1.0\nDisallow: /\n", "/page", agent="KnowledgeBot/1.0")
    # a version written in the file does not stop the token from matching
    assert not ok("User-agent: KnowledgeBot/2.0\nDisallow: /\n", "/page", agent="KnowledgeBot/1.0")


def test_no_matching_group_means_no_rules() -> None:
    assert ok("User-agent: other\nDisallow: /\n", "/page")
    assert ok("", "/page")
    assert ok("# only a comment\n", "/page")


def test_rules_outside_a_group_are_ignored() -> None:
    assert ok("Disallow: /\n", "/page")
    assert not ok("Disallow: /\nUser-agent: *\nDisallow: /x\n", "/x")
    assert ok("Disallow: /\nUser-agent: *\nDisallow: /x\n", "/y")


def test_comments_blank_lines_and_line_endings() -> None:
    robots = "User-agent: * # everyone\r\n\r\nDisallow: /x # not this\r\nAllow: /x/ok\r\n"
    assert not ok(robots, "/x")
    assert ok(robots, "/x/ok")


def test_byte_order_mark_is_ignored() -> None:
    assert not ok("\ufeffUser-agent: *\nDisallow: /\n", "/page")


def test_percent_encoding_is_compared_decoded() -> None:
    assert not ok("User-agent: *\nDisallow: /%7Ejoe\n", "/~joe/notes")
    assert not ok("User-agent: *\nDisallow: /~joe\n", "/%7Ejoe/notes")
    assert not ok("User-agent: *\nDisallow: /caf%C3%A9\n", "/café")


def test_allowed_index_html_does_not_open_the_directory() -> None:
    robots = "User-agent: *\nDisallow: /\nAllow: /index.html\nAllow: /docs/index.html\n"
    assert ok(robots, "/index.html")
    assert ok(robots, "/docs/index.html")
    assert not ok(robots, "/")
    assert not ok(robots, "/docs/")


def test_robots_txt_itself_is_always_allowed() -> None:
    assert ok("User-agent: *\nDisallow: /\n", "/robots.txt")


# -- RobotsPolicy -----------------------------------------------------------------------


def test_policy_from_a_2xx_response_uses_the_rules() -> None:
    policy = RobotsPolicy.from_response(200, "User-agent: *\nDisallow: /private\n")
    assert policy.allowed(SITE + "/page")
    assert not policy.allowed(SITE + "/private/x")


@pytest.mark.parametrize("status", [400, 401, 403, 404, 410, 451])
def test_policy_4xx_allows_everything(status: int) -> None:
    policy = RobotsPolicy.from_response(status, "User-agent: *\nDisallow: /\n")
    assert policy.allowed(SITE + "/anything")


@pytest.mark.parametrize("status", [500, 502, 503, 504, None])
def test_policy_5xx_or_unreachable_disallows_everything(status: int | None) -> None:
    policy = RobotsPolicy.from_response(status, None)
    assert not policy.allowed(SITE + "/")
    assert not policy.allowed(SITE + "/anything")


@pytest.mark.parametrize(
    ("robots", "delay"),
    [
        ("User-agent: *\nCrawl-delay: 2\n", 2.0),
        ("User-agent: *\nCrawl-delay: 0.5\n", 0.5),
        ("User-agent: *\nCrawl-delay: 60\n", 10.0),
        ("User-agent: *\nCrawl-delay: 10\n", 10.0),
        ("User-agent: *\nCrawl-delay: -3\n", 0.0),
        ("User-agent: *\nCrawl-delay: soon\n", 0.0),
        ("User-agent: *\nCrawl-delay: nan\n", 0.0),
        ("User-agent: *\nCrawl-delay: inf\n", 0.0),
        ("User-agent: *\nDisallow: /x\n", 0.0),
        ("User-agent: *\nCrawl-delay: 7\n\nUser-agent: KnowledgeBot\nCrawl-delay: 3\n", 3.0),
        ("User-agent: other\nCrawl-delay: 7\n", 0.0),
    ],
)
def test_crawl_delay_is_read_and_capped(robots: str, delay: float) -> None:
    assert RobotsPolicy.from_response(200, robots).crawl_delay == delay


def test_policy_round_trips_through_json() -> None:
    robots = (
        "User-agent: *\nDisallow: /\n\n"
        "User-agent: KnowledgeBot\nDisallow: /tmp\nAllow: /tmp/ok$\nCrawl-delay: 4\n"
    )
    original = RobotsPolicy.from_response(200, robots)
    restored = RobotsPolicy.from_dict(json.loads(json.dumps(original.to_dict())))
    for path in ("/", "/guide", "/tmp/x", "/tmp/ok", "/tmp/ok/more"):
        assert restored.allowed(SITE + path) == original.allowed(SITE + path)
    assert restored.crawl_delay == 4.0
    for status in (404, 503):
        policy = RobotsPolicy.from_response(status, None)
        again = RobotsPolicy.from_dict(json.loads(json.dumps(policy.to_dict())))
        assert again.allowed(SITE + "/x") == policy.allowed(SITE + "/x")


# -- cases written from the text of RFC 9309 ---------------------------------------------


def test_rfc_2_1_consecutive_user_agent_lines_form_one_group() -> None:
    robots = "User-agent: other\nUser-agent: KnowledgeBot\n\nUser-agent: third\nDisallow: /x\n"
    assert not ok(robots, "/x")
    assert not ok(robots, "/x", agent="other")
    assert ok(robots, "/y")


@pytest.mark.parametrize(
    "record",
    [
        "Sitemap: https://site.example/sitemap.xml",
        "Crawl-delay: 1",
        "Unknown-field: value",
        "this line is not a record at all",
    ],
)
def test_rfc_2_2_4_other_records_do_not_end_a_group(record: str) -> None:
    # "a 'Sitemaps' record MUST NOT terminate a group": the group opened by the first line
    # still takes the second User-agent line and the rule after it.
    robots = f"User-agent: KnowledgeBot\n{record}\nUser-agent: other\nDisallow: /x\n"
    assert not ok(robots, "/x")
    assert not ok(robots, "/x", agent="other")
    # and a record between the rules of a group leaves the rules after it in the group
    robots = f"User-agent: *\nDisallow: /a\n{record}\nDisallow: /b\n"
    assert not ok(robots, "/a")
    assert not ok(robots, "/b")


def test_rfc_2_1_a_user_agent_line_after_a_rule_opens_a_new_group() -> None:
    robots = "User-agent: KnowledgeBot\nDisallow: /a\nUser-agent: other\nDisallow: /b\n"
    assert not ok(robots, "/a")
    assert ok(robots, "/b")


def test_rfc_2_2_1_matching_groups_are_combined_and_star_is_the_fallback() -> None:
    robots = (
        "user-agent: ExampleBot\ndisallow: /foo\ndisallow: /bar\n\n"
        "user-agent: ExampleBot\ndisallow: /baz\n\n"
        "user-agent: *\ndisallow: /star\n"
    )
    for path in ("/foo", "/bar", "/baz"):
        assert not ok(robots, path, agent="examplebot")
    assert ok(robots, "/star", agent="examplebot")
    assert not ok(robots, "/star")  # no group names us: the "*" group applies
    assert ok(robots, "/foo")


def test_rfc_5_1_example() -> None:
    robots = (
        "User-Agent: *\nDisallow: *.gif$\nDisallow: /example/\nAllow: /publications/\n\n"
        "User-Agent: foobot\nDisallow:/\nAllow:/example/page.html\nAllow:/example/allowed.gif\n\n"
        "User-Agent: barbot\nUser-Agent: bazbot\nDisallow: /example/page.html\n\n"
        "User-Agent: quxbot\n\nEOF\n"
    )
    # foobot: everything but the two allowed paths
    assert not ok(robots, "/", agent="foobot")
    assert ok(robots, "/example/page.html", agent="foobot")
    assert ok(robots, "/example/allowed.gif", agent="foobot")
    assert not ok(robots, "/example/other.gif", agent="foobot")
    # barbot and bazbot share one group
    for agent in ("barbot", "bazbot"):
        assert not ok(robots, "/example/page.html", agent=agent)
        assert ok(robots, "/example/other", agent=agent)
        assert ok(robots, "/picture.gif", agent=agent)
    # quxbot's group has no rules: everything is allowed (the "*" group does not apply)
    assert ok(robots, "/example/page.html", agent="quxbot")
    assert ok(robots, "/picture.gif", agent="quxbot")
    # everybody else gets the "*" group, whose first pattern does not start with "/"
    assert not ok(robots, "/images/picture.gif")
    assert ok(robots, "/images/picture.gif?size=2")
    assert not ok(robots, "/example/page.html")
    assert ok(robots, "/publications/paper")


def test_rfc_5_2_longest_match() -> None:
    robots = "User-Agent: *\nAllow: /example/page/\nDisallow: /example/page/disallowed.gif\n"
    assert ok(robots, "/example/page/")
    assert not ok(robots, "/example/page/disallowed.gif")


def test_rfc_2_2_2_equivalent_allow_and_disallow_allow_wins() -> None:
    assert ok("User-agent: *\nDisallow: /\nAllow: /\n", "/page")
    assert ok("User-agent: *\nDisallow: /folder\nAllow: /folder\n", "/folder/page")


def test_rfc_2_2_2_no_rules_or_no_match_means_allowed() -> None:
    assert ok("User-agent: *\nDisallow: /\n\nUser-agent: KnowledgeBot\n", "/anything")
    # a blank line does not end the User-agent lines of a group (2.1's ABNF)
    assert not ok("User-agent: KnowledgeBot\n\nUser-agent: other\nDisallow: /\n", "/anything")
    assert ok("User-agent: *\nDisallow:\n", "/anything")  # an empty pattern matches nothing
    assert ok("User-agent: *\nDisallow: /x\n", "/y")


def test_rfc_2_2_2_matching_is_case_sensitive_and_starts_at_the_path() -> None:
    assert ok("User-agent: *\nDisallow: /Fish\n", "/fish")
    assert ok("User-agent: *\nDisallow: /fish\n", "/catfish")
    assert ok("User-agent: *\nDisallow: /fish\n", "/?id=fish")


@pytest.mark.parametrize(
    ("pattern", "path"),
    [
        # the table of section 2.2.2, in both directions
        ("/foo/bar?baz=quz", "/foo/bar?baz=quz"),
        ("/foo/bar/\u30c4", "/foo/bar/%E3%83%84"),
        ("/foo/bar/%E3%83%84", "/foo/bar/%E3%83%84"),
        ("/foo/bar/%e3%83%84", "/foo/bar/%E3%83%84"),  # hex digits in either case
        ("/foo/bar/%62%61%7A", "/foo/bar/baz"),
        ("/foo/bar/baz", "/foo/bar/%62%61%7A"),
        # an unreserved character, percent-encoded on one side only
        ("/%7Efoo", "/~foo"),
        ("/~foo", "/%7Efoo"),
        ("/%7efoo", "/~foo"),
        ("/foo%2Fbar", "/foo%2fbar"),  # a reserved character encoded on both sides
    ],
)
def test_rfc_2_2_2_percent_encoding_is_normalised_on_both_sides(pattern: str, path: str) -> None:
    assert not ok(f"User-agent: *\nDisallow: {pattern}\n", path)


@pytest.mark.parametrize(
    ("pattern", "path"),
    [
        # a reserved character stays encoded: "/" and "%2F" are different octets
        ("/foo%2Fbar", "/foo/bar"),
        ("/foo%2fbar", "/foo/bar"),
        ("/foo/bar", "/foo%2Fbar"),
    ],
)
def test_rfc_2_2_2_reserved_characters_stay_encoded(pattern: str, path: str) -> None:
    assert ok(f"User-agent: *\nDisallow: {pattern}\n", path)
    assert not ok(f"User-agent: *\nDisallow: {pattern}\n", pattern)


def test_rfc_2_2_3_special_characters() -> None:
    robots = "User-agent: *\nDisallow: /foo/*/qux\nDisallow: /end$\nDisallow: /here # not /here-too\n"
    assert not ok(robots, "/foo/bar/qux")
    assert not ok(robots, "/foo//qux")
    assert ok(robots, "/foo/qux")
    assert not ok(robots, "/end")
    assert ok(robots, "/end/more")
    assert ok(robots, "/end?x=1")
    assert not ok(robots, "/here")
    # "*" and "$" matched verbatim are written percent-encoded
    assert not ok("User-agent: *\nDisallow: /path/file-with-a-%2A.html\n", "/path/file-with-a-*.html")
    assert ok("User-agent: *\nDisallow: /path/file-with-a-%2A.html\n", "/path/file-with-a-b.html")
    assert not ok("User-agent: *\nDisallow: /path/foo-%24\n", "/path/foo-$")
    assert ok("User-agent: *\nDisallow: /path/foo-%24\n", "/path/foo-")


def test_rfc_2_1_rules_before_the_first_group_are_ignored() -> None:
    assert ok("Disallow: /\n\nUser-agent: *\nAllow: /x\n", "/y")


def test_rfc_2_5_only_the_first_500_kib_are_read() -> None:
    head = "User-agent: *\nDisallow: /early\n"
    filler = "# " + "x" * 1000 + "\n"
    padding = filler * ((500 * 1024 - len(head)) // len(filler) + 1)
    robots = head + padding + "Disallow: /late\n"
    assert len(robots.encode("utf-8")) > 500 * 1024
    assert not ok(robots, "/early")
    assert ok(robots, "/late")
    # a rule cut in two by the limit is dropped, not read as the shorter "Disallow: /"
    rule = "Disallow: /"
    lead = head + "#" * (500 * 1024 - len(head) - len(rule) - 1) + "\n"
    assert len((lead + rule).encode("utf-8")) == 500 * 1024
    assert ok(lead + rule + "private\n", "/anything")
    whole = lead.replace("#" * 100, "", 1) + rule + "private\n"  # the same rule, read whole
    assert ok(whole, "/anything")
    assert not ok(whole, "/private")
    policy = RobotsPolicy.from_response(200, robots.encode("utf-8"))
    assert not policy.allowed(SITE + "/early")
    assert policy.allowed(SITE + "/late")


def test_google_extensions_followed_and_not() -> None:
    # followed: misspelt keys, a forgotten colon, a value read up to its first non-token character
    assert not ok("User-agent: *\nDisalow: /x\n", "/x")
    assert not ok("useragent: KnowledgeBot\nDisallow /x\n", "/x")
    assert not ok("User-agent: KnowledgeBot Extended\nDisallow: /x\n", "/x")
    # not followed: the index.html-is-the-directory rule
    assert not ok("User-agent: *\nDisallow: /\nAllow: /d/index.html\n", "/d/")
