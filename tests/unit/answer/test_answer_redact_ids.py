"""Identity documents, account numbers, cards, IBANs, e-mail and IP addresses in the ways OCR'd
documents, call notes and pasted logs write them: a passport's machine-readable zone read whole
(ICAO 9303 check digits), numbers whose check ``python-stdnum`` lacks (Hong Kong, Taiwan, the
driving licences that hold a date of birth), the local names of identity numbers as cues (also
spaced out by an OCR), a number checked as written ("230791-482H"); and the codes, versions and
figures that look alike and stay."""

from __future__ import annotations

import pytest

from knowledge.answer.redact import find_spans
from knowledge.answer.redact.id_documents import hkid_valid, taiwan_id_valid


def _found(text: str, speaker: str | None = "customer") -> list[tuple[str, str]]:
    return [(text[s.start : s.end], s.kind) for s in find_spans(text, speaker=speaker)]


def _of(text: str, kind: str, speaker: str | None = "customer") -> list[str]:
    return [value for value, k in _found(text, speaker) if k == kind]


# -- a passport's and an identity card's machine-readable zone --------------------------------

_TD3 = ("P<UTOERIKSSON<<ANNA<MARIA<<<<<<<<<<<<<<<<<<<\n"
        "L898902C36UTO7408122F1204159ZE184226B<<<<<10")
_TD1 = ("I<UTOD231458907<<<<<<<<<<<<<<<\n"
        "7408122F1204159UTO<<<<<<<<<<<6\n"
        "ERIKSSON<<ANNA<MARIA<<<<<<<<<<")


def test_a_passports_zone_gives_its_number_birth_date_personal_number_and_name() -> None:
    found = _found("OCR of my passport:\n" + _TD3 + "\nthanks")
    assert ("L898902C3", "national_id") in found
    assert ("740812", "date_of_birth") in found
    assert ("ZE184226B", "national_id") in found
    assert ("ERIKSSON<<ANNA<MARIA", "person_name") in found


def test_an_identity_cards_three_line_zone_is_read_whole() -> None:
    found = _found("scan:\n" + _TD1 + "\n")
    assert ("D23145890", "national_id") in found
    assert ("740812", "date_of_birth") in found
    assert ("ERIKSSON<<ANNA<MARIA", "person_name") in found


def test_a_zone_whose_check_digits_fail_is_no_document() -> None:
    text = ("P<UTOERIKSSON<<ANNA<MARIA<<<<<<<<<<<<<<<<<<<\n"
            "L898902C35UTO7408125F1204159ZE184226B<<<<<10")
    # (its dates are not read as the holder's; the name line is still a name by its shape: the
    # name-field reader removes it, an OCR's slip in a check digit keeps no one's name)
    assert not any(kind == "date_of_birth" for _, kind in _found(text))


# -- numbers with checks python-stdnum has no module for -------------------------------------

def test_the_hong_kong_and_taiwan_check_digits() -> None:
    assert hkid_valid("C", "482915", "6") and not hkid_valid("C", "482915", "7")
    assert hkid_valid("AB", "174230", "0")
    assert taiwan_id_valid("B215038743") and not taiwan_id_valid("B215038744")


@pytest.mark.parametrize(("text", "value"), [
    ("my HKID C482915(6) please check", "C482915(6)"),
    ("Hong Kong ID card: AB1742300", "AB1742300"),
    ("身分證 B215038743 如果需要", "B215038743"),
])
def test_hong_kong_and_taiwanese_identity_numbers(text: str, value: str) -> None:
    assert _of(text, "national_id") == [value]


@pytest.mark.parametrize("text", [
    "the part C482915(7) was replaced",  # the check fails
    "serial B215038743 on the router",  # a Taiwanese number's shape with no word for an identity card
])
def test_codes_of_those_shapes_that_fail_or_stand_alone_stay(text: str) -> None:
    assert _of(text, "national_id") == []


