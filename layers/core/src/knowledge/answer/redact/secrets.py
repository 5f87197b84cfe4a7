"""Secrets: tokens with a known prefix, bearer tokens, high-entropy strings, service tokens,
backup codes, passwords after their cue or inside a URL, webhook URLs, and recovery (seed)
phrases."""

from __future__ import annotations

import re
from collections.abc import Iterator

from .. import name_lexicon
from .contact import _EMAIL
from .spans import _GENERIC_SECRET, Span, _entropy

_SECRET_PREFIXED = re.compile(
    r"(?<![\w-])(?:"
    r"sk-(?:proj-|ant-)?[A-Za-z0-9_-]{16,}|(?:sk|pk|rk)_(?:live|test)_[A-Za-z0-9]{10,}|"
    r"gh[pousr]_[A-Za-z0-9]{20,}|github_pat_[A-Za-z0-9_]{20,}|glpat-[A-Za-z0-9_-]{16,}|"
    r"xox[abposre]-[A-Za-z0-9-]{10,}|xapp-[A-Za-z0-9-]{10,}|AKIA[0-9A-Z]{16}|ASIA[0-9A-Z]{16}|AIza[0-9A-Za-z_-]{30,}|"
    # the personal access and API tokens of common services, which name themselves by a
    # prefix: Docker Hub, npm, PyPI, GitLab's other tokens, Hugging Face, Shopify, Stripe's
    # webhooks, SendGrid, DigitalOcean, Atlassian, Postman, Grafana, Sentry, Vault, Linear,
    # Notion, Figma, Supabase, Doppler, Pulumi, New Relic, Databricks, Buildkite, Terraform
    r"(?:dckr_pat_|dckr_oat_|npm_|pypi-|glrt-|gldt-|glptt-|glsoat-|glcbt-|glffct-|hf_|shpat_|shpss_|shpca_|shppa_|"
    r"whsec_|dop_v1_|doo_v1_|ATATT|PMAK-|glsa_|glc_|sntrys_|sntryu_|hvs\.|hvb\.|lin_api_|ntn_|figd_|"
    r"sbp_|dp\.pt\.|dp\.st\.|pul-|NRAK-|bkua_|atlasv1\.)(?P<body>[A-Za-z0-9_.=-]{16,256}(?<![.-]))|"
    r"SG\.[A-Za-z0-9_-]{16,}\.[A-Za-z0-9_-]{16,}|"
    r"eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}|"
    r"(?<=(?:api|ess|ret|ate)_key=)\S{8,}|(?<=(?:api|ess|ret|ate)-key=)\S{8,}|(?<=(?:api|ess|ret|ate)_key:)\S{8,}"
    r")",
    re.IGNORECASE,
)
_BEARER = re.compile(
    r"(?i)(?<![a-z])(?:bearer|token|password|passwd|pwd|pw|pass|secret|passcode|pin|passwort|kennwort|contraseña|"
    r"mot\s+de\s+passe|senha|hasło|wachtwoord|parola|lösenord|adgangskode)\b(?![-‐])"
    # a space, "is" or a colon between the word and the value (as a JSON or YAML key too:
    # '"password":"…"'), never a word glued on ("pg-secret@db"); the value stops at a quote or
    # a bracket (a JSON document after "secret:" is no token)
    r"(?:[\"']?[ \t]*[:=]\s*[\"']?|\s+(?:(?:is|ist|es|est|é|to)\s+|[:=]\s*)?)"
    r"[\"'`“‘]?([^\s,;\"'`“”‘’{}()\[\]<>]{8,})")

_SERVICE_TOKEN = re.compile(r"(?<![\w.-])[a-z]{2,10}_(?:[a-z]{2,6}_){0,2}(?P<body>[A-Za-z0-9]{16,128})(?![\w-])")
_BACKUP_CODE_CUE = re.compile(
    r"(?i:\b(?:backup|recovery|rescue|emergency|scratch|one[- ]time|2fa|mfa)[ \t-]+codes?\b|"
    r"\bc[óo]digos?\s+de\s+(?:respaldo|recupera[cç][ãa]o|recuperaci[óo]n|seguran[cç]a)|"
    r"\b(?:wiederherstellungs|backup|notfall)-?codes?\b|\bcodes?\s+de\s+(?:secours|r[ée]cup[ée]ration)|"
    r"\bcodici\s+di\s+(?:backup|recupero)|\bherstelcodes?\b|\bkody\s+zapasowe)")
