"""Amounts of money: a number with a currency (symbol, code or word), written in words, or
bare after a word for a balance or a payment; a policy figure (a limit, a fee, a threshold) is
no one's; amounts named with a person's name, and the money columns of a table."""

from __future__ import annotations

import bisect
import functools
import re
from collections.abc import Iterator, Sequence

from .. import name_lexicon
from .currencies import SCALE, SCALE_ABBREVIATIONS, currency_words, is_currency_word, symbols
from .spans import Span
from .users import _system_account
from .words import _ordinary

_CURRENCY_WORDS = (r"dollars?|euros?|pounds?|bucks|quid|reais|real|pesos?|rupees?|yen|yuan|rmb|won|francs?|"
                   r"zlotys?|złotych|złote|kroner|kronor|kronur|lira|liras|rand|naira|shillings?|dirhams?|ringgit|"
                   r"baht|dong|rubles?|roubles?|hryvnias?|sats|satoshis?|gwei|cents?")
#: a number as the locales write one: "1,250.00", "1.249,90", "2 340,00", "1'200.50", "0.185",
#: and India's lakhs and crores ("1,23,456")
_NUMBER = r"(?:\d{1,2}(?:,\d{2})+,\d{3}|\d{1,3}(?:[.,'\u00a0\u202f ]\d{3})+|\d+)(?:[.,]\d+)?"
_SYMBOLS = "$€£¥₹₩₽₺₪₫₱฿₴₦"
#: a word character of a script that writes no spaces: a number or a code may touch it ("金额是500 USDT。")
#: (and of Thai, whose words are not spaced either: "ฝาก62,400บาท")
_CJK = "\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\u0e00-\u0e7f"
_NOT_BEFORE = rf"(?<![^\W{_CJK}])(?<![.,])"
_NOT_AFTER = rf"(?![^\W{_CJK}])"
#: a word after a number that may name its currency: letters of any script that spaces its
#: words, with the marks Thai, Bengali and Arabic write inside a word ("دولار", "ดอลลาร์");
#: Chinese and Japanese may follow a code unspaced ("0.3 BTCを")
_UNIT_WORD = (rf"[^\W\d_{_CJK}](?:[^\W\d_{_CJK}]|[\u0300-\u036f\u0981-\u09fe\u0e31-\u0e4e\u064b-\u065f])"
              r"{1,13}")


@functools.cache
def _amount_pattern() -> re.Pattern[str]:
    """The shapes of an amount, with the currency symbols and codes of Faker's lists (read on
    first use) and the words that scale a figure ("1.2m", "5 lakh", "4 millones de")."""
    signs, letters = symbols()
    single = "".join(sorted({c for c in signs if len(c) == 1} | set(_SYMBOLS)))
    several = "|".join(re.escape(c) for c in sorted((c for c in signs if len(c) > 1), key=len, reverse=True))
    codes = sorted(name_lexicon.currency_codes())
    iso = "|".join(c.upper() for c in codes if len(c) == 3)
    # "14 060 $ CA", "$US": the country of a dollar, by its code's first two letters
    dollar_lands = "|".join(sorted({c[:2].upper() for c in codes if len(c) == 3 and c.endswith("d")}))
    letter_symbols = "|".join(re.escape(c) for c in sorted(letters, key=len, reverse=True))
    scale = SCALE
    # the currency words of scripts that write no spaces, which no word's end closes ("บาท")
    unspaced = "|".join(re.escape(w) for w in sorted(currency_words(), key=len, reverse=True)
                        if re.match(r"[\u0e00-\u0e7f]", w))
    sign_after = (rf"(?:[{single}](?:[ \u00a0]?(?:{dollar_lands})(?![^\W\d_]))?|{several}|{unspaced}|zł|Kč|kr\.?|Ft|"
                  r"lei|грн|гривень|гривні|гривня|гривен|рублей|рубля|рублів|руб|лв|тг|тенге|сом|сум|₾|₸|원|円|元|块|圓|"
                  r"ドル|美元|欧元)")
    return re.compile(
        # "~850 ATOM", "≈ €40": the sign of an approximate amount goes with it
        rf"(?:[~≈][ \t]?)?"
        # a sign before the number, a scale and a code after it ("₹5 lakh", "$8,450.00 MXN")
        rf"(?:-?(?<![A-Za-z])(?:[A-Z]{{1,3}})?[{single}]\s?"
        # (its figure grouped by spaces too: "€5 000", "S/ 7 500")
        r"(?:\d{1,3}(?:[\u00a0\u202f ]\d{3})+(?![\d,.]\d)(?:[.,]\d+)?|\d[\d,.]*(?<=\d))"
        rf"(?:\s?{scale})?(?:[ \t\u00a0](?:{iso})(?![^\W\d_]))?"
        rf"|{_NOT_BEFORE}-?{_NUMBER}\s?(?:[万萬億亿千만억천]\s?|{scale}[ \t\u00a0]?)?{sign_after}"
        rf"{_NOT_AFTER}"
        rf"|\b(?:Rs\.?|INR)\s?\d[\d,]*(?:\.\d+)?(?:\s?{scale})?"
        # a number and a unit after it: a currency's code, a coin's ticker or a currency's word
        # (``_money_unit`` decides which units are money), a scale between them ("4 millones de pesos",
        # "42 ألف درهم") (a range before it: "5k-6k DOT", "2–3 ETH")
        rf"|{_NOT_BEFORE}(?:{_NUMBER}[kKmM]?[ \t]?[-–][ \t]?)?-?{_NUMBER}"
        rf"(?:[ \t\u00a0]?{scale}(?:[ \t]+(?:de|of|di|do|da)(?=[ \t]))?)?"
        rf"(?P<gap>[ \t\u00a0\u202f]?)(?P<unit>{_UNIT_WORD})"
        rf"{_NOT_AFTER}"
        # a code before the number ("USD 250", "EUR 1.200,50", "KSh 3,000", "USD 1.2m"), unless the
        # same code follows it too: then the code before is the asset named ("unstake ETH 2,4 ETH")
        r"|(?<![\w])(?P<code>[A-Z]{3,5}|KSh|Ksh|RM|Rp|kr|Kr)\.?[ \t\u00a0]?(?>\d(?:[\d,.'\u00a0\u202f ]*\d)?)(?![\d])"
        rf"(?:[ \t\u00a0]?{scale})?(?![ \t\u00a0]+(?P=code)(?![^\W\d_]))"
        # a symbol in letters before the number ("R 14 500", "S/ 7 500", "Kz 25.000,00"):
        # ``_amount_matches`` asks a number grouped in thousands of all but "S/", "B/"
        rf"|(?<![\w/.])(?P<letters>{letter_symbols})[ \t\u00a0]?(?P<figure>{_NUMBER})(?![\d])"
        rf"(?:[ \t\u00a0]?{scale})?"
        r")"
    )