@pytest.mark.parametrize(("text", "value"), [
    ("Old licence is MORGA753116SM9IJ, I married since", "MORGA753116SM9IJ"),  # DVLA, woman born 1977
    ("mon permis du Québec (L2345-210690-03) a été refusé", "L2345-210690-03"),
])
def test_driving_licences_that_hold_a_date_of_birth(text: str, value: str) -> None:
    assert _of(text, "national_id") == [value]


def test_a_licences_shape_with_no_date_in_it_stays() -> None:
    assert _of("code L2345-219990-03 in the log", "national_id") == []


# -- the local names of identity numbers, as cues -------------------------------------------

@pytest.mark.parametrize(("text", "value"), [
    ("My BVN is 22418736509 and my account", "22418736509"),  # Nigeria, no public check: the cue decides
    ("my name Siti, IC no 750412-14-5521. I deposited", "750412-14-5521"),  # Malaysia
    ("> الرقم القومي: 28807120104455", "28807120104455"),  # Egypt
    ("CIN: AB123456", "AB123456"),  # Morocco
    ("CC 1.020.745.318", "1.020.745.318"),  # Colombia, dotted as a figure
    ("> DL# 5501234, exp 2027", "5501234"),
    ("My Number 5281 3740 9210 in my profile?", "5281 3740 9210"),  # Japan
    ("公民身份号码 110105 19491231 0022", "110105 19491231 0022"),  # China, spaced by the OCR
    ("PPS number for anything, it's 2916483W but", "2916483W"),  # Ireland, a few words after its name
])
def test_an_identity_number_after_its_local_name(text: str, value: str) -> None:
    assert _of(text, "national_id") == [value]


def test_a_cue_spaced_letter_by_letter_by_an_ocr() -> None:
    assert _of("個 人 番 号   5281 3740 9210", "national_id") == ["5281 3740 9210"]


def test_a_finnish_number_is_checked_as_written_and_its_name_inflected() -> None:
    # the "-" says the century: without it the check fails
    assert _of("Verohallinto kysyy henkilötunnustani (150884-237E). Tarvitsetteko", "national_id") == [
        "150884-237E"]


def test_a_korean_number_with_spaces_around_its_dash() -> None:
    assert _of("주 민 등 록 증\n900101 - 1234567\n", "national_id") == ["900101 - 1234567"]


@pytest.mark.parametrize("text", [
    "CC: finance team, please check ticket 4412983",  # a copy line, no card number
    "Ticket #20481733 was merged; see build 1.20.745",
    "Download DL 2.4.1 from the site",
    "Error 0x80070005 after update 5.3.2 on IC chip model 74",
    "The fee is 1.020.745 pesos for the year",
])
def test_codes_versions_and_figures_stay(text: str) -> None:
    assert _of(text, "national_id") == []


# -- IBANs, cards and accounts ----------------------------------------------------------------

@pytest.mark.parametrize(("text", "value"), [
    # a Swiss IBAN a digit short, a Greek one a digit short: the check fails, the word says what it is
    ("bitte auf mein Postfinance-Konto CH93 0076 2011 6238 5295 auszahlen", "CH93 0076 2011 6238 5295"),
    ("the payout IBAN on my side is GR160110125000000012300695 if needed", "GR160110125000000012300695"),
])
def test_an_iban_whose_check_fails_after_a_word_for_one(text: str, value: str) -> None:
    assert _of(text, "iban") == [value]


@pytest.mark.parametrize("text", [
    "the build CH93 0076 2011 6238 5295 failed",  # no word for an account before it
    "my account page shows QQ12 3456 7890 1234 5678",  # no country's IBAN begins "QQ"
])
def test_an_iban_shape_that_fails_its_check_with_nothing_to_vouch_for_it_stays(text: str) -> None:
    assert _of(text, "iban") == []


