"""User names: the cues and shapes of a handle (``@handle``, ``name#1234``, "username: x"),
users given to a command line, a URL or LDAP, a system's own accounts (nobody's user name), a user
before a secret, the code after a word for a customer's own account (its number or user name),
and handles made from a name found in the ticket."""

from __future__ import annotations

import re
from collections.abc import Collection, Iterator, Sequence

from .. import name_lexicon
from .spans import _DATE_SHAPE, _YEAR_RANGE, Span
from .words import _CHAT_WORDS, _ENGLISH_GLUE, _NOT_NAMES, _folded, _given, _ordinary, _ordinary_form, _surname

#: a handle after the words for getting into an account ("locked out of trader_jo3")
_HANDLE_AFTER = re.compile(
    r"(?i:\b(?:locked\s+out\s+of|log(?:ged)?\s+(?:in)?to|sign(?:ed)?\s+(?:in)?to|access\s+to|log\s+in\s+to)\s+)"
    r"[\"'“‘]?([A-Za-z][\w.]{1,40})(?<![.])")
#: a handle said to be someone's on a platform ("pixelpusher_22 on the forum")
_HANDLE_ON = re.compile(
    r"(?<![\w.@])([A-Za-z][\w.]{1,40}(?<![.]))[ \t]+on[ \t]+(?:the[ \t]+)?(?i:forum|discord|reddit|telegram|"
    r"twitter|instagram|steam|github|community|server|xbox|psn|twitch|tiktok)\b")

#: a Reddit user ("u/cv_recovery_official")
_REDDIT = re.compile(r"(?<![\w/])u/[A-Za-z0-9_-]{3,20}(?![\w/])")
_HANDLE = re.compile(r"(?<![\w.@/])@[A-Za-z0-9_](?:[A-Za-z0-9_.-]{0,38}[A-Za-z0-9_])?(?![\w@])")
_DISCORD = re.compile(r"(?<![\w#])[A-Za-z0-9_.]{2,32}#\d{4}(?!\w)")
_PLATFORMS = (r"steam|psn|xbox|epic|riot|battle\.?net|twitch|discord|telegram|instagram|insta|tiktok|reddit|"
              r"skype|github|gitlab|roblox|minecraft|game|gamer|player|account")
_USERNAME_LATER = re.compile(
    r"(?i:\b(?:user\s*name|username|login|user\s*id|handle|screen\s*name)\b[^.\n:]{1,30}?\b(?:is|:)\s*)"
    r"([A-Za-z0-9_][\w.@-]{2,39})(?<![.-])")
#: a host name: two dots or more, or a last label that is a top-level domain
_HOST_NAME = re.compile(r"(?i)[a-z0-9-]+(?:\.[a-z0-9-]+){2,}|[a-z0-9-]+\.(?:com|net|org|io|dev|app|example|local|"
                        r"internal|corp|lan|cloud|ai|co|de|uk|fr|es|it|nl|eu|us|in|br|pl)")
_PAYMENT_HANDLE = re.compile(r"(?<![\w.@+-])[A-Za-z0-9][\w.-]{1,63}@[A-Za-z][A-Za-z0-9]{1,30}(?![\w@.-]|\.[A-Za-z])")
_PLATFORM = re.compile(rf"(?i:{_PLATFORMS})")
_SAID_OF_A_NAME = frozenset((
    "wrong", "incorrect", "invalid", "hidden", "taken", "required", "mandatory", "missing", "empty", "correct",
    "right", "case", "locked", "blocked", "disabled", "enabled", "visible", "shown", "displayed", "different",
    "same", "too", "not", "already", "still", "now", "also", "unique", "optional", "fine", "ok", "okay", "gone",
    "changed", "unknown", "unavailable", "available", "greyed", "grayed", "blank", "shorter", "longer", "the",
    "my", "your", "our", "their", "his", "her", "in", "on", "at", "used", "set", "listed", "saved", "stored",
))
_USERNAME = re.compile(
    r"(?i:\b(?:user[\s_]*name|username|users?\s+(?:like|such\s+as|e\.g\.|including)|user|user[\s_]*id|login|handle|"
    r"nick(?:name)?|gamertag|screen\s*name|pseudo|"
    r"benutzername|benutzer|nutzername|nutzer|utente|utilisateur|gebruiker|usuario|nome\s+utente|ign|in-game\s+name|seller|buyer|"
    r"vendor|merchant|streamer|creator|agent|identifiant|nom\s+d'utilisateur|usuário|nazwa\s+użytkownika|"
    r"gebruikersnaam|kullanıcı\s+adı|brugernavnet|brugernavn|brukernavnet|brukernavn|användarnamnet|användarnamn|käyttäjätunnus|felhasználónév|"
    r"kullanıcı\s+ad[ıi]m|nama\s+pengguna|pengguna|tên\s+đăng\s+nhập|nume\s+de\s+utilizator|utilizator|"
    r"uživatelské\s+jméno|имя\s+пользователя|логин|לוגין|שם\s+משתמש|اسم\s+المستخدم|ชื่อผู้ใช้|ইউজারনেম|"
    r"ইউজার\s+নেম|यूज़रनेम|यूजरनेम|यूज़र\s+नेम|"
    rf"(?:{_PLATFORMS})\s*(?:name|id|handle|tag)?|(?:log(?:ged)?|sign(?:ed)?)[\s-]*in\s+as|registered\s+as|"
    r"signed\s+up\s+as)(?![\w]))"
    # the owner's word after it ("Username saya", "mi usuario", "user ku", "benim kullanıcı adım")
    r"(?:[ \t]+(?i:saya|aku|ku|ko|mu|anda|mine|mio|mia|meu|minha|mon|ma|mein|meine|mój|moje|můj|moje|của\s+tôi|"
    r"мой|мій|meu|sendiri)(?![\w]))?"
    # a JSON or YAML key closes its quote before the colon ('"username":"svc-k8s-puller"')
    # (and an XML element closes its tag: "<username>yoon.jaehyun</username>")
    r"(?:[\"'](?=[ \t]*[:=])|>)?\s*(is\s+|was\s+|[:=]\s*)?(?:(?:ist|lautet|es|est|é|è|är|er|jest|to|je)\s+)?"
    # (never a word of Arabic written in Latin letters, a digit for a letter: "el account 3ala el email")
    r"[\"'“‘]?(?![2-9][a-z]{2,5}(?![\w.@-]))([A-Za-z0-9_][\w.@-]{2,39})(?<![.-])"
)


