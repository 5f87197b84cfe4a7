"""Which documentation packs a bot may index (reference 000, "Scoping").

A bot declares the products it runs — addons, blockchains, exchange providers, anything —
as plain names (``monero``, ``forex_trading``) or ``kind:name`` (``provider:binance``).
Every declared product yields candidate pack slugs: the name, the name with underscores
as hyphens, an alias when the shipped slug differs, and ``<name>-provider`` for providers.
Because products of every kind are declared the same way, no pack is unmatchable by
construction (the reference's "seven packs that can never be indexed").
"""

from __future__ import annotations

from collections.abc import Iterable

#: Product name -> shipped pack slug, where the hyphenated name is not the slug.
SLUG_ALIASES: dict[str, str] = {
    "ai_investment": "ai-investments",
    "ai_support": "ai-support-agent",
    "binary_ai_engine": "binary-trading-ai-engine",
    "dex": "web3-wallet-trading",
    "forex_trading": "forex-multi-asset-trading",
    "gateway": "payment-gateway",
    "hummingbot": "hummingbot-connector",
    "knowledge_base": "faq-system",
    "mailwizard": "mailwizard-bicrypto",
    "nft": "nft-marketplace",
}

PRODUCT_KINDS = ("addon", "blockchain", "provider", "product")


def candidate_slugs(product: str) -> set[str]:
    kind, _, name = product.partition(":") if ":" in product else ("product", "", product)
    name = name.strip().lower()
    if not name:
        return set()
    slugs = {name, name.replace("_", "-")}
    alias = SLUG_ALIASES.get(name)
    if alias:
        slugs.add(alias)
    if kind == "provider":
        slugs.add(f"{name.replace('_', '-')}-provider")
    return slugs


def allowed_slugs(products: Iterable[str]) -> set[str]:
    out: set[str] = set()
    for product in products:
        out |= candidate_slugs(product)
    return out


def in_scope(slug: str, products: Iterable[str], scope_to_products: bool = True) -> bool:
    """A bot with scoping off, or with no declared products, indexes every pack."""
    products = list(products)
    if not scope_to_products or not products:
        return True
    return slug.lower() in allowed_slugs(products)


def validate_product(product: str) -> str:
    kind, sep, name = product.partition(":")
    if sep and kind not in PRODUCT_KINDS:
        raise ValueError(f"unknown product kind {kind!r}; use one of {', '.join(PRODUCT_KINDS)}")
    if not (name if sep else kind).strip():
        raise ValueError("empty product name")
    return product.strip()