@pytest.mark.parametrize(("text", "value"), [
    ("Verified w/ last4 of card on file •••• 8834", "•••• 8834"),
    ("charged to **** **** **** 4471 yesterday", "**** **** **** 4471"),
    ("card ending in XXXX-0417 was declined", "XXXX-0417"),
    ("last 4 of the card: ...2290", "...2290"),
    # unmasked, after the words for a card's last digits (with the rest of a ticket they tell whose card)
    ("The card ending 4821 was charged twice on Friday.", "4821"),
    ("Please charge the card on file ending 5338?", "5338"),
    ("Last four are 1117 and I was born in May", "1117"),
])
def test_a_card_number_by_its_last_digits(text: str, value: str) -> None:
    assert _of(text, "card") == [value]


@pytest.mark.parametrize("text", [
    "**bold** 2024 release notes",
    "The card ending soon: 2024 plans",
    "Ticket 4821 ending today",
])
def test_four_digits_with_no_word_for_a_card_stay(text: str) -> None:
    assert _of(text, "card") == []


@pytest.mark.parametrize(("text", "value"), [
    ("Checking  acct  ending  ...6021", "...6021"),
    ("RIB: 007 780 0001234567890123 45", "007 780 0001234567890123 45"),
])
def test_an_accounts_masked_digits_and_a_rib(text: str, value: str) -> None:
    assert _of(text, "account_number") == [value]


def test_an_accounts_four_digits_alone_stay() -> None:
    assert _of("a wire from our Wells Fargo account ending 3391 on Tuesday", "account_number") == []


# -- e-mail and IP addresses ------------------------------------------------------------------

@pytest.mark.parametrize(("text", "value"), [
    ("Grüße, f.hinterleitner@stadtwerke-mödling.at", "f.hinterleitner@stadtwerke-mödling.at"),
    ("https://app.example.org/verify?code=VER-500&email=tyler.m%40icloud.com&ref=mobile", "tyler.m%40icloud.com"),
])
def test_an_address_with_letters_beyond_ascii_or_its_at_sign_encoded(text: str, value: str) -> None:
    assert _of(text, "email") == [value]


def test_a_documentation_address_in_a_deployments_settings_is_someones() -> None:
    text = ('"supportEmail": "help@keystone.example",\n"adminIpAllowlist": ["203.0.113.57/32"],')
    assert _of(text, "ip_address") == ["203.0.113.57"]


@pytest.mark.parametrize("text", [
    "The registry is registry.example.com (203.0.113.40), Harbor v2.10.1.",
    "for example 198.51.100.7 would be blocked",
])
def test_a_documentation_address_an_example_names_stays(text: str) -> None:
    assert _of(text, "ip_address") == []


def test_an_iban_with_check_digits_never_issued_stays() -> None:
    assert _of("IBAN DE00 3704 0044 0532 0130 0 is the form's sample", "iban") == []


# -- written spaced out, split across lines, defanged -----------------------------------------

@pytest.mark.parametrize(("text", "value"), [
    ("الرقم القومي: 2 8 8 0 7 1 2 0 1 0 4 4 5 5", "2 8 8 0 7 1 2 0 1 0 4 4 5 5"),
    ("My Number 5 2 8 1 3 7 4 0 9 2 1 0", "5 2 8 1 3 7 4 0 9 2 1 0"),
    ("henkilötunnus 1 5 0 8 8 4 - 2 3 7 E.", "1 5 0 8 8 4 - 2 3 7 E"),  # the dash and the letter kept
])
def test_an_identity_number_spaced_digit_by_digit(text: str, value: str) -> None:
    assert _of(text, "national_id") == [value]


def test_digits_spaced_out_with_no_word_and_no_check_stay() -> None:
    assert _of("press 1 2 3 4 5 6 7 8 9 then hash", "national_id") == []


@pytest.mark.parametrize(("text", "value"), [
    ("my NRIC is S1234567D ok", "S1234567D"),
    ("FIN G1234567X", "G1234567X"),
    ("my NRIC photo shows S1234567D", "S1234567D"),
    ("Emirates ID 784-1985-1234567-3 thanks", "784-1985-1234567-3"),  # Luhn-checked, no card's shape
])
def test_singaporean_and_emirati_identity_numbers(text: str, value: str) -> None:
    assert _of(text, "national_id") == [value]


