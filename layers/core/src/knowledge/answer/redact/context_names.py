"""People's names read from their context in a turn: a relation ("my husband Rahul"), names in
lower case after a cue, a sign-off line, a signature's last line, names in CJK, right-to-left
and Indic scripts, and CJK names that stand alone."""

from __future__ import annotations

import re
from collections.abc import Iterator

from .. import name_lexicon
from .spans import Span
from .words import (
    _CHAT_WORDS,
    _CJK_NOT_NAMES,
    _COMMON_VERBS,
    _COMPANY_WORDS,
    _ENGLISH_GLUE,
    _FOREIGN_GLUE,
    _NAME_VERBS,
    _NAME_WORD,
    _NOT_NAMES,
    _PARTICLE,
    _UPPER,
    _given,
    _lower_case_writer,
    _ordinary,
    _ordinary_form,
    _surname,
)

#: someone named by their relation to the writer, or as the one to talk to
_RELATION = re.compile(
    r"(?i:\bmy\s+(?:husband|wife|partner|brother|sister|mother|mom|mum|father|dad|son|daughter|friend|colleague|"
    r"boss|manager|accountant|assistant|cousin|uncle|aunt|grandmother|grandfather|fianc[ée]e?|boyfriend|girlfriend|"
    r"neighbou?r|employee|client|stepson|stepdaughter|nephew|niece|grandson|granddaughter)s?(?:-in-law)?|\b(?:talk|speak|spoke|talked|spoken|chat|chatted|speaking)\s+(?:to|with)|"
    r"\bask(?:ed)?\s+for|\bcc|\bcontact|\bforward(?:ed)?\s+(?:it\s+)?to|"
    # a customer named in an agent's note ("Note: customer Jess Marsh.")
    r"\b(?:customer|client|cliente|kunde|kundin|klant)\s*:?(?=[ \t]+(?-i:[A-ZÀ-Þ]))|"
    # the same relations in German, Spanish, French, Italian, Portuguese, Dutch and Polish (its
    # cases too: "rachunek jest na żonę, Kasię")
    r"\b(?:meine?|mi|ma|mon|mia|mio|minha|meu|mijn)\s+(?:frau|mann|ehefrau|ehemann|sohn|tochter|bruder|schwester|"
    r"kollegin|kollege|esposa|esposo|marido|mujer|mulher|hij[oa]|herman[oa]|filh[oa]|irmão|irmã|femme|mari|épouse|"
    r"époux|fils|fille|frère|s(?:œ|oe)ur|collègue|moglie|marito|figli[oa]|fratello|sorella|collega|vrouw|man|"
    r"echtgenote|echtgenoot|zoon|dochter|broer|zus)|"
    r"\b(?:żon[aęyie]|żonie|mąż|męża|mężem|córk[aęi]|siostr[aęy]|brat[a]?|koleżank[aęi])|"
    r"\b(?:someone|somebody|a\s+(?:guy|man|woman|lady|person|girl|boy|user|customer|agent)|person)\s+"
    r"(?:called|named))\s*,?[ \t]+"
    r"([^\W\d_][^\W\d_'’-]*(?:[ \t]+[^\W\d_][^\W\d_'’-]*){0,2})"
)
#: a word in lower case: the letters of Latin, Latin Extended-A and Additional, and accents written
#: apart ("nguyễn văn an")
_LOWER_NAME_WORD = r"[a-zà-ÿā-žạ-ỹ][a-zà-ÿā-žạ-ỹ\u0300-\u036f'’-]+"
#: a name written in lower case after the words that introduce one ("this is jake thompson")
_LOWER_CUE = re.compile(
    r"(?i:\b(?:(my\s+name\s+is|name\s+is|me\s+llamo|je\s+m'appelle|ich\s+heiße|kontoinhaber(?:in)?|"
    r"mi\s+nombre\s+es|me\s+chamo|meu\s+nome\s+é|mon\s+nom\s+est|mi\s+chiamo|il\s+mio\s+nome\s+è|"
    r"mein\s+name\s+ist|"
    r"account\s+holder|card\s*holder|titulaire|titular|intestatario|rekeninghouder|beneficiary|"
    # in more languages (Indonesian, Spanish, Portuguese, French, Turkish, Polish, Czech, Romanian,
    # Vietnamese, Tagalog, Swahili)
    r"nama\s+saya|nama\s+lengkap|atas\s+nama|a\s+nombre\s+de|em\s+nome\s+de|au\s+nom\s+de|benim\s+adım|adım|"
    r"ismim|ad\s+soyad|nazywam\s+się|mam\s+na\s+imię|imię\s+i\s+nazwisko|jmenuji\s+se|jméno|mă\s+numesc|"
    r"numele\s+meu\s+(?:e|este)|tên\s+tôi\s+là|họ\s+tên|ang\s+pangalan\s+ko\s+(?:po\s+)?ay|ako\s+(?:po\s+)?si|"
    r"jina\s+langu\s+ni|"
    r"naitwa)|this\s+is|i\s+am|i'?m|it'?s|"
    r"signed|soy|ich\s+bin|je\s+suis)"
    rf"\s*[:,-]?[ \t]+)({_LOWER_NAME_WORD}(?:[ \t]+{_LOWER_NAME_WORD})?)((?:[ \t]+{_LOWER_NAME_WORD}){{0,2}})"
)
_POSSESSIVE_NAME = re.compile(rf"(?<![\w'’-])([{_UPPER}][^\W\d_]+)['’]s\b()")

_LOWER_PAIR = re.compile(r"(?<![\w'’-])([a-zà-ÿ][a-zà-ÿ'’-]{2,})[ \t]+([a-zà-ÿ][a-zà-ÿ'’-]{2,})(?![\w'’-])")
#: a listed given name in lower case before "here" ("hey, dmitri here")
_LOWER_HERE = re.compile(r"(?:^|[,.!]\s*|\b(?i:hi|hey|hello|yo)[,!]?\s+)([a-zà-ÿ][a-zà-ÿ'’-]+)[ \t]+here\b")
#: the words a message is signed off with, in the languages tickets come in
_SIGN_OFF_WORDS = (
    r"thanks|thank\s+you|thx|ty|cheers|regards|best|br|gracias|merci|danke|grazie|obrigad[oa]|"
    r"pozdrawiam|pozdrowienia|z\s+poważaniem|s\s+pozdravem|díky|děkuji|saludos|atentamente|un\s+saludo|abraços|"
    r"cumprimentos|atenciosamente|cordialement|grüße|lg|mfg|groeten|groetjes|saygılarımla|teşekkürler|"
    r"hälsningar|hilsen|terveisin|üdvözlettel|köszönöm|salamat|terima\s+kasih|cảm\s+ơn|asante|shukran|"
    r"mulțumesc|multumesc|cu\s+stimă|с\s+уважением|спасибо|дякую|з\s+повагою")