#: capital units and words that follow a number and are no money ("16 GB", "9 AM", "404 NOT FOUND")
_NOT_MONEY = frozenset((
    "kb", "mb", "gb", "tb", "pb", "kib", "mib", "gib", "tib", "bps", "kbps", "mbps", "gbps", "ms", "ns", "hz",
    "khz", "mhz", "ghz", "dpi", "ppi", "fps", "rpm", "kw", "kwh", "mw", "mwh", "am", "pm", "utc", "gmt", "cet",
    "cest", "est", "edt", "pst", "pdt", "cst", "cdt", "mst", "mdt", "ist", "bst", "jst", "kst", "aest", "hkt",
    "sgt", "msk", "wat", "eat", "sast", "hrs", "hr", "min", "mins", "sec", "secs", "px", "pt", "em", "rem", "cm",
    "mm", "km", "kg", "lb", "lbs", "oz", "ml", "gpu", "cpu", "cpus", "vcpu", "ram", "ssd", "hdd", "tps", "rps",
    "qps", "otp", "sms", "api", "ip", "ips", "mah", "fa", "st", "nd", "rd", "th", "not", "and", "or", "the",
    "for", "to", "of", "in", "on", "at", "is", "it", "error", "errors", "ok", "id", "ids", "no", "yes", "days",
    "hours", "usb", "hdmi", "pin", "pins", "pcs", "qty", "mp", "hd", "uhd", "fhd", "tls", "ssl", "http", "https",
    "tcp", "udp", "dns", "vpn", "ssh", "nft", "nfts", "dpa", "gdpr", "kyc", "aml", "faq", "eta", "sla",
))


#: codes that are English words too, which an all-capitals writer puts before a number ("TRY 3
#: TIMES", "TOP 10", "APT 4"): before a number they are no currency
_CODE_WORDS = frozenset(("all", "top", "apt", "try", "cup", "pot", "amp", "imp", "mad", "near", "link", "dash",
                         "burst", "tit", "rub", "bam", "pol", "ton", "neo", "koi", "yer", "gip", "lak", "sol",
                         "dot", "atom", "iota", "doge", "pen", "op", "arb", "sui"))


def _money_unit(unit: str, glued: bool) -> bool:
    """A unit after a number that names money: a currency's ISO 4217 code or a coin's ticker
    (Faker's lists), any other code of two to five capitals written apart from the number
    ("12,400 ATOM", "420 SOL"; the tickers of new coins are on no list), a currency's word in
    any language Faker names currencies in ("200 dollars", "180,000 دولار", "4 millones de
    pesos"), or a listed code in lower case ("0.5 btc")."""
    low = unit.lower()
    if low in _NOT_MONEY:
        return False
    if _currency_word(unit):
        return True
    codes = name_lexicon.currency_codes()
    if unit.isupper():
        return low in codes or (not glued and 2 <= len(unit) <= 5)
    return unit.islower() and low in codes and len(low) >= 3 and (not _ordinary(low) or low in ("sol",))


def _currency_word(unit: str) -> bool:
    """A currency's word ("dollars", "zł", "dólares", "درهم"): no code, a word of its own."""
    low = unit.lower()
    # (and the rupee's short form after a figure in any case: "25,000 rs", "500 Rs")
    return (re.fullmatch(_CURRENCY_WORDS, low) is not None or unit in ("TL", "zł") or low in ("rs", "rs.")
            or is_currency_word(low, ordinary=_ordinary(low)))


#: a number grouped in thousands ("14 500", "7.500", "1,23,456"): after a symbol in letters,
#: which a plain number after a capital ("R 2", "Le 12 mars") is not
_GROUPED = re.compile(r"(?:\d{1,2}(?:,\d{2})+,\d{3}|\d{1,3}(?:[.,'\u00a0\u202f ]\d{3})+)(?:[.,]\d{1,2})?")


