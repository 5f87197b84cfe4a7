"""Amounts and dates of birth in the ways other locales write them: currencies by the symbols,
codes and names of every locale Faker keeps, figures scaled by a word ("1.2m", "5 lakh", "4
millones de"), grouped as each locale groups them, and dates with the months of every locale
after the words for a birth in many languages; the policy figures an agent quotes stay."""

from __future__ import annotations

import pytest

from knowledge.answer.redact import find_spans
from knowledge.answer.redact.currencies import currency_words, is_currency_word


def _found(text: str, speaker: str | None, kind: str) -> list[str]:
    return [text[s.start : s.end] for s in find_spans(text, speaker=speaker) if s.kind == kind]


@pytest.mark.parametrize("word", ["dollar", "dólares", "долларов", "рублей", "złotych", "ดอลลาร์", "pesos", "درهم",
                                  "دولار", "lira", "forint", "dolarów", "dolarů", "rupias", "đô"])
def test_a_currencys_word_of_any_locale_and_its_inflected_forms(word: str) -> None:
    assert is_currency_word(word)


@pytest.mark.parametrize("word", ["random", "de", "gold", "new", "islands", "south", "sold", "dolphin",
                                  # a longer word that begins with a currency's name: books, French women
                                  "libros", "francesa"])
def test_the_other_words_of_currency_names_and_dictionary_words_are_no_currency(word: str) -> None:
    assert not is_currency_word(word, ordinary=word in ("random", "sold", "dolphin"))


def test_the_currency_words_are_read_from_fakers_locales() -> None:
    words = currency_words()
    # Spanish, Russian, Thai and Greek names of the dollar, none of them in English
    assert {"dólar", "доллар", "ดอลลาร์", "δολάριο"} <= words
    # a country's name, which only one currency's names share, is none
    assert "trinidad" not in words and "australiano" not in words


@pytest.mark.parametrize(("text", "value"), [
    ("I had R 14 500 worth of SOL in the pool", "R 14 500"),  # a symbol in letters, a figure grouped by spaces
    ("Ek het verlede Dinsdag R18 500 se ETH gestaak", "R18 500"),
    ("quiere retirar S/ 7 500 pero le pide un código", "S/ 7 500"),
    ("راتبي الشهري 42,000 درهم وسأحول إلى حسابي", "42,000 درهم"),  # a currency's word in Arabic
    ("حجم تداولي في 30 يوم تقريباً 180,000 دولار.", "180,000 دولار"),
    ("المبلغ المطلوب سحبه تقريباً USD 1.2m على دفعات.", "USD 1.2m"),  # a scale's suffix
    ("solo como 4 millones de pesos ayer por la tarde", "4 millones de pesos"),  # a scale's word and "de"
    ("I earned approx ₹5 lakh in rewards last FY", "₹5 lakh"),
    ("the transfer of Rs 1,23,456 is missing", "Rs 1,23,456"),  # India's grouping
    ("I paid Rs. 2,50,000 today", "Rs. 2,50,000"),  # a currency's full stop ends no sentence
    ("Ich habe 3,5 Mio. € überwiesen", "3,5 Mio. €"),  # a scale's capital is no name
    ("zapłaciłem 2 tys. zł wczoraj", "2 tys. zł"),  # a scale's full stop ends no sentence
    ("I was charged $8,450.00 MXN for the plan", "$8,450.00 MXN"),  # a sign and a code after it
    ("j'ai payé 14 060 $ CA pour le plan", "14 060 $ CA"),  # a dollar and its country
    ("โอนไป 5,000 บาท แล้วครับ", "5,000 บาท"),
    # Thai and Korean space no words: a figure touching its currency and scale
    ("ผมฝาก62,400บาทแล้วครับ", "62,400บาท"),
    ("โอนเงิน 5 ล้านบาท แล้ว", "5 ล้านบาท"),
    ("50만원 입금했는데 안 들어왔어요", "50만원"),
    # a code before the figure and again after it: the first names the asset
    ("saya mau unstake ETH 2,4 ETH tapi statusnya masih Unbonding", "2,4 ETH"),
])
def test_amounts_of_other_locales_are_found_whole(text: str, value: str) -> None:
    assert _found(text, "customer", "amount") == [value]


@pytest.mark.parametrize("text", [
    "Le 12 mars je suis parti",  # a capital before a number: no symbol unless the figure is grouped
    "R 2 is out and so is version 4.2",
    "I invited 5 random people",  # a dictionary word that starts with a currency's word
    "There are 3 new tickets and 2 gold badges",
    "The cluster runs 1.29 EKS across 3 AZ",
    "ต้องการใบสรุปรายได้ staking ปี 2566 ครับ",  # a Thai year before Thai words
    "Le 1 200 premiers clients ont reçu le mail",  # French's article, not the leone's symbol
])
def test_look_alikes_of_amounts_stay(text: str) -> None:
    assert _found(text, "customer", "amount") == []