#: a sign-off and a name closing the message, in lower case as a lower-case writer signs ("thanks,
#: liam", "pozdrawiam ryszard kamiński"): a listed given name and up to two words more
_LOWER_SIGN_OFF = re.compile(
    rf"(?i:\b(?:{_SIGN_OFF_WORDS}))"
    # (and the courtesy word after it: "salamat po, juan", "terima kasih kak, dewi")
    r"(?:[ \t]+(?i:po|kak|pak|bu|mas|mbak|ya))?"
    r"[,!.]?[ \t]+([^\W\d_][^\W\d_'’-]+)((?:[ \t]+[^\W\d_][^\W\d_'’-]+){0,2})[ \t]*[.!]*[ \t]*\Z")
#: a line that is only a sign-off ("regards", "Best regards,"): the next line is a name
_SIGN_OFF_LINE = re.compile(
    r"(?im)^[ \t]*(?:best\s+regards|kind\s+regards|warm\s+regards|best\s+wishes|many\s+thanks|thanks\s+again|"
    r"yours\s+sincerely|yours\s+truly|sincerely|regards|thanks|thank\s+you|cheers|best|br|mit\s+freundlichen\s+grüßen|"
    r"viele\s+grüße|cordialement|saludos|atentamente|cordiali\s+saluti|pozdrawiam|met\s+vriendelijke\s+groet|"
    r"groetjes|hälsningar|med\s+vänlig\s+hälsning|liebe\s+grüße|grüße|lg|mfg|bien\s+à\s+vous|"
    r"bien\s+cordialement|saludos\s+cordiales|un\s+saludo|distinti\s+saluti|atenciosamente|abraços|cumprimentos|"
    r"groeten|med\s+venlig\s+hilsen|mvh|s\s+pozdravem|saygılarımla|с\s+уважением|thx|rgds|all\s+the\s+best|"
    r"take\s+care|talk\s+soon|best\s+regards\s+from)[ \t]*[,.!]?[ \t]*\n(?:[ \t]*\n)?[ \t]*(?:[-–—~][ \t]*)?"
    r"((?:[^\W\d_]\.[ \t]*)?[^\W\d_][^\W\d_'’.-]*(?:[ \t]+(?:[^\W\d_]\.|[^\W\d_][^\W\d_'’.-]*)){0,3})"
    r"[ \t]*(?:,[^\n]*)?$"
)
#: a line of its own that is a given name and one or two more capitalised words (a signature block
#: with an address or a title under it)
_NAME_LINE = re.compile(
    rf"(?m)^[ \t]*({_NAME_WORD}(?:[ \t]+(?:[{_UPPER}]\.?[ \t]+)?{_NAME_WORD}){{1,2}})[ \t]*$")
#: someone named before the team they work in ("Jasmine from accounting said …")
_FROM_TEAM = re.compile(
    rf"({_NAME_WORD}(?:[ \t]+{_NAME_WORD})?)[ \t]+(?:from|in|at)[ \t]+(?:the[ \t]+|your[ \t]+|our[ \t]+)?"
    r"(?i:support|accounting|accounts|billing|finance|sales|compliance|legal|hr|it|customer\s+service|"
    r"customer\s+success|onboarding|security|payments|the\s+bank|your\s+team|the\s+branch)\b")

#: a message's last line that is one to three capitalised words under a line of text: who wrote it
_LAST_LINE_NAME = re.compile(
    rf"[^\s][ \t]*\n(?:[ \t]*\n)?[ \t]*(?:[-–—~]+[ \t]*)?({_NAME_WORD}(?:[ \t]+{_NAME_WORD}){{0,2}})"
    # (and the initial of a family name: "Magda W.")
    r"([ \t]+[A-Z]\.)?[ \t]*\Z")
#: a line that is a listed given name and one or two capitalised words, alone or before a
#: role ("Brenda Castellano, Office Manager", "Tomás Ybarra | IT"): a signature's name line
_ROLE_LINE = re.compile(rf"(?m)^[ \t]*(?:[-–—~]+[ \t]*)?({_NAME_WORD})"
                        rf"((?:[ \t]+(?:{_PARTICLE}[ \t]+)?{_NAME_WORD}){{1,3}})"
                        r"[ \t]*(?:$|,[ \t]|[|–—(]|[ \t]-[ \t])")
_LOWER_LAST_WORD = re.compile(r"[^\s][ \t]*\n(?:[ \t]*\n)?[ \t]*(?:[-–—~?!.]+[ \t]*)?([a-zà-ÿ][a-zà-ÿ'’-]{2,30})"
                              r"\.?[ \t]*\Z")
_LOWER_LAST_LINE = re.compile(r"[^\s][ \t]*\n(?:[ \t]*\n)?[ \t]*(?:[-–—~]+[ \t]*)?([a-zà-ÿ][a-zà-ÿ'’-]{1,30})[ \t]+"
                              r"([a-zà-ÿ][a-zà-ÿ'’-]{0,30}(?:[ \t]+[a-zà-ÿ][a-zà-ÿ'’-]{1,30})?)\.?[ \t]*\Z")