def _amount_matches(text: str) -> Iterator[re.Match[str]]:
    pattern, pos = _amount_pattern(), 0
    while (m := pattern.search(text, pos)) is not None:
        pos = m.end()
        unit = m.group("unit")
        if (unit is not None and re.fullmatch(r"[A-Z]{3}", unit) and re.match(r"[ \t\u00a0]?\d", text[m.end() :])
                and (re.search(r"\d[ -]\Z", text[max(0, m.start() - 2) : m.start()])
                     or re.match(r"[ \t\u00a0]?\d[\d,.]*[.,]\d{2}(?!\d)", text[m.end() :]))):
            # a number's last group before a code that opens the next amount ("card 5168 … 0502 AUD
            # 89.00"): the code goes with the figure after it
            pos = m.start("unit")
            continue
        if unit is not None and not _money_unit(unit, glued=not m.group("gap")):
            continue
        if re.search(r"\d:\Z", text[max(0, m.start() - 2) : m.start()]):
            continue  # the minutes of a time and its zone ("at 14:22 PKT")
        code = m.group("code")
        if code is not None and code not in ("KSh", "Ksh", "RM", "Rp", "kr", "Kr") and (
                code.lower() not in name_lexicon.currency_codes() or code.lower() in _CODE_WORDS):
            continue
        letters = m.group("letters")
        if letters is not None and "/" not in letters and not _GROUPED.fullmatch(m.group("figure")):
            continue
        yield m


#: a threshold's words before an amount said to someone ("deposits over $250")
_COMPARED = (
    r"\b(?:over|under|pass|passes|"
    # the same in the languages tickets come in ("acima de 250.000 USD", "dưới 0.005 XMR", "unter 50 €")
    r"acima\s+de|abaixo\s+de|mais\s+de|menos\s+de|más\s+de|por\s+encima\s+de|por\s+debajo\s+de|"
    r"unter|über|oberhalb\s+von|au-dessus\s+de|en\s+dessous\s+de|plus\s+de|moins\s+de|oltre|sopra|sotto|"
    r"boven|onder|powyżej|poniżej|ponad|dưới|trên|vượt|vượt\s+quá|di\s+atas|di\s+bawah|lebih\s+dari|"
    r"kurang\s+dari|свыше|более|менее|больше|меньше|понад|менше)\s*\Z"
    # and where words are not spaced or are read right to left ("أقل من", "超过", "未満")
    r"|(?:أقل\s+من|أكثر\s+من|فوق|تحت|מעל|מתחת\s+ל|超过|低于|以上|以下|未満|초과|미만|ต่ำกว่า|เกิน)\s*\Z")
#: a figure compared with: a threshold, no one's ("Deposits under 0.005 XMR aren't credited")
_COMPARED_TO = re.compile(_COMPARED, re.IGNORECASE)
#: ("and", "or", "to" only after a figure, as a range's second end: "between 10 and 20", "50 to 100";
#: "the transfer was released and PHP 30,140.00 is now …" is one's own sum)
_THRESHOLD = re.compile(rf"(?i)\b(?:from|starting\s+at|between)\s*\Z|\bbetween\s+[^.!?\n]{{1,30}}\s+and\s*\Z|"
                        rf"\d[\d.,]*\s*(?:[a-z]{{3}}|[$€£¥])?\s+(?:or|to)\s*\Z|{_COMPARED}")


#: "über" after a payment's word names the payment's sum, no threshold ("die Rechnung TD-INV-2026-1183
#: über 1.249,00 €", "Zahlung über 80 €")
_SUM_OF_A_PAYMENT = re.compile(r"(?i)\b(?:rechnung|zahlung|überweisung|gutschrift|erstattung|lastschrift|betrag|"
                               r"abbuchung|belastung)\b"
                               r"[^.!?\n]{0,30}\büber\s*\Z")


def _named_amounts(text: str, people: Sequence[Span]) -> Iterator[Span]:
    """An amount in a sentence that names a person ("Customer Hannah Kleinschmidt is waiting on
    310 XMR"): that person's money, unless it reads as a policy figure."""
    starts = sorted(p.start for p in people)
    if not starts:
        return
    for sentence in _SENTENCE.finditer(text):
        i = bisect.bisect_left(starts, sentence.start())
        if i == len(starts) or starts[i] >= sentence.end():
            continue
        body, offset = sentence.group(), sentence.start()
        for m in _amount_matches(body):
            near_before = " ".join(body[max(0, m.start() - 80) : m.start()].split()[-5:])
            after = body[m.end() : m.end() + 40]
            if (_POLICY.search(near_before) or _THRESHOLD.search(near_before[-24:])
                    or _PER_PERIOD.match(after) or _COMPARED_AFTER.match(after) or _LIMIT_AFTER.match(after)):
                continue  # "Hi Daniel, the bonus applies to deposits over $250 only"
            yield Span(offset + m.start(), offset + m.end(), "amount")


def _has_amount(text: str) -> bool:
    return next(_amount_matches(text), None) is not None