#: a user given to a command line's user option ("docker login -u lwei registry.example")
_CLI_USER = re.compile(
    r"(?i:\b(?:docker|podman|helm|oras|skopeo|nerdctl|crane|psql|mysql|mongo(?:sh)?|redis-cli|ssh|sftp|ftp|curl|"
    r"git|kubectl|oc|az|login)\b[^\n`]{0,80}?(?<!\S)(?:-u|-l|--user(?:name)?|--login)(?:[ \t]+|=))"
    r"[\"']?([A-Za-z0-9_][\w.@$-]{1,39})(?<![.-])")
#: an account's name said after what names one ("Access ID replicator", "robot account
#: robot$ci-builder", "Who set it: dkowalski", "created by jsmith")
_ACCOUNT_NAME_CUE = re.compile(
    r"(?i:\b(?:access\s+(?:key\s+)?id|client\s+id|login\s+id|user\s+id|robot\s+account|service\s+account|"
    r"bot\s+account|technical\s+user|service\s+user|"
    r"who\s+(?:set|created|added|configured|changed|made|installed|owns)\s+(?:it|this|that|them)|"
    r"(?:set\s+up|created|added|configured|changed|owned|installed|made)\s+by|assigned\s+to|assignee|owner|"
    # what a person did to a system, and where from, before "by" ("Pushed from 203.0.113.9 by
    # rizky.hidayat", "deleted on Monday by j_smith")
    r"(?:pushed|pulled|deleted|removed|uploaded|downloaded|triggered|started|stopped|approved|rejected|modified|"
    r"updated|edited|merged|committed|deployed|signed|logged|requested|initiated|submitted|disabled|enabled|"
    r"revoked|rotated|reset|accessed)(?:[ \t]+(?:in|from|to|at|on|via|into)[ \t]+[^\s]{1,60}){0,2}[ \t]+by|"
    # the same in Spanish and Portuguese, Indonesian, German, French
    r"(?:subid[oa]|borrad[oa]|cread[oa]|criad[oa]|eliminad[oa]|modificad[oa]|enviad[oa]|apagad[oa]|"
    r"alterad[oa])[ \t]+por|(?:dibuat|dihapus|diubah|diunggah|dikirim)[ \t]+oleh|"
    r"(?:erstellt|gelöscht|geändert|hochgeladen)[ \t]+von|(?:créée?|supprimée?|modifiée?|envoyée?)[ \t]+par|"
    r"(?:ran|runs|run|running|executed|executes|authenticated|impersonating|acting)\s+as)\b)"
    r"(?:[ \t]*(?:is|was|named|called|:|=|-))*[ \t]*[\"'`“‘]?([A-Za-z0-9_$][\w.@$-]{1,39})(?<![.-])")