#: names in scripts without capitals: after "I am" (我是, 我叫), before "です"/"입니다" after a greeting,
#: between "मेरा नाम" and "है"
_CJK_NAMES = re.compile(
    # (after a role or a company, "我是运维刘洋", "我是华信云的刘洋": the name is what follows it)
    r"(?:我是|我叫|我的名字是|名字叫|私は|저는|제\s*이름은)\s*(?:[\u4e00-\u9fff]{1,10}的)?"
    r"(?:运维工程师|运维|工程师|开发|管理员|负责人|项目经理|经理|技术支持|客服|主管|组长|财务|会计)?"
    r"([\u4e00-\u9fff\u3400-\u4dbf]{2,4}|[가-힣]{2,4})"
    r"|[、,，]\s*([\u4e00-\u9fff\u3400-\u4dbf]{1,4}(?:[ \u3000][\u4e00-\u9fff\u3400-\u4dbf]{1,3})?)"
    r"(?=です|と申します|といいます)"
    r"|[,，]\s*([가-힣]{2,4})(?=입니다|이에요|예요|라고\s*합니다)"
    r"|(?:^|(?<=[。！\n]))\s*([\u4e00-\u9fff]{1,4}(?:[ \u3000][\u4e00-\u9fff]{1,3})?)(?=です|と申します|といいます)"
    r"|(?:मेरा|मेरी)\s+नाम\s+([\u0900-\u097f]+(?:\s+[\u0900-\u097f]+)?)\s+(?=है)"
    # Thai: "ผมชื่อ" / "ฉันชื่อ" / "ชื่อ" and a given name with its family name
    r"|ชื่อ\s*([\u0e00-\u0e7f]+(?:\s[\u0e00-\u0e7f]+)?)"
    # a listed family name before an honorific or a greeting ("佐藤様", "田中さん", "刘洋您好", "김 님"),
    # the shortest run that comes before one ("王先生您好": 王)
    r"|(?<![\u4e00-\u9fff\u3005])([\u4e00-\u9fff][\u4e00-\u9fff\u3005]{0,2}?)(?=様|さん|さま|殿|先生|女士|小姐|老师|老師|经理|經理|您好|你好)|(?<![가-힣])([가-힣]{2,4})(?=\s?(?:님|씨))"
    # the name a field or a sentence gives ("名字不对，应该是李薇", "姓名：王芳")
    r"|(?:名字|姓名|名前|氏名)[^。！？\n]{0,10}?(?:应该是|應該是|是|为|為|は|：|:)\s*([\u4e00-\u9fff]{2,4})(?![\u4e00-\u9fff])"
    # the person in charge a line names ("담당자 정해린 / 02-…", "担当：佐藤", "负责人 刘洋"), and a directory's
    # common name in such a script ("cn=오승우 uid=swoh")
    r"|(?:담당자|担当者?|负责人|負責人|联系人|聯絡人|(?<![\w])cn=)[ \t]*[:：]?[ \t]*([가-힣]{2,4}|[\u4e00-\u9fff]{2,4})"
    r"(?![가-힣\u4e00-\u9fff])"
    # "name" alone and the name closed by a stop or a comma ("नाम राहुल वर्मा।")
    r"|(?<![\u0900-\u097f])नाम\s+([\u0900-\u097f]+(?:\s+[\u0900-\u097f]+)?)(?=\s*[।|,])"
)
#: Arabic, Persian and Hebrew: the word after "my name is" (اسمي, اسم من, שמי), and the next one
#: when it is a family name (العلي, بن …) or a listed name; after "I am" (أنا) only a listed name
_RTL_NAMES = re.compile(
    r"(?:(اسمي|اسمى|إسمي|اسم\s+من|نام\s+من|שמי|קוראים\s+לי)|(?:أنا|انا|معك|من|אני))\s+"
    # (letters only: the Arabic comma "،" and question mark close the name)
    r"([\u0620-\u065f\u066e-\u06d3\u06fa-\u06ff\u05d0-\u05ea\u05f3'-]+)"
    r"(?:\s+([\u0620-\u065f\u066e-\u06d3\u06fa-\u06ff\u05d0-\u05ea\u05f3'-]+))?"
)


def _lower_name_part(word: str) -> bool:
    return (word.lower() not in _NOT_NAMES and word.lower() not in _ENGLISH_GLUE and len(word) >= 2
            and word.lower() not in _FOREIGN_GLUE
            and (not _ordinary(word) or _surname(word) or _given(word)))


#: a letter of the scripts of South Asia (Devanagari, Bengali, Gurmukhi, Gujarati, Oriya, Tamil,
#: Telugu, Kannada, Malayalam, Sinhala) with its vowel signs, not its digits or danda
_INDIC = r"[\u0900-\u0963\u0971-\u09e5\u09f0-\u0a65\u0a70-\u0ae5\u0af0-\u0b65\u0b70-\u0be5\u0bf0-\u0c65" \
         r"\u0c70-\u0ce5\u0cf0-\u0d65\u0d70-\u0dff]"
#: the words after a name in those languages that are no part of it ("है" is, "और" and)
_INDIC_STOP = frozenset(("है", "हूँ", "हूं", "हैं", "और", "था", "थी", "से", "का", "की", "के", "আমি", "এবং", "আর",
                         "বলছি", "ও", "এর", "ਹੈ", "છે", "ஆகும்", "நான்"))
#: (a word of a script with capitals, Cyrillic or Greek, is a name's only when capitalised; Arabic
#: and Hebrew names after a cue are read by ``_RTL_NAMES``, alone on a signature line here)
_SCRIPT_NAME_WORD = (rf"(?:{_INDIC}+|[А-ЯЁІЇЄ][\u0400-\u04ff]+|[Α-ΩΆ-Ώ][\u0370-\u03ff\u1f00-\u1fff]+|"
                     rf"[\u0600-\u06ff]+|[\u0590-\u05ff]+|[\u1200-\u137f]+)")
#: a name in a script without capitals (or a writer's own) after the words for "my name is" in
#: the languages of those scripts and in English: "मेरा नाम …", "আমার নাম …", "меня зовут …",
#: "με λένε …", "نام من …", "my name is …"
_SCRIPT_NAME_CUE = re.compile(
    r"(?:(?:मेरा|हमारा)\s+नाम|আমার\s+নাম|ਮੇਰਾ\s+ਨਾਮ|મારું\s+નામ|என்\s+பெயர்|నా\s+పేరు|ನನ್ನ\s+ಹೆಸರು|എന്റെ\s+പേര്|"
    r"(?:नाम|নাম|ਨਾਮ|નામ|பெயர்|పేరు|ಹೆಸರು|പേര്|имя|ім'я|όνομα)[ \t]*:|"
    r"(?i:меня\s+зовут|мене\s+звати|моё\s+имя|мое\s+имя|мо[её]\s+им'я|με\s+λένε|ονομάζομαι|"
    r"το\s+όνομά\s+μου\s+είναι|на\s+имя|на\s+ім['’ʼ]я|(?:фио|піб|фамилия|прізвище)[ \t]*:)|"
    r"(?i:\bname\s+is|name\s*:|signed)|"
    # "name" with no colon, in a Latin sentence, before a word of a script without capitals
    # ("bKash number 01711…, name রোকেয়া বেগম")
    rf"(?i:\b(?:name|naam|jina|pangalan))(?=[ \t]+(?:{_INDIC}|[\u0600-\u06ff\u0590-\u05ff\u1200-\u137f])))"
    rf"\s*[:,-]?[ \t]+({_SCRIPT_NAME_WORD}(?:[ \t]+{_SCRIPT_NAME_WORD}){{0,3}})")
