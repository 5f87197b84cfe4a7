"""The word lists and word tests the person-name and user-name detectors share: what a
capitalised word is, the stop list of words that are no name (``_NOT_NAMES``), titles, ordinary
English words and their forms, listed given names and surnames (``name_lexicon``), brands,
companies and legal forms, and a writer who writes in lower case."""

from __future__ import annotations

import functools
import re
import unicodedata
from collections.abc import Collection, Iterator

from .. import name_lexicon

_UPPER = "A-ZÀ-ÖØ-ÞĀĂĄĆĈĊČĎĐĒĔĖĘĚĜĞĠĢĤĦĨĪĬĮİĴĶĹĻĽĿŁŃŅŇŊŌŎŐŒŔŖŘŚŜŞŠŢŤŦŨŪŬŮŰŲŴŶŸŹŻŽА-ЯЁІЇЄΑ-Ω" + "".join(
    # and the capitals of Latin Extended-B and Additional (Yoruba "Ọ", Vietnamese "Ấ", "Ư")
    c for c in map(chr, [*range(0x0180, 0x0250), *range(0x1E00, 0x1F00)]) if c.isupper())
#: a letter and the accents a text may write apart from it (Yoruba tones: "Adébáyọ̀")
_LETTER = r"(?:[^\W\d_]|[\u0300-\u036f])"
_NAME_WORD = rf"[{_UPPER}](?:['’][{_UPPER}])?{_LETTER}+(?:[-'’][{_UPPER}]?{_LETTER}+)?"
_PARTICLE = (r"(?:de|da|del|della|der|den|di|du|van|von|al|el|bin|binti|binte|bte|ibn|la|le|dos|das|y|ter|ten|zu|af|"
             r"dei|dal|dela|delos|ap|ab|ferch|verch)")  # (Welsh: "Rhiannon ap Gwilym")

