"""Redaction round 15: names in the scripts without capitals after a relation or "name", and in
another script beside their Latin form; names printed in capitals; a listed given name before a
family name no list has; Japanese family names before an honorific or a space; the cases of a
Slavic name; a handle in brackets after a name; codes and numbers the words of Japanese,
Korean, Arabic and Portuguese introduce; a code handed over; an answer that is only the number
asked for."""

from __future__ import annotations

import pytest

from knowledge.answer.redact import find_spans
from knowledge.answer.tickets import redact_ticket


def _found(text: str, speaker: str = "customer") -> list[tuple[str, str]]:
    return [(text[s.start : s.end], s.kind) for s in find_spans(text, speaker=speaker, known_words=set())]


def _of(kind: str, text: str, speaker: str = "customer") -> list[str]:
    return [value for value, k in _found(text, speaker) if k == kind]


@pytest.mark.parametrize(("text", "name"), [
    ("میں اپنے والد عبدالرشید خان کی طرف سے لکھ رہی ہوں۔", "عبدالرشید خان"),
    ("मैंने दुबई से अपने बेटे अमित शर्मा को पैसे भेजे थे।", "अमित शर्मा"),
    ("الاسم محمد نعيم الدين، جوال قديم", "محمد نعيم الدين"),
    ("bKash number ache. name রোকেয়া বেগম ok", "রোকেয়া বেগম"),
    ("Her name is ዘውዲቱ ገብረመድኅን and the bank wants Latin letters.", "ዘውዲቱ ገብረመድኅን"),
])
def test_a_name_in_a_script_without_capitals_after_a_relation_or_name(text: str, name: str) -> None:
    assert _of("person_name", text) == [name]


@pytest.mark.parametrize("text", [
    "ابني يريد أن يفتح حساب جديد",  # "my son wants to open …": no listed name after the relation
    "मेरे बेटे को पैसे नहीं मिले।",
])
def test_a_relation_before_no_name_removes_nothing(text: str) -> None:
    assert _of("person_name", text) == []


@pytest.mark.parametrize(("text", "names"), [
    ("the counter has ਗੁਰਪ੍ਰੀਤ ਕੌਰ (Gurpreet Kaur) as receiver", ["ਗੁਰਪ੍ਰੀਤ ਕੌਰ", "Gurpreet Kaur"]),
    ("name রোকেয়া বেগম (Rokeya Begum) please", ["রোকেয়া বেগম", "Rokeya Begum"]),
    ("pickup for Harjit Singh Gill (ਹਰਜੀਤ ਸਿੰਘ ਗਿੱਲ) today", ["Harjit Singh Gill", "ਹਰਜੀਤ ਸਿੰਘ ਗਿੱਲ"]),
])
def test_a_name_beside_its_form_in_another_script(text: str, names: list[str]) -> None:
    assert _of("person_name", text) == names


@pytest.mark.parametrize(("text", "name"), [
    ("the account titled NUSRAT BIBI was credited today", "NUSRAT BIBI"),
    ("the line is registered as MARY W KAMAU and the name differs", "MARY W KAMAU"),
    ('please use "ZEWDITU GEBREMEDHIN" as the bank has it', "ZEWDITU GEBREMEDHIN"),
    ("my full name is JOY ANN MAGBANUA REYES same as before", "JOY ANN MAGBANUA REYES"),
])
def test_a_name_printed_in_capitals(text: str, name: str) -> None:
    assert _of("person_name", text) == [name]


@pytest.mark.parametrize("text", [
    "PLEASE HELP URGENT, MTN MOMO NOT WORKING",
    "paid at HDFC BANK LTD, KUALA LUMPUR branch",
    "the transfer is waiting in KUALA LUMPUR",
    "flights to HONG KONG AIRPORT are late",
    "WELLS FARGO Statement period",
    "sent to PIVOVAR DIGITAL S.R.O. yesterday",
])
def test_capitals_that_name_no_one_stay(text: str) -> None:
    assert _of("person_name", text) == []


def test_a_listed_given_name_before_a_family_name_no_list_has() -> None:
    text = "- Rohan Mehta (rohan-m), left 2025-02-14"
    assert _found(text) == [("Rohan Mehta", "person_name"), ("rohan-m", "username")]


@pytest.mark.parametrize(("text", "handle"), [
    ("- Оксана Ковальчук (okovalchuk), contractor", "okovalchuk"),
    ("náš CTO pan Marek Novák (mnovak-cz) odchází", "mnovak-cz"),
    ("権限を中村 陽菜さん(hina-nakamura)に付与したい", "hina-nakamura"),
])
def test_a_handle_in_brackets_after_a_name(text: str, handle: str) -> None:
    assert _of("username", text) == [handle]


