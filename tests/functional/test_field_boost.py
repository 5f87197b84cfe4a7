"""A question's words in a page's title or file name lift that page among the served
passages, over the real embedded adapters (word-match lists only; see FIELD_BOOST)."""

from __future__ import annotations

import pytest

from knowledge.refresh.packsync import install_pack
from knowledge.refresh.reindex import reindex
from knowledge.retrieve import service
from knowledge.retrieve.service import RetrievalOptions, RetrievalRequest, retrieve
from tests.conftest import page

FILLER = " ".join(f"Check the service number {i} and its logs, then confirm it reports healthy." for i in range(3))
PAGES = [
    # says "roll back", "failed" and "upgrade" in a short body, but is about upgrading in general
    page("help/upgrade/index.md", "# Upgrade\n\nWhen an upgrade failed, roll back, then try the upgrade again."),
    # the page that answers: its title and file name say so; its body is long and plain
    page("help/upgrade/roll-back-upgrade.md", "# Roll back an upgrade\n\nStop the services, restore the "
         "backup of the previous version and start it again. " + FILLER),
]


PAGES += [page(f"help/other-{i}.md", f"# Other {i}\n\nDeposits and withdrawals of coin {i}.") for i in range(6)]


def paths(services, q, **options):
    res = retrieve(services, RetrievalRequest("default", q), record=False,
                   options=RetrievalOptions(rescue=False, **options))
    return [e["path"] for e in res["excerpts"]], res["excerpts"]


def test_the_page_titled_for_the_question_comes_first(services, write_pack, monkeypatch):
    install_pack(services, write_pack("coinvault", PAGES))
    reindex(services, "default")
    q = "roll back after a failed upgrade"
    boost = service.FIELD_BOOST
    assert boost > 0
    monkeypatch.setattr(service, "NEAR_BOOST", 0.0)  # the title's boost alone (index.md has the words together)
    monkeypatch.setattr(service, "FIELD_BOOST", 0.0)
    plain, excerpts = paths(services, q)
    assert plain[:2] == ["help/upgrade/index.md", "help/upgrade/roll-back-upgrade.md"]  # BM25 alone
    assert all("titleMatch" not in e["signals"] for e in excerpts)
    monkeypatch.setattr(service, "FIELD_BOOST", boost)
    boosted, excerpts = paths(services, q)
    assert boosted[:2] == ["help/upgrade/roll-back-upgrade.md", "help/upgrade/index.md"]
    first, second = excerpts[:2]
    assert first["score"] < second["score"]  # the word-match score is shown as it was...
    assert first["signals"]["titleMatch"] > second["signals"]["titleMatch"]  # ...and why it moved


def test_over_a_fused_list_the_boost_reorders_the_lexical_list_before_the_fusion(services, write_pack, monkeypatch):
    services.default_embedder = "hashing"
    install_pack(services, write_pack("coinvault", PAGES))
    reindex(services, "default")
    q = "roll back after a failed upgrade"
    monkeypatch.setattr(service, "FIELD_BOOST", 0.0)
    _, excerpts = paths(services, q)
    assert excerpts[0]["reason"] == "hybrid"  # both lists took part
    titled = next(e for e in excerpts if e["path"] == "help/upgrade/roll-back-upgrade.md")
    assert titled["signals"]["lexicalRank"] == 2 and "titleMatch" not in titled["signals"]
    monkeypatch.undo()
    _, excerpts = paths(services, q)
    titled = next(e for e in excerpts if e["path"] == "help/upgrade/roll-back-upgrade.md")
    other = next(e for e in excerpts if e["path"] == "help/upgrade/index.md")
    assert titled["signals"]["lexicalRank"] == 1 and other["signals"]["lexicalRank"] == 2  # the lifted list
    assert titled["signals"]["titleMatch"] > other["signals"]["titleMatch"]
    assert titled["signals"]["lexicalScore"] > other["signals"]["lexicalScore"]  # the lifted word-match scores


def filler(n: int) -> str:
    return " ".join(f"Check the service number {i} and its logs, then confirm it reports healthy." for i in range(n))


TIERS = [
    # the page that answers: more of the question's words in its text, none in its title
    page("help/https.md", "# HTTPS\n\nEncrypt the traffic between browsers and the portal with a certificate. "
         + filler(6)),
    # one generic word of the question ("UI"), in a heading under an unrelated page title
    page("help/branding.md", "# Branding\n\n" + filler(10) + "\n\n## Banner on the portal UI\n\n"
         "The banner text shows above the UI. " + filler(10)),
]
TIERS += [page(f"help/other-{i}.md", f"# Other {i}\n\nDeposits and withdrawals of coin {i}.") for i in range(6)]


def test_a_word_of_a_heading_under_the_title_lifts_less_than_one_of_the_title(services, write_pack, monkeypatch):
    install_pack(services, write_pack("coinvault", TIERS))
    reindex(services, "default")
    q = "encrypt traffic to the ui"
    monkeypatch.setattr(service, "NEAR_BOOST", 0.0)  # the title's boost alone
    share = service.CRUMB_SHARE
    assert 0 < share < 1
    tiered, excerpts = paths(services, q)
    assert tiered[:2] == ["help/https.md", "help/branding.md"]
    crumb = excerpts[1]
    assert crumb["breadcrumb"].endswith("› Banner on the portal UI")
    monkeypatch.setattr(service, "CRUMB_SHARE", 1.0)  # the whole breadcrumb counts as the title does
    flat, excerpts = paths(services, q)
    assert flat[:2] == ["help/branding.md", "help/https.md"]  # the heading's "UI" wins the page
    assert excerpts[0]["signals"]["titleMatch"] == pytest.approx(crumb["signals"]["titleMatch"] / share, abs=1e-3)


FAR = " ".join(f"Line {i} of the notes." for i in range(6))
APART = [
    # both words, far apart: a higher word-match score (shorter), but not the phrase asked for
    page("help/travel.md", f"# Travel\n\nYour card works abroad. {FAR} A daily limit applies to transfers."),
    # the words together, in a longer passage
    page("help/spending.md", "# Spending\n\nThe card limit is set per month, and raised on request. "
         + FAR + " " + FAR),
]
APART += [page(f"help/other-{i}.md", f"# Other {i}\n\nDeposits and withdrawals of coin {i}.") for i in range(6)]


def test_the_question_s_words_close_together_lift_a_passage(services, write_pack, monkeypatch):
    install_pack(services, write_pack("coinvault", APART))
    reindex(services, "default")
    q = "what is the card limit"
    monkeypatch.setattr(service, "NEAR_BOOST", 0.0)
    plain, excerpts = paths(services, q)
    assert plain[:2] == ["help/travel.md", "help/spending.md"]  # word-match scores alone
    assert all("nearMatch" not in e["signals"] for e in excerpts)
    monkeypatch.undo()
    assert service.NEAR_BOOST > 0
    lifted, excerpts = paths(services, q)
    assert lifted[:2] == ["help/spending.md", "help/travel.md"]
    first, second = excerpts[:2]
    assert first["signals"]["nearMatch"] == 1.0 and second["signals"]["nearMatch"] == 0.0
    assert first["score"] < second["score"]  # the word-match score is shown as it was