_NOT_NAMES = frozenset((
    # the short forms of months and weekdays ("last Friday (28 Feb)"; "Jan", "May", "Sun", "Thu" are names too)
    "feb", "apr", "jun", "jul", "aug", "sep", "sept", "oct", "nov", "dec", "mon", "tue", "tues", "wed",
    "thurs", "fri", "sat",
    "a", "about", "account", "afraid", "after", "afternoon", "again", "all", "also", "an", "and", "any", "anyone",
    "are", "as", "at", "back", "bank", "because", "before", "but", "by", "can", "card", "could", "customer", "did",
    "do", "does", "done", "dr", "evening", "everybody", "everyone", "folks", "for", "frau", "from", "getting",
    "good", "great", "guys", "had", "has", "have", "having", "he", "help", "her", "here", "herr", "hi", "his", "how",
    "i", "if", "in", "is", "it", "its", "just", "kind", "last", "let", "locked", "madam", "madame", "me", "miss",
    "mme", "monsieur", "morning", "mr", "mrs", "ms", "mx", "my", "new", "no", "not", "now", "of", "ok", "okay", "on",
    "one", "or", "our", "out", "pan", "pani", "please", "prof", "regards", "señor", "señora", "she", "signor",
    "signora", "sir", "so", "sorry", "sr", "sra", "still", "stuck", "support", "sure", "team", "thank", "thanks",
    "that", "the", "their", "them", "then", "there", "they", "this", "to", "today", "too", "trying", "unable",
    "urgent", "us", "was", "we", "what", "when", "where", "which", "who", "why", "will", "with", "wondering",
    "writing", "yes", "you", "your",
    # greetings and thanks in the languages tickets most often come in, and nationalities the
    # name lists also hold as given names
    "hola", "hallo", "bonjour", "salut", "ciao", "grüezi", "servus", "moin", "hej", "hei", "tack", "ola", "olá",
    "danke", "merci", "gracias", "grazie", "obrigado", "obrigada", "dzięki", "dziękuję", "namaste", "merhaba",
    "thx", "ty", "tia", "br", "rgds", "brgds", "kr", "asap", "pls", "plz", "bey", "hanım", "hanim", "efendi",
    # greetings, thanks and chat of more languages, and the words that introduce a name there
    "hiya", "howdy", "heya", "yo", "chào", "xin", "cảm", "ơn", "tamam", "evet", "hayır", "teşekkürler", "selam",
    "salam", "salaam", "marhaba", "ahlan", "shukran", "yalla", "habibi", "inshallah", "mashallah", "shalom",
    "sawubona", "mvh", "mvg", "mfg", "hilsen", "halo", "kami", "kita", "anda", "saya", "mereka",
    "terima", "kasih", "mohon", "silakan", "tolong",
    "habari", "jambo", "cześć", "zdravo", "sveiki", "labas", "adım", "adim",
    "benim", "vale", "genau", "klar", "okey", "dacă", "bună", "salve", "tere", "hoi", "doei", "groetjes",
    # Turkish courtesy ("Rica ederim", "Kolay gelsin") and the small words of romanised Hindi and
    # Urdu that open a sentence ("Kya chal raha hai?"), which the name lists hold as names
    "rica", "ederim", "ederiz", "kolay", "gelsin", "lütfen", "lutfen",
    "kya", "kyu", "kyun", "kaise", "kab", "kahan", "kaun", "nahi", "nahin", "mera", "meri", "mere",
    "aap", "aapka", "aapki", "bhai", "yaar", "acha", "accha", "theek", "thik", "abhi", "kuch", "bahut",
    "lekin", "aur", "bhi", "toh", "jaldi", "kripya", "shukriya", "dhanyavad", "namaskar",
    # relatives and colleagues, which German capitalises before a name ("Mein Kollege Stefan")
    "kollege", "kollegin", "bruder", "schwester", "sohn", "tochter", "mutter", "vater", "freund", "freundin",
    "chefin", "ehemann", "ehefrau", "partnerin", "kunde", "kundin", "nachbar", "nachbarin", "collega", "collègue",
    "irish", "german", "bonsoir", "buenas", "buongiorno", "buonasera", "gentile", "caro", "cara", "oi", "beste",
    "geachte", "hei", "moi", "szia", "ahoj", "witam", "bedankt", "takk", "spasibo", "liebe", "lieber", "liebes",
    "sehr", "geehrte", "geehrter", "grüße", "saludos", "atentamente", "cordialement", "greetings", "mister",
    "doctor", "professor", "mlle", "dott", "meneer", "mevrouw", "senhor", "senhora", "querido", "querida",
    "estimado", "estimada", "prezado", "prezada", "привет", "здравствуйте", "спасибо",
    # the pronouns, articles and possessives of other languages, which open sentences after a thanks
    "ihr", "ihre", "ihren", "ihrem", "sie", "wir", "ich", "du", "es", "das", "der", "die", "den", "dem", "ein",
    "eine", "mein", "meine", "dein", "unser", "unsere", "vielen", "nous", "vous", "votre", "vos", "notre",
    "le", "la", "les", "un", "une", "una", "uno", "unos", "unas", "um", "uma", "el", "los", "las", "su", "sus",
    "usted", "ustedes", "le", "il", "lo", "gli",
    "je", "tu", "ons", "uw", "jij", "wij", "het", "een", "o", "os", "seu", "sua", "você", "vocês", "nosso",
    "meu", "minha", "meus", "minhas", "kata",
    # the labels of a name and the "dear" and greetings of more languages, which open a line before
    # a name ("Jméno Lenka Dvořáková", "Sayın Ayşe Demir")
    "jméno", "příjmení", "imię", "nazwisko", "nume", "prenume", "soyad", "soyadı", "ismim", "pangalan", "jina",
    "sayın", "vážený", "vážená", "szanowny", "szanowna", "stimate", "stimată", "kedves", "poštovani",
    "poštovana", "habari", "magandang", "selamat", "dobrý", "ziua",
    # "customer" and "user" after "dear" in those languages ("Kedves Ügyfelünk!", "Estimado Cliente")
    "ügyfelünk", "ügyfél", "müşterimiz", "müşteri", "kliencie", "klient", "zákazníku", "zákazník", "pelanggan",
    "nasabah", "client", "clientul", "cliente", "clientes", "usuario", "usuário", "utilizator", "kullanıcı",
    "felhasználó", "felhasználónk", "uživateli", "użytkowniku", "kullanıcımız", "vă", "dumneavoastră",
    "kumusta", "kamusta", "sanibonani", "dumela", "molo", "vanakkam",
    "twoje", "twój", "nasz", "wasz", "pan", "pani", "panie", "panu", "pana", "ваш", "ваша", "мы", "вы", "я",
    # nationalities and languages, which the name lists hold as surnames ("French", "English")
    "english", "french", "spanish", "italian", "dutch", "polish", "swedish", "danish", "norwegian", "finnish",
    "greek", "russian", "chinese", "japanese", "korean", "indian", "brazilian", "mexican", "american", "british",
    "canadian", "australian", "swiss", "austrian", "belgian", "portuguese", "turkish", "arabic", "hindi",
    "kenyan", "nigerian", "scottish", "welsh", "european", "african", "asian", "latin", "hungarian", "czech",
    "romanian", "ukrainian", "thai", "vietnamese", "filipino", "indonesian", "persian", "hebrew", "israeli",
    # months and days, which the name lists also hold as given names ("It's June already")
    "january", "february", "march", "april", "may", "june", "july", "august", "september", "october", "november",
    "december", "monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday",
    # the labels before an account holder's or a recipient's name ("Kontoinhaber Stefan Maier")
    "kontoinhaber", "kontoinhaberin", "inhaber", "inhaberin", "intestatario", "intestataria", "titular",
    "titulaire", "rekeninghouder", "begünstigter", "empfänger", "beneficiario", "beneficiaria", "bénéficiaire",
    "destinatario", "destinataria", "destinataire", "ontvanger", "odbiorca", "właściciel",
    # Greek and Māori greetings, the German adverbs that open a sentence ("Dann warte ich …") and
    # the headings of an agent's notes in Spanish ("Nota de llamada", "Consulta:", "Explicado:")
    "γεια", "γειά", "καλησπέρα", "καλημέρα", "χαίρετε", "ευχαριστώ", "kia", "ora", "dann", "jetzt", "aber",
    "leider", "bitte", "nota", "consulta", "explicado", "resuelto", "pendiente",
))
#: titles that may come between a greeting and a name ("Danke Herr Meier")
_TITLES = frozenset(("mr", "mrs", "ms", "miss", "mx", "dr", "prof", "herr", "frau", "monsieur", "madame", "mme",
                     "señor", "señora", "sr", "sra", "signor", "signora", "pan", "pani", "mister", "doctor",
                     "professor", "sir", "hr", "fr", "mlle", "dra", "señorita", "srta", "sig", "sig.ra", "dott",
                     "meneer", "mevrouw", "dhr", "mevr", "senhor", "senhora", "г-н", "г-жа", "господин",
                     "госпожа", "κύριε", "κύριος", "κυρία", "κ", "panie", "panu", "pana", "chị", "anh", "ông", "bà",
                     "chú", "bapak", "pak", "ibu", "bu", "kak", "mas", "mbak", "pane", "paní", "slečno", "domnule",
                     "domnul", "doamnă", "doamna", "domnișoară", "пане", "пані"))