def test_a_word_in_brackets_after_a_name_is_a_role() -> None:
    assert _of("username", "Ask Oksana Kovalchuk (contractor) or Tendai Moyo (admin)") == []


@pytest.mark.parametrize(("text", "name"), [
    ("藤本様の個人アカウントは先週パスワードが変更されています。", "藤本"),
    ("佐々木様は削除できる状態です。", "佐々木"),
    ("株式会社ハナムラソフト 経理部 渡辺 真理子", "渡辺 真理子"),
    ("Okafor様は削除できる状態です。", "Okafor"),
])
def test_japanese_names_before_an_honorific_or_after_a_department(text: str, name: str) -> None:
    assert _of("person_name", text, "agent") == [name]


@pytest.mark.parametrize("text", ["お客様番号をご確認ください。", "皆様、こんにちは。"])
def test_japanese_words_before_an_honorific_name_no_one(text: str) -> None:
    assert _of("person_name", text, "agent") == []


def test_the_cases_of_a_slavic_name_found_elsewhere_in_the_ticket() -> None:
    first, second = redact_ticket(
        ["Náš CTO pan Marek Novák odchází.", "Potíž je, že Markovi už vzali telefon."],
        speakers=["customer", "customer"], vocabulary=lambda words: set())
    assert "Markovi" not in second.text and "Novák" not in first.text
    # a word that only begins like the name stays
    _, other = redact_ticket(["Pan Marek Novák píše.", "Marketing to ví."], speakers=["customer", "agent"],
                             vocabulary=lambda words: set())
    assert other.text == "Marketing to ví."


@pytest.mark.parametrize(("text", "value", "kind"), [
    ("correct one is 50100318842276 IFSC HDFC0001827", "50100318842276", "account_number"),
    ("입금 계좌: 국민은행 482701-04-193826 예금주", "482701-04-193826", "account_number"),
    ("本社移転に伴い、お客様番号はC-2093-7714です。", "C-2093-7714", "account_number"),
    ("الدفع بالبطاقة المنتهية بـ 2370", "2370", "card"),
    ("Vi duas cobranças no cartão final 7182 no dia 3.", "7182", "card"),
    ("カード明細を見ました。カード末尾は6519です。", "6519", "card"),
    ("a man called and i gave him code 448192. his number", "448192", "secret"),
    ("counter is asking for PIN, i told him 88412207 but", "88412207", "secret"),
    ("sent from TXysJpsPNrsZBtqkaGhqCboTapPRsWmJCV yesterday", "TXysJpsPNrsZBtqkaGhqCboTapPRsWmJCV", "crypto_wallet"),
    ("DIČ: CZ7903042114", "CZ7903042114", "national_id"),
    ("<user>\n  <username>yoon.jaehyun</username>\n</user>", "yoon.jaehyun", "username"),
])
def test_values_introduced_in_more_languages_and_shapes(text: str, value: str, kind: str) -> None:
    assert (value, kind) in _found(text)


@pytest.mark.parametrize("text", [
    "the final 2024 report is out",
    "I sent them the code 2024 report",
    "build 123456789 succeeded, IFSC lookup is separate",
    "TestSomethingVeryLongClassNameHer failed",
])
def test_look_alikes_of_those_values_stay(text: str) -> None:
    assert _found(text) == []


def test_backup_codes_named_in_japanese_and_a_number_in_groups_after_them() -> None:
    text = "前に保存したバックアップコードが出てきました。7QKD-2M9X と H4TP-8WZR です。マイナンバーも → 4830 1927 5648"
    assert _found(text) == [("7QKD-2M9X", "secret"), ("H4TP-8WZR", "secret"), ("4830 1927 5648", "national_id")]


def test_the_whole_reply_to_a_question_of_an_identity_number_is_one() -> None:
    _, reply = redact_ticket(["Could you also confirm your Oman resident card number?", "118472903"],
                             speakers=["agent", "customer"])
    assert reply.text == "[national_id]"
    _, unasked = redact_ticket(["Could you send a screenshot?", "118472903"], speakers=["agent", "customer"])
    assert unasked.text == "118472903"


def test_a_user_name_alone_before_a_comma_in_reply_to_a_question_of_one() -> None:
    _, reply = redact_ticket(["Prosimy o podanie nazwy użytkownika i daty urodzenia.", "pjablonski, 14.07.1991"],
                             speakers=["agent", "customer"])
    assert reply.text == "[username], [date_of_birth]"