#: the user of a URL's user-info ("postgres://tdadmin:…@db", "https://hookuser:…@ci.example")
_URL_USER = re.compile(r"(?i)\b[a-z][a-z0-9+.-]{1,15}://([^\s:/@]{1,64}):[^\s/@]{1,128}@(?=[\w\[])")
#: the user named in an LDAP distinguished name: a "uid=" anywhere, a "cn=" before the rest of
#: the name ("cn=svc-harbor,ou=svc,dc=corp,dc=local")
_LDAP_USER = re.compile(r"(?i)\b(?:uid|samaccountname|userprincipalname)=([^,;+=\s\"'()]{2,64})"
                        r"|\bcn=([^,;+=\n\"'()]{2,64}?)(?=[ \t]*,[ \t]*(?:ou|dc|o|cn|uid|c|l|st)=)")
#: a handle in quotes a few words after the word for one ("my vault nickname. it's currently
#: "moonboi_420""): with a digit, an underscore or a dot in it, no everyday word
_QUOTED_HANDLE = re.compile(r"(?i:\b(?:nick(?:name)?|user\s*name|handle|display\s+name|gamertag|alias|screen\s+name)\b)"
                            r"[^\n\"“«]{0,40}[\"“«']([A-Za-z0-9][\w.-]{2,30})[\"”»']")
#: the user or organisation a code host's URL names ("github.com/kodaiwalsh/grid-bot")
_CODE_HOST_USER = re.compile(r"(?i)(?<![\w.-])(?:www\.)?(?:github|gitlab|bitbucket|codeberg)\.(?:com|org)/"
                             r"([A-Za-z0-9](?:[A-Za-z0-9-]{0,37}[A-Za-z0-9])?)(?=[/\s)\]\"'.,]|$)")
#: the user an environment variable or a config key names ("TD_API_USER=ops_tunde", "SMTP_USERNAME: mk")
_ENV_USER = re.compile(r"(?<![\w$])[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)*_(?:USER|USERNAME|USER_NAME|LOGIN)[ \t]*[=:][ \t]*"
                       r"[\"']?([A-Za-z0-9_][\w.@-]{1,39})(?<![.-])")
#: Harbor's robot accounts carry their prefix ("robot$ci-builder")
_ROBOT = re.compile(r"(?<![\w$])robot\$[A-Za-z0-9][\w.+-]{0,60}(?<![.+-])")
_NOT_ACCOUNT_NAMES = frozenset(("the", "a", "an", "and", "or", "is", "was", "for", "to", "in", "on", "of", "with",
                                "field", "value", "here", "there", "it", "this", "that", "someone", "somebody",
                                "admin", "admins", "you", "your", "us", "our", "me", "my", "them", "him", "her",
                                "default", "mistake", "accident", "hand", "email", "but", "then", "when",
                                # the accounts a system comes with, nobody's own
                                "root", "postgres", "mysql", "oracle", "ubuntu", "ec2-user", "centos", "debian",
                                "administrator", "guest", "user", "test", "sa", "sys", "system", "nobody",
                                "www-data", "git", "jenkins", "docker"))


def _system_account(value: str) -> bool:
    """A system's or an application's own account ("root", "postgres", "app", "Users"), a
    variable ("$USER") or a word of the dictionary: nobody's user name."""
    low = value.lower()
    return (low.startswith(("$", "%", "{")) or low in _NOT_ACCOUNT_NAMES or low in _ENGLISH_GLUE
            or low in _NOT_NAMES or low in _CHAT_WORDS or _ordinary_form(value))


#: a user name written before its secret, after a word for an account ("uses our account
#: acmebuilds / dckr_pat_…", "login: jdoe / <password>")
_USER_BEFORE_SECRET = re.compile(
    r"(?i:\b(?:account|login|user(?:\s*name)?|credentials?|creds|log(?:ged)?\s+in\s+as|as|usuario|usuário|utilisateur|"
    r"benutzer|utente|gebruiker)\b)"
    r"(?:[ \t]*(?:is|:|=))?[ \t]+[\"'`]?([A-Za-z0-9_][\w.@$-]{1,39})[\"'`]?[ \t]*"
    # ("user replicator with password Repl!ca-7731")
    r"(?:/|:|,|[ \t](?i:with|and|y|e|et|und|en)[ \t]+(?:(?i:the|a|el|la|le|der|das|il|o)[ \t]+)?"
    r"(?i:password|passwd|pw|pwd|pass|token|contraseña|clave|senha|mot\s+de\s+passe|passwort|kennwort|wachtwoord)"
    r"(?:[ \t]*(?:is|:|=))?)"
    r"[ \t]*\Z")


def configured_users(text: str) -> Iterator[str]:
    """The users a URL's user-info or an environment variable names: the bot's corpus is asked
    whether it knows them (the product's own account is no person's)."""
    for pattern, cue in ((_URL_USER, "://"), (_ENV_USER, "_"), (_CODE_HOST_USER, ".")):
        if cue in text:
            yield from (m.group(1) for m in pattern.finditer(text))