_WORD = re.compile(r"[^\W\d_]+(?:['’-][^\W\d_]+)*")
_TITLE_WORD = re.compile(r"[^\W\d_](?:['’][^\W\d_])?[^\W\d_A-Z]*(?:-[^\W\d_][^\W\d_A-Z]*)?")
#: place words: "in Paris", "near Sofia" (a given name after them is a place more often)
_LOCATIVE = frozenset(("in", "at", "near", "across", "within", "throughout", "around", "visiting"))
_POSSESSIVE = frozenset(("my", "our", "your", "his", "her", "their", "its"))
#: places the name lists also hold as given names: after "from", "to" or "of" they are places
_PLACE_NAMES = frozenset(("georgia", "virginia", "carolina", "florence", "chelsea", "sydney", "austin", "dallas",
                          "paris", "jordan", "india", "victoria", "savannah", "adelaide", "madison", "phoenix",
                          "houston", "kent", "lincoln", "orlando", "charlotte", "regina", "alexandria", "sofia",
                          "lourdes", "valencia", "aurora", "brooklyn", "vienna", "siena", "verona", "israel",
                          "texas", "montana", "dakota", "florida", "nevada", "arizona", "indiana", "kansas"))


def _ordinary(word: str) -> bool:
    """A word the dictionary spells in lower case ("will", "grant"), a stop word, or a
    contraction ("I'm", "It's")."""
    if re.search(r"['’](?:m|s|re|ve|d|ll|t)$", word, re.IGNORECASE):
        return True
    if re.match(r"(?i:[cdjlmnst]|qu)['’][a-zà-ÿ]", word):
        return True  # an elided word of French or Italian ("J'ai", "C'est", "L'account"), not "D'Angelo"
    key = name_lexicon.key(word)
    return key in name_lexicon.ordinary_words() or word.lower().strip("'’") in _NOT_NAMES