_SIGNED_WORD = rf"(?:{_INDIC}+|[А-ЯЁІЇЄ][\u0400-\u04ff]+|[Α-ΩΆ-Ώ][\u0370-\u03ff\u1f00-\u1fff]+)"
#: a line of one to three words of such a script alone after a closing ("धन्यवाद,\nराजेश कुमार")
_SCRIPT_SIGNATURE = re.compile(
    r"(?m:(?:^|(?<=[.!?।]))[ \t]*(?i:धन्यवाद|शुक्रिया|ধন্যবাদ|শুভেচ্ছান্তে|спасибо|с\s+уважением|дякую|"
    r"з\s+повагою|ευχαριστώ|με\s+εκτίμηση|thanks|thank\s+you|regards|best|cheers)"
    rf"[ \t,.!।]*\n[ \t]*({_SIGNED_WORD}(?:[ \t]+{_SIGNED_WORD}){{0,2}})[ \t]*$)")


_ARABIC_LETTERS = r"[\u0620-\u065f\u066e-\u06d3\u06fa-\u06ff]+"
_HEBREW_LETTERS = r"[\u05d0-\u05ea](?:[\u05d0-\u05ea\u05f3'-]*[\u05d0-\u05ea'])?"
#: the words that say a name follows in the scripts without capitals, by language: "name:", "in
#: the name of", "account holder" (``strong``: whatever words follow are the name) or a title of
#: address, "Mr", "Ustadh" (``title``: the next word is the name, the words after it only when they
#: read as a family name)
_SCRIPT_CUES: tuple[tuple[str, str, str], ...] = (
    # Arabic
    (_ARABIC_LETTERS, "strong", r"الاسم(?:\s+الكامل)?[ \t]*[:：]|اسم\s+العميل[ \t]*[:：]?|صاحب\s+الحساب[ \t]*[:：]?|"
                                r"باسم"),
    (_ARABIC_LETTERS, "title", r"أستاذ(?:ة)?|الأستاذ(?:ة)?|السيد(?:ة)?|الأخ(?:ت)?|الدكتور(?:ة)?|دكتور(?:ة)?|"
                               r"عزيزي|عزيزتي"),
    # Persian
    (_ARABIC_LETTERS, "strong", r"نام(?:\s+و\s+نام\s+خانوادگی)?[ \t]*[:：]|به\s+نام"),
    (_ARABIC_LETTERS, "title", r"آقای|خانم|جناب"),
    # Hebrew
    (_HEBREW_LETTERS, "strong", r"שם(?:\s+מלא)?[ \t]*[:：]|השם\s+שלי(?:\s+הוא)?|על\s+שם|בשם"),
    (_HEBREW_LETTERS, "title", r"מר|גב'|גברת|ד\"ר"),
    # a greeting and one word before a comma or "!" ("مرحباً خالد،", "שלום דנה,"): the one greeted
    (_ARABIC_LETTERS, "greeting", r"مرحب[اًا]+|مرحبا|أهلاً|أهلا|اهلا|سلام|صباح\s+الخير|مساء\s+الخير|درود"),
    (_HEBREW_LETTERS, "greeting", r"שלום|היי|בוקר\s+טוב|ערב\s+טוב|תודה"),
    # a relation ("my father", "my son", "my wife") or "the name" with no colon in Arabic, Urdu,
    # Persian, Hindi, Bengali and Punjabi (``listed``: the first word a listed given name, or "عبد…")
    (_ARABIC_LETTERS, "listed", r"الاسم|اسمه|اسمها|والدي|والدتي|أبي|أمي|ابني|ابنتي|بنتي|أخي|اخي|أختي|اختي|زوجي|"
                                r"زوجتي|لوالدي|لوالدتي|لأخي|لابني|والد|والدہ|بیٹے|بیٹی|بیٹا|بھائی|بہن|شوہر|بیوی|"
                                r"امی|ابو|پدرم|مادرم|برادرم|خواهرم|همسرم"),
    (rf"{_INDIC}+", "listed", r"बेटे|बेटा|बेटी|भाई|बहन|पिता|पिताजी|माँ|माता|पति|पत्नी|दोस्त|ছেলে|মেয়ে|ভাই|বোন|"
                              r"বাবা|মা|আম্মু|আব্বু|স্বামী|স্ত্রী|ਪੁੱਤਰ|ਧੀ|ਭਰਾ|ਭੈਣ|ਪਿਤਾ|ਮਾਂ|ਪਤਨੀ|ਪਤੀ"),
    # the greetings of Hindi, Bengali, Tamil, Telugu, Kannada, Malayalam, Punjabi, Gujarati
    (rf"{_INDIC}+", "greeting", r"नमस्ते|नमस्कार|प्रणाम|নমস্কার|হ্যালো|வணக்கம்|నమస్కారం|ನಮಸ್ಕಾರ|നമസ്കാരം|"
                                r"ਸਤ\s+ਸ੍ਰੀ\s+ਅਕਾਲ|નમસ્તે"),
)
#: the honorifics said after a name greeted ("राहुल जी", "রফিক ভাই")
_AFTER_NAME = r"(?:[ \t]+(?:जी|साहब|सर|জি|ভাই|দিদি|সাহেব|அவர்களே))?"
#: a letter of Arabic, Hebrew or an Indic script, and of Cyrillic: a text without one skips their patterns
_RTL_LETTER = re.compile(rf"[\u05d0-\u05ea\u0620-\u06ff]|{_INDIC}")
_CYRILLIC_LETTER = re.compile(r"[\u0400-\u04ff]")
_SCRIPT_CUE_PATTERNS = tuple(
    (re.compile(rf"(?<![\w'\"])(?:{cue})[ \t]+({letters}(?:[ \t]+{letters}){{0,3}})"
                # (and the vocative particle after an Arabic greeting: "مرحباً يا فاطمة،")
                if strength != "greeting" else rf"(?<![\w'\"])(?:{cue})(?:[ \t]*,?[ \t]+يا)?[ \t]*,?[ \t]+({letters})"
                                               rf"{_AFTER_NAME}(?=[ \t]*[,،!।])"),
     strength)
    for letters, strength, cue in _SCRIPT_CUES)