def _url_users(text: str, known: Collection[str] | None) -> Iterator[Span]:
    """The user of a URL's user-info or of an environment variable for one, unless a system's or
    the product's own account ("postgres://app:…@db", "DB_USER=ticketdesk" where the corpus knows
    "ticketdesk")."""
    for pattern, cue in ((_URL_USER, "://"), (_ENV_USER, "_"), (_CODE_HOST_USER, ".")):
        if cue not in text:
            continue
        for m in pattern.finditer(text):
            if not _system_account(m.group(1)) and not (known is not None and name_lexicon.key(m.group(1)) in known):
                yield Span(m.start(1), m.end(1), "username")


def _users_before_secrets(text: str, taken: Sequence[Span], known: Collection[str] | None) -> list[Span]:
    """A user name written before a secret found, after a word for an account; never a system's
    account nor the product's own name ("--rpc-login coinvault:…" where the corpus knows it)."""
    out: list[Span] = []
    covered = bytearray(len(text) + 1)
    for t in taken:
        covered[t.start : t.end] = b"\x01" * (t.end - t.start)
    for span in taken:
        if span.kind != "secret":
            continue
        m = _USER_BEFORE_SECRET.search(text, max(0, span.start - 80), span.start)
        if m and not any(covered[m.start(1) : m.end(1)]) and not _system_account(m.group(1)) \
                and re.search(r"[^\W\d_]", m.group(1)) \
                and not (known is not None and name_lexicon.key(m.group(1)) in known):
            out.append(Span(m.start(1), m.end(1), "username"))
            covered[m.start(1) : m.end(1)] = b"\x01" * (m.end(1) - m.start(1))
    return out


#: a handle in brackets right after a person's name ("Rohan Mehta (rohan-m)", "中村 陽菜さん(hina-nakamura)",
#: "Marek Novák (mnovak-cz)"), up to a comma or the bracket's end
_HANDLE_IN_BRACKETS = re.compile(r"[ \t]*(?:さん|様|님|씨)?[ \t]*[(（][ \t]*@?([a-z0-9][a-z0-9._-]{2,39})(?<![._-])"
                                 r"[ \t]*(?=[,)）])")


def _handles_after_names(text: str, taken: Sequence[Span], known: Collection[str] | None) -> list[Span]:
    """The lower-case handle in brackets after a name found: a user name when it is no word of
    the dictionary in any form, no stop or chat word and no word this bot's corpus knows
    ("Rohan Mehta (contractor)" names a role)."""
    out: list[Span] = []
    starts = {t.start for t in taken}
    for span in taken:
        if span.kind != "person_name":
            continue
        m = _HANDLE_IN_BRACKETS.match(text, span.end)
        if m is None or m.start(1) in starts:
            continue
        value = m.group(1)
        plain = re.fullmatch(r"[a-z]+", value) is not None
        if plain and (_ordinary_form(value) or value in _NOT_NAMES or value in _CHAT_WORDS
                      or (known is not None and name_lexicon.key(value) in known)):
            continue
        out.append(Span(m.start(1), m.end(1), "username"))
    return out


#: a handle a writer signs or names themself with: a sign-off dash or word before it ("-- marcus.v",
#: "thx, ahmad.k (harbor admin)"), "I'm" before it ("im tyrone_b"), or "user" in a list of
#: credentials ("credentials user kestrelci + PAT"); a handle with a dot, an underscore or a
#: digit, or one of letters alone after "user"
_SIGNED_HANDLE = re.compile(
    r"(?im:(?:^[ \t]*(?:[-–—~]{1,2}|(?:thx|thanks|thank\s+you|cheers|regards|br|ty),)|\b(?:i'?m|i\s+am)(?=[ \t]))"
    r"[ \t]*([a-z][a-z0-9]*(?:[._][a-z0-9]+)+|[a-z]+_?\d+[a-z]*|[a-z]+_[a-z]+)(?![\w@.-]|\.\w)"
    r"|\bcredentials?[ \t]+(?:user(?:name)?|login)[ \t:=]+([a-z][a-z0-9._-]{2,30})(?![\w@.-]))")


def _signed_handles(text: str) -> Iterator[Span]:
    for m in _SIGNED_HANDLE.finditer(text):
        group = 1 if m.group(1) else 2
        value = m.group(group)
        tail = value.rsplit(".", 1)[-1] if "." in value else ""
        if tail in _FILE_OR_HOST or _HOST_NAME.fullmatch(value) or _ordinary_form(value):
            continue
        if group == 1 and re.fullmatch(r"[a-z]+_[a-z]+", value) and all(
                len(p) >= 2 and (_ordinary_form(p) or p in _ENGLISH_GLUE) for p in value.split("_")):
            continue  # "i'm on_call": words joined, no one's handle
        yield Span(m.start(group), m.end(group), "username")