_PERSONAL = re.compile(
    r"(?i)\b(?:my|mine|your|yours|i|i'm|i've|i'd|me|balance|balances|wallet|deposited|withdrew|withdrawn|sent|"
    r"received|lost|refund|refunded|owe|owed|credited|debited|missing|stolen|transferred|"
    # the same in the languages tickets most often come in
    r"j'ai|mon|ma|mes|payé|solde|versé|mein|meine|ich|habe|guthaben|kontostand|überwiesen|bezahlt|mi|mis|"
    r"pagué|saldo|meu|minha|paguei|mio|mia|pagato|mijn|betaald|mój|moje|zapłaciłem|zapłaciłam|tenía|tenia|"
    r"mera|meri|mere|maine|mujhe|mera|benim|hesabım|bakiyem|tengo|tinha|avevo|hatte|"
    r"kartımdan|kartımda|kartıma|hesabımdan|hesabıma|bana|számlámon|számlámról|számlámra|kártyámról|kártyámon|"
    r"egyenlegem|nekem|moje|mojej|mojego|mého|mém|moji|"
    # charged, billed or paid back: one customer's money ("fui cobrado", "proszę o zwrot")
    r"charged|billed|overcharged|cobrado|cobrada|cobraram|cobraron|cargado|cargaron|abgebucht|belastet|prélevé|"
    r"débité|addebitato|addebitati|pobrano|obciążono|afgeschreven|çekildi|списали|zwrot|zwrotu|remboursement|"
    r"reembolso|rimborso|rückerstattung|erstattung|terugbetaling|iade|возврат|"
    # the first person's payments in the languages above ("ödedim", "envié", "wysłałem")
    r"ödedim|gönderdim|yatırdım|çektim|envié|deposité|transferí|retiré|envoyé|gezahlt|eingezahlt|abgehoben|"
    r"inviato|versato|prelevato|depositato|trasferito|ricevuto|enviei|depositei|transferi|saquei|wpłaciłem|wpłaciłam|wysłałem|wysłałam|"
    r"przelałem|przelałam|tôi|mình|số\s+dư|"
    # someone else's money, their stake, what one needs to move ("his 0.9 BTC", "Staked 120 DOT",
    # "need to move 0.42 BTC", "vous m'avez facturé 0,08 ETH")
    r"his|her|their|our|staked|restaked|unstaked|bonded|delegated|need|needed|facturé|facturée|facturado|"
    r"facturada|fatturato|fatturati|berechnet|m'avez|me\s+han|mi\s+avete|mir|uns|brauche|benötige|necesito|"
    r"necesitamos|preciso|precisamos|bisogno|besoin|ik|gestort|overgemaakt|opgenomen|gestakt|"
    # wanting, selling, buying and asking back in the languages above ("ho venduto 0,75 ETH",
    # "chcę wypłacić 1 200 DOT", "devolvam 120 €"), and romanised Hindi's money verbs ("2.3 ETH
    # bhejna tha", "paise nikalne hain")
    r"ho|vorrei|venduto|comprato|prelevare|quero|queria|vendi|comprei|devolvam|devolver|devolução|quiero|"
    r"quería|vendí|compré|devuelvan|devolver|devolución|restituite|restituire|verkauft|gekauft|möchte|"
    r"chcę|chciałbym|chciałabym|wypłacić|wypłaciłem|wypłaciłam|wypłata|wypłaty|moja|moich|moim|"
    r"bhejna|bheja|bheje|bhejne|bhejni|nikalna|nikala|nikale|nikalne|nikali|paise|paisa|jama|mila|mile|"
    r"mere|mujhe|hamara|hamare|humne)\b"
    # the same where words are not spaced: I, my, balance, refund in Chinese, Japanese, Korean
    r"|我|私|僕|余额|餘額|残高|退款|返金|내\s|제\s|저의|나의|잔액|잔고|환불"
    # and their "I paid", "I withdrew", "I deposited", "I sent"
    r"|出金し|入金し|送金し|支払|払った|払いました|提了|提现了|充了|充值了|转了|付了|支付了|결제했|입금했|출금했|송금했|보냈"
    r"|金额|金額|금액"
)
_NUMBER_WORD = (r"(?:a|one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|thirteen|fourteen|fifteen|"
                r"sixteen|seventeen|eighteen|nineteen|twenty|thirty|forty|fifty|sixty|seventy|eighty|ninety|"
                r"hundred|thousand|million|grand|couple)")
#: money written in words ("two hundred dollars", "fifty-five euros", "a thousand bucks")
_WORD_AMOUNT = re.compile(
    rf"(?i)\b{_NUMBER_WORD}(?:(?:[ \t]+|-)(?:and[ \t]+|of[ \t]+)?{_NUMBER_WORD}){{0,6}}[ \t]+(?:{_CURRENCY_WORDS})\b"
    # "two grand", "a few grand": thousands of the writer's currency, said without it
    rf"|\b(?:(?:a[ \t]+)?few|several|{_NUMBER_WORD})(?:(?:[ \t]+|-)(?:and[ \t]+)?{_NUMBER_WORD}){{0,3}}[ \t]+grand\b")
#: the verbs that move one's money before an amount in words ("Need two hundred dollars")
_MONEY_VERB = re.compile(r"(?i)\b(?:need|needs|needed|send|sent|withdraw|withdrew|withdrawn|transfer|transferred|"
                         r"pay|paid|move|moved|cash\s+out|lost|owe|owed|deposit|deposited|refund|charged)\b")
#: the amount of one payment, said as such ("Total was €38.12", "Montant : 1 250 USDC")
_AMOUNT_LABEL = re.compile(
    r"(?i:\b(?:total|amount|montant|betrag|importe|monto|valor|importo|bedrag|kwota|kwotę|toplam|tutar|сумма|"
    r"số\s+tiền)\b\s*(?:was|is|of|:|war|ist|est|era|es|è|wynosi|=)?\s*:?\s*)\Z")