#: the words of those languages that go on a sentence after a name: "and", "in", "from", "on", "with",
#: "I", "number", "phone", the courtesy after a name ("respected", "dear"), "street", "of"
_SCRIPT_STOP = frozenset(("و", "في", "من", "على", "مع", "أنا", "انا", "رقم", "الجوال", "الهاتف", "المحترم",
                          "المحترمة", "الكريم", "الكريمة", "العزيز", "العزيزة", "شكرا", "شكراً", "هو", "هي", "عن",
                          "را", "از", "به", "با", "هستم", "است", "محترم", "الله", "خدا", "شرکت",
                          "של", "עם", "את", "אני", "רחוב", "טלפון", "מספר", "ו", "על", "זה", "הוא", "היא",
                          # what follows a greeting and is no one's name ("welcome", "to you", "to all")
                          "بك", "بكم", "بكِ", "وسهلا", "وسهلاً", "عليكم", "جميعا", "جميعاً", "دوست", "دوستان",
                          "רב", "לכולם", "לך", "לכם", "רבה", "חברים",
                          # "sir", "madam", "friends", "all", "you", "brother", "sister" in Hindi, Bengali, Tamil
                          "सर", "मैडम", "दोस्तों", "दोस्त", "सभी", "आप", "जी", "भाई", "दीदी", "सबको", "स्यार",
                          "স্যার", "ম্যাডাম", "সবাই", "আপনি", "ভাই", "দিদি", "বন্ধুরা", "சார்", "மேடம்",
                          "அனைவருக்கும்", "நண்பர்களே",
                          # "thank you", after a greeting and a comma ("नमस्ते, धन्यवाद।")
                          "धन्यवाद", "शुक्रिया", "ধন্যবাদ", "நன்றி", "ధన్యవాదాలు", "ಧನ್ಯವಾದ", "നന്ദി", "ਧੰਨਵਾਦ",
                          "આભાર", "شكرا", "شكراً", "ممنون", "مرسی", "תודה",
                          # the words after a name in Urdu, Hindi, Bengali, Punjabi ("of", "to", "from", "is")
                          "کی", "کے", "کا", "کو", "نے", "سے", "ہے", "ہیں", "میں", "اور", "طرف", "को", "ने", "के",
                          "की", "का", "से", "है", "और", "में", "कि", "কে", "এর", "থেকে", "ਨੂੰ", "ਦੇ", "ਦੀ", "ਦਾ", "ਤੋਂ"))
#: what opens an Arabic family name ("المنصوري", "بن علي", "عبد الله", "أبو بكر")
_ARABIC_FAMILY = ("ال", "بن", "ابن", "أبو", "ابو", "بنت", "عبد")


def _cued_script_names(text: str) -> Iterator[Span]:
    """Names in Arabic, Persian and Hebrew script after the words of ``_SCRIPT_CUES``: after a
    strong cue the words up to a stop, a small word or the fourth ("الاسم: خالد عبد الله
    المنصوري", "על שם יוסי בן-דוד"); after a title the next word and the family name after it
    ("أستاذ خالد"). A first word with the article ("السيد الرئيس", "בשם החברה") names a thing
    unless it is a listed given name."""
    rtl = _RTL_LETTER.search(text) is not None
    for pattern, strength in _SCRIPT_CUE_PATTERNS if rtl else ():
        for m in pattern.finditer(text):
            words = list(re.finditer(r"\S+", m.group(1)))
            first = words[0].group()
            if first in _SCRIPT_STOP or (first.startswith(("ال", "ה")) and not _given(first)):
                continue
            if strength == "listed" and not (_given(first) or first.startswith("عبد")):
                continue  # "ابني يريد …": after a relation, only a name the lists hold
            kept = [words[0]]
            for w in words[1:]:
                word = w.group()
                # "عبد" ("servant of") and the word after it are one name ("عبد الله")
                compound = kept[-1].group() == "عبد"
                if not compound and (word in _SCRIPT_STOP or (strength == "title" and not (
                        word.startswith(_ARABIC_FAMILY) or _given(word) or _surname(word)))):
                    break
                kept.append(w)
            yield Span(m.start(1), m.start(1) + kept[-1].end(), "person_name")
    for m in _CYRILLIC_GREETING.finditer(text) if _CYRILLIC_LETTER.search(text) else ():
        given, family = m.group(1), m.group(2)
        if not _vocative_given(given):
            continue
        # a family name or a patronymic after it ("Ірино Петрівно", "Андрію Шевченку")
        end = m.end(2) if family and (_surname(family) or re.search(r"(?:ович|евич|івн|овн|евн|ичу)\w*$", family)) \
            else m.end(1)
        yield Span(m.start(1), end, "person_name")


#: a message's last line of two to four words of Arabic, Persian or Hebrew script under a line of
#: text: a signature when it opens on a listed given name or "عبد" ("…\nعبدالله القحطاني")
_RTL_LAST_LINE = re.compile(rf"\S[ \t]*\n[ \t]*((?:{_ARABIC_LETTERS}|{_HEBREW_LETTERS})"
                            rf"(?:[ \t]+(?:{_ARABIC_LETTERS}|{_HEBREW_LETTERS})){{1,3}})[ \t]*\Z")


#: a line of its own of two to four words of Arabic or Persian script, or of two words of Thai
#: (which spaces no words inside a sentence): a name signed on its own line, wherever it stands
#: in the message ("خالد العتيبي\nجوال: 0551 …", "ศิริพร แก้วมณี")
_SCRIPT_NAME_LINE = re.compile(rf"(?m)^[ \t]*((?:{_ARABIC_LETTERS})(?:[ \t]+(?:{_ARABIC_LETTERS})){{1,3}}"
                               r"|[\u0e01-\u0e4e]{3,}[ \t]+[\u0e01-\u0e4e]{3,})[ \t]*$")
#: the Thai words of a greeting, a thanks or politeness, which no name holds
_THAI_NOT_NAME = re.compile(r"ขอบคุณ|สวัสดี|ครับ|ค่ะ|คะ|นะ|ด้วย|กรุณา|ช่วย|ไม่|ได้")


def _rtl_signatures(text: str) -> Iterator[Span]:
    m = _RTL_LAST_LINE.search(text) if _RTL_LETTER.search(text) else None
    if m is not None:
        words = m.group(1).split()
        if (_given(words[0]) or words[0].startswith("عبد")) and not any(w in _SCRIPT_STOP for w in words):
            yield Span(m.start(1), m.end(1), "person_name")
    if not re.search(r"[\u0620-\u06ff\u0e01-\u0e4e]", text):
        return
    for line in _SCRIPT_NAME_LINE.finditer(text):
        words = line.group(1).split()
        if "\u0e01" <= words[0][0] <= "\u0e4e":
            if not _THAI_NOT_NAME.search(line.group(1)):
                yield Span(line.start(1), line.end(1), "person_name")
        elif (_given(words[0]) or words[0].startswith("عبد")) and not any(w in _SCRIPT_STOP for w in words):
            yield Span(line.start(1), line.end(1), "person_name")


