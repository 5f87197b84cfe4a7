"""Redaction round 15f (blind40-42, each read held out before): data read by the key or column that
names them (JSON requests and webhooks, environment variables, aligned console tables, a bank
statement's lines), identity numbers by their shape or their document's word, account numbers after
more countries' words, a ticket about a birth date, a chat log's reply, a mistyped IBAN beside its
correction, names in capitals with a dictionary word inside; and what stays beside each."""

from __future__ import annotations

import pytest

from knowledge.answer.redact import asked_in, find_spans
from knowledge.answer.tickets import redact_ticket


def _found(text: str, speaker: str | None = "customer") -> list[tuple[str, str]]:
    return [(s.kind, text[s.start : s.end]) for s in find_spans(text, known_words=set(), speaker=speaker)]


def _values(text: str, kind: str, speaker: str | None = "customer") -> list[str]:
    return [value for k, value in _found(text, speaker) if k == kind]


def test_a_bank_statements_figures_are_removed_and_its_other_lines_stay() -> None:
    text = ("Relevé :\n05/09  VIR RECU SCP GIRAUD ET ASSOCIES   + 212 450,00\n"
            "12/09  VIR EMIS COINVAULT EUROPE        -  48 000,00\n"
            "20/06  ΕΞΕΡΧΟΜΕΝΟ ΕΜΒΑΣΜΑ COINVAULT        -62.300,00")
    assert _values(text, "amount") == ["+ 212 450,00", "-  48 000,00", "-62.300,00"]
    # a line that opens on no day, or closes on no figure of cents, is no statement's
    assert _values("Harbor v2.10  fixed 3 bugs  12,00\n12/03 release notes  v2", "amount") == []


def test_json_values_are_read_by_the_key_that_names_them() -> None:
    text = ('{"customerId":"cv_cus_3390114","amount":"2450.00","beneficiary":{"name":"Joost van der Linden"},'
            '"taxId": "283746154", "idDocs":[{"idDocType":"PASSPORT","number":"YA4418273"}],'
            '"addresses":[{"line1":"Via Giuseppe Mazzini 48","line2":"40137 Bologna"}],'
            '"totalRewards": {"ETH": "0.84213", "SOL": "31.7702"}}')
    found = _found(text)
    for kind, value in [("account_number", "cv_cus_3390114"), ("amount", "2450.00"),
                        ("person_name", "Joost van der Linden"), ("national_id", "283746154"),
                        ("national_id", "YA4418273"), ("street_address", "40137 Bologna"),
                        ("amount", "0.84213"), ("amount", "31.7702")]:
        assert (kind, value) in found


def test_an_objects_id_is_an_account_when_its_balances_follow() -> None:
    text = '[{"id":"sub_77120a","label":"mm-eu","balances":{"USDT":"184220.55"}}]'
    assert _found(text) == [("account_number", "sub_77120a"), ("amount", "184220.55")]
    assert _found('{"id":"evt_55120","type":"deposit.confirmed"}') == []


@pytest.mark.parametrize("text", [
    '{"name": "Refund approved", "amount": "all", "number": 4}',
    '{"label": "Release 2.10", "total": "n/a"}',
])
def test_keys_with_values_that_are_no_persons_data_stay(text: str) -> None:
    assert _found(text) == []


def test_an_aligned_console_tables_columns_are_read_by_their_heads() -> None:
    text = ("accountId      stake (ETH)   slashed (ETH)\n"
            "acc_1180234    64.000        0.0625\n"
            "... (41 more)")
    assert _found(text) == [("account_number", "acc_1180234"), ("amount", "64.000"), ("amount", "0.0625")]
    audit = ("timestamp (UTC)       actor           ip                        action\n"
             "2024-06-07 16:45:39   svc-api-import  10.8.0.14                 macro.deleted")
    assert ("username", "svc-api-import") in _found(audit)


