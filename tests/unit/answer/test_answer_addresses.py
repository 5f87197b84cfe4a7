"""Address lines in the form of any country (``addresses._lines`` through ``find_spans``): the
whole line goes, its postcode with it, and what only looks like one stays."""

from __future__ import annotations

import pytest

from knowledge.answer.redact import find_spans


def _streets(text: str) -> list[str]:
    return [text[s.start : s.end] for s in find_spans(text) if s.kind == "street_address"]


@pytest.mark.parametrize(("text", "value"), [
    # Turkish district, avenue and door numbers, a postcode and district/city
    ("faturadaki adres: Bahçelievler Mah. Gazi Bulvarı No: 14/3, 35000 Konak/İzmir",
     "Bahçelievler Mah. Gazi Bulvarı No: 14/3, 35000 Konak/İzmir"),
    # Mexican colonia and C.P. after the street's interior number
    ("va la dirección del recibo: Av. Hidalgo 305 Int. 2, Col. Centro, C.P. 64000, Monterrey, N.L.",
     "Av. Hidalgo 305 Int. 2, Col. Centro, C.P. 64000, Monterrey, N.L."),
    # Philippine block, lot and barangay
    ("Blk 12 Lot 3 Rizal St., Brgy. Santo Niño, Marikina City 1800",
     "Blk 12 Lot 3 Rizal St., Brgy. Santo Niño, Marikina City 1800"),
    # Vietnamese ward and district, no street word of Faker's
    ("địa chỉ mới: 88 Lê Lợi, Phường Bến Thành, Quận 1, TP. Hồ Chí Minh",
     "88 Lê Lợi, Phường Bến Thành, Quận 1, TP. Hồ Chí Minh"),
    # Czech street named by an adjective, after the word for an address, then a spaced postcode
    ("pošlete to na adresu Korunní 810/104, 101 00 Praha 10.", "Korunní 810/104, 101 00 Praha 10"),
    # Hebrew street and flat words, a seven-digit postcode
    ("החשבון על שם הלקוח, רחוב ויצמן 12 דירה 4, כפר סבא 4424112", "רחוב ויצמן 12 דירה 4, כפר סבא 4424112"),
    # an Indian flat, building and road
    ("Regards\nAnand Iyer\nFlat 7C, Green Meadows, 21 Anna Salai, Teynampet, Chennai 600018",
     "Flat 7C, Green Meadows, 21 Anna Salai, Teynampet, Chennai 600018"),
    # Irish, with an Eircode, ending inside the sentence
    ("The address on my account is 7 Bóthar na Mara, Knocknacarra, Galway H91 K2W3 as on the bill.",
     "7 Bóthar na Mara, Knocknacarra, Galway H91 K2W3"),
    # a Québec house number before its comma, a lower-case street word, the province in brackets
    ("Voici l'adresse : 880, rue des Érables, app. 3, Lévis (Québec) G6V 4Z2.",
     "880, rue des Érables, app. 3, Lévis (Québec) G6V 4Z2"),
    # Belgian, Danish, Swedish and Finnish doors and floors; a street word glued on
    ("Nous habitons Rue Royale 150 bte 3, 1000 Bruxelles.", "Rue Royale 150 bte 3, 1000 Bruxelles"),
    ("Venlig hilsen Søren Dahl, Vesterbrogade 41, 3. th., 1620 København V",
     "Vesterbrogade 41, 3. th., 1620 København V"),
    ("Min adress är Storgatan 5 A, lgh 1101, 111 51 Stockholm.", "Storgatan 5 A, lgh 1101, 111 51 Stockholm"),
    ("Terveisin Mikko, Aleksanterinkatu 20 C 14, 00100 Helsinki", "Aleksanterinkatu 20 C 14, 00100 Helsinki"),
    # a Hungarian address: the postcode and town first, floor and door numbers with their stops
    ("Lakcím: 1052 Budapest, Váci utca 12. 2. em. 5.\nTelefon:", "1052 Budapest, Váci utca 12. 2. em. 5."),
    # a named residence and building of Morocco; an Argentine CPA; a Korean building and flat
    ("Adresse: Résidence Les Oliviers, Imm. 2, Appt 9, Bd Zerktouni, 20000 Casablanca",
     "Résidence Les Oliviers, Imm. 2, Appt 9, Bd Zerktouni, 20000 Casablanca"),
    ("Domicilio: Av. Corrientes 1234, Piso 3 Dpto A, C1043AAZ CABA",
     "Av. Corrientes 1234, Piso 3 Dpto A, C1043AAZ CABA"),
    ("서울특별시 강남구 테헤란로 152, 101동 1502호", "서울특별시 강남구 테헤란로 152, 101동 1502호"),
])
def test_an_address_line_of_any_country_is_removed_whole(text: str, value: str) -> None:
    start = text.index(value)
    spans = [(s.start, s.end) for s in find_spans(text) if s.kind == "street_address"]
    assert any(a <= start and start + len(value) <= b for a, b in spans), spans


def test_a_postcode_inside_an_address_is_the_address_not_a_telephone() -> None:
    text = "Av. Paulista, 1578, apto 52 – Bela Vista, São Paulo – SP, CEP 01310-200"
    spans = find_spans(text)
    assert [s.kind for s in spans] == ["street_address"]
    assert text[spans[0].start : spans[0].end].endswith("01310-200")


@pytest.mark.parametrize("text", [
    "We run Harbor 2.10, Trivy 0.50, Redis 7 on Ubuntu 22.04.",
    "Set max_job_workers to 10, GC at 02:00 UTC, keep 5 tags",
    "Error WD-4003, fee 0.1%, limit 10,000 USD per day, Verified Plus tier 2",
    "a withdrawal of 24,000 USDT. Please check",  # thousands are no parts of a line
    "none of my backup codes work: 4821-7730, 9036-1154, 2278-6409.",  # numbers with no word
    "we found it on the explorer (block 61,284,910).",  # an everyday word in Faker's street lists
    "mi fecha es el 12 de marzo de 1985, no el 21.",  # particles and a number
    "تم التحويل 42,000 درهم إلى حسابي، الرقم 7, شكرا",  # a caseless script with no street word
    "Release Notes 12, 2024 Berlin edition",  # a year is no postcode inside a sentence
])
def test_what_only_looks_like_an_address_line_stays(text: str) -> None:
    assert _streets(text) == []


@pytest.mark.parametrize(("text", "value"), [
    # an ID document's number is no postcode's part, and its words no place
    ("Passport no. K8R2M7Q1, Canadian, expires 2031", None),
    # a region's capitals end the sentence: the next one is no part of the address
    ("L'indirizzo è Via Roma 18, 20121 Milano MI. Il mio codice è pronto.", "Via Roma 18, 20121 Milano MI"),
    ("Ny adresse: Vesterbrogade 41, 3. th., 1620 København V. Mit CPR-nr. er klar.",
     "Vesterbrogade 41, 3. th., 1620 København V"),
    # the words of the sentence before the street are no part of it
    ("Mudei para Rua Augusta 1500, 01305-100 São Paulo.", "Rua Augusta 1500, 01305-100 São Paulo"),
])
def test_an_address_line_ends_where_the_place_ends(text: str, value: str | None) -> None:
    assert _streets(text) == ([value] if value else [])