#: a greeting in Ukrainian or Russian and the name it addresses ("Доброго дня, Ірино!")
_CYRILLIC_GREETING = re.compile(
    r"(?:^|(?<=[.!?\n])[ \t]*)(?i:доброго\s+(?:дня|ранку|вечора)|добрий\s+(?:день|вечір)|вітаю|привіт|"
    r"добрый\s+(?:день|вечер)|доброе\s+утро|здравствуйте|привет|шановн(?:ий|а)|уважаем(?:ый|ая)|"
    r"дорог(?:ой|ая|ий|а))[ \t]*,?[ \t]+([А-ЯЁІЇЄҐ][а-яёіїєґ'’ʼ]+)(?:[ \t]+([А-ЯЁІЇЄҐ][а-яёіїєґ'’ʼ]+))?")
#: the vocative endings of Ukrainian (and Russian of old) and the nominative each comes from:
#: "Ірино" of "Ірина", "Олександре" of "Олександр", "Петре" of "Петро", "Андрію" of "Андрій",
#: "Маріє" of "Марія"
_VOCATIVE_ENDINGS = (("о", "а"), ("е", ""), ("е", "о"), ("ю", "й"), ("є", "я"), ("у", ""), ("ю", "я"))


def _vocative_given(word: str) -> bool:
    """A listed given name, or its vocative (Ukrainian addresses one so in a greeting)."""
    return _given(word) or any(word.endswith(end) and _given(word[: -len(end)] + base)
                               for end, base in _VOCATIVE_ENDINGS)


def _script_names(text: str) -> Iterator[Span]:
    """Names in the scripts of South Asia, Cyrillic, Greek, Arabic and Hebrew after a name cue
    or alone on the line after a closing: words up to the first that is no part of a name."""
    for pattern in (_SCRIPT_NAME_CUE, _SCRIPT_SIGNATURE):
        for m in pattern.finditer(text):
            words = list(re.finditer(r"\S+", m.group(1)))
            kept = []
            for w in words:
                if w.group() in _INDIC_STOP:
                    break
                kept.append(w)
            if kept:
                yield Span(m.start(1) + kept[0].start(), m.start(1) + kept[-1].end(), "person_name")