def _ordinary_form(word: str) -> bool:
    """An ordinary word, or an inflected form of one ("types", "queued", "settings")."""
    if _ordinary(word):
        return True
    w = name_lexicon.key(word)
    forms = [w[:-1] if w.endswith("s") else "", w[:-2] if w.endswith("es") else "",
             w[:-3] + "y" if w.endswith("ies") else "", w[:-2] if w.endswith("ed") else "",
             w[:-1] if w.endswith("ed") else "", w[:-3] if w.endswith("ing") else "",
             w[:-3] + "e" if w.endswith("ing") else "",
             # a doubled consonant ("travelling", "cancelled") and British spellings ("colour",
             # "organise", "organisation")
             w[:-4] if w.endswith("ing") and len(w) > 5 and w[-4] == w[-5] else "",
             w[:-3] if w.endswith("ed") and len(w) > 4 and w[-3] == w[-4] else "",
             w.replace("our", "or") if "our" in w else "", w.replace("is", "iz") if "is" in w else ""]
    return any(f and f in name_lexicon.ordinary_words() for f in forms)


def _given(word: str) -> bool:
    """A listed given name, or the vocative a Slavic language addresses one with ("pani
    Katarzyno" of "Katarzyna", "Olgo" of "Olga")."""
    k = name_lexicon.key(word)
    given = name_lexicon.given_names()
    return k in given or (len(k) >= 6 and k.endswith("o") and k[:-1] + "a" in given
                          and k not in name_lexicon.ordinary_words()) or (
        word[:1].isupper() and (k in name_lexicon.unaccented_names()[0] or (
            # (a long one with an acute accent only, as Irish and Iberian names take one the lists
            # write without, "Ciarán": "Rút" is Vietnamese for "withdraw", "Ändra" Swedish for "change")
            not k.isascii() and len(k) >= 5 and all(c.isascii() or c in "áéíóú" for c in k)
            and name_lexicon.key(_folded(word)) in given and k not in name_lexicon.ordinary_words())))


#: the article or kinship word that opens an Arabic family name ("Al-Qahtani", "El-Sayed", "Abu-Bakr")
_ARABIC_FAMILY = re.compile(r"(?:Al|El|Abu|Abd|Bin|Ben|Ibn|Ould)[-‐][A-Z][a-z]{2,}")