@pytest.mark.parametrize("text", [
    "part S1234567D in stock",  # no word for an identity card
    "my NRIC photo shows S1234567E",  # the check letter fails (a few words after the cue)
])
def test_a_singaporean_numbers_shape_alone_stays(text: str) -> None:
    assert _of(text, "national_id") == []


def test_an_amex_card_keeps_its_kind() -> None:
    assert _of("card 378282246310005 amex", "card") == ["378282246310005"]


def test_an_iban_split_across_a_line() -> None:
    assert _of("IBAN: DE89 3704 0044\n0532 0130 00\nThanks", "iban") == ["DE89 3704 0044\n0532 0130 00"]


@pytest.mark.parametrize(("text", "value"), [
    ("メール：hanako.yamada＠example.co.jp まで", "hanako.yamada＠example.co.jp"),
    ("escríbeme a josé.garcía@correo.es gracias", "josé.garcía@correo.es"),
    ("пишите иван@почта.рф спасибо", "иван@почта.рф"),
])
def test_e_mails_with_a_full_width_at_sign_or_letters_beyond_ascii(text: str, value: str) -> None:
    assert _of(text, "email") == [value]


def test_an_e_mail_runs_not_into_the_cjk_text_after_it() -> None:
    assert _of("请发到 foo@bar.com请联系", "email") == ["foo@bar.com"]


@pytest.mark.parametrize(("text", "value"), [
    ("blocked 185.220.101[.]47 after the alert", "185.220.101[.]47"),
    ("login from 10(.)0(.)0(.)14", "10(.)0(.)0(.)14"),
    ("src 192[dot]168[dot]1[dot]20", "192[dot]168[dot]1[dot]20"),
])
def test_a_defanged_ip_address(text: str, value: str) -> None:
    assert _of(text, "ip_address") == [value]


def test_a_defanged_address_out_of_range_stays() -> None:
    assert _of("section 999[.]1[.]1[.]1 of the spec", "ip_address") == []


@pytest.mark.parametrize("text", [
    "[ok]   redis    redis://127.0.0.1:6379/0",  # the machine's own loopback
    "server listens on 0.0.0.0:8080",
    "netmask 255.255.255.0 on eth0",  # a subnet mask, neither an address nor a telephone
    "join group 239.1.2.3 for the feed",  # multicast
])
def test_addresses_that_name_no_one_stay(text: str) -> None:
    assert [kind for _, kind in _found(text)] == []


def test_a_private_address_is_still_someones() -> None:
    assert _of("netmask 255.255.255.0 gw 192.168.1.1", "ip_address") == ["192.168.1.1"]


@pytest.mark.parametrize("text", [
    "Fatura n.º FT 2024/118822",  # an invoice's year and number
    "Statement period 04/01 - 04/30",  # a period of two dates
])
def test_a_year_and_number_or_a_period_is_no_telephone(text: str) -> None:
    assert _of(text, "phone", speaker=None) == []


@pytest.mark.parametrize(("text", "value"), [
    ("carta d'identità CA12345AB", "CA12345AB"),  # Italy's electronic card
    ("BI n.º 12345678", "12345678"),  # Portugal's old identity card
    ("rodné číslo 736028/5163", "736028/5163"),  # a Czech birth number, not a telephone
    ("numer dowodu ABC123456", "ABC123456"),  # a Polish identity card, its name inflected
    ("серия 4510 номер 123456", "4510 номер 123456"),  # a Russian passport's series and number
])
def test_identity_documents_named_in_more_languages(text: str, value: str) -> None:
    assert (value, "national_id") in _found(text)


@pytest.mark.parametrize("text", [
    "Power BI 2.0 dashboard 123456 rows",
    "module CA12345AB loaded",  # an Italian card's shape with no word for one
])
def test_their_shapes_alone_stay(text: str) -> None:
    assert _of(text, "national_id") == []