_BACKUP_CODE = re.compile(r"(?<![\w-])[A-Za-z0-9]{3,6}(?:-[A-Za-z0-9]{3,6}){1,2}(?![\w-])")
_LONG_TOKEN = re.compile(r"(?<![\w/.-])[A-Za-z0-9_+/-]{20,}={0,2}(?![\w/.=-])")


#: the user-info of a URL holds a password ("postgres://app:S3cret!@db01/app"), and so does a login
#: written as user and password ("the login admin:Qz7#mVp2!kL9")
_URL_PASSWORD = re.compile(r"(?i)\b[a-z][a-z0-9+.-]{1,15}://[^\s:/@]{0,64}:([^\s/@]{1,128})@(?=[\w\[])")
_LOGIN_PAIR = re.compile(
    r"(?i:(?:\b(?:login|log-in|credentials?|creds|user(?:name)?\s*/\s*pass(?:word)?|account)|"
    r"(?<!\S)(?:-u|--user(?:name)?))\s*(?:is|are|was|:|=)?\s*[\"']?)"
    r"[\w.-]{1,40}:([^\s:@/]{6,64})(?<![.,;)])")
#: words that say a password or a key follows, in the languages tickets come in
_PASSWORD_CUE = re.compile(
    r"(?i)(?<![a-z])(?:password|passwd|passphrase|pass\s+phrase|pwd|pw|secret|credentials?|creds|access\s+key|"
    r"login\s+details|log-?in|sign-?in|"
    r"secret\s+key|api\s+key|passwort|kennwort|contraseña|clave|mot\s+de\s+passe|senha|hasło|haslo|"
    r"wachtwoord|parola\s+d[i']\s*ordine|parola|lösenord|adgangskode|salasana|şifre\w*|sifre\w*|пароль\w*|密码|密碼|"
    r"パスワード|비밀번호|"
    # a password set for someone, and the same word in more languages (Romanian, Czech, Slovak,
    # Hungarian, Indonesian, Vietnamese, Greek, Hebrew, Arabic, Persian, Thai)
    # (with the endings Turkish, Polish, Czech and Hungarian add: "şifrem", "hasłem", "hesla", "jelszavam")
    r"temporary\s+(?:one|pass\w*|pw|pwd)|temp\s+(?:pass\w*|pw|pwd)|geçici|ge[cç]ici\s+[şs]ifre|parol[ăa]|hesl\w*|"
    r"hasł\w*|jelsz\w*|kata\s+sandi|sandi|lozink\w*|geslo|parool|slaptažod\w*|nenosiri|mật\s+khẩu|κωδικ[όο]ς?|סיסמ[הא]|كلمة\s+(?:المرور|السر)|رمز\s+عبور|รหัสผ่าน)"
    r"(?![a-z])")
#: a password's shape: eight or more characters of lower and upper case letters and digits, no
#: word, path, address or URL ("Welcome2Harbor!", "Hn8v2Lq0pZ!rT5")
_PW_CHAR = "A-Za-z0-9!#$%&*+?^~@_.-"
_PASSWORD_SHAPE = re.compile(rf"(?<![\w/@.:-])(?=[{_PW_CHAR}]*[a-z])(?=[{_PW_CHAR}]*[A-Z])(?=[{_PW_CHAR}]*\d)"
                             rf"[{_PW_CHAR}]{{8,64}}(?<![.,;:-])(?![\w/@])")