def _surname(word: str) -> bool:
    """A listed family name, a double-barrelled one with a listed part ("Adeyemi-Clarke"), or an
    Arabic family name after its article ("Al-Qahtani")."""
    surnames = name_lexicon.surnames()
    if name_lexicon.key(word) in surnames or (word[:1].isupper()
                                               and name_lexicon.key(word) in name_lexicon.unaccented_names()[1]):
        return True
    if "-" not in word and "‐" not in word:
        return False
    if _ARABIC_FAMILY.fullmatch(word):
        return True
    parts = re.split(r"[-‐]", word)
    return (len(parts) == 2 and all(p[:1].isupper() and len(p) >= 3 for p in parts)
            and any(name_lexicon.key(p) in surnames for p in parts))


def _capitalised_runs(text: str) -> Iterator[tuple[list[re.Match[str]], str]]:
    """Runs of title-case words on one line (a particle may sit inside), each with the word
    before the run (lower case, "" at a line's start)."""
    words = list(_WORD.finditer(text))
    i = 0
    while i < len(words):
        w = words[i]
        if not (w.group()[0].isupper() and _TITLE_WORD.fullmatch(w.group())):
            i += 1
            continue
        run = [w]
        j = i + 1
        while j < len(words):
            gap = text[words[j - 1].end() : words[j].start()]
            nxt = words[j].group()
            if gap not in (" ", "\t"):
                break
            title = bool(nxt[0].isupper() and _TITLE_WORD.fullmatch(nxt))
            inner_particle = bool(re.fullmatch(_PARTICLE, nxt) and j + 1 < len(words)
                                  and words[j + 1].group()[0].isupper()
                                  and re.fullmatch(r"[ \t]+", text[words[j].end() : words[j + 1].start()]))
            if not (title or inner_particle):
                break
            run.append(words[j])
            j += 1
        before = ""
        if i > 0 and "\n" not in text[words[i - 1].end() : w.start()]:
            before = words[i - 1].group().lower()
        yield run, before
        i = j


#: given names that are also verbs, which follow a subject as often ("my son will pay")
_NAME_VERBS = frozenset(("will", "may", "can", "mark", "bill", "sue", "rob", "grant", "pat", "drew", "jack", "don",
                         "chase", "wade", "buck", "hunt", "gene", "art", "guy", "ray", "max", "bob", "nick"))

#: verbs that follow a name as often as a family name does ("tanya said"), some of which the
#: name lists hold as family names
_COMMON_VERBS = frozenset(("said", "says", "told", "asked", "called", "wrote", "sent", "paid", "gave", "took",
                           "left", "came", "went", "got", "made", "saw", "knew", "thought", "wants", "wanted",
                           "needs", "needed", "did", "does", "was", "were", "will", "would", "could", "should",
                           "might", "must", "may", "can", "has", "had", "also", "just", "still", "again", "here",
                           "there", "then", "now", "too", "replied", "confirmed", "checked", "mentioned"))

_COMPANY_WORDS = frozenset(("ltd", "inc", "gmbh", "llc", "corp", "co", "sa", "ag", "bv", "plc", "srl", "sas", "oy",
                            "ab", "team", "support", "group", "bank",
                            # a support team's name in the languages its replies are signed in
                            # ("Equipo de Soporte CoinVault", "L'équipe Support", "Ihr Kundenservice")
                            "equipo", "soporte", "équipe", "equipe", "suporte", "supporto", "assistenza",
                            "kundenservice", "kundendienst", "kundensupport", "servicio", "atención",
                            "atendimento", "servizio", "helpdesk", "klantenservice", "ondersteuning",
                            "department", "departamento", "abteilung", "dipartimento", "afdeling", "service"))