def test_a_tables_identity_column_is_read_by_its_head() -> None:
    text = "| Herdeira | NIF | Quota | Valor |\n| Ana Rita Ferreira Lopes | 247183652 | 1/2 | 85.000,00 € |"
    assert ("national_id", "247183652") in _found(text)


def test_users_of_home_directories_and_variables_are_removed_but_the_products_own_stay() -> None:
    assert _values('  File "/home/dkowalski/exporter/run.py", line 44', "username") == ["dkowalski"]
    assert _values('  File "/home/runner/work/app.py", line 4', "username") == []
    results = redact_ticket(["DB_USER=ticketdesk\nTD_API_USER=ops_tunde"],
                            vocabulary=lambda words: {w for w in words if w == "ticketdesk"}, speakers=["customer"])
    assert results[0].text == "DB_USER=ticketdesk\nTD_API_USER=[username]"


def test_a_urls_password_with_no_user_is_a_secret() -> None:
    assert _values("TD_REDIS_URL=redis://:r3d1s-Hq77-pass@10.20.4.16:6379/0", "secret") == ["r3d1s-Hq77-pass"]


@pytest.mark.parametrize(("text", "value"), [
    ("Αριθμός ταυτότητας ΑΚ 284193. Μπορείτε;", "ΑΚ 284193"),
    ("o número do documento no formulário, 14829375 4 ZX7, não corresponde", "14829375 4 ZX7"),
    ("main PAN bhej deta hu BQMPM4821K", "BQMPM4821K"),
    ("nach Ihrem Personalausweis (Dokumentnummer T22M0P81N2) korrigiert", "T22M0P81N2"),
    ("of het nummer op mijn ID-kaart IXR4K71P2?", "IXR4K71P2"),
    ("NIDA: 19870312-14107-00001-22", "19870312-14107-00001-22"),
    ("titular Armando Macuácua, BI 110102847361B", "110102847361B"),
])
def test_identity_numbers_by_their_shape_or_their_documents_word(text: str, value: str) -> None:
    assert value in _values(text, "national_id")


@pytest.mark.parametrize("text", [
    "Harbor v2.10 upgrade document number of pages 12",
    "our BI dashboard shows 2024 revenue",
])
def test_a_documents_word_before_no_number_of_its_shape_removes_nothing(text: str) -> None:
    assert _values(text, "national_id") == []


@pytest.mark.parametrize(("text", "value"), [
    ("VA nya 3901081298765432", "3901081298765432"),
    ("ya. mi CCI 00219400372948105193, titular", "00219400372948105193"),
    ("em rút về tk Vietcombank 1023847561 nhưng", "1023847561"),
    ("conta BCI NIB 0008 0000 4729 1834 101 13. titular", "0008 0000 4729 1834 101 13"),
    ("cta cte 0-000-71-84526-3", "0-000-71-84526-3"),
    ("customer CV-0043127 withdrew 0.45 BTC", "CV-0043127"),
])
def test_account_numbers_after_more_countries_words(text: str, value: str) -> None:
    assert value in _values(text, "account_number")
    assert _values("va a 2000000 personas", "account_number") == []


@pytest.mark.parametrize(("text", "value"), [
    ("ho comprato ETH con la Visa che finisce con 0934 e mi", "0934"),
    ("Sonu 0534 olan kartla yapılan işlem", "0534"),
])
def test_a_cards_last_digits_after_italian_and_turkish_words(text: str, value: str) -> None:
    assert _values(text, "card") == [value]


def test_a_upi_handles_digits_are_no_telephone() -> None:
    assert _found("mera khud ka UPI 9810427735@ybl hai") == [("username", "9810427735@ybl")]


