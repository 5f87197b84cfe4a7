"""Dates of birth in the ways other locales write them: dates with the months of every locale
Faker keeps and spaced figures, after the words for a birth in many languages."""

from __future__ import annotations

import pytest

from knowledge.answer.redact import find_spans


def _found(text: str, speaker: str | None, kind: str) -> list[str]:
    return [text[s.start : s.end] for s in find_spans(text, speaker=speaker) if s.kind == kind]


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
])
def test_dates_of_birth_with_every_locales_months_after_cues_in_many_languages(text: str, values: list[str]) -> None:
    assert _found(text, "customer", "date_of_birth") == values


@pytest.mark.parametrize(("text", "values"), [
    # a street's number after a month-like name is no year of birth
    ("Nascido em 07.05.1985, moro na Rua Augusta 1450, apto 82", ["07.05.1985"]),
    ("version 4. 9. 2024 released today", []),  # a spaced date with no cue
    ("I was born 1990-01-01 and the market 2020 crash hurt", ["1990-01-01"]),
])
def test_look_alikes_of_dates_of_birth_stay(text: str, values: list[str]) -> None:
    assert _found(text, "customer", "date_of_birth") == values