#: a word with a capital inside is a product's name ("PayPal", "iPhone"), unless the capital
#: follows a surname's prefix ("McAllister", "O'Brien", "DeShawn")
_INNER_CAPITAL = re.compile(r"^(?!(?:Mc|Mac|O['’]|D['’]|De|Di|Da|La|Le|Van|Von|Al-|El-))\w+[A-Z]")


#: names of the platforms, payment networks, browsers, devices and banks that tickets of any
#: product mention, which a bot's own corpus may not: none is a person's
_BRANDS = frozenset((
    "amex", "mastercard", "visa", "maestro", "discover", "paypal", "venmo", "zelle", "klarna", "afterpay", "alipay",
    "wechat", "paytm", "mpesa", "revolut", "wise", "monzo", "n26", "barclays", "hsbc", "santander", "citi",
    "chase", "fargo", "coinbase", "binance", "kraken", "bybit", "okx", "kucoin", "metamask", "ledger", "trezor",
    "koinly",
    "arbitrum", "solana", "ethereum", "bitcoin", "polygon", "tron", "google", "gmail", "android", "apple", "iphone",
    "ipad", "macos", "ios", "windows", "linux", "ubuntu", "chrome", "chromium", "firefox", "safari", "edge",
    "opera", "brave", "samsung", "pixel", "huawei", "xiaomi", "oneplus", "motorola", "nokia", "instagram",
    "facebook", "whatsapp", "telegram", "signal", "twitter", "tiktok", "youtube", "linkedin", "reddit", "discord",
    "slack", "zoom", "teams", "outlook", "hotmail", "yahoo", "okta", "auth0", "xero", "quickbooks", "shopify",
    "stripe", "adyen", "amazon", "aws", "azure", "github", "gitlab", "jira", "zendesk", "salesforce", "hubspot",
    "dropbox", "notion", "figma", "uber", "airbnb", "netflix", "spotify", "steam", "nintendo", "playstation",
    "xbox", "nike", "adidas", "tesla", "mercedes", "benz", "bmw", "toyota", "dhl", "fedex", "ups", "usps",
    "sonoma", "ventura", "monterey", "tor", "vpn",
    # the software, telecoms and money services support tickets name most
    "zapier", "hubspot", "pipedrive", "mailchimp", "twilio", "intercom", "freshdesk", "helpscout", "trello",
    "asana", "clickup", "wordpress", "woocommerce", "magento", "squarespace", "wix", "godaddy", "cloudflare",
    "heroku", "vercel", "netlify", "sendgrid", "mailgun", "terraform", "kubernetes", "docker", "postgres",
    "postgresql", "mysql", "mongodb", "redis", "bitbucket", "acrobat", "electrum", "exodus", "phantom", "uniswap",
    "opensea", "tether", "usdt", "usdc", "plaid", "payoneer", "skrill", "neteller", "cashapp", "gpay", "nubank",
    "chime", "robinhood", "etoro", "webull", "bitstamp", "bitfinex", "gemini", "airtel", "mtn", "vodafone",
    "safaricom", "verizon", "tmobile", "comcast", "orange", "lycamobile", "nano", "trustwallet", "blockchain",
))

#: what follows a company's name ("Pampa Foods S.A.", "Hoffmann & Partner")
_COMPANY_AFTER = re.compile(r"[ \t]*(?:&|\+|S\.?A\.?|S\.?L\.?|S\.?p\.?A\.?|N\.?V\.?|(?:Ltd|Inc|GmbH|LLC|AG|BV|Co|Corp|"
                            r"PLC|Pty|SRL|SAS|Oy|AB)\b)")


_NEXT_WORD = re.compile(r"[ \t]+([^\s,;:()]+)")


def _company_after(text: str, pos: int) -> bool:
    """A company's legal form follows ("Ltd", "S.A.", or any locale's from Faker: "Bt.", "Kft.",
    "s.r.o."): a longer form in any case, a short one as the locale writes it."""
    if _COMPANY_AFTER.match(text, pos):
        return True
    m = _NEXT_WORD.match(text, pos)
    return m is not None and _legal_form(m.group(1))