def _identifier(value: str) -> bool:
    """A product's or a setting's name: letters and digits only, two or more of its parts words
    of three letters or more ("HelpDesk2Go", "ApiKeyV2", "adminRequire2fa") and no run of three
    digits or more, where a password's parts are random ("Kp9xTq2wLm", "Hn8v2Lq0pZ") or words
    around a year ("Gecici2024Pass")."""
    if not value.isalnum():
        return False
    parts = re.findall(r"[A-Z]?[a-z]+|[A-Z]+(?![a-z])|\d+", value)
    if any(p.isdigit() and len(p) >= 3 for p in parts):
        return False  # a year or a PIN between words is a password's ("Gecici2024Pass", "Summer2023Fun")
    return sum(len(p) >= 3 and p[1:].islower() for p in parts) >= 2


#: a URL whose path carries a token (a webhook: "hooks.slack.com/services/T0/B0/f8Hq…",
#: "discord.com/api/webhooks/1234/AbC…"): the URL is the credential
_URL = re.compile(r"(?i)\bhttps?://[^\s<>\"'`()\[\]]{8,2048}")
_WEBHOOK_HOST = re.compile(r"(?i)^https?://(?:hooks\.slack\.com/|(?:[\w-]+\.)?discord(?:app)?\.com/api/webhooks/|"
                           r"[\w.-]*webhook[\w.-]*/|hooks\.[\w.-]+/[^?#\s]*\d|"
                           r"[^/]+/(?:[^/?#]+/)*(?:webhooks?|hooks)/[^?#\s]*\d)")


def _token_like(part: str) -> bool:
    """A path segment that is a random token: sixteen or more letters and digits in both cases
    ("f8Hq2XwLm4Tz7VbN1cYr"), or twenty-four or more of one case, a quarter of them digits
    ("3f9a1c7e…"), with an entropy no word has; never a file's name ("app-compose-2.4.tar.gz")."""
    if not re.fullmatch(r"[A-Za-z0-9_-]{16,}", part) or _entropy(part) < 3.5:
        return False
    digits = sum(c.isdigit() for c in part)
    if re.search(r"[a-z]", part) and re.search(r"[A-Z]", part):
        return digits >= 2
    return len(part) >= 24 and 4 * digits >= len(part)


def _webhooks(text: str) -> Iterator[Span]:
    if "://" not in text:
        return
    for m in _URL.finditer(text):
        url = m.group().rstrip(".,;:!?")
        # the path, not the query: a token in a query's value is found alone ("?token=a8F3…")
        path = re.split(r"[?#]", url.split("://", 1)[1], maxsplit=1)[0].partition("/")[2]
        parts = path.split("/")
        named = len([p for p in parts if p]) >= 2 and re.search(r"\d", path)
        if (_WEBHOOK_HOST.match(url) and named) or any(_token_like(p) for p in parts):
            yield Span(m.start(), m.start() + len(url), "secret")


#: a setting whose key names a secret, and its value to the line's end, spaces and all
#: ("SMTP_PASS=xqbm ktwr plfa zjeo", "DB_PASSWORD: hunter2hunter", "api_token = 'a b c'")
_KEYED_SECRET = re.compile(
    r"(?m)^[ \t]*(?:export[ \t]+)?[\"']?"
    r"(?P<key>(?:[A-Za-z][A-Za-z0-9_.-]*?)?(?i:pass(?:word|wd|phrase)?|pwd|secret|token|api[_-]?key|"
    r"private[_-]?key|access[_-]?key)"
    # (not a setting about the secret: its length, lifetime, file or URL)
    r"(?:[_-](?!(?i:ttl|length|len|min|max|expiry|expires|timeout|url|uri|file|path|enabled|type|name|header|"
    r"endpoint|policy|rotation|reset)\b)[A-Za-z0-9]+)?)[\"']?[ \t]*[=:][ \t]*[\"']?"
    r"(?P<value>[^\s\"'#${}<>][^\n\"'#<>]{3,120}?)[\"']?[ \t]*$")


