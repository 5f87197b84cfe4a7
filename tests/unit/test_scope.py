"""Product scoping: candidate slugs, aliases, every product kind, scoping off."""

from __future__ import annotations

import pytest

from knowledge.sources.scope import SLUG_ALIASES, candidate_slugs, in_scope, validate_product


def test_name_and_hyphenated_name():
    assert candidate_slugs("p2p") == {"p2p"}
    assert candidate_slugs("ico_launchpad") == {"ico_launchpad", "ico-launchpad"}


@pytest.mark.parametrize("name,slug", sorted(SLUG_ALIASES.items()))
def test_every_alias_matches_its_pack(name, slug):
    assert in_scope(slug, [name])


def test_alias_table_has_the_ten_known_mismatches():
    assert len(SLUG_ALIASES) == 10
    assert SLUG_ALIASES["knowledge_base"] == "faq-system"


def test_blockchains_and_providers_are_declarable():
    # the packs that no extension row could ever match are reachable by declaring them
    for slug in ["monero", "solana", "ton", "tron"]:
        assert in_scope(slug, [f"blockchain:{slug}"])
    assert in_scope("binance-provider", ["provider:binance"])
    assert in_scope("kucoin-provider", ["kucoin-provider"])
    assert not in_scope("xt-provider", ["provider:binance"])


def test_out_of_scope_when_not_declared():
    assert not in_scope("forex-multi-asset-trading", ["p2p"])


def test_scoping_off_or_no_products_indexes_everything():
    assert in_scope("anything", [], True)
    assert in_scope("anything", ["p2p"], False)


def test_validate_product():
    assert validate_product("provider:binance") == "provider:binance"
    with pytest.raises(ValueError):
        validate_product("planet:mars")
    with pytest.raises(ValueError):
        validate_product("addon:")