def _legal_form(word: str) -> bool:
    """One of the legal forms of :func:`name_lexicon.legal_forms`, with or without its last stop."""
    forms = name_lexicon.legal_forms()
    if word in forms or word + "." in forms:
        return True
    return len(word.rstrip(".")) > 3 and word.lower().rstrip(".") in _long_legal_forms()


@functools.cache
def _long_legal_forms() -> frozenset[str]:
    return frozenset(f.lower().rstrip(".") for f in name_lexicon.legal_forms() if len(f.rstrip(".")) > 3)


def _name_like(word: str, known: Collection[str]) -> bool:
    """A capitalised word that may be part of a name: not known to the bot, no stop word, no
    title, no contraction, no acronym, no product's inner capital."""
    k = name_lexicon.key(word)
    low = word.lower().strip("'’")
    return (k not in known and low not in _NOT_NAMES and low.rstrip("s") not in _NOT_NAMES and low not in _TITLES
            and not any(name_lexicon.key(part) in _BRANDS for part in re.split(r"[-'’]", word))
            and not word.isupper() and _INNER_CAPITAL.match(word) is None and len(k) >= 2
            and not re.search(r"['’](?:m|s|re|ve|d|ll|t)$", word, re.IGNORECASE)
            # a word of Latin letters with no vowel is an abbreviation ("Txn", "Msg"), unless a
            # listed family name ("Ng")
            and not (re.fullmatch(r"[b-df-hj-np-tv-xzB-DF-HJ-NP-TV-XZ]+", k) and not _surname(k)))


def _plain_word(word: str, *, glued: bool = False) -> bool:
    """An ordinary word or a compound of ordinary words ("Hungarian-order"); with ``glued``,
    written as one word too ("Whitelisted", "Username"; family names are such compounds as
    often, "Sandberg", so only where a sentence opens on a lone word)."""
    if _ordinary_form(word) or all(_ordinary_form(part) for part in re.split(r"[-'’]", word) if part):
        return True
    if not glued:
        return False
    w = name_lexicon.key(word)
    return any(w[:i] in name_lexicon.ordinary_words() and _ordinary_form(w[i:]) for i in range(3, len(w) - 2))


#: words every English sentence of some length has one of, and other languages' lack
_ENGLISH_GLUE = frozenset(("the", "a", "an", "and", "to", "of", "is", "are", "was", "my", "your", "you", "it",
                           "for", "with", "on", "this", "that", "not", "can", "have", "has", "please", "what",
                           "how", "we", "our", "me", "he", "she", "his", "her", "they", "from", "at", "but"))
#: the small words of the other languages tickets come in (Spanish, Portuguese, Polish, Czech,
#: Romanian, Turkish, Indonesian, Tagalog), which the name lists hold as names ("por", "ada", "yang")
#: and which end a name written in lower case ("a nombre de maría josé pérez por favor")
_FOREIGN_GLUE = frozenset((
    "por", "para", "con", "sin", "que", "pero", "porque", "mi", "tu", "su", "en", "ya", "si", "favor", "pra",
    "pro", "com", "sem", "mas", "em", "no", "na", "nos", "nas", "eu", "ele", "ela", "não", "nao", "sim",
    "i", "w", "z", "do", "nie", "jest", "mam", "się", "sie", "że", "ze", "jsem", "je", "se", "ale",
    "și", "sunt", "cu", "pe", "ve", "ile", "için", "icin", "ama", "bir", "bu", "çok",
    "dan", "di", "ke", "dari", "yang", "untuk", "ada", "mau", "aja", "saja", "juga", "sudah", "belum", "sama",
    "sekali", "tidak", "bisa", "ini", "itu", "ng", "ang", "sa", "mga", "ko", "po", "ako", "lang",
))


