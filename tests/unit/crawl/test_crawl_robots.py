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