#: a digit: no amount without one
_AMOUNT_HINT = re.compile(r"\d")
#: "the withdrawal of €500": a particular transaction, so someone's
_THEIR_TRANSACTION = re.compile(
    r"(?i)\b(?:the|this|that|a|one)\s+(?:withdrawal|deposit|transfer|payment|charge|chargeback|payout|transaction|"
    r"purchase|wire|top-?up)s?\s+(?:of|for)\s*$"
    # one transaction named without an article ("Top-up of €150 failed"); plurals are policy
    r"|(?:^|[.!?]\s+|\b)(?:withdrawal|deposit|transfer|payment|charge|payout|purchase|wire|top-?up)\s+of\s*$"
    # (its reference between: "your withdrawal WD-882913 of 1,200,000 USDT")
    r"|\b(?:the|this|that|your|my|our|his|her|their)\s+(?:withdrawal|deposit|transfer|payment|payout|purchase|wire|"
    r"top-?up)\s+(?:[A-Z]{1,5}-?)?\d[\w-]{2,20}\s+(?:of|for)\s*$"
)
_REFERS_BACK = re.compile(r"\s*(?:it|that|this|which)\b(?:'s|\s+(?:was|is|were|cost|came))", re.IGNORECASE)
#: the owner's word that makes a figure after a policy's word someone's ("my limit", "saldo saya")
_OWNER_WORD = re.compile(r"(?i)\b(?:my|your|saya|mi|mis|mon|ma|mein|meine|mijn|meu|minha|mio|mia|mój|moja|"
                         r"benim|mitt)\b")
#: a charge one bore, in the sentence before a fee's figure: "I was charged the Premium Analytics
#: fee of $14.99", "the move itself cost me 0.6 ATOM in fees"
_CHARGED = re.compile(r"(?i)\b(?:i|we)\s+(?:was|were|got|have\s+been|'ve\s+been)\s+(?:charged|billed)\b|"
                      r"\b(?:charged|cost|costs|billed)\s+(?:me|us)\b")
#: (not "min" after a number: "vor 40 min 4,5 XMR geschickt" is minutes)
_POLICY = re.compile(r"(?i)\b(?:minimum|maximum|(?<!\d\s)(?<!\d)min|max|fee|fees|limit|limits|cost|costs|price|"
                     r"at least|up to|more than|less than|smaller than|larger than|greater than|below|above|exceeding|"
                     r"exceeds)\b")
#: "€1,000 per day", "$50 a month", "5 BTC/day": a limit or a price, said of no one
_PER_PERIOD = re.compile(r"(?i)\s*(?:per|a|an|each|every|/)\s*(?:day|week|month|year|transaction|withdrawal|deposit|"
                         r"request|user|seat|account)s?\b"
                         # the same in the languages tickets come in ("2.000 USD mỗi tháng", "500 € pro Tag")
                         r"|\s*(?:(?:pro|je)\s+(?:tag|woche|monat|jahr)|(?:por|al|cada)\s+(?:día|dia|mes|mês|semana|año|ano)|"
                         r"par\s+(?:jour|mois|semaine|an)|al\s+(?:giorno|mese)|per\s+(?:dag|maand|giorno|mese|hari|bulan)|"
                         r"dziennie|miesięcznie|mỗi\s+(?:ngày|tháng|tuần|năm)|một\s+(?:ngày|tháng)|в\s+(?:день|месяц|сутки)|"
                         r"günlük|aylık|sehari|sebulan|/\s*(?:tag|día|dia|jour|mes|mois|monat|ngày|tháng))(?![^\W\d_])")
#: a comparison after the figure, as Hindi, Japanese, Korean and Turkish write it and "or more"
#: ("100,000 USD से ज़्यादा", "10万円以上", "1,000 USD ve üzeri"): a threshold
_COMPARED_AFTER = re.compile(
    r"[ \t]*(?:(?i:or\s+(?:more|less|above|below|higher|lower)|and\s+(?:above|up|over|more|below)|und\s+mehr|"
    r"et\s+plus|o\s+más|ou\s+mais|o\s+più|или\s+больше|ve\s+üzeri|ve\s+altı|trở\s+lên|trở\s+xuống|ke\s+atas|"
    r"ke\s+bawah)\b|से\s+(?:ज़्यादा|ज्यादा|अधिक|कम)|以上|以下|未満|이상|이하|미만|ขึ้นไป|فأكثر|أو\s+أكثر)")
#: "of your 10,000 USD Verified limit", "1.000 € Tageslimit": a figure that names a limit or a tier
_LIMIT_AFTER = re.compile(r"(?i:[ \t]*(?:(?:(?-i:[A-Z][\w-]*)|daily|weekly|monthly|withdrawal|deposit|trading|"
                          r"verification)[ \t]+){0,2}(?:limit|limits|cap|tier|threshold|allowance|límite|limite|"
                          r"limiet|limitu|limity|лимит|лимита|hạn\s+mức|batas|sınır|sınırı|\w+limit)\b)")
#: "3,150.00 USD of 10,000 USD": the second figure is the whole the first is part of, a limit
_PART_OF = re.compile(r"(?<![\w-])\d[\d.,]*[ \t]?(?:[A-Z]{3,5}|[$€£¥₹])?[ \t]+(?:of|out\s+of|von|sur|de|di|z|из|trên)"
                      r"[ \t]+(?:your[ \t]+)?\Z")