#: the word for one's own account, login or user in the languages tickets come in, in a customer's
#: message ("my other acct satoshi_fan_1984", "Мой аккаунт CV-30571842", "tài khoản hoangminh.tran")
_OWN_ACCOUNT_CUE = re.compile(
    r"(?i:\b(?:account|acct|acc|a/c|user(?:\s*name)?|login|handle|profile|konto|benutzer(?:name)?|compte|"
    r"identifiant|cuenta|usuario|conta|utilizador|usu[áa]rio|conto|utente|rekening|gebruiker(?:snaam)?|"
    r"hesab[ıi]m?|hesap|kullan[ıi]c[ıi](?:\s+ad[ıi])?|akun|pengguna|tài\s+khoản|аккаунт\w*|логин\w*|"
    r"учётн\w+\s+запис\w*|учетн\w+\s+запис\w*|счёт\w*|счет\w*|профил\w*|λογαριασμ\w*|χρήστη|"
    r"hesabi|konta|użytkownik\w*|účet\w*|účt\w*|fiók\w*|tili\w*|kontot?)\b|账户|账号|帳戶|帳號|用户名|계정|아이디|アカウント|"
    r"ユーザー名|حساب\w*)"
    # (a product's name between: "Mon identifiant TicketDesk est agence.rivegauche")
    r"(?:[ \t]+[A-Z][a-z]+[A-Z]\w*(?=[ \t]+(?i:is|est|es|ist|é|è)\b))?"
    r"(?:[ \t]*(?:(?i:id|name|number|no\.?|nr\.?|#|is|ist|est|es|è|é|là|adalah|:|=|是|は|：|"
    # the owner's word after it ("Akun saya dewi.ans", "cuenta mía", "hesabım")
    r"saya|aku|ku|mía|mia|mio|meu|minha|mon|ma|mein|meine|của\s+tôi)(?![\w])|[:=：是は은는]))*[ \t]*[\"'`“‘«]?"
    # (a handle's letters are Latin: "ユーザー名はharuki_mです" ends it before "です")
    r"([A-Za-z0-9](?:(?![\u3040-\u30ff\u3400-\u9fff가-힣])[\w.$+-]){2,40})(?<![.+-])(?!(?![\u3040-\u30ff\u3400-\u9fff가-힣])[\w@])")


def _own_accounts(text: str, known: Collection[str] | None) -> Iterator[Span]:
    """In a customer's message, the code after a word for their account: a number or a code of
    letters and digits ("CV-30571842", "8830 1921") is the account's number; a user name's
    shape (a digit, a dot, a dash or an underscore between letters: "satoshi_fan_1984") is the
    user name; an ordinary word ("my account settings"), a file or a host is neither; and a
    handle the message opens with, alone (``_opening_handles``)."""
    for m in _OWN_ACCOUNT_CUE.finditer(text):
        value = m.group(1)
        digits = sum(c.isdigit() for c in value)
        letters = sum(c.isalpha() for c in value)
        if _DATE_SHAPE.fullmatch(value) or _YEAR_RANGE.fullmatch(value):
            continue  # "my last login 2024-01-15": a date
        if re.fullmatch(r"(?:[A-Z]{0,5}[-/ ]?)?\d[\d-]{4,}\d(?:-?[A-Z]{1,2})?", value) and digits >= 6:
            yield Span(m.start(1), m.end(1), "account_number")
            continue
        tail = value.rsplit(".", 1)[-1].lower() if "." in value else ""
        if (letters < 3 or not re.search(r"\d.*\d|[A-Za-z][._-][A-Za-z0-9]", value) or tail in _FILE_OR_HOST
                or _system_account(value) or re.fullmatch(r"v?\d+(?:\.\d+)+", value)
                or (known is not None and name_lexicon.key(value) in known)):
            continue
        yield Span(m.start(1), m.end(1), "username")
    yield from _opening_handles(text, known)


#: a handle alone opening a customer's message, the answer to "what is your user name?"
#: ("caro_mty_88. tengo como …"): parts of letters and digits joined by "_" or ".", then a stop
#: or the line's end (a sentence about a thing goes on: "worker_2 keeps crashing")
_OPENING_HANDLE = re.compile(r"(?:\A[ \t]*|(?<=[.!?])[ \t]+|(?<=\n)[ \t]*|[—–-][ \t]*)[\"'“‘]?"
                             r"([A-Za-z][A-Za-z0-9]*(?:[._][A-Za-z0-9]+)+)[\"'”’]?"
                             r"(?=[.,;!)]?[ \t]*(?:\n|\Z)|[.,;!)](?:\s|\Z))")


