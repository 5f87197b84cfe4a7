"""Redaction round 13: personal data in documents pasted into tickets (OCR'd fields, letter-spaced
OCR, a passport's machine-readable zone, a CSV export's name column, file names, query
strings), a name written again in another script, and lower-case names an address spells;
the things that only look like them stay."""

from __future__ import annotations

import pytest

from knowledge.answer.redact import find_spans
from knowledge.answer.redact.documents import _collapsed


def _spans(text: str, *, speaker: str | None = "customer", known: tuple[str, ...] = ()) -> list[tuple[str, str]]:
    return [(text[s.start : s.end], s.kind) for s in find_spans(text, speaker=speaker, known_names=known,
                                                                 known_words=set())]


def test_letter_spaced_ocr_is_closed_up_with_a_map_back() -> None:
    closed = _collapsed("N A M E :  D E S H A W N   T .   C O O P E R")
    assert closed is not None
    view, where = closed
    assert view == "NAME: DESHAWN T. COOPER"
    assert len(where) == len(view) and where[view.index("COOPER")] == 33
    assert _collapsed("a b is not spaced text") is None


@pytest.mark.parametrize(("text", "name"), [
    ("N A M E :  D E S H A W N   T .   C O O P E R\nS E R V I C E   A D D R E S S :",
     "D E S H A W N   T .   C O O P E R"),
    ("Cliente: I N E S   M A R I A   C A R V A L H O\nNIF: 234 567 899", "I N E S   M A R I A   C A R V A L H O"),
    ("Név / Name: S Z A B Ó   A N N A   R É K A\nLakóhely: Budapest", "S Z A B Ó   A N N A   R É K A"),
    ("Apellidos / Surname:  ORTEGA RUIZ\nSexo: M", "ORTEGA RUIZ"),
    ("Nom : Lefèvre\nPrénom : Camille", "Lefèvre"),
    # and in Chinese, Japanese and Korean
    ("姓名 王 丽 娟\n性别 女   民族 汉", "王 丽 娟"),
    ("账户名 张伟，邮箱 zhangwei.sz92@163.com。", "张伟"),
    ("氏名：山田 花子\n新住所：大阪", "山田 花子"),
    ("주 민 등 록 증\n이 서 연\n870223 - 2345674", "이 서 연"),
])
def test_a_documents_name_field_is_read_to_its_end_spaced_or_not(text: str, name: str) -> None:
    assert (name, "person_name") in _spans(text)


@pytest.mark.parametrize("text", [
    "Name: nightly-export v2",
    "Name:  BILLING EXPORT",
    "name: robot$ci",
    "Name: ticket.created",
    "Nombre del plan: Pro",
    "姓名：必填",
])
def test_a_field_whose_value_is_no_name_stays(text: str) -> None:
    assert not any(kind == "person_name" for _, kind in _spans(text, speaker="agent"))


def test_the_holders_name_in_a_passports_machine_readable_zone() -> None:
    text = "P<MEXGARCIA<VAZQUEZ<<JUAN<<<<<<<<<<<<<<<<<<<<<<<<<\nG318472654MEX9503021M3109155<<<<<<<<<<<<<<06"
    assert ("GARCIA<VAZQUEZ<<JUAN", "person_name") in _spans(text)
    # a line of filler with a word in it is no zone
    assert _spans("ERROR<<TIMEOUT") == []


def test_the_name_column_of_a_csv_export_by_its_header() -> None:
    text = ("name,email,phone,plan\nLucía Fernández,lucia@correo.example,+34 612 488 903,Enterprise\n"
            "ADEBAYO OGUNLEYE,a.ogunleye@yahoo.example,,Pro")
    spans = _spans(text)
    assert ("ADEBAYO OGUNLEYE", "person_name") in spans and ("Lucía Fernández", "person_name") in spans
    # the plan column and a header of other columns stay
    assert not any(v in ("Pro", "Enterprise") for v, _ in spans)
    assert _spans("queue,status,plan\nBilling,open,Enterprise", speaker="agent") == []


@pytest.mark.parametrize(("text", "name"), [
    ("File: passport_scan_juan_garcia_vazquez.jpg", "juan_garcia_vazquez"),
    ("> Attached: dana_kowalski_dl_front_back.pdf", "dana_kowalski"),
])
def test_a_name_inside_a_file_name(text: str, name: str) -> None:
    assert (name, "person_name") in _spans(text)


@pytest.mark.parametrize("text", ["see fatura_edp_maio.pdf", "upload statement_apr.pdf", "attach front_back_scan.jpg",
                                  "logs in error_report_final.txt"])