@pytest.mark.parametrize(("text", "speaker", "values"), [
    # a threshold, in any language, with no personal word before it
    ("Deposits under 0.005 XMR aren't credited automatically.", "agent", []),
    ("Chào chị Trang, khoản nạp dưới 0.005 XMR không được ghi có tự động.", "agent", []),
    ("Qual é a taxa de taker se eu ficar acima de 250.000 USD em 30 dias?", "customer", []),
    # a figure per month in another language, a limit, the whole a figure is part of
    ("Mình giao dịch khoảng 2.000 USD mỗi tháng thôi.", "customer", []),
    ("je paie 14 060 $ CA par mois", "customer", []),
    ("at the rate then it used 6,850 USD of your 10,000 USD Verified limit.", "agent", ["6,850 USD"]),
    ("Available now: 3,150.00 USD of 10,000 USD", "customer", ["3,150.00 USD"]),
    # "and", "to" and "the" before a figure are no threshold nor a whole ("$37 I paid")
    ("I want to move 12.5 LTC to my other wallet and 40,000 DOGE to the next", "customer",
     ["12.5 LTC", "40,000 DOGE"]),
    ("You refunded only $18.50 of the $37 I paid.", "customer", ["$18.50", "$37"]),
    ("Chcę wypłacić ponad 5 000 zł z mojego konta", "customer", ["5 000 zł"]),  # a personal word before
    # a comparison after the figure (Hindi, Japanese, "or more"), also in a sentence naming
    # someone, which Hindi's stop "।" ends
    ("नमस्ते, मेरा नाम राजेश वर्मा है। लेकिन मुझे 100,000 USD से ज़्यादा की दैनिक निकासी सीमा चाहिए।", "customer", []),
    ("出金は10万円以上ですか", "customer", []),
    ("Are withdrawals of 5,000 EUR or more reviewed?", "customer", []),
])
def test_policy_figures_of_any_language_stay_and_ones_own_money_goes(text: str, speaker: str,
                                                                     values: list[str]) -> None:
    assert _found(text, speaker, "amount") == values


@pytest.mark.parametrize(("text", "values"), [
    # Polish, with a cue written without its diacritics' word ("date urodzenia"), two dates
    ("mam zla date urodzenia w profilu jest 1975-02-11 a powinno byc 2 listopada 1975 pesel",
     ["1975-02-11", "2 listopada 1975"]),
    ("Jméno Lenka, datum narození 4. 9. 1991, rodné číslo chybí.", ["4. 9. 1991"]),  # a spaced date
    ("narozena 3. března 1985 v Brně", ["3. března 1985"]),  # a month's name in another case
    ("ผม ธนากร เกิด 12 มี.ค. 2533 ต้องการใบสรุป", ["12 มี.ค. 2533"]),  # Thai: an abbreviation, the Buddhist era
    ("Doğum tarihim 3 Mart 1988, kimlik bilgilerim doğru.", ["3 Mart 1988"]),
    ("дата рождения 5 марта 1990 г., паспорт", ["5 марта 1990"]),
    ("נולדתי ב-12.03.1990 בחיפה", ["12.03.1990"]),
    ("ولدت في 12/03/1990 في القاهرة", ["12/03/1990"]),
    ("Geburt: 4. 9. 1991, Ort Wien", ["4. 9. 1991"]),
    # the months of locales that keep them inside ``month_name``: Indonesian, Hungarian (the
    # year first), Croatian (in another case), Hindi
    ("tanggal lahir saya 12 Maret 1990 ya", ["12 Maret 1990"]),
    ("születési dátum: 1990. március 12.", ["1990. március 12"]),
    ("datum rođenja 12. ožujka 1990, OIB", ["12. ožujka 1990"]),
    ("जन्म तिथि 12 मार्च 1990 है", ["12 मार्च 1990"]),
    ("sinh ngày 12 tháng 3 năm 1990 tại Huế", ["12 tháng 3 năm 1990"]),  # Vietnamese: a month by its number
    ("fecha de nacimiento 12 03 1990 gracias", ["12 03 1990"]),  # spaces alone, as a transcript writes it
])
def test_dates_of_birth_with_every_locales_months_after_cues_in_many_languages(text: str, values: list[str]) -> None:
    assert _found(text, "customer", "date_of_birth") == values


@pytest.mark.parametrize(("text", "values"), [
    # a street's number after a month-like name is no year of birth
    ("Nascido em 07.05.1985, moro na Rua Augusta 1450, apto 82", ["07.05.1985"]),
    ("version 4. 9. 2024 released today", []),  # a spaced date with no cue
    ("I was born 1990-01-01 and the market 2020 crash hurt", ["1990-01-01"]),
    # words for a birth that say something else too: Thai "occurred", Arabic "Christmas",
    # Hebrew "maternity leave"
    ("เกิดข้อผิดพลาดเมื่อ 12/03/2024 ครับ", []),
    ("عيد الميلاد 25/12/2024 كان", []),
    ("חופשת לידה מ-12.03.2024", []),
    ("ผมเกิดวันที่ 12 มีนาคม 2533 ครับ", ["12 มีนาคม 2533"]),  # Thai "born on the date"
])
def test_look_alikes_of_dates_of_birth_stay(text: str, values: list[str]) -> None:
    assert _found(text, "customer", "date_of_birth") == values


def test_the_months_of_every_locale_are_compiled_only_for_a_text_with_a_birth_cue() -> None:
    from knowledge.answer.redact import people

    people._birth_patterns.cache_clear()
    # a date with no cue is no one's birth: the big pattern is not needed
    assert [s.kind for s in find_spans("The 2.4 release shipped on 12 March 2024.")] == []
    assert people._birth_patterns.cache_info().currsize == 0
    spans = find_spans("Mi fecha de nacimiento es 12 de marzo de 1990.")
    assert [s.kind for s in spans] == ["date_of_birth"]
    assert people._birth_patterns.cache_info().currsize == 1