def _keyed_secrets(text: str) -> Iterator[Span]:
    for m in _KEYED_SECRET.finditer(text):
        value, key = m.group("value"), m.group("key")
        # a value of words is a setting's only under a key written as code ("SMTP_PASS", "api.key"),
        # not after a label of prose ("Password: the one I set yesterday")
        if " " in value and not (re.search(r"[_.-]", key) or key.isupper()):
            continue
        # a placeholder or a reference is no secret ("<your password>", "changeme", "${DB_PASS}", "true")
        if value.lower() in ("changeme", "true", "false", "null", "none", "required", "optional", "xxx", "****") \
                or re.fullmatch(r"\*+|x+|\.+", value.lower()):
            continue
        yield Span(m.start("value"), m.end("value"), "secret")


def _cued_passwords(text: str) -> Iterator[Span]:
    """A password-shaped token up to 160 characters after a word for a password or a key
    ("I put the database password straight into app.yaml as Hn8v2Lq0pZ!rT5", "forgot his
    password … set it to Welcome2Harbor!"), a URL's user-info and a login's user:password."""
    paired: list[Span] = []
    for pattern in (_URL_PASSWORD, _LOGIN_PAIR):
        for m in pattern.finditer(text):
            value = m.group(1)
            # a "!" or "?" ends the sentence, not the password, unless a command's option or more
            # of the sentence follows ("curl -u admin:Harb0r-Pr0d-2026! -X POST")
            if value[-1] in "!?" and not re.match(r"[ \t]+[a-z-]|[,;:)\"']", text[m.end(1) : m.end(1) + 2]):
                value = value.rstrip("!?")
            if sum(bool(re.search(p, value)) for p in (r"[a-z]", r"[A-Z]", r"\d", r"[^\w\s]")) >= 2:
                paired.append(Span(m.start(1), m.start(1) + len(value), "secret"))
    yield from paired
    reach, seen = -1, set()
    for cue in _PASSWORD_CUE.finditer(text):
        # each cue reads the 160 characters after it; where an earlier cue's window already
        # read them it goes on from a token's length before that window's end: linear
        end = min(len(text), cue.end() + 160)
        start = max(cue.end(), reach - 64)
        if start >= end:
            continue
        reach = end
        # (a token starting inside the window is read whole: one is at most 64 characters)
        for m in _PASSWORD_SHAPE.finditer(text, start, min(len(text), end + 64)):
            if m.start() >= end:
                break
            if m.start() in seen:
                continue
            seen.add(m.start())
            value = m.group()
            # a "!" or "?" closing a sentence is no part of the password ("… is Abc12345!
            # Please …"); one before more of the sentence is ("set it to Welcome2Harbor! for him")
            if value[-1] in "!?" and not re.match(r"[ \t]+[a-z]|[,;:)]", text[m.end() : m.end() + 2]):
                value = value.rstrip("!?")
            if len(value) < 8 or _EMAIL.fullmatch(value) or _identifier(value):
                continue  # an address; a product's name of capitalised parts ("HelpDesk2Go", "ApiKeyV2")
            if any(p.start <= m.start() < p.end for p in paired):
                continue  # the tail of a URL's password, read whole above ("S7u!ppR2mKq9@10.20.4.15")
            yield Span(m.start(), m.start() + len(value), "secret")


#: a password named as the old or the new one after it was spoken of ("I've already changed my
#: password; the old one was hibernian1875!")
_OLD_OR_NEW = re.compile(r"(?i)\b(?:old|new|current|previous|temporary|former)\s+(?:one|password|pw|passwort|"
                         r"mot\s+de\s+passe|contraseña)\s+(?:was|is|war|ist|était|est|era|es)\s*:?\s*"
                         r"[\"'“‘]?(\S{6,64}?)[\"'”’]?(?=[\s,;]|[.?](?:\s|\Z)|\Z)")


#: a password named after it ("I know sunflower1987 is your password"): a digit or a sign in it
_IS_PASSWORD = re.compile(r"(?i)(?<![\w@])(?=\S*[\d\W])([^\s\"'“”]{6,64})[\"'”]?\s+(?:is|was)\s+"
                          r"(?:your|my|his|her|the)\s+(?:old\s+|current\s+|real\s+)?password\b")