#: (each part bounded: a long run of one character class stays linear)
_ADDRESS_LIKE = re.compile(r"[^\s@]{0,64}@\S{1,255}|\b[a-z][a-z0-9+.-]{1,15}://\S{1,2048}|"
                           r"(?<![\w-])[\w-]{1,63}(?:\.[\w-]{1,63}){2,}")


def _english(text: str) -> bool:
    """Most lower-case words of ``text`` are English words: elsewhere (German writes its nouns
    with a capital) a capitalised word unknown to the dictionary says nothing."""
    # the words of an address, a URL or a host are no words of the sentence ("(seun.adebayo@gmail.com)")
    text = _ADDRESS_LIKE.sub(" ", text)
    lower = [w for w in _WORD.findall(text) if w[0].islower()]
    if len(lower) < 3:
        return False
    plain, glue = sum(_plain_word(w) for w in lower), sum(w in _ENGLISH_GLUE for w in lower)
    # a short text may have a single glue word, if nearly all its words are English
    return plain >= 0.7 * len(lower) and (glue >= 2 or (glue == 1 and plain >= 0.85 * len(lower)))


#: words of chat that no dictionary has and that follow "I'm" or "it's" as often as a name
_CHAT_WORDS = frozenset(("gonna", "wanna", "gotta", "kinda", "sorta", "lemme", "dunno", "btw", "tbh", "idk", "lol",
                         "pls", "plz", "thx", "ok", "okay", "ya", "yeah", "yep", "nope", "cuz", "coz", "tho", "omg",
                         "smh", "fyi", "imo", "imho", "rn", "asap", "literally", "u", "ur", "im", "ive", "dont",
                         "cant", "wont", "didnt", "doesnt", "isnt", "wasnt", "thats", "whats", "theres", "youre",
                         "max", "min", "sys", "dev", "devs", "admin", "repo", "config", "app", "apps"))

#: given names that are common English words, which open a sentence as that word as often ("Hope
#: this helps", "Grace period ends"); the BIP-39 list's 2,048 common words are read the same way
_COMMON_WORD_NAMES = frozenset((
    "grace", "hope", "faith", "joy", "dawn", "summer", "autumn", "ruby", "jade", "amber", "crystal", "pearl", "iris",
    "violet", "lily", "holly", "ivy", "sky", "rose", "daisy", "angel", "honey", "sunny", "happy", "lucky",
    "patience", "charity", "destiny", "trinity", "unity", "liberty", "justice", "harmony", "melody", "river", "rain",
    "storm", "star"))


def _folded(text: str) -> str:
    """``text`` without accents, letter for letter ("Oyelarán" -> "Oyelaran"): same length."""
    out = []
    for c in text:
        base = unicodedata.normalize("NFKD", c)
        out.append(base[0] if base and not unicodedata.combining(base[0]) and len(base[0]) == 1 else c)
    return "".join(out)


def _lower_case_writer(text: str) -> bool:
    """A message written in lower case: its sentences open in lower case, "i" is its pronoun
    ("hi, it's marco again. i talked to giulia"), or it has no capital at all."""
    if re.search(r"(?<![\w'’])i(?:['’]m|['’]ve|['’]d|[ \t]+(?:am|was|have|had|talked|spoke|sent|did|do|got|need|"
                 r"want|tried|think|just|can|cant|dont))\b", text):
        return True
    starts = re.findall(r"(?:^|[.!?][ \t]+)([^\W\d_])", text, re.MULTILINE)
    if len(starts) >= 2 and 2 * sum(c.islower() for c in starts) >= len(starts):
        return True
    # or a message of some words with no capital at all
    return len(re.findall(r"[^\W\d_]+", text)) >= 4 and not any(c.isupper() for c in text)


#: words before an honorific that name a role, not a person
_CJK_NOT_NAMES = frozenset(("고객", "회원", "담당자", "관리자", "선생", "사장", "부장", "과장", "お客", "皆"))