_BALANCE_WORD = re.compile(r"(?i)\b(?:balance|saldo|solde|guthaben|kontostand)\b")
_BARE_MOVED = re.compile(
    r"(?i)\b(?:i|we)\s+(?:withdrew|deposited|sent|transferred|paid|lost|received|topped\s+up)\s+(\d[\d,.]*(?<=\d))"
    r"(?![\d%]|\s*(?:%|days?|hours?|minutes?|times?|items?|percent|am|pm|h\b|of\b|x\b))")
_BARE_BALANCE = re.compile(
    r"(?i)\b(?:balance|saldo|solde|guthaben|kontostand|it|wallet|account)\s+(?:now\s+)?(?:says|shows|displays|reads|"
    r"is\s+(?:at|now|only)|is|was|went\s+to|dropped\s+to|of|zeigt|ist|est|es|indica|mostra)\s*:?\s*"
    r"(\d[\d,.]*(?<=\d))(?![\d%]|[.,]\d|\s*(?:%|days?|hours?|minutes?|times?|items?|percent|am|pm|h\b))"
)
#: a figure without its currency after the word for an amount ("amount 0.0182", "сумма: 1200")
_LABELLED_FIGURE = re.compile(
    r"(?i:\b(?:amount|sum|total|montant|betrag|importe|monto|valor|importo|bedrag|kwota|tutar|сумма|"
    r"số\s+tiền|jumlah|nominal|ποσό)\b|金额|金額|금액)\s*(?:was|is|of|:|=)?\s*:?\s*"
    r"(\d[\d,.]*(?<=\d))(?![\d%]|[.,]\d|\s*(?:%|days?|hours?|minutes?|times?|items?|percent|am|pm|h\b))")
#: a sentence: up to its full stop (a stop inside a number, "0.3", is none) or its line's end
#: (a scale's abbreviation after a figure ends none: "2 tys. zł", nor a currency's before one:
#: "Rs. 2,50,000"; Hindi's and Arabic's stops end one too: "।", "؟")
_SENTENCE = re.compile(rf"(?:(?<=\d[ \u00a0])(?:{SCALE_ABBREVIATIONS})\."
                       r"|\b(?:Rs|Fr|Bs|Dhs|Sh)\.(?=[ \u00a0]?\d)"
                       r"|[^.!?。！？।؟\n]|[.!?](?=[^\s.!?]))+(?:[.!?。！？।؟]+|$)", re.MULTILINE)


#: a quotation's closing full stop ('… limit." I already …'): the sentence quoted ends there
_QUOTE_END = re.compile(r"[.!?][\"”’']+[ \t]+(?=[A-Z])")
#: the period one is paid or charged by, read with the amount it follows ("£84,000 a year")
#: (not a time: "sent 1.2 ETH an hour ago")
_EARNED_PER = re.compile(r"(?i)(?:[ \t]+(?:a|an|per)[ \t]+(?:year|annum|month|week|hour)\b|[ \t]+p\.a\.)"
                         r"(?![ \t]+(?:ago|later|earlier|before|after|back|since)\b)")


def _amounts(text: str, customer: bool = False) -> Iterator[Span]:
    """Amounts tied to a person (their balance, their deposit): an amount is redacted when a
    personal or account word is near it in its sentence, unless it reads as a policy figure
    ("the minimum is $10") said of no one in particular. In a ``customer``'s own message every
    amount is theirs unless it reads as a policy figure: customers write of their own
    transactions in every language, and no list of personal words covers them all."""
    previous = ""
    for sentence in _SENTENCE.finditer(text):
        body, offset = sentence.group(), sentence.start()
        # "It was only 0.8 ETH": a sentence opening on a pronoun speaks of the one before
        context = bool(_REFERS_BACK.match(body) and _PERSONAL.search(previous))
        # the personal words of the sentence, found once: a sentence of many amounts stays linear
        personal = [p.start() for p in _PERSONAL.finditer(body)] if _AMOUNT_HINT.search(body) else []
        for m in _amount_matches(body):
            # the words near it decide: 300 characters before, 40 after
            before = body[max(0, m.start() - 300) : m.start()]
            after = body[m.end() : m.end() + 40]
            # (the words of this sentence only: a quoted message's full stop ends one, '… your daily
            # limit." I already took out R 95,000' speaks of no limit)
            near_before = " ".join(_QUOTE_END.split(before[-80:])[-1].split()[-5:])
            charged = _CHARGED.search(_QUOTE_END.split(before[-80:])[-1]) is not None
            if ((_POLICY.search(near_before) or _PER_PERIOD.match(after) or _COMPARED_AFTER.match(after))
                    and not _OWNER_WORD.search(near_before) and not charged):
                continue
            # a limit, anyone's ("6,850 USD of your 10,000 USD Verified limit")
            if _LIMIT_AFTER.match(after) or _PART_OF.search(before[-40:]):
                continue
            # "Deposits under 0.005 XMR aren't credited": a threshold no personal word says before
            if (_COMPARED_TO.search(near_before[-24:]) and not _PERSONAL.search(near_before)
                    and not _SUM_OF_A_PAYMENT.search(before[-80:])):
                continue
            i = bisect.bisect_left(personal, m.start() - 300)
            j = bisect.bisect_left(personal, m.end())
            near = (i < len(personal) and personal[i] < m.start()) or (
                j < len(personal) and personal[j] < m.end() + 40)
            # from a customer, an amount no personal word is near is still a threshold after "over",
            # "under", "between" ("do withdrawals over 10,000 USDT need a review?")
            # or a policy figure asked about ("what is the maximum daily withdrawal for verified users,
            # 10,000 EUR?")
            # ("1.29 EKS", "3 AZ": from a customer with no personal word near, only a listed
            # currency, coin or currency word after a number is money)
            unit = m.group("unit")
            ten_before = " ".join(before[-160:].split()[-10:])
            threshold = _THRESHOLD.search(near_before[-24:]) and not _SUM_OF_A_PAYMENT.search(before[-80:])
            mine = (customer and not threshold
                    and not (_POLICY.search(ten_before) and not _OWNER_WORD.search(ten_before) and not charged)
                    and (unit is None or unit.lower() in name_lexicon.currency_codes() or _currency_word(unit)))
            if (near or mine or context or _THEIR_TRANSACTION.search(before[-60:])
                    or _AMOUNT_LABEL.search(before[-40:])):
                # one's pay or rent by its period is one datum ("my salary is £84,000 a year")
                period = _EARNED_PER.match(after)
                yield Span(offset + m.start(), offset + m.end() + (period.end() if period else 0), "amount")
        for m in _WORD_AMOUNT.finditer(body):
            if re.fullmatch(r"(?i)a[ \t]+\S+", m.group()):
                continue  # "a dollar": a way of speaking more often than a sum
            before = body[max(0, m.start() - 60) : m.start()]
            if customer or _PERSONAL.search(before) or _MONEY_VERB.search(before):
                yield Span(offset + m.start(), offset + m.end(), "amount")
        if customer:
            # a figure without its currency after the word for an amount ("amount 0.0182")
            for m in _LABELLED_FIGURE.finditer(body):
                if not _has_amount(body[m.start(1) : m.end(1) + 8]):
                    yield Span(offset + m.start(1), offset + m.end(1), "amount")
        # a figure without its currency where a balance is read out ("now it says 0!", "my
        # balance shows 1,250.00"), when this sentence already speaks of money
        for m in _BARE_MOVED.finditer(body):
            if not _has_amount(body[m.start(1) : m.end(1) + 8]):
                yield Span(offset + m.start(1), offset + m.end(1), "amount")
        if _has_amount(body) or _BALANCE_WORD.search(body):
            for m in _BARE_BALANCE.finditer(body):
                if not _has_amount(body[max(0, m.start(1) - 4) : m.end(1) + 6]):
                    yield Span(offset + m.start(1), offset + m.end(1), "amount")
        previous = body