def test_a_file_name_of_document_words_stays(text: str) -> None:
    assert not any(kind == "person_name" for _, kind in _spans(text, speaker="agent"))


def test_a_name_and_a_user_name_in_a_query_string() -> None:
    spans = _spans("open https://x.example/verify?name=Ana+Lima&user=alima7&lang=pt")
    assert ("Ana+Lima", "person_name") in spans and ("alima7", "username") in spans
    assert _spans("https://x.example/search?name=export&user=admin", speaker="agent") == []


def test_a_name_written_again_in_another_script_in_brackets() -> None:
    text = "Bonjour, je m'appelle Youssef El Amrani (يوسف العمراني). Ma facture"
    assert _spans(text) == [("Youssef El Amrani", "person_name"), ("يوسف العمراني", "person_name")]
    # brackets after no name stay
    assert _spans("Le fichier (مرفق) est joint.") == []


def test_lower_case_names_an_address_spells_or_beside_a_found_surname() -> None:
    text = "surveys at tom.harwood@btinternet.example even tho i unsubscribed. signed tom harwood"
    assert ("tom harwood", "person_name") in _spans(text)
    sv = "På körkortet står Karl-Johan Lindström men kontot heter kalle lindström."
    assert ("kalle lindström", "person_name") in _spans(sv, known=("Karl-Johan", "Lindström"))
    # a role's mailbox spells no one
    assert _spans("write to support.team@acme.example, the support team answers", speaker="agent") == [
        ("support.team@acme.example", "email")]


def test_a_urls_password_with_a_mark_in_it_is_read_whole_and_the_host_stays() -> None:
    text = ('"password authentication failed". I used:\n'
            'export TD_DATABASE_URL="postgres://td_app:S7u!ppR2mKq9@10.20.4.15:5432/ticketdesk"')
    spans = _spans(text)
    assert ("S7u!ppR2mKq9", "secret") in spans and ("10.20.4.15", "ip_address") in spans


def test_an_amount_after_a_quoted_message_about_a_limit_is_the_customers() -> None:
    text = ('CoinVault says "You have reached your daily limit." I already took out R 95,000 this morning.')
    assert ("R 95,000", "amount") in _spans(text)
    # the limit itself, said by the agent, stays
    assert _spans('It says "Limit reached." The daily limit is R 50,000 per day.', speaker="agent") == []


def test_pay_by_its_period_is_one_amount_and_a_time_after_one_is_none() -> None:
    assert ("£84,000 a year", "amount") in _spans("My salary is £84,000 a year, I can send payslips.")
    assert ("1.2 ETH", "amount") in _spans("Deposit still missing, sent 1.2 ETH an hour ago.")
    assert ("250 quid", "amount") in _spans("And the 250 quid I'll sort via another exchange then.")


def test_an_agents_call_notes_carry_the_callers_amounts() -> None:
    notes = 'Call notes 10:20 CT - inbound\nPosition: 32 ETH in pool "Harbor Lights 1"'
    assert ("32 ETH", "amount") in _spans(notes, speaker="agent")
    # an agent's own answer quoting a figure stays
    assert _spans("A pool opens at a minimum of 32 ETH staked.", speaker="agent") == []


def test_a_chat_logs_staff_named_in_their_speaker_labels_stay() -> None:
    text = ("[14:03] Customer: my withdrawal is stuck\n"
            "[14:06] Agent Priya: Hi, I'm Priya. I can see the request.")
    assert not any(v == "Priya" for v, _ in _spans(text))
    # a customer speaking under their own name is still redacted
    assert ("Kemal", "person_name") in _spans("[09:03:05] Kemal: my name is Kemal Aydın", known=("Kemal",))


def test_a_malay_patronymic_is_read_inside_the_name() -> None:
    text = "Hi, my name Nurul Aisyah binti Rahman, IC no 880215-10-5342."
    assert ("Nurul Aisyah binti Rahman", "person_name") in _spans(text)


def test_an_acronym_after_a_name_ends_it_and_a_name_split_in_two_is_one() -> None:
    assert ("Wong Ka Yan", "person_name") in _spans("how to upgrade?? my name Wong Ka Yan HKID Y903114(4)")
    # "Ka" of a three-word name is known to the ticket, and "Ka" and "Yan" a space apart are one name
    assert ("Ka Yan", "person_name") in _spans("Hi Ka Yan, please don't post your HKID in chat.",
                                               speaker="agent", known=("Wong", "Ka", "Yan"))
    # a surname in capitals stays in the name
    assert ("Jean DUPONT", "person_name") in _spans("my name is Jean DUPONT and I")