@pytest.mark.parametrize(("text", "address"), [
    ("he moved to Nieuwe Binnenweg 61A, 3014 GB Rotterdam in january, we", "Nieuwe Binnenweg 61A, 3014 GB Rotterdam"),
    ("Cím:\nAndrássy út 52. II/4\n1062 Budapest\nköszönöm", "Andrássy út 52. II/4\n1062 Budapest"),
    ("alamat:\nJl. Bangka Raya No. 48, RT 006/RW 003\nKel. Pela Mampang, Kec. Mampang Prapatan\nJakarta Selatan 12720",
     "Jl. Bangka Raya No. 48, RT 006/RW 003\nKel. Pela Mampang, Kec. Mampang Prapatan\nJakarta Selatan 12720"),
    ("Yeni adres:\nAtatürk Mah. Gazi Bulvarı No: 77/4\n35210 Konak/İzmir\n",
     "Atatürk Mah. Gazi Bulvarı No: 77/4\n35210 Konak/İzmir"),
])
def test_streets_and_the_lines_under_them(text: str, address: str) -> None:
    assert _values(text, "street_address") == [address]


@pytest.mark.parametrize(("text", "date"), [
    ("Kovács Eszter (szül. 1979. 06. 22., adóazonosító jel: 8410794012)", "1979. 06. 22."),
    ("nar. 23. 11. 1979, r. č. 796123/5568", "23. 11. 1979"),
])
def test_hungarian_and_czech_words_for_born(text: str, date: str) -> None:
    assert _values(text, "date_of_birth") == [date]


def test_a_ticket_whose_title_speaks_of_a_birth_date_reads_the_customers_dates_as_birth_dates() -> None:
    texts = ["Geburtsdatum falsch eingetragen",
             "bei euch steht 12.07.1995, richtig ist 21.07.1995.",
             "Danke, bitte am 03.12.2026 erneut versuchen."]
    assert asked_in(texts, [None, "customer", "agent"])[1] == frozenset({"date_of_birth"})
    results = redact_ticket(texts, speakers=[None, "customer", "agent"])
    assert results[1].text == "bei euch steht [date_of_birth], richtig ist [date_of_birth]."
    assert results[2].text == texts[2]  # the agent's date is an appointment's
    # a title of no birth date leaves a customer's dates alone
    other = redact_ticket(["Auszahlung verspätet", "seit 12.07.1995 Kunde"], speakers=[None, "customer"])
    assert other[1].text == "seit 12.07.1995 Kunde"


def test_a_chat_logs_reply_to_a_question_of_a_user_name_is_the_user_name() -> None:
    results = redact_ticket(["[10:02] agente: bom dia, pode indicar o seu nome de utilizador?",
                             "[10:03] cliente: tiago.m.nunes"], speakers=["agent", "customer"])
    assert results[1].text == "[10:03] cliente: [username]"


def test_a_mistyped_iban_beside_its_correction_is_removed_too() -> None:
    text = ("ik heb een opname aangevraagd naar NL21 ABNA 3329 0599 07 maar de laatste twee cijfers zijn "
            "omgedraaid, moet zijn NL21 ABNA 3329 0599 70.")
    assert _values(text, "iban") == ["NL21 ABNA 3329 0599 07", "NL21 ABNA 3329 0599 70"]


def test_names_in_capitals_with_a_dictionary_word_between_and_a_family_name_of_two_words() -> None:
    assert _values('a VPA registered to "SHARMA ANIL KUMAR" — is that', "person_name", "agent") == [
        "SHARMA ANIL KUMAR"]
    assert _values("PLEASE HELP ME NOW", "person_name") == []
    text = "main Vikram Chauhan bol raha hoon, mere papa Rajendra Singh Chauhan ka account hai"
    found = find_spans(text, known_words=set(), speaker="customer", known_names={"vikram", "chauhan"})
    assert [text[s.start : s.end] for s in found] == ["Vikram Chauhan", "Rajendra Singh Chauhan"]


# -- round 15g (blind44, read held out first at 1899459) ---------------------------------------