def _secrets(text: str) -> Iterator[Span]:
    for m in _IS_PASSWORD.finditer(text):
        if not _EMAIL.fullmatch(m.group(1)):
            yield Span(m.start(1), m.end(1), "secret")
    for m in _OLD_OR_NEW.finditer(text):
        if _PASSWORD_CUE.search(text, max(0, m.start() - 120), m.start() + 20) and not _EMAIL.fullmatch(m.group(1)) \
                and re.search(r"\d|[^\w\s]", m.group(1)):
            yield Span(m.start(1), m.end(1), "secret")
    yield from _cued_passwords(text)
    yield from _keyed_secrets(text)
    yield from _webhooks(text)
    for m in _SECRET_PREFIXED.finditer(text):
        body = m.group("body")
        # a service's token is random after its prefix; a setting named with the prefix is words
        # ("npm_config_cache_dir")
        # ("whsec_td_71c9a0…": a part that opens on a digit is random, not a word)
        if body is not None and (not re.search(r"\d", body) or _entropy(body) < 3.5
                                 or re.fullmatch(r"[a-z]+(?:[_-][a-z]+[0-9]*)+", body)):
            continue
        yield Span(m.start(), m.end(), "secret")
    # any service's token that names itself by a lower-case prefix ("whsec_", "td_live_", "rk_"):
    # the prefix, an underscore and sixteen or more random letters and digits
    for m in _SERVICE_TOKEN.finditer(text):
        body = m.group("body")
        if re.search(r"\d", body) and re.search(r"[A-Za-z]", body) and _entropy(body) >= 3.5:
            yield Span(m.start(), m.end(), "secret")
    # the backup or recovery codes of a two-factor login, written after the words that name them
    # (up to 300 characters on, a list across lines): short groups of letters and digits
    for cue in _BACKUP_CODE_CUE.finditer(text):
        end = min(len(text), cue.end() + 300)
        for m in _BACKUP_CODE.finditer(text, cue.end(), end):
            if re.search(r"\d", m.group()) and re.search(r"[A-Za-z]", m.group()):
                yield Span(m.start(), m.end(), "secret")
    for m in _BEARER.finditer(text):
        value = m.group(1).rstrip(".")
        # a word ("password is incorrect") is not a secret: a secret mixes kinds of characters
        kinds = sum(bool(re.search(p, value)) for p in (r"[a-z]", r"[A-Z]", r"\d", r"[^\w\s]"))
        if kinds >= 2:
            yield Span(m.start(1), m.start(1) + len(value), "secret")
    for m in _LONG_TOKEN.finditer(text):
        token = m.group()
        classes = sum(bool(re.search(p, token)) for p in (r"[a-z]", r"[A-Z]", r"\d"))
        # a handle after its "@" and words joined by underscores are names, not random
        # ("@coinvault_help_desk24")
        if (m.start() and text[m.start() - 1] == "@") or re.fullmatch(r"[a-z]+(?:_[a-z]+)+\d{0,4}", token):
            continue
        if classes >= 2 and re.search(r"\d", token) and _entropy(token) >= 3.5:
            yield Span(m.start(), m.end(), _GENERIC_SECRET)


_SEED_WORD = re.compile(r"[^\W\d_A-Z]+")
#: what may stand between the words of a written-down recovery phrase: spaces, commas, a line
#: break, their numbers ("1. vivid 2. ranch")
_SEED_GAP = re.compile(r"(?:[ \t,;\n-]|\d{1,2}[.):]?)+")


#: the words that say a recovery phrase follows ("my seed phrase:", "recovery words are")
_SEED_CUE = re.compile(r"(?i:\b(?:seed|recovery|mnemonic|backup|secret|passphrase|phrase|(?:12|24)\s+words|"
                       r"frase|palabras|wörter|mots|parole|słowa|woorden|semilla|semente|graine|slova)\b)")
_PHRASE_LENGTHS = (12, 15, 18, 21, 24)