def _context_names(text: str) -> Iterator[Span]:
    for m in _RELATION.finditer(text):
        words = list(re.finditer(r"\S+", m.group(1)))
        kept: list[re.Match[str]] = []
        for i, w in enumerate(words):
            word = w.group()
            capital = word[0].isupper()
            lower_name = _given(word) and (not _ordinary(word) or (i == 0 and word.lower() not in _NAME_VERBS
                                                                   and word.lower() not in _COMMON_VERBS))
            if word.lower() in _NOT_NAMES or (not capital and not lower_name):
                break
            # after a first name no dictionary has, the next capitalised word is its family
            # name even when it is a word too ("my wife Mei Ling")
            joined = i == 1 and bool(kept) and kept[0].group()[0].isupper() and not _ordinary(kept[0].group())
            if capital and _ordinary(word) and not _given(word) and not (joined and word.lower() not in _NAME_VERBS):
                break
            kept.append(w)
            if not capital:
                break
        if kept:
            yield Span(m.start(1) + kept[0].start(), m.start(1) + kept[-1].end(), "person_name")
    for m in _LOWER_CUE.finditer(text):
        first, _, second = m.group(2).partition(" ")
        second = second.strip()
        if first.lower() in _FOREIGN_GLUE:
            continue  # "la titular con su propio código": a small word of the sentence
        surname = bool(second) and (_surname(second) or _given(second)) and not _ordinary(second)
        # "this is mark": a given name that is also a word needs a surname after it, unless
        # the cue says outright that a name follows ("my name is mark")
        # (or the writer writes in lower case: "hi, it's marco again. i talked to ...")
        # (a family name first, as Vietnamese and Chinese write it, after words that say outright
        # a name follows: "tên tôi là nguyễn văn an")
        family_first = (bool(m.group(1)) and bool(second) and _surname(first) and not _ordinary(first)
                        and _lower_name_part(second))
        if len(first) < 2 or (not family_first and (len(first) < 3 or not (
                _given(first) and (m.group(1) or surname or not _ordinary(first)
                                   or (_lower_case_writer(text) and first.lower() not in _NAME_VERBS
                                       and first.lower() not in _NOT_NAMES and len(first) >= 3))))):
            continue
        surname = surname or family_first
        # after words that say outright a name follows ("my name is george papadopoulos",
        # "mi nombre es andrés felipe gómez", "mi nombre es jhon fredy ramírez ospina"), a
        # lower-case writer's second to fourth words are the name's too up to the first ordinary
        # word ("my name is george and i …")
        end = m.end(2) if surname else m.start(2) + len(first)
        if m.group(1) and second and (surname or _lower_name_part(second)):
            end = m.end(2)
            for more in re.finditer(r"\S+", m.group(3)):
                # (after a family name first, a short listed given name closes it: "nguyễn văn an")
                if not _lower_name_part(more.group()) and not (family_first and _given(more.group())
                                                               and more.group() not in _FOREIGN_GLUE):
                    break
                end = m.start(3) + more.end()
        yield Span(m.start(2), end, "person_name")
    for m in _SIGN_OFF_LINE.finditer(text):
        words = list(re.finditer(r"\S+", m.group(1)))
        # the name is the line's opening words, up to a word like "from" ("Marta from Support")
        kept = [words[0]]
        for w in words[1:]:
            if w.group().lower() in _NOT_NAMES or (w.group()[0].islower() and _ordinary(w.group())):
                break
            kept.append(w)
        if all(w.group().lower() in _NOT_NAMES or (_ordinary(w.group()) and not _given(w.group())) for w in kept) \
                or any(w.group().strip(",.").lower() in _COMPANY_WORDS and len(w.group()) >= 4 for w in words):
            continue  # "Support Team", "The billing team", "The Ops Team", "Departamento de Soporte"
        yield Span(m.start(1) + kept[0].start(), m.start(1) + kept[-1].end(), "person_name")
    for m in _FROM_TEAM.finditer(text):
        # a given name that is also a word needs a surname ("Bill from accounting" may be a bill)
        named = m.group(1).split()
        if (named[0].lower() not in _NOT_NAMES and not named[0].isupper()
                and ((_given(named[0]) and len(named) > 1) or not _ordinary(named[0]))):
            yield Span(m.start(1), m.end(1), "person_name")
    for m in _NAME_LINE.finditer(text):
        signed = m.group(1).split()
        rest = [w for w in signed[1:] if len(w.rstrip(".")) > 1]
        # under a sentence, a given name then words no dictionary has in any form ("Graham
        # Whitlock"), never a heading of ordinary words ("Job Types") or an acronym ("Server IP")
        above = text[: m.start()].rstrip(" \t\n")
        if (above and above[-1] in ".!?," and _given(signed[0]) and signed[0].lower() not in _NOT_NAMES and rest
                and not any(w.isupper() or _ordinary_form(w) or w.lower() in _NOT_NAMES or w.lower() in _COMPANY_WORDS
                            for w in rest)):
            yield Span(m.start(1), m.end(1), "person_name")
    for m in _LOWER_PAIR.finditer(text):
        # a given name and a family name in lower case ("my account says jon smyth"): the first no
        # word of the dictionary, the second a listed family name
        first, second = m.group(1), m.group(2)
        if (_given(first) and not _ordinary(first) and first not in _NOT_NAMES and _surname(second)
                and second not in _NOT_NAMES and second not in _ENGLISH_GLUE and second not in _CHAT_WORDS
                and second not in _COMMON_VERBS and first not in _FOREIGN_GLUE and second not in _FOREIGN_GLUE):
            yield Span(m.start(), m.end(), "person_name")
    for m in _LOWER_HERE.finditer(text):
        if _given(m.group(1)) and not _ordinary(m.group(1)):
            yield Span(m.start(1), m.end(1), "person_name")
    for m in _LOWER_SIGN_OFF.finditer(text):
        signed, after = m.group(1), list(re.finditer(r"\S+", m.group(2)))
        # the words after it are the family name unless one is a word ("thanks liam see you")
        family = bool(after) and all(
            w.group().islower() and not _ordinary_form(w.group()) and w.group() not in _NOT_NAMES
            and w.group() not in _CHAT_WORDS and w.group() not in _FOREIGN_GLUE for w in after)
        # (a given name that is a word too signs with a listed family name after it: "gracias, maria
        # lópez")
        if not (signed.islower() and _given(signed) and signed not in _FOREIGN_GLUE and (
                not _ordinary(signed) or (family and any(_surname(w.group()) for w in after)))):
            continue
        end = m.start(2) + after[-1].end() if family else m.end(1)
        yield Span(m.start(1), end, "person_name")
    for m in _LOWER_LAST_LINE.finditer(text):
        # a given name and a family name no dictionary has, in lower case, on a message's last
        # line under a line of text ("… all my savings\nolena kovalenko")
        first, rest = m.group(1), [w for w in m.group(2).split() if not re.fullmatch(_PARTICLE, w.lower())]
        if (_given(first) and first not in _NOT_NAMES and first not in _CHAT_WORDS and first not in _ENGLISH_GLUE
                and all((len(w) == 1 and not _ordinary(first)) or (
                    len(w) > 1 and not _ordinary_form(w) and w not in _NOT_NAMES and w not in _CHAT_WORDS)
                    for w in rest)):
            yield Span(m.start(1), m.end(2), "person_name")
    for m in _LOWER_LAST_WORD.finditer(text):
        # a listed given name alone in lower case on a message's last line ("… nothing.\nahmed")
        word = m.group(1)
        if (_given(word) and not _ordinary_form(word) and word not in _NOT_NAMES and word not in _CHAT_WORDS
                and word not in _ENGLISH_GLUE and word not in _FOREIGN_GLUE):
            yield Span(m.start(1), m.end(1), "person_name")
    for m in _LAST_LINE_NAME.finditer(text):
        signed = m.group(1).split()
        if (any(w.lower() in _NOT_NAMES or (w.isupper() and len(w) > 1) for w in signed)
                or signed[-1].rstrip(".").lower() in _COMPANY_WORDS
                or (_ordinary(signed[0]) and not _given(signed[0])) or (len(signed) == 1 and len(signed[0]) < 3)
                or (_ordinary(signed[0]) and all(_ordinary_form(w) for w in signed[1:]) and len(signed) > 1)):
            continue  # "Thanks", "The Support Team", "Brightwave Ltd"
        yield Span(m.start(1), m.end(2) if m.group(2) else m.end(1), "person_name")
    for m in _ROLE_LINE.finditer(text):
        # a family name may be a word of the dictionary too ("Castellano", "Baker") after a given
        # name that is none; the line holds no other word before its role
        # (or a given name no list has before listed family names: "Gurpreet Singh Sandhu, Ludhiana")
        first, rest = m.group(1), m.group(2).split()
        opens = _given(first) or (any(_surname(w) for w in rest) and all(
            _surname(w) or _given(w) or not _ordinary(w) for w in rest)
            and name_lexicon.key(first) not in name_lexicon.place_names())
        if (opens and not _ordinary(first) and first.lower() not in _NOT_NAMES
                and not any(w.lower() in _NOT_NAMES or w.lower() in _ENGLISH_GLUE or w.lower() in _COMPANY_WORDS
                            or w.isupper() for w in rest)):
            yield Span(m.start(1), m.end(2), "person_name")
    for m in _RTL_NAMES.finditer(text):
        first, second = m.group(2), m.group(3)
        if not m.group(1) and not _given(first):
            continue
        family = bool(second) and (second.startswith(("ال", "بن", "ابن", "أبو", "بنت")) or _given(second)
                                   or _surname(second))
        yield Span(m.start(2), m.end(3) if family else m.end(2), "person_name")
    for m in _CJK_NAMES.finditer(text):
        group = next(g for g in range(1, 12) if m.group(g))
        # (a family name of two or three characters alone before a Japanese honorific, at the
        # start of a sentence or after a line or a space, is one however rare: "藤本様の個人アカウント")
        opens = group == 7 and len(m.group(group)) >= 2 and text[m.end(group) : m.end(group) + 1] in "様さ殿" \
            and (m.start(group) == 0 or text[m.start(group) - 1] in " \t\n\u3000。、！？「（(")
        if group in (4, 7, 8, 9) and not (_surname(m.group(group)[:2]) or _surname(m.group(group)[:1]) or opens):
            continue  # "大丈夫です", "お客様" open a message too: a listed surname must open the name
        # a family name of one character alone before an honorific ("王先生")
        alone = group == 7 and len(m.group(group)) == 1 and _surname(m.group(group))
        if (len(m.group(group).replace(" ", "").replace("\u3000", "")) < 2 and not alone) \
                or m.group(group) in _CJK_NOT_NAMES:
            continue
        yield Span(m.start(group), m.end(group), "person_name")
    for m in _LATIN_BEFORE_HONORIFIC.finditer(text):
        if m.group(1).lower() not in _NOT_NAMES and m.group(1).lower() not in _COMPANY_WORDS:
            yield Span(m.start(1), m.end(1), "person_name")
    yield from _cjk_names_alone(text)
    yield from _script_names(text)
    yield from _cued_script_names(text)
    yield from _rtl_signatures(text)