def test_the_names_agents_sign_with_stay_wherever_they_stand_alone() -> None:
    texts = ["KYB onboarding", "Please find the owners below.\nKind regards\nAnna Keller",
             "Good afternoon,\nthank you, the declaration is complete.\nBest regards,\nLukas\nInstitutional Desk",
             "Hi Lukas, confirmed. Anna", "Hi Anna, all saved.\n— Mei"]
    results = redact_ticket(texts, speakers=[None, "customer", "agent", "customer", "agent"])
    assert results[2].text.endswith("Best regards,\nLukas\nInstitutional Desk")
    assert results[3].text == "Hi Lukas, confirmed. [person_name]"
    assert results[4].text == "Hi [person_name], all saved.\n— Mei"


def test_a_swift_messages_amount_field_is_an_amount() -> None:
    assert _values(":20:HELV250513-0042\n:32A:250514EUR4750000,00\n:71A:OUR", "amount") == ["EUR4750000,00"]


def test_a_transactions_reference_between_it_and_its_amount_keeps_it_the_customers() -> None:
    text = "your withdrawal WD-882913 of 1,200,000 USDT goes to a wallet hosted elsewhere"
    assert _values(text, "amount", "agent") == ["1,200,000 USDT"]
    assert _values("6,850 USD of your 10,000 USD limit", "amount", "agent") == ["6,850 USD"]


def test_a_sentence_with_commas_is_no_tables_head() -> None:
    text = "Account on file: DBS Bank, account no. 072-941583-2, name X.\nAmount was SGD 1,020,000.00."
    assert _found(text) == [("account_number", "072-941583-2"), ("amount", "SGD 1,020,000.00")]


@pytest.mark.parametrize(("text", "kind", "value"), [
    ("account at Kestrel Exchange no. KX-88120457", "account_number", "KX-88120457"),
    ("née le 11 mars 1980, matricule 1980031124578, domiciliée", "national_id", "1980031124578"),
    ("home address (41 Conch Point Road, West Bay KY1-1201).", "street_address",
     "41 Conch Point Road, West Bay KY1-1201"),
    ("--\nDana Whitfield | COO\n1 Vanderbilt Avenue, 38th Floor\nNew York, NY 10017\no: +1 212 555 0188",
     "street_address", "1 Vanderbilt Avenue, 38th Floor\nNew York, NY 10017"),
])
def test_round_15g_shapes(text: str, kind: str, value: str) -> None:
    assert value in _values(text, kind)


def test_a_japanese_family_name_takes_the_given_name_after_it_before_desu_but_no_honorific() -> None:
    def names(text: str) -> list[str]:
        return [text[s.start : s.end] for s in find_spans(text, known_words=set(), known_names={"佐藤"})]

    assert names("合同会社さくらノードの佐藤美咲です。2024年分の報酬") == ["佐藤美咲"]
    assert names("佐藤様、ありがとうございます") == ["佐藤"]


# -- round 15h (blind43 read at 1899459, blind45 at 6b289af, each held out first) ------------


@pytest.mark.parametrize(("text", "known", "value"), [
    ("a payment from T ASHWORTH arrived", {"Ashworth"}, "T ASHWORTH"),
    ('only "A BRENNAN" as the sender', {"Brennan"}, "A BRENNAN"),
    ("a W-9 received for Tamika L Johnson, status", set(), "Tamika L Johnson"),
    ("it is in both names, Ciarán & Aoife Brennan) and", set(), "Ciarán"),
    ("Client : Gérard Vasseur, V-A-S-S-E-U-R", set(), "V-A-S-S-E-U-R"),
    ("담당자 정해린 / 02-6012-4477", set(), "정해린"),
    ("다른 사용자 cn=오승우 uid=swoh 도 같은 증상입니다.", set(), "오승우"),
])
def test_names_with_their_initials_accents_spellings_and_caseless_cues(text: str, known: set[str], value: str) -> None:
    found = find_spans(text, known_words=set(), speaker="customer", known_names=known)
    assert value in [text[s.start : s.end] for s in found if s.kind == "person_name"]


def test_an_article_before_a_capitalised_name_is_no_initial() -> None:
    text = "A Johnson account was opened"
    assert "A Johnson" not in [text[s.start : s.end] for s in find_spans(text, known_names={"Johnson"})]