def _opening_handles(text: str, known: Collection[str] | None) -> Iterator[Span]:
    """A handle alone in a customer's message, before a stop or the line's end: the message's
    opening (with a digit or an underscore), a sentence of its own or a signature after a dash
    (with an underscore); no file, host, version, system account or identifier the bot's corpus
    knows ("config.yaml", "v2.4.1", "max_job_workers" where the corpus knows its words)."""
    for m in _OPENING_HANDLE.finditer(text):
        value = m.group(1)
        tail = value.rsplit(".", 1)[-1].lower()
        parts = re.split(r"[._]", value)
        # at the message's start a digit; anywhere an underscore between parts no dictionary has (a
        # setting's parts are words: "max_job_workers") ("… reset my 2fa. kwame_o. call …",
        # "— mcgagnon_qc")
        coined = "_" in value and not any(len(p) >= 3 and _ordinary_form(p) for p in parts)
        # (or a handle of parts that are words closing the message: "… moved everything out.
        # crypto_nomad_kw")
        closing = "_" in value and m.start() > 0 and not text[m.end(1) :].strip(" \t\n.,;!)")
        shaped = coined or closing or (m.start() == 0 and re.search(r"\d", value) and not _worded(value))
        if (not shaped or sum(c.isalpha() for c in value) < 3 or tail in _FILE_OR_HOST
                or _HOST_NAME.fullmatch(value) or _system_account(value) or re.fullmatch(r"v?\d+(?:\.\d+)+", value)
                or (known is not None and (name_lexicon.key(value) in known
                                           or all(name_lexicon.key(p) in known or p.isdigit() for p in parts)))):
            continue
        yield Span(m.start(1), m.end(1), "username")


def _worded(value: str) -> bool:
    """A handle whose parts of three letters or more are all dictionary words and no family name
    ("user_2", "ci_bot_01", "db_host_01"): a system's or a setting's name, where a person's handle
    holds a name or a coined part ("rizky.hidayat", "caro_mty_88", "j_smith")."""
    parts = [p for p in re.split(r"[^A-Za-z]+", value) if len(p) >= 3]
    return bool(parts) and all(_ordinary_form(p) and not _surname(p) for p in parts)


def _initial_surname(word: str) -> bool:
    """A user name of a given name's initial and a listed family name ("dkowalski", "lwei"),
    no dictionary word."""
    return (word.islower() and word.isalpha() and 4 <= len(word) <= 20 and _surname(word[1:])
            and not _ordinary(word))


def _account_names(text: str) -> Iterator[Span]:
    for m in _CLI_USER.finditer(text):
        low = m.group(1).lower()
        # "$USER" is a variable; "login -u with your user name" explains the option
        if not low.startswith("$") and low not in _NOT_ACCOUNT_NAMES and low not in _ENGLISH_GLUE \
                and low not in _NOT_NAMES:
            yield Span(m.start(1), m.end(1), "username")
    for m in _ROBOT.finditer(text):
        yield Span(m.start(), m.end(), "username")
    for m in _QUOTED_HANDLE.finditer(text):
        if re.search(r"[\d_.]", m.group(1)) and not _system_account(m.group(1)):
            yield Span(m.start(1), m.end(1), "username")
    for m in _LDAP_USER.finditer(text):
        g = 1 if m.group(1) else 2
        value = m.group(g).strip()
        if _system_account(value):
            continue  # "cn=admin", "cn=Users": a directory's own entries
        # a person's name in a DN ("cn=Anna Weber,ou=People") is a name
        kind = "person_name" if " " in value and value[:1].isupper() else "username"
        yield Span(m.start(g), m.start(g) + len(value), kind)
    for m in _ACCOUNT_NAME_CUE.finditer(text):
        value = m.group(1)
        cue = m.group().lower()
        if value.lower() in _NOT_ACCOUNT_NAMES or value.lower() in _NOT_NAMES:
            continue
        # after "by" or a kind of account, a word is a person's name (found by the name rules)
        # or the sentence going on ("a robot account under Projects"): a handle has a digit, a
        # sign or is a given name's initial and a family name
        if re.search(r"\b(?:by|por|oleh|von|par)\b|\bas\b|account|user\b|assign|owner", cue) and not (
                re.search(r"[\d_.$@-]", value) or _initial_surname(value)):
            continue
        if re.search(r"\b(?:by|por|oleh|von|par)\b", cue) and _worded(value):
            continue  # "updated by user_2", "pushed by ci_bot_01": a system's account named in words
        if value[:1].isupper() and not re.search(r"[\d_.$@-]", value):
            continue
        yield Span(m.start(1), m.end(1), "username")


_HANDLE_TOKEN = re.compile(r"(?<![\w@.+-])[A-Za-z][A-Za-z0-9._-]{3,40}(?<![._-])(?![\w@]|[.-]\w)")


_NAME_HANDLE = re.compile(r"(?<![\w@./-])([a-z]{3,20}|[a-z](?=\.))[._-]([a-z]{3,20})\d{0,4}(?![\w@/-]|\.\w)")
_FILE_OR_HOST = frozenset(("com", "net", "org", "io", "dev", "app", "example", "local", "internal", "yaml", "yml",
                           "json", "txt", "log", "csv", "pdf", "png", "jpg", "jpeg", "gif", "exe", "zip", "html",
                           "htm", "xml", "conf", "cfg", "ini", "env", "py", "js", "ts", "md", "sql", "tar", "gz"))