def test_the_minutes_of_a_time_are_no_amount_and_and_is_no_threshold() -> None:
    text = "The transfer was released and PHP 30,140.00 was credited today at 14:22 PKT."
    assert _found(text, "agent") == [("PHP 30,140.00", "amount")]


def test_a_verb_after_called_is_no_name() -> None:
    assert _of("person_name", "yes a man called said he is from the app") == []
    assert _of("person_name", "a guy called Tomasz said hi") == ["Tomasz"]


@pytest.mark.parametrize(("csv", "names"), [
    ("login,name,email,role\nwei.zhang,张伟,wei@brightkiln.com,member\nf.alharbi,فاطمة الحربي,f@brightkiln.com,member",
     ["张伟", "فاطمة الحربي"]),
])
def test_a_name_column_holds_names_in_any_script(csv: str, names: list[str]) -> None:
    assert _of("person_name", csv) == names


@pytest.mark.parametrize(("text", "name"), [
    ("قمت بسحب المبلغ منذ ثلاث ساعات.\nخالد العتيبي\nجوال: قديم", "خالد العتيبي"),
    ("ถอนเงินแล้วขึ้นว่าไม่อยู่ในรายการ\nศิริพร แก้วมณี", "ศิริพร แก้วมณี"),
])
def test_a_name_on_a_line_of_its_own_in_arabic_or_thai(text: str, name: str) -> None:
    assert _of("person_name", text) == [name]


@pytest.mark.parametrize("text", ["ขอบคุณ ครับ\nสวัสดี ค่ะ", "تم التحويل\nشكرا جزيلا"])
def test_a_line_of_thanks_is_no_name(text: str) -> None:
    assert _of("person_name", text) == []


@pytest.mark.parametrize(("text", "handle"), [
    ("account locked after too many password attempts. im tyrone_b", "tyrone_b"),
    ("see the logs\n-- marcus.v", "marcus.v"),
    ("thx, ahmad.k (harbor admin)", "ahmad.k"),
    ("endpoint registry-1.docker.io, credentials user kestrelci + PAT.", "kestrelci"),
    ("Mon identifiant TicketDesk est agence.rivegauche.", "agence.rivegauche"),
])
def test_a_handle_a_writer_signs_or_names_themself_with(text: str, handle: str) -> None:
    assert _of("username", text) == [handle]


@pytest.mark.parametrize("text", ["im v2.1 now, i'm on_call", "thanks, config.yaml attached",
                                  "nataka kutoa pesa kwenda akaunti yangu ya benki"])
def test_words_in_a_handles_place_stay(text: str) -> None:
    assert _of("username", text) == []


def test_a_bank_account_named_in_swahili() -> None:
    assert ("0112948830017", "account_number") in _found("Akaunti yangu ni 0112948830017 Equity Bank.")


def test_a_name_printed_without_its_accents_is_read_only_capitalised() -> None:
    assert _of("person_name", "Tên tài khoản là NGUYEN THI HONG NHUNG.") == ["NGUYEN THI HONG NHUNG"]
    assert _of("person_name", "Kya chal raha hai? the app is slow today") == []


@pytest.mark.parametrize(("texts", "name"), [
    (["mi nombre en el DNI es María José Fernández Ruiz", "en la app puse Majo Fernández porque así me conocen"],
     "Majo Fernández"),
    (["thanks", "-- Fatima Zahra El Amrani, Agence Atlas Voyages, Casablanca"], "Fatima Zahra El Amrani"),
])
def test_a_names_neighbour_found_elsewhere_joins_it(texts: list[str], name: str) -> None:
    results = redact_ticket(texts, speakers=["customer", "agent"], vocabulary=lambda words: set())
    assert name not in results[-1].text and "[person_name]" in results[-1].text
    assert results[-1].text.count("[person_name]") == 1


def test_a_family_name_with_its_ending_after_a_given_name() -> None:
    assert _of("person_name", "The DR registry is managed by Ines Castellano from infra.", "agent") \
        == ["Ines Castellano"]
    assert _of("person_name", "Ask Kevin Support about the invoice") == ["Kevin"]


@pytest.mark.parametrize(("text", "amount"), [
    ("Hello, I was charged the Premium Analytics fee of $14.99 on 1 Dec after I cancelled.", "$14.99"),
    ("the move itself cost me 0.6 ATOM in fees.", "0.6 ATOM"),
])
def test_a_fee_one_was_charged_is_ones_own_amount(text: str, amount: str) -> None:
    assert _of("amount", text) == [amount]