def test_a_user_name_built_from_a_found_name_with_its_role_after_it() -> None:
    text = "please reset the password for our dev akhan-dev (Aisha Khan)."
    assert ("akhan-dev", "username") in _spans(text, known=("Aisha", "Khan"))
    assert not any(k == "username" for _, k in _spans("deploy to harbor-dev now", known=("Aisha", "Khan")))


def test_a_japanese_era_date_after_a_spaced_cue_is_a_date_of_birth() -> None:
    text = "個 人 番 号   7082 0091 3240\n生 年 月 日   平成2年 8月 19日"
    assert ("平成2年 8月 19日", "date_of_birth") in _spans(text)
    assert ("昭和63年1月5日", "date_of_birth") in _spans("生年月日：昭和63年1月5日")


def test_an_agents_dash_sign_off_on_the_last_line_of_their_answer_stays() -> None:
    text = "The bill is fine; please upload a full, flat photo. - Rae"
    assert _spans(text, speaker="agent") == []
    # the same words from a customer sign their own name
    assert ("Rae", "person_name") in _spans("I will upload a new photo tonight. - Rae", known=("Rae",))


def test_the_actor_and_the_user_of_an_exported_audit_log() -> None:
    text = ("Audit log export:\n2024-10-21T14:02:11Z,jdoherty,delete,repository,billing/invoice-api\n"
            "2024-10-21T13:55:03Z,admin,create,user,jdoherty\n2024-10-21T13:50:00Z,system,update,project,billing")
    assert _spans(text) == [("jdoherty", "username"), ("jdoherty", "username")]
    # a timestamped row with no action's verb after its second field is no audit row
    assert _spans("2024-10-21T14:02:11Z,billing,queue,42", speaker="agent") == []


def test_a_line_that_is_only_a_name_in_capitals() -> None:
    text = "WELLS  FARGO     Statement period\nINGRID  M  LARSEN\n1587 GRAND AVE\nJUNE SALES\nAEP   OHIO"
    names = [v for v, k in _spans(text) if k == "person_name"]
    assert names == ["INGRID  M  LARSEN"]


@pytest.mark.parametrize("text", ["Schön, dann schließe ich das Ticket. Viele Grüße, Jonas",
                                  "Le retrait a été libéré à 15 h 40. Bonne journée, Camille"])
def test_an_agents_sign_off_after_a_closing_of_two_words_stays(text: str) -> None:
    assert _spans(text, speaker="agent") == []


def test_a_name_after_thanks_in_an_agents_answer_is_still_the_customers() -> None:
    assert ("Derek", "person_name") in _spans("Please check the link. Thanks, Derek", speaker="agent")


def test_a_place_where_a_place_is_written_is_no_name() -> None:
    assert _spans("Live chat: withdrawal stuck under review (Texas)", speaker=None) == []
    assert not any(v == "Gallup" for v, _ in _spans("Account: brent@proton.example (Gallup, NM)"))
    # a given name in brackets is still one
    assert ("Maria", "person_name") in _spans("my sister (Maria) sent it", known=("Maria",))


def test_the_caller_in_an_agents_notes_read_to_a_comma_or_family_name_first() -> None:
    assert ("Beau Thibodeaux", "person_name") in _spans("Caller: Beau Thibodeaux, Evanston IL.", speaker="agent")
    assert ("Smith, John", "person_name") in _spans("Name: Smith, John", speaker="agent")
    assert _spans("Caller: unknown number", speaker="agent") == []


@pytest.mark.parametrize(("text", "speaker"), [
    ("Καλησπέρα. My accountant asks for my staking income statement.", "customer"),
    ("Kia ora. Please never send backup codes to anyone.", "agent"),
    ("Merci. Dann warte ich die Unbonding-Zeit ab.", "customer"),
])
def test_greetings_and_sentence_openers_of_more_languages_are_no_names(text: str, speaker: str) -> None:
    assert not any(k == "person_name" for _, k in find_spans_with_vocabulary(text, speaker))


def find_spans_with_vocabulary(text: str, speaker: str) -> list[tuple[str, str]]:
    # (an empty vocabulary: every capitalised word no corpus knows is asked about, the strictest case)
    return _spans(text, speaker=speaker)


def test_an_agent_opening_with_their_own_name_keeps_it_and_a_customer_does_not() -> None:
    assert not any(v == "Aoife" for v, _ in _spans("Aoife here picking up: your check passed.", speaker="agent"))
    assert ("Aoife", "person_name") in _spans("Aoife here, my withdrawal is stuck", speaker="customer")