def test_a_driving_licence_read_out_field_by_field() -> None:
    text = ("here is everything on it typed out:\n1. HARGREAVES\n2. DANIEL JAMES\n3. 04.09.1986 UNITED KINGDOM\n"
            "4a. 12.03.2019  4b. 11.03.2029  4c. DVLA\n5. HARGR809046DJ9AB\n8. 27 ASHDOWN ROAD\nREADING RG30 2NY")
    found = _found(text)
    for item in [("person_name", "HARGREAVES"), ("person_name", "DANIEL JAMES"), ("date_of_birth", "04.09.1986"),
                 ("national_id", "HARGR809046DJ9AB"), ("street_address", "27 ASHDOWN ROAD\nREADING RG30 2NY")]:
        assert item in found
    # numbered steps of an answer are no licence's fields
    assert _found("1. Open Settings\n2. Tap Security\n3. 04.09.2026 is the deadline") == []


@pytest.mark.parametrize(("text", "kind", "value"), [
    ("CoinVault     -£200.00   Visa ••4471   Pending", "card", "••4471"),
    ("PCN 4827-1093-6652-0814. ano po gagawin?", "national_id", "4827-1093-6652-0814"),
    ("Son numéro de sécu apparaît aussi : 2 89 07 75 112 044 19", "national_id", "2 89 07 75 112 044 19"),
    ("771203,Hendrik de Waal,hendrik.dewaal@@ziggo.nl,\"x\"", "email", "hendrik.dewaal@@ziggo.nl"),
    ("email,wallet,compensation\nyuki.t@gmail.com,0xbaf1badcf50a42ce1c8d590dbd8dbe3d7beef3bd,0.0412 ETH",
     "amount", "0.0412 ETH"),
    ('how do i change my vault nickname. it\'s currently "moonboi_420" and it shows', "username", "moonboi_420"),
    ("MR S NDLOVU\n14 PROTEA CRESCENT BRYANSTON\nSANDTON 2191\nthanks", "street_address",
     "14 PROTEA CRESCENT BRYANSTON\nSANDTON 2191"),
])
def test_round_15h_shapes(text: str, kind: str, value: str) -> None:
    assert value in _values(text, kind)


@pytest.mark.parametrize("text", ["WE HAVE 3 NEW USERS ST", 'my nickname is shown as "Display name" in the app',
                                  "I said A-B-C three times"])
def test_shapes_beside_round_15h_that_stay(text: str) -> None:
    assert _found(text) == []


# -- round 15i (blind48, read held out first at a6c4d33) ---------------------------------------


@pytest.mark.parametrize(("text", "kind", "value"), [
    ("did someone get into my account?? my UID is 30418826", "account_number", "30418826"),
    ("repo was github.com/kodaiwalsh/grid-bot (private now)", "username", "kodaiwalsh"),
    ("> I know sunflower1987 is your password. I installed malware", "secret", "sunflower1987"),
    ("kartın son 4 hanesi 2981. ben böyle bir alım yapmadım", "card", "2981"),
    ("| UID | name | IBAN |\n| 83011274 | Lukas Baier | DE10 3704 0044 0532 0194 66 |", "account_number", "83011274"),
])
def test_round_15i_shapes(text: str, kind: str, value: str) -> None:
    assert value in _values(text, kind)


def test_figures_listed_before_an_amount_share_its_currency() -> None:
    text = "There are 3 charges on my Visa I never made: 249.00, 499.00 and 999.00 EUR on 14 April."
    assert _values(text, "amount") == ["249.00", "499.00", "999.00 EUR"]


def test_a_uid_in_lower_case_and_a_products_own_repository_stay() -> None:
    assert _values("ldap filter uid=12345678 is wrong", "account_number") == []
    results = redact_ticket(["see github.com/coinvault/sdk for docs"],
                            vocabulary=lambda words: {w for w in words if w == "coinvault"}, speakers=["agent"])
    assert results[0].text == "see github.com/coinvault/sdk for docs"