def test_an_australian_bsb_is_an_account_number() -> None:
    assert _of("BSB 062-000 acc 12345678", "account_number") == ["062-000", "12345678"]


def test_an_iban_whose_check_fails_ends_before_the_word_of_capitals_after_it() -> None:
    assert _of("IBAN CH93 0076 2011 6238 5295 AHV-Nummer folgt", "iban") == ["CH93 0076 2011 6238 5295"]


@pytest.mark.parametrize("zone", [
    # an OCR's spaces inside the lines, and its "«" for two fillers
    "P<UTO ERIKSSON<<ANNA<MARIA<<<<<<<<<<<<<<<<<<<\nL898902C3 6 UTO 7408122 F 1204159 ZE184226B<<<<<10",
    "P<UTOERIKSSON«ANNA<MARIA««««««««««\nL898902C36UTO7408122F1204159ZE184226B«««10",
])
def test_a_zone_as_an_ocr_reads_it(zone: str) -> None:
    found = _found("scan:\n" + zone + "\nok")
    assert ("L898902C3", "national_id") in found
    assert ("740812", "date_of_birth") in found
    assert ("ZE184226B", "national_id") in found


@pytest.mark.parametrize(("text", "value"), [
    ("JMBG broj 0101990710006", "0101990710006"),  # Serbia, "number" in Serbian
    ("adóazonosító jel 8123456789", "8123456789"),  # Hungary's tax sign, not a telephone
    ("TAJ szám 123 456 788", "123 456 788"),
    ("מספר זהות: 123456782", "123456782"),  # Israel, in Hebrew
    ("ІПН 3184710691", "3184710691"),  # Ukraine
    ("شناختی کارڈ نمبر 35202-1234567-1", "35202-1234567-1"),  # Pakistan, in Urdu
])
def test_identity_numbers_named_in_still_more_languages(text: str, value: str) -> None:
    assert _of(text, "national_id") == [value]


def test_a_hungarian_word_alone_with_a_figure_stays() -> None:
    assert _of("a számla összege 125000 forint", "national_id") == []


@pytest.mark.parametrize(("text", "value"), [
    ("mail john.smith＠gmail．com pls", "john.smith＠gmail．com"),  # full-width dot too
    ("mail john.smith -at- gmail -dot- com pls", "john.smith -at- gmail -dot- com"),
    ("mail john_at_gmail_dot_com", "john_at_gmail_dot_com"),
    ("mail: john.smith@gmail .com", "john.smith@gmail .com"),  # a space before the dot only
])
def test_more_ways_of_writing_an_e_mail_so_a_machine_would_not_read_it(text: str, value: str) -> None:
    assert _of(text, "email") == [value]


@pytest.mark.parametrize("text", [
    "run config_at_boot.sh and mylog_at_start.py",  # file names
    "see the at-a-glance page, rate-at-a-time",
    "email is foo@bar. Then we",  # a sentence's end, no domain
])
def test_file_names_and_phrases_with_at_stay(text: str) -> None:
    assert _of(text, "email") == []


@pytest.mark.parametrize("text", [
    "upgraded to v2.10.1.0 yesterday",
    "firmware version 4.2.0.1 on the router",
    "build 1.0.0.12 crashed",
])
def test_a_version_of_four_numbers_is_no_address(text: str) -> None:
    assert [kind for _, kind in _found(text)] == []


@pytest.mark.parametrize(("text", "value"), [
    ("open http://192.168.1.10:8080/admin now", "192.168.1.10"),  # in a URL, before its port
    ("ssh root@172.16.4.20", "172.16.4.20"),
    ("IPv4 81.2.69.160 blocked", "81.2.69.160"),
])
def test_addresses_in_urls_and_logs(text: str, value: str) -> None:
    assert _of(text, "ip_address") == [value]


def test_a_french_passport_number_written_in_its_groups() -> None:
    assert _of("N° de passeport : 18 AB 12345 merci", "national_id") == ["18 AB 12345"]