def _seed_phrases(text: str) -> Iterator[Span]:
    """Twelve or more words of one BIP-39 list (English, Spanish, French, Italian, Portuguese,
    Czech) in a row: a wallet's recovery phrase, which is the wallet itself (any 12 of 2,048
    words in a row is no sentence). After the words that name one ("my recovery phrase:"), one
    word in six may be off the list (words misremembered or mistyped are the phrase still)."""
    runs: list[list[re.Match[str]]] = []
    for m in _SEED_WORD.finditer(text):
        if m.start() and text[m.start() - 1].isalpha():
            continue  # inside a capitalised or longer word
        if runs and runs[-1] and _SEED_GAP.fullmatch(text[runs[-1][-1].end() : m.start()]) is not None:
            runs[-1].append(m)
        else:
            runs.append([m])
    runs = [run for run in runs if len(run) >= 12]
    if not runs:
        return
    found: list[Span] = []
    for language in name_lexicon.SEED_LANGUAGES:
        words = name_lexicon.seed_words_in(language)
        for run in runs:
            found.extend(_phrases_in_run(text, run, words))
    yield from found


def _phrases_in_run(text: str, run: list[re.Match[str]], words: frozenset[str]) -> Iterator[Span]:
    on = [m.group() in words for m in run]
    found = False
    i = 0
    while i < len(run):
        if not on[i]:
            i += 1
            continue
        # the words naming a phrase are read before the phrase's own first word, not the run's
        cued = _SEED_CUE.search(text, max(0, run[i].start() - 80), run[i].start()) is not None
        j, misses = i, 0
        while j + 1 < len(run):
            if on[j + 1]:
                j += 1
            elif cued and misses + 1 <= max(1, (j + 3 - i) // 12) and j + 2 < len(run) and on[j + 2]:
                j, misses = j + 2, misses + 1
            elif cued and misses == 0 and j + 2 == len(run) and (j + 2 - i) in _PHRASE_LENGTHS:
                j, misses = j + 1, 1  # the last word of a phrase of a standard length
            else:
                break
        if j - i + 1 >= 12:
            # a phrase has 12, 15, 18, 21 or 24 words: one or two more after a phrase the
            # words before named are the sentence going on ("… skull margin please send")
            length = j - i + 1
            whole = max(n for n in _PHRASE_LENGTHS if n <= length)
            end = i + whole - 1 if cued and misses == 0 and length - whole in (1, 2) else j
            yield Span(run[i].start(), run[end].end(), "secret")
            found = True
        i = j + 1
    if found:
        return
    # after the words naming one, a phrase of a standard length that closes its line (or the
    # message), its first word on the list and at most one word in six off it
    ends = [k for k in range(len(run) - 1) if "\n" in text[run[k].end() : run[k + 1].start()]]
    for end in (*ends, len(run) - 1):
        for n in reversed(_PHRASE_LENGTHS):
            start = end + 1 - n
            if start >= 0 and on[start] and n - sum(on[start : end + 1]) <= n // 6 and \
                    _SEED_CUE.search(text, max(0, run[start].start() - 80), run[start].start()):
                yield Span(run[start].start(), run[end].end(), "secret")
                break


def asks_secret(text: str) -> bool:
    """Whether ``text`` speaks of a password, a key or backup codes ("please change your password
    and reply"): a password's or a backup code's shape in the other side's reply is one."""
    return _PASSWORD_CUE.search(text) is not None or _BACKUP_CODE_CUE.search(text) is not None


def answered_secrets(text: str) -> Iterator[Span]:
    """The passwords' shapes (eight characters or more of letters, digits and signs) in a reply
    to :func:`asks_secret`: "changed it. new one is Tulp!2026&Dam"."""
    for m in _PASSWORD_SHAPE.finditer(text):
        value = m.group()
        if len(value) >= 8 and not _EMAIL.fullmatch(value) and not _identifier(value):
            yield Span(m.start(), m.end(), "secret")
    for m in _BACKUP_CODE.finditer(text):
        if re.search(r"\d", m.group()) and re.search(r"[A-Za-z]", m.group()):
            yield Span(m.start(), m.end(), "secret")