def test_a_fee_stated_as_policy_stays() -> None:
    assert _of("amount", "The fee is $14.99 per month, the minimum is 10 ATOM", "agent") == []


@pytest.mark.parametrize(("text", "speaker", "amount"), [
    ("you charged my mastercard 5168 5005 4949 0502 AUD 89.00 on 2 Feb for an upgrade", "customer", "AUD 89.00"),
    ("Jeg har betalt, siste trekk var kr 249 fra kontoen.", "customer", "kr 249"),
    ("begge gange 395,00 kr. via MobilePay", "customer", "395,00 kr."),
    ("Die letzte Abbuchung über 19,90 € erfolgt am 01.05.2025.", "agent", "19,90 €"),
])
def test_amounts_in_more_shapes(text: str, speaker: str, amount: str) -> None:
    assert amount in _of("amount", text, speaker)


@pytest.mark.parametrize(("text", "speaker", "amounts"), [
    ("I paid 50 USD 20 minutes ago", "customer", ["50 USD"]),
    ("Auszahlungen über 50 € sind kostenlos", "agent", []),
    ("withdrawals between 10 and 20 USDT are free", "agent", []),
    ("The charges are $34.99 on Jan 4 and $34.99 on Feb 4.", "agent", ["$34.99", "$34.99"]),
])
def test_a_code_a_threshold_and_a_range_read_right(text: str, speaker: str, amounts: list[str]) -> None:
    assert _of("amount", text, speaker) == amounts
    assert _of("person_name", text, speaker) == []  # "Jan 4" is a date


@pytest.mark.parametrize(("text", "value"), [
    ("köp på 399,00 kr den 2025-01-28 med kort **** **** **** 0875.", "0875"),
    ("Vi ser betalningen med kortet som slutar på 0875.", "0875"),
    ("2024-10-01,Plus monthly,14.99,GBP,visa_8820,INV-24-118203", "8820"),
    ('"payment_method": {"brand": "mastercard", "last4": "9833"},', "9833"),
])
def test_a_cards_last_four_masked_keyed_or_glued(text: str, value: str) -> None:
    assert value in "".join(_of("card", text))


@pytest.mark.parametrize(("text", "value", "kind"), [
    ("Mutuelle : adhérent n° MGX-77120394", "MGX-77120394", "account_number"),
    ("The line is there twice. Account holder Nnamdi Okafor, CL-UK-00731266.", "CL-UK-00731266", "account_number"),
    ("Does it take Medicare Part B? My Medicare number is 5KW3-TN8-RE42.", "5KW3-TN8-RE42", "national_id"),
    ("IHI: 8003 6082 4417 6390", "8003 6082 4417 6390", "national_id"),
    ("C.I. n. CA48213JK", "CA48213JK", "national_id"),
    ("Fødselsnummer 02089590798, tlf 41 27 66 03", "41 27 66 03", "phone"),
    ("also can I pay with venmo? my handle is @mike-kowalczyk-68", "@mike-kowalczyk-68", "username"),
    ("POST /auth/login 200 user_id=u_48210993 ip=91.64.201.17", "u_48210993", "username"),
    ("I changed my password; the old one was hibernian1875! which I used elsewhere.", "hibernian1875!", "secret"),
    ("Do I need to change the phone-support PIN as well? It's 4471.", "4471", "secret"),
])
def test_more_data_after_their_words(text: str, value: str, kind: str) -> None:
    assert (value, kind) in _found(text)


def test_the_word_for_an_identity_document_is_no_name() -> None:
    assert _of("person_name", "Does CareLoop take Medicare Part B?") == []


def test_a_number_corrected_in_the_reply_is_the_same_datum() -> None:
    results = redact_ticket(["The right one from my card is BPH884210375 (subscriber is my husband).",
                             "The member ID on file was BPH884210357. I've corrected it to BPH884210375."],
                            speakers=["customer", "agent"])
    assert all("BPH8842103" not in r.text for r in results)


@pytest.mark.parametrize(("text", "names"), [
    ("I am her son, محمد الحسيني / Mohammed Al-Husseini, phone below", ["محمد الحسيني", "Mohammed Al-Husseini"]),
    ("Name on card LI JING.", ["LI JING"]),
    ("Mit freundlichen Grüßen\nK.-H. Schäfer-Lindqvist", ["K.-H. Schäfer-Lindqvist"]),
    ("Name on licence: Rhiannon ap Gwilym", ["Rhiannon ap Gwilym"]),
])
def test_names_beside_a_slash_printed_short_with_hyphened_initials_or_welsh_particles(
        text: str, names: list[str]) -> None:
    assert _of("person_name", text) == names