#: a pasted table's column of money, by its header in the languages tickets come in ("amount",
#: "valueEur", "Total", "fee", "Betrag", "összeg", "suma", "сумма")
_MONEY_COLUMN = frozenset((
    "amount", "amt", "value", "total", "subtotal", "fee", "price", "sum", "summe", "suma", "betrag", "összeg",
    "osszeg", "montant", "importe", "importo", "valor", "bedrag", "kwota", "сумма", "сума", "balance", "paid",
    "cost", "net", "gross", "reward", "payout", "credit", "debit", "charge", "refund", "deposit", "withdrawal",
    "stake", "staked", "slashed", "principal", "compensation", "payment", "owed", "due", "reimbursement",
    "金额", "金額", "금액"))


def _money_column(cell: str) -> bool:
    """A header cell that names money: one of its words ("valueEur", "total_fee", "Amount (EUR)")."""
    return any(w in _MONEY_COLUMN or w.removesuffix("s") in _MONEY_COLUMN for w in _column_words(cell))


_TABLE_NUMBER = re.compile(r"[ \t]*-?[$€£]?(?:\d{1,3}(?:[,.' ]\d{3})+|\d+)(?:[.,]\d+)?"
                           r"(?:[ \t]?[A-Z]{3,5}|[ \t]?[€$£])?[ \t]*")


#: a pasted table's column of user names, by its header ("username", "login", "user_id", "Benutzer")
_USER_COLUMN = frozenset(("username", "user", "login", "handle", "userid", "uid", "account", "actor", "benutzer",
                          "benutzername", "usuario", "utilisateur", "utente", "gebruiker", "gebruikersnaam",
                          "użytkownik", "felhasználó", "пользователь", "логин", "користувач"))
_USER_CELL = re.compile(r"[ \t]*[A-Za-z][\w.$-]{1,39}[ \t]*")


#: a pasted table's column of identity numbers, by its header ("NIF", "SSN", "Steuer-ID", "PESEL")
_ID_COLUMN = frozenset(("nif", "nie", "dni", "bsn", "ssn", "sin", "tin", "pesel", "cpf", "cnp", "nino", "curp", "rut",
                        "nik", "aadhaar", "pan", "afm", "amka", "steuerid", "taxid", "idnumber", "nationalid",
                        "passport", "passportno", "personnummer", "henkilötunnus", "codicefiscale", "nir"))
_ID_CELL = re.compile(r"[ \t]*(?=[A-Z0-9 ./-]*\d{2})[A-Z0-9][A-Z0-9 ./-]{4,22}[ \t]*")
#: a bank statement's line: a day first, words, and the figure closing the line after a wide gap or
#: a sign ("05/09  VIR RECU SCP GIRAUD   + 212 450,00", "20/06  ΕΞΕΡΧΟΜΕΝΟ ΕΜΒΑΣΜΑ   -62.300,00")
_STATEMENT_DAY = re.compile(r"(?m)^[ \t]*(?:\d{1,2}[/.]\d{1,2}(?:[/.]\d{2,4})?\.?|\d{4}-\d{2}-\d{2})[ \t]+(?=\S)")
_STATEMENT_FIGURE = re.compile(r"(?:[ \t]{2,}|\t|[ \t]+(?=[+-]))(?P<amount>[+-]?[ \t]*\d{1,3}(?:[ .,'\u00a0]\d{3})*"
                               r"[.,]\d{2})(?:[ \t]*(?:[A-Z]{3}|[€$£]))?[ \t]*\Z")