#: a name in Latin letters before a Japanese or Korean honorific ("Okafor様", "Smithさん", "Kim님")
_LATIN_BEFORE_HONORIFIC = re.compile(rf"(?<![A-Za-zÀ-ÿ0-9'’-])({_NAME_WORD})(?=様|さん|さま|殿|氏|님|씨)")
_HANGUL_WORD = re.compile(r"(?<![가-힣])[가-힣]{3,}")
#: (read at every start, so that a department before a name leaves the name whole: "経理部 渡辺 真理子";
#: "々" repeats the character before it, "佐々木")
_HAN_SPACED = re.compile(r"(?<![\u4e00-\u9fff\u3005\u3040-\u30ff])(?=([\u4e00-\u9fff\u3005]{1,3})[ \u3000]"
                         r"([\u4e00-\u9fff\u3005]{1,3})(?![\u4e00-\u9fff\u3005]))")
_HAN_RELATION = re.compile(
    r"(?:朋友|同事|老公|老婆|丈夫|妻子|太太|儿子|女儿|兒子|女兒|父亲|母亲|爸爸|妈妈|媽媽|哥哥|姐姐|弟弟|妹妹|经理|經理|老板|"
    r"老闆|同学|同學|客户|客戶|会计|會計)(?:叫|是)?\s*([\u4e00-\u9fff]{2,4})")
_CJK_LAST_NAME = re.compile(r"[。！!\n][ \t\u3000]*([\u4e00-\u9fff]{2,4}|[\u4e00-\u9fff]{1,2}[\u3040-\u309f]{2,4})"
                            r"[ \t\u3000]*\Z")
_HAN_ALONE = re.compile(r"(?<![\u4e00-\u9fff\u3040-\u30ff])[\u4e00-\u9fff]{2,3}(?![\u4e00-\u9fff\u3040-\u30ff])")


def _cjk_given(rest: str) -> bool:
    """A given name after a family name: in kana, a listed Japanese one, or of the characters of
    listed Chinese ones."""
    return (bool(re.fullmatch(r"[\u3040-\u309f]{2,4}", rest)) or rest in name_lexicon.japanese_given_names()
            or all(c in name_lexicon.han_given_characters() for c in rest))


def _cjk_names_alone(text: str) -> Iterator[Span]:
    """Names in scripts without capitals that nothing introduces: a Korean word that opens on a
    listed family name and goes on with a listed given name ("김민준입니다"); a listed Japanese or
    Chinese family name, a space and a given name ("佐藤 健太"); two or three Chinese characters
    standing alone (two only on a line of their own), a listed family name and characters of
    listed given names ("王小明", a signature "王芳")."""
    given = name_lexicon.given_names()
    for m in _HANGUL_WORD.finditer(text):
        word = m.group()
        if _surname(word[0]) and word[1:3] in given and word[:3] not in _CJK_NOT_NAMES:
            yield Span(m.start(), m.start() + 3, "person_name")
    for m in _HAN_SPACED.finditer(text):
        if _surname(m.group(1)):
            yield Span(m.start(1), m.end(2), "person_name")
    for m in _CJK_LAST_NAME.finditer(text):
        # a message that closes on a listed family name and a given name after its last full
        # stop ("よろしくお願いします。佐藤健太", "わかりました。山田あかり"): who wrote it
        run = m.group(1)
        # (after a family name of two characters, a Japanese one, any given name of one or two)
        if run not in _CJK_NOT_NAMES and any(
                _surname(run[:cut]) and len(run) > cut and (cut == 2 or _cjk_given(run[cut:])) for cut in (2, 1)):
            yield Span(m.start(1), m.end(1), "person_name")
    chars = name_lexicon.han_given_characters()
    for m in _HAN_RELATION.finditer(text):
        # "我的朋友王小明说": after a relation, a listed family name and given-name characters
        run = m.group(1)
        for cut in (2, 1):
            if _surname(run[:cut]):
                rest = run[cut:]
                n = 0
                while n < min(2, len(rest)) and rest[n] in chars:
                    n += 1
                if n:
                    yield Span(m.start(1), m.start(1) + cut + n, "person_name")
                break
    for m in _HAN_ALONE.finditer(text):
        word = m.group()
        # two characters make many words ("黄金", "海洋"): alone they must be a line of their own
        line = text[text.rfind("\n", 0, m.start()) + 1 : (text.find("\n", m.end()) + 1 or len(text) + 1) - 1]
        if len(word) == 2 and line.strip(" \t-–—~") != word:
            continue
        for cut in (1, 2):
            if len(word) > cut and _surname(word[:cut]) and all(c in chars for c in word[cut:]):
                yield Span(m.start(), m.end(), "person_name")
                break


#: a question of someone's name ("please confirm the full name on your account", "¿Y el nombre del
#: titular?"): the next message of the other side that is a name alone gives one
_ASKS_NAME = re.compile(
    r"(?i:\b(?:full\s+name|your\s+name|name\s+on\s+(?:the|your)|name\s+of\s+the\s+(?:account\s+)?holder|"
    r"account\s+holder|registered\s+name|legal\s+name|nombre|titular|nom\s+complet|votre\s+nom|"
    r"vollständigen\s+namen|ihren\s+namen|nome\s+completo|seu\s+nome|il\s+suo\s+nome|imię\s+i\s+nazwisko|"
    r"volledige\s+naam|uw\s+naam|ad\s+soyad|nama\s+lengkap|họ\s+tên)\b)|姓名|名字|お名前|氏名|이름")
#: a reply that opens on a name alone on its line ("Pablo Serrano Gil", "Chiamaka Adeyemi.")
_NAME_REPLY = re.compile(rf"\A[ \t]*({_NAME_WORD}(?:[ \t]+{_NAME_WORD}){{1,3}})[ \t]*[.,]?[ \t]*(?:\n|\Z)")


def asks_name(text: str) -> bool:
    """Whether ``text`` asks for someone's name."""
    return _ASKS_NAME.search(text) is not None


def answered_names(text: str) -> Iterator[Span]:
    """The name a reply to :func:`asks_name` opens with, alone on its first line: two to four
    capitalised words, none a word that names no one."""
    m = _NAME_REPLY.match(text)
    if m and not any(w.lower() in _NOT_NAMES or w.lower() in _ENGLISH_GLUE or w.lower() in _COMPANY_WORDS
                     for w in m.group(1).split()):
        yield Span(m.start(1), m.end(1), "person_name")