_ROLE_SUFFIX = re.compile(r"[-_.](?:dev|admin|adm|ops|test|qa|prod|work|old|new|ext|da)\Z")


#: the local part of an e-mail address of two words ("kemi.adeyemi@…")
_TWO_WORD_MAILBOX = re.compile(r"(?<![\w.+-])([A-Za-z]{2,20})[._-]([A-Za-z]{2,20})@")


def _derived_handles(text: str, names: Collection[str]) -> Iterator[Span]:
    """A user name built from a name found in the ticket ("Tomasz Zieliński (tzielinski)",
    "j.smith", "anna_kowalska92") or from the two words of an e-mail address in the text
    ("kadeyemi" beside "kemi.adeyemi@…"): a given name or its initial joined to a family name,
    in either order, with or without a dot, dash or underscore, digits after."""
    mailbox_parts = [w for m in _TWO_WORD_MAILBOX.finditer(text) if "@" in text for w in m.groups()]
    names = [*names, *mailbox_parts]
    if not names:
        return
    parts = {name_lexicon.key(_folded(n)) for n in names if len(n) >= 3}
    built = set()
    for a in parts:
        for b in parts:
            if a != b:
                for first in (a, a[0]):
                    for sep in ("", ".", "_", "-"):
                        built.add(first + sep + b)
                built.add(a + b[0])
    for m in _HANDLE_TOKEN.finditer(text):
        token = _folded(m.group()).lower().rstrip("0123456789")
        # (with the role a second account of the same person is for: "akhan-dev", "jsmith_admin")
        token = _ROLE_SUFFIX.sub("", token).rstrip("0123456789")
        if token in built:
            yield Span(m.start(), m.end(), "username")


def _name_handles(text: str) -> Iterator[Span]:
    """A user name of a listed given name (or its initial and a dot) and a listed family name
    joined by a dot, an underscore or a dash ("ines.garcia", "tom_okafor", "s.mueller"), one of
    them no dictionary word; never a file or a host ("notes.txt", "mail.example")."""
    for m in _NAME_HANDLE.finditer(text):
        first, second = m.group(1), m.group(2)
        # (or a given name's initial and a dot: "s.mueller", never a word: "e.mail")
        if (((_given(first) and not (_ordinary(first) and _ordinary(second)))
             or (len(first) == 1 and not _ordinary(second)))
                and _surname(second) and second.lower() not in _FILE_OR_HOST and first.lower() not in _NOT_NAMES):
            yield Span(m.start(), m.end(), "username")


#: a line that is one lower-case handle alone, as a pasted list of users holds them
_LIST_HANDLE_LINE = re.compile(r"(?m)^[ \t]*(?:[-*•][ \t]*)?([a-z][a-z0-9._-]{2,30})[ \t]*,?[ \t]*$")


def _handle_lists(text: str, known: Collection[str] | None) -> Iterator[Span]:
    """The user names of a list pasted one to a line ("HR list from today:\\npgreen\\nasoto\\n
    wkim"): two lines or more in a row, each a lower-case handle alone; the words of the
    dictionary or of the bot's corpus, files and hosts among them stay ("ok\\nthanks")."""
    run: list[re.Match[str]] = []

    def handles(run: list[re.Match[str]]) -> Iterator[Span]:
        if len(run) < 2:
            return
        for m in run:
            value = m.group(1)
            tail = value.rsplit(".", 1)[-1] if "." in value else ""
            if (_ordinary_form(value) or value in _NOT_NAMES or tail in _FILE_OR_HOST or _system_account(value)
                    or (known is not None and name_lexicon.key(value) in known)):
                continue
            yield Span(m.start(1), m.end(1), "username")

    for m in _LIST_HANDLE_LINE.finditer(text):
        if run and text.count("\n", run[-1].end(), m.start()) != 1:
            yield from handles(run)
            run = []
        run.append(m)
    yield from handles(run)


#: an initial glued to a family name, a role or digits after it ("hkaur-admin", "jsmith2")
#: (two consonants no word of the languages tickets come in opens on: "hk", "bw", "jd"; a vowel
#: after the initial, "noch", "vamos", or a vowel for it, "avance", make words)
_GLUED_HANDLE = re.compile(
    r"(?<![\w.@/-])(?!(?:bl|br|ch|cl|cr|dr|dz|fl|fr|gh|gl|gn|gr|kl|kn|kr|ph|pl|pr|ps|rh|sc|sh|sk|sl|sm|sn|sp|st|sv|"
    # (and the onsets of Swahili and other Bantu languages, and of Arabic and Hindi written in
    # Latin letters: "kwenda", "mwisho", "nyumba", "khalas", "bhai")
    r"sw|sz|th|tr|ts|tw|vl|vr|wh|wr|zw|zl|kw|mw|ny|ng|mb|nd|nj|nz|kh|dh|bh|gh)[a-z])([b-df-hj-np-tv-z])([b-df-hj-np-tv-z][a-z]{3,14})"
    r"((?:[-_](?:admin|adm|dev|test|ops|ro|rw|svc|bot|sa|root))?\d{0,4})(?![\w@/-]|\.\w)")


