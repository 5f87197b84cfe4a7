"""Time of the ticket redactor on hostile messages of the largest size a ticket accepts.

    python bench/answer_redact_hostile.py

Each message is 16,000 characters (``MAX_MESSAGE_CHARS``) of one repeated shape chosen to make
a pattern backtrack (digits and separators, half-written emails, address cues with no end,
thousands of amounts in one sentence, a recovery phrase that never ends, capitalised words no
list or corpus knows); the reference is an ordinary ticket text repeated to the same length,
measured in the same run. The rule that reads names against the bot's vocabulary is on (with a
vocabulary that knows no word, its most costly case), and every text is read as a customer's
message (whose rules are a superset of an agent's)."""

from __future__ import annotations

import time

from knowledge.answer.redact import find_spans
from knowledge.answer.tickets import MAX_MESSAGE_CHARS

SHAPES = {
    "digits and spaces": "1 ", "digits and dashes": "1-", "digits and dots": "1.", "plus and digits": "+1 ",
    "dollar amounts": "$1 ", "capitalised words": "Ab ", "comma words": "Ab, ", "words": "a ",
    "written-out dots": "a dot ", "at and dots": "x at y.y.y.y.y ", "bracketed dots": "a[dot]",
    "street and tails": "12 Ab Street, ", "address cue": "address: 1 Ab ", "initials": "A. ",
    "name cue": "name is Ab ", "balance": "balance is 1, ", "order cue": "order ", "one long token": "x",
    "customer id": "customer id 1 ", "Korean": "가", "CJK": "東京都渋谷区",
    "seed words": "abandon ", "numbered seed words": "1. abandon ", "unknown names": "Zqarbo Vlintek ",
    "flat and building": "Flat 1, Ab Cd, ", "address line parts": "Ab Mah. No: 1/2, 12345 Cd, ",
    "ticker amounts": "my 1 000 ABC ", "lower-case name pairs": "jon smyth ", "spaced kanji": "佐藤 健 ",
    "payment handles": "ab.cd@ef ", "dates after a birth cue": "born 1991-07-22 ",
    "names joined by and": "Kevin and Aiko, ", "name handles": "ines.garcia ", "possessive names": "Arjun's ",
    "password cues": "password Ab1", "password shapes": "pw Ab1Ab1Ab1! ", "url user-info": "a://b:c",
    "url paths": "https://a.b/Ab1", "backup codes": "backup codes 12-", "cli users": "docker -u ",
    "account name cues": "Access ID ", "money in words": "two hundred ", "spaced NI numbers": "AB 12 ",
    "e-mail names": "a.bc@de.fg Ab Bc ", "e-mail name runs": "ab.cd.ef@gh.ij Ab Cd Ef Gh ",
    "ldap names": "cn=a,ou=b,", "json keys": '"password":"Ab1Cd2", ', "bech32 shapes": "cosmos1",
    "token prefixes": "dckr_pat_", "named amounts": "Kevin paid 1 ETH, ", "user before secret": "account ab / ",
    "own account handles": "account a_1 ", "labelled figures": "amount 1,", "grand in words": "two grand ",
    "checked national ids": "44051401359 ", "id cue and digits": "CNP 1 ", "passport cues": "passport AB1 ",
    "initials and surnames": "J. Okafor ", "mailbox names": "Ab van Cd <a@b.c> ", "ranges of amounts": "5k-6k ABC ",
    "base58 runs": "16jcWDqFZyKV7HpMFpCU8uKH7GP51aBgX7RfFgxBjGb3PRoA ", "post boxes": "1 rue Ab, BP 1, ",
    "romanian flats": "Adresa: Str. Ab nr. 1, bl. A, ap. 1, ", "runs as": "runs as a-1 ",
    # round 10: streets beside a postcode, pasted tables, "00" country codes, backup codes,
    # service prefixes, titles before names, pronoun subjects
    "street by postcode": "Ab utca 1, 1234 Cd, ", "table rows": "amount,user,b\n1.5,ab,c\n",
    "00 country codes": "0044 79 ", "backup code groups": "recovery codes ab1-cd2 ", "service prefixes": "ab_cd_",
    "titles before names": "Dr. Ing. Ab ", "pronoun subjects": "Zqarbo says he. ",
    # round 11: digits and e-mails said in words, birth dates in words, grouped ID numbers after
    # a cue, Spanish seed words, names after a Hindi cue
    "digit words": "uno dos ", "said e-mails": "a arroba b punto ", "birth in words": "born march third ",
    "grouped ids after a cue": "NAS 145 333 ", "spanish seed words": "ábaco ", "hindi name cue": "मेरा नाम राजेश ",
    # round 12: name cues of Arabic and Hebrew script, their greetings, Cyrillic greetings, Thai
    # self-introductions, lower-case sign-offs and names, handles alone or after an actor, blank
    # runs after a stop, signatures closing a message
    "arabic name cue": "الاسم: خالد عبد ", "hebrew greeting": "שלום דנה ", "cyrillic greeting": "Доброго дня, Ірино ",
    "thai self intro": "สวัสดีครับ ผม ก ข ", "lower sign-offs": "pozdrawiam ryszard ",
    "lower name cue": "mi nombre es jhon fredy ", "handles alone": "a_b. ", "actor handles": "pushed from 1.2 by ",
    "blank after a stop": ".      ", "dashes and handles": "— a_b ", "account kinds": "conta corrente ",
    "indic greeting": "नमस्ते राहुल जी ",
    # round 13 (identity documents and payment data): machine-readable zones, OCR-spaced cues,
    # check-digit shapes in brackets, masked cards, defanged addresses, full-width at signs,
    # IBAN groups over lines
    "mrz lines": "P<UTOAB<<CD<<<<\nL898902C36UTO7408122F<<\n", "spaced cjk cue": "個 人 番 号 1 ",
    "hkid shapes": "A123456(7) ", "masked cards": "•••• ", "defanged ips": "1[.]", "full-width at": "a＠b.",
    "iban over lines": "DE89 3704\n",
    # round 15: address blocks read upwards from a postcode line, towns before a postcode, keyed
    # values, a bank statement's lines, aligned columns, home directories, chat labels
    "town words": "Isle of Ab ", "postcode lines": "Ab 1\n1234 Cd\n", "town and code": "Ab, Cd AB1 ",
    "json pairs": '"amount":"1","name":"Ab Cd",', "key colons": "a:b:", "statement days": "01/02  Ab  ",
    "aligned columns": "ab  cd  ef\n", "home paths": "/home/ab/", "chat labels": "[10:02] ab: ",
    "spelled letters": "A-B-", "quoted handles": 'nickname "a_1" ', "licence fields": "1. AB\n4a. 4b. ",
    "initials before names": "T ASHWORTH ", "swift fields": ":32A:250514EUR1,",
}
REFERENCE = ("Hi, my name is Priya Raghunathan and my withdrawal of 2,500 USDT to my wallet is pending. "
             "Please call me on +44 20 7946 0958 or write to priya@example.com. ")


def _ms(text: str) -> float:
    started = time.perf_counter()
    find_spans(text[:MAX_MESSAGE_CHARS], known_words=frozenset(), speaker="customer")
    return 1000 * (time.perf_counter() - started)


def main() -> None:
    find_spans("Hello Kevin", known_words=frozenset())  # loads the word lists once
    reference = _ms(REFERENCE * (MAX_MESSAGE_CHARS // len(REFERENCE) + 1))
    print(f"reference (an ordinary ticket, {MAX_MESSAGE_CHARS} characters): {reference:.0f} ms")
    worst = 0.0
    for name, shape in SHAPES.items():
        ms = _ms(shape * (MAX_MESSAGE_CHARS // len(shape) + 1))
        worst = max(worst, ms)
        print(f"  {name:<20} {ms:8.0f} ms  ({ms / reference:.1f}x the reference)")
    print(f"worst {worst:.0f} ms, {worst / reference:.1f}x the reference")


if __name__ == "__main__":
    main()