#: a SWIFT message's amount fields: value date, currency and amount (":32A:250514EUR4750000,00"),
#: or currency and amount (":33B:EUR4750000,00")
_SWIFT_AMOUNT = re.compile(r"(?m)^[ \t]*:(?:32[ABK]|33B|71[FG]):(?:\d{6})?([A-Z]{3}\d{1,15},\d{0,2})")


def _statement_amounts(text: str) -> Iterator[Span]:
    for m in _SWIFT_AMOUNT.finditer(text):
        yield Span(m.start(1), m.end(1), "amount")
    for day in _STATEMENT_DAY.finditer(text):
        end = text.find("\n", day.end())
        end = len(text) if end < 0 else end
        # (the figure is read on the line's last 60 characters: a line of any length is read once)
        tail = max(day.end(), end - 60)
        figure = _STATEMENT_FIGURE.search(text[tail:end])
        if figure and re.search(r"[^\W\d_]", text[day.end() : tail + figure.start()]):
            yield Span(tail + figure.start("amount"), tail + figure.end("amount"), "amount")


def _column_words(cell: str) -> list[str]:
    return [w.lower() for w in re.findall(r"[A-Z]?[a-z\u00c0-\u024f]+|[A-Z]+(?![a-z])|[^\W\d_]+", cell.strip())]


def _cells(line: str, sep: str | None) -> list[tuple[int, str]]:
    """A table line's cells with their offsets: split at ``sep``, or (None) at gaps of two spaces
    or more, as a console or an aligned export prints its columns."""
    if sep is not None:
        out, pos = [], 0
        for cell in line.split(sep):
            out.append((pos, cell))
            pos += len(cell) + 1
        return out
    return [(m.start(), m.group()) for m in re.finditer(r"\S+(?:[ ]\S+)*", line)]


#: a pasted table's column of customers' account codes, by its header ("accountId", "customer")
_ACCOUNT_COLUMN = frozenset(("accountid", "accountno", "accountnumber", "customerid", "customer", "memberid",
                             "subaccount", "subaccountid", "delegator", "delegatorid"))
_CODE_CELL = re.compile(r"[ \t]*(?=(?:\D*\d){3})[A-Za-z0-9][\w.-]{2,40}[ \t]*")


def _table_amounts(text: str) -> Iterator[Span]:
    """The figures of a pasted table (CSV, semicolon, tab or pipe separated, or its columns aligned
    with spaces) in a column whose header names money, the user names in one whose header names a
    user ("username", "login", "actor"), the numbers in one whose header names an identity number
    ("NIF") and the codes in one that names a customer's account ("accountId"): its rows, each with
    as many cells as the header, up to a line that has not; and a bank statement's figures."""
    yield from _statement_amounts(text)
    lines = list(re.finditer(r"[^\n]+", text))
    i = 0
    while i < len(lines):
        header = lines[i].group()
        sep = next((c for c in ",;\t|" if header.count(c) >= 2), None)
        cells = [cell for _, cell in _cells(header, sep)] if sep or re.search(r"\S[ ]{2,}\S.*[ ]{2,}\S", header) \
            else []
        # (a head is a cell of at most four words and no digit: "Account on file: DBS Bank, account no.
        # 072-941583-2, …" is a sentence)
        heads = ["".join(_column_words(cell)) if len(cell) <= 40 and len(cell.split()) <= 4
                 and not re.search(r"\d", cell) else "" for cell in cells]
        money = [k for k, cell in enumerate(cells) if len(cell) <= 40 and _money_column(cell)
                 and not re.search(r"\d", cell)]
        users = [k for k, head in enumerate(heads) if head in _USER_COLUMN and not re.search(r"\d", cells[k])]
        ids = [k for k, head in enumerate(heads) if head in _ID_COLUMN]
        accounts = [k for k, head in enumerate(heads) if head in _ACCOUNT_COLUMN]
        i += 1
        if not (money or users or ids or accounts):
            continue
        while i < len(lines) and len(row_cells := _cells(lines[i].group(), sep)) == len(cells):
            offset = lines[i].start()
            for k, (start, cell) in enumerate(row_cells):
                lead = len(cell) - len(cell.lstrip())
                span = (offset + start + lead, offset + start + len(cell.rstrip()))
                if k in money and _TABLE_NUMBER.fullmatch(cell) and cell.strip():
                    yield Span(*span, "amount")
                elif k in users and _USER_CELL.fullmatch(cell) and not _system_account(cell.strip()):
                    yield Span(*span, "username")
                elif k in users and re.fullmatch(r"[ \t]*\d{5,12}[ \t]*", cell):
                    yield Span(*span, "account_number")  # a user's number ("| UID | … | 83011274 |")
                elif k in ids and _ID_CELL.fullmatch(cell):
                    yield Span(*span, "national_id")
                elif k in accounts and _CODE_CELL.fullmatch(cell):
                    yield Span(*span, "account_number")
            i += 1