def _glued_handles(text: str, known: Collection[str] | None) -> Iterator[Span]:
    """A user name of an initial and a listed family name written as one ("hkaur-admin",
    "bwilson"): no word of the dictionary nor of the bot's corpus."""
    for m in _GLUED_HANDLE.finditer(text):
        token = m.group(1) + m.group(2)
        if (_surname(m.group(2)) and not _ordinary_form(token) and token not in _NOT_NAMES
                and token not in _CHAT_WORDS and not (known is not None and name_lexicon.key(token) in known)):
            yield Span(m.start(), m.end(), "username")


#: a question of someone's user name ("What's your agent username and workspace?")
_ASKS_USERNAME = re.compile(r"(?i)\b(?:user\s*name|login|handle|benutzername|nutzername|usuario|nom\s+d'utilisateur|"
                            r"gebruikersnaam|nome\s+utente|brukernavn|användarnamn|nazw\w*\s+użytkownika|"
                            r"uživatelsk\w+\s+jméno|nome\s+de\s+usu[áa]rio|nome\s+de\s+utilizador|kullanıcı\s+ad\w*)\b|ユーザー名|用户名|아이디")
#: a reply that opens on a handle ("d.achterberg on workspace westmark-support")
_HANDLE_REPLY = re.compile(r"\A[ \t]*[\"'`]?@?([A-Za-z][A-Za-z0-9]*(?:[._-][A-Za-z0-9]+)+|[a-z]+\d+)[\"'`]?"
                           r"(?=[\s.,;:!)]|\Z)"
                           # (or a word of lower-case letters alone before a comma: "pjablonski, 14.07.1991")
                           r"|\A[ \t]*([a-z]{4,30})(?=,|[ \t]*\Z)")


def asks_username(text: str) -> bool:
    """Whether ``text`` asks for someone's user name."""
    return _ASKS_USERNAME.search(text) is not None


def answered_usernames(text: str) -> Iterator[Span]:
    """The handle a reply to :func:`asks_username` opens with (a dot, a dash, an underscore or
    digits in it), no file, host or version."""
    m = _HANDLE_REPLY.match(text)
    if m is None:
        return
    if m.group(2) is not None:
        if not (_ordinary_form(m.group(2)) or m.group(2) in _CHAT_WORDS or m.group(2) in _NOT_NAMES):
            yield Span(m.start(2), m.end(2), "username")
        return
    value = m.group(1)
    tail = value.rsplit(".", 1)[-1].lower() if "." in value else ""
    # (a middle initial between two names is a person's handle, no host: "tiago.m.nunes")
    host = _HOST_NAME.fullmatch(value) and not re.fullmatch(r"[A-Za-z]{2,}\.[A-Za-z]\.[A-Za-z]{2,}", value)
    if tail not in _FILE_OR_HOST and not host and not re.fullmatch(r"v?\d+(?:\.\d+)+", value):
        yield Span(m.start(1), m.end(1), "username")


_TABLE_IP_OR_MAIL = re.compile(r"(?<![\d.])\d{1,3}(?:\.\d{1,3}){3}(?![\d.])|[\w.+-]+@[\w-]+\.[\w.-]+")


def _table_users(text: str, known: Collection[str] | None) -> Iterator[Span]:
    """The user of an audit log's or an export's row split by "|" that holds an IP or an e-mail
    address ("2026-11-30 22:41:07 | mkaminski | 10.40.12.77 | push | prod/api"): a lower-case
    handle cell no dictionary or corpus knows ("push", "delete" stay)."""
    offset = 0
    for line in text.split("\n"):
        if line.count("|") >= 2 and _TABLE_IP_OR_MAIL.search(line):
            for cell in re.finditer(r"[^|]+", line):
                value = cell.group().strip()
                if not re.fullmatch(r"[a-z][a-z0-9._-]{2,30}", value):
                    continue
                tail = value.rsplit(".", 1)[-1] if "." in value else ""
                if (_ordinary_form(value) or value in _NOT_NAMES or tail in _FILE_OR_HOST or _system_account(value)
                        or (known is not None and name_lexicon.key(value) in known)):
                    continue
                start = offset + cell.start() + cell.group().index(value)
                yield Span(start, start + len(value), "username")
        offset += len(line) + 1
