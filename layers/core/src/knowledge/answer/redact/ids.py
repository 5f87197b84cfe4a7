"""National identity numbers (checked by ``python-stdnum``: strong checks anywhere in a
customer's own message, weaker ones after a word for an identity document), identity documents
(SSN, DNI, NIE, codice fiscale, CPF, NI numbers, passports), customer and account numbers, and
the references of a customer's order, invoice, booking or transfer (the support desk's own
ticket and case numbers stay)."""

from __future__ import annotations

import importlib
import re
from collections.abc import Collection, Iterator
from types import ModuleType

from stdnum.br import cpf
from stdnum.es import dni, nie
from stdnum.exceptions import ValidationError
from stdnum.fr import nir
from stdnum.it import codicefiscale
from stdnum.us import ssn

from .id_documents import documents
from .phones import _INTERNATIONAL
from .spans import Span

_ACCOUNT = re.compile(
    r"(?i)\b(?:account|acct|a/c|acc|konto|compte|cuenta|conta|conto|rekening|konta|"
    # a bank account in more languages (Turkish, Indonesian and Malay, Romanian, Czech and Slovak,
    # Polish, Vietnamese, Russian, Ukrainian)
    r"hesap|hesab[ıi]m?|akaun|cont(?:ul)?|[úu][čc]et|[úu][čc]tu|rachun(?:ek|ku)|tài\s+khoản|сч[её]т|рахун(?:ок|ку)|"
    # the interbank account numbers of Mexico and Argentina, a French or Maghrebi bank's RIB
    r"clabe|cbu|cvu|rib|akaunti|"
    # Peru's interbank code, a Mozambican or Portuguese NIB, a Chilean "cta cte", an Indonesian
    # virtual account, Vietnamese "tk" (tài khoản)
    r"cci|nib|cta(?:\.?\s+cte\.?)?|(?-i:VA)|tk|(?-i:UID))"
    # the account's kind after it ("conta corrente 48213-7", "cuenta de ahorros", "checking account")
    r"(?:\s+(?:corrente|corriente|courant|poupan[çc]a|de\s+ahorros?|de\s+poupan[çc]a|bancari[ao]|banc[áa]ria|"
    r"pessoal|personal|principal|salário|salario|vadesiz|vadeli|tabungan|giro|curent|bankowy|bankovní|"
    r"ngân\s+hàng|текущий|поточний))?"
    # (and the bank's initials or a name ending in "bank", and the owner's word: "rekening BCA
    # 1234567890", "conta NU 12345-6", "No akaun Maybank saya 5140 2288 9176")
    r"(?:\s+(?-i:[A-Z]{2,6}|[A-Z]\w{0,12}bank))?(?:\s+(?:saya|ku|aku|nya|mine|mío|mia|meu|minha|yangu))?"
    r"\.?(?:,?\s*(?:number|no\.?|num|nr\.?|nomor|numarası|numărul|číslo|numer|số|#))?\s*"
    r"(?:is|ist|es|é|ni|:|=|#)?\s*((?:\d[ -]?){5,29}\d)\b"
    # a number with a letter prefix and dashes too ("depuis mon compte CV-7730-2291-04")
    r"|\b(?:account|acct|konto|compte(?:\s+client)?|cuenta|conta|conto|rekening)"
    # the account's kind after it, as the Romance languages place it ("Conta principal SH-88412203")
    r"(?:\s+(?:principal|principale|pessoal|personnel|personal|personale|corrente|courant|corriente|"
    r"empresarial|professionnel|aziendale))?\s*(?:number|no\.?|#)?\s*"
    r"(?:is|ist|est|es|è|é|:|=|#)?\s*((?-i:[A-Z]{1,5})-(?:\d{2,12}(?:-\d{2,12}){1,4}|\d{6,16}))\b"
    r"|\b(?:routing|aba|bsb|transit|sort)\s*(?:code|number|no\.?|#)?\s*(?:is|:)?\s*"
    r"(\d{2}[ -]?\d{2}[ -]?\d{2,5}|\d{3}-\d{3})\b"
    # an account's last digits masked, as a statement prints them ("acct ending ...6021"; four
    # digits alone, "account ending 3391", stay)
    r"|\b(?:account|acct|a/c|checking|savings|chequing)\s+(?:ending|ends)(?:\s+(?:in|with))?[ \t]*:?[ \t]*"
    r"((?:[.•*xX]{2,4}[ -]?)\d{4})(?!\d)"
    r"|\b(?:destination\s+tag|dest(?:ination)?\.?\s+tag|tag|memo)\s*(?:id|number|no\.?|#)?\s*(?:is|:|=)?\s*(\d{4,12})\b"
    # the word for a bank account in Japanese, Korean, Chinese, Hindi, Bengali and Arabic, a bank's
    # name between ("입금 계좌: 국민은행 482701-04-193826", "口座番号 1234567")
    r"|(?:口座(?:番号)?|계좌(?:[ \t]*번호)?|账号|账户|帳號|帳戶|खाता(?:[ \t]+संख्या)?|খাতা|حساب)"
    r"[ \t]*(?:は|는|:|：|是)?[ \t]*"
    r"(?:\S{1,12}(?:銀行|은행|银行|बैंक|ব্যাংক|بنك)[ \t]*)?(\d[\d-]{6,24}\d)(?!\d)"
    # a number of nine digits or more right before a bank's branch or routing code ("correct one is
    # 50100318842276 IFSC HDFC0001827")
    r"|(?<![\w-])(\d{9,18})(?=[ \t,;]+(?i:ifsc|swift|bic|routing|sort[ \t]+code)\b)"
    # a customer's or a member's number in Japanese, Korean and Chinese ("お客様番号はC-2093-7714です")
    r"|(?:お客様番号|顧客番号|会員番号|契約番号|고객[ \t]*번호|회원[ \t]*번호|客户号|客户编号|会员号)"
    r"[ \t]*(?:は|는|은|:|：|是)?[ \t]*"
    r"((?-i:[A-Z]{0,5})[/-]?\d[\d-]{3,20}\d)(?![\d-])"
)
#: numbers that name a customer or their account (an order or invoice number names a purchase,
#: and stays): "customer ID AC-2284913", "Kundennummer ist KD-7781203", "numéro de client : 5521"
_ID_OWNER = (r"(?:account|acct|customer|client|member|membership|player|wallet|profile|loyalty|subscriber|contract|"
             r"policy|patient|kunden|konto|mitglieds|vertrags|klanten|klant|rekening|cliente|socio|abonné|abonado)")
#: (a prefix of two parts too: "TD-ACC-118207")
_ID_VALUE = (r"((?-i:[A-Z]{0,5})[ /-]?\d[\d -]{3,34}\d(?-i:-?[A-Z]{1,2})?|(?-i:[A-Z]{1,5}(?:-[A-Z]{1,5})?)[/-]?\d{4,12}"
             r"(?-i:-?[A-Z]{1,2})?)\b")
_CUSTOMER_NUMBER = re.compile(
    rf"(?i)\b{_ID_OWNER}[ -]?(?:number|no\.?|nr\.?|num|id|nummer|número|numero|code|#)\s*"
    # (a few words before the verb: "customer number on the statements is SH-4471-0928-33")
    r"(?:(?:[a-z]{1,12}[ \t]+){1,4}?(?:is|was|ist|lautet|es|est)[ \t]+|(?:is|ist|lautet|es|est|è|é|:|=|#)?\s*)"
    + _ID_VALUE +
    r"|(?i:\b(?:numéro|número|numero|numer|n[°º]|codice|código|code)\s+(?:(?:de|di|da|do)\s+)?(?:client|cliente|compte|cuenta|conta|"
    r"conto|konta|klienta|socio|membre|adhérent)\s*(?:est|es|è|é|to)?\s*:?\s*)" + _ID_VALUE
    # the member's word before its number ("adhérent n° MGX-77120394", "socio nº 4471")
    + r"|(?i:\b(?:adhérent|adherent|membre|socio|cliente|client|kunde|mitglied)\s+(?:n[°º]|no\.?|nr\.?|numéro|número|"
    r"numero|nummer)\s*:?\s*)" + _ID_VALUE
    # an account at a named bank or exchange, its number after "no." ("account at Kestrel Exchange no. KX-88120457")
    + r"|(?i:\baccount\s+(?:at|with)\s+(?-i:[A-Z][\w&'-]*(?:[ \t]+[A-Z][\w&'-]*){0,3})[ \t,]+(?:no\.?|nr\.?|number|#)"
    r"[ \t]*:?[ \t]*)((?-i:[A-Z]{0,5})-?\d[\d-]{4,20}\d)\b"
    # a code with its prefix right after the word for a customer or member ("customer CV-0043127 withdrew")
    + r"|(?i:\b(?:customer|client|member|end-user|kunde|cliente)\s+)((?-i:[A-Z]{1,5})-\d{4,12})\b"
    # an account's code after its holder's name ("Account holder Nnamdi Okafor, CL-UK-00731266")
    + r"|(?i:\baccount\s+holder\s*:?[ \t]+[^,\n]{2,60},[ \t]*)((?-i:[A-Z]{1,5}(?:-[A-Z]{1,5}){0,2})-?\d{5,14})\b"
)
#: the references of one customer's order, invoice, booking or transfer ("order ORD-558213",
#: "invoice INV-2024-00931", "reference WT-99812"): nothing an article needs, and each leads back
#: to the customer; ``_references`` keeps the support desk's own ticket and case numbers and a
#: code nothing introduces unless its prefix names a purchase
_REFERENCE = re.compile(
    r"(?i:\b(?:order|invoice|inv|transaction|txn|booking|reservation|reference|ref|referens|referenz|referencia|"
    r"référence|riferimento|referentie|tracking|ticket|case|claim|"
    r"receipt|shipment|parcel|bestellung|bestellnummer|rechnung|rechnungsnummer|commande|facture|pedido|factura|"
    r"ordine|fattura|bestelling|factuur|zamówienie|faktura|注文番号|订单号?)(?=[\s:#=：]|(?<=[\u3000-\u9fff]))"
    r"(?:[ \t]*(?:id|number|no\.?|nr\.?|num|#|code|nummer|número|numéro|numero))?(?:[ \t]*(?:is|:|=|#))*[ \t]*)"
    r"((?-i:[A-Z]{0,5})[-/]?\d[\dA-Z-]{3,24}(?<=[\dA-Z]))(?![\w-])"
    # the shape alone, unless the letters name a product's bug, standard or release
    r"|(?<![\w-])(?!(?:BUG|CVE|RFC|ISO|SHA|UTF|PR|ERR|KB|DOC|FAQ|SKU|API|HTTP|TLS|SSL|JIRA|REL|VER|V)-)"
    r"((?-i:[A-Z]{2,5})-\d{4,}(?:-[\dA-Z]+)*)(?![\w-])"
)
#: identity documents and tax numbers, after the words that name them ("passport number X1234567",
#: "SSN 123-45-6789", "NIE X-1234567-L", "CPF 123.456.789-09"); a US social security number and a
#: Brazilian CPF are also recognised by their shape where their checks pass (``python-stdnum``)
_ID_DOCUMENT = re.compile(
    r"(?i:\b(?:passport|passeport|pasaporte|passaporto|passaporte|reisepass|paszport|personalausweis|ausweis|"
    r"national\s+(?:id|identity|insurance)|id\s+card|identity\s+card|id|ssn|social\s+security|tax\s+(?:id|code)|"
    r"tin|nino?|ni(?=[ \t]+(?:number|no\b))|"
    r"driver'?s\s+licen[cs]e|driving\s+licen[cs]e|licen[cs]e|(?-i:DL)(?=[ \t]*(?:#|:|no\b|number))|"
    r"steuer-?id|steuernummer|dni|nie|nif|cpf|"
    r"rg|aadhaar|aadhar|pan|pesel|bsn|codice\s+fiscale|personnummer|cpr|nric|sin|carte\s+d'identit[ée]|"
    r"documento|c[ée]dula|curp|rfc|s[ée]curit[ée]\s+sociale|num[ée]ro\s+insee|nir|sozialversicherungs(?:nummer)?|"
    r"seguridad\s+social|segurança\s+social|burgerservicenummer|codice\s+identificativo))"
    r"(?:[ \t]+(?i:number|no\.?|nr\.?|num|#|card|nummer|número|numero|numéro))?"
    r"(?:[ \t]*(?i:is|ist|es|est|è|é|är|er|on|jest|je|to|:|=|#|-))*[ \t]*"
    r"((?-i:[A-Z]{0,5}[ -]?\d[\dA-Z]*(?:[ .-][\dA-Z]*\d[\dA-Z]*)*(?:[ .-]?[A-Z](?![\w]))?))(?![\w-])"
)
#: a Colombian citizenship card's number, written with dots as a figure is ("CC 1.020.745.318",
#: "C.C. 79.456.123"): after its initials or its name only
_COLOMBIAN_CC = re.compile(r"(?:(?<![\w.])(?-i:C\.\s?C\.|CC)|(?i:\bc[ée]dula(?:\s+de\s+ciudadan[íi]a)?))"
                           r"(?:[ \t]*(?i:no\.?|n[°º]|#|:))?[ \t]*(\d{1,3}(?:\.\d{3}){2,3})(?![\w.,]|[.,]\d)")
#: a French social security number (NIR), grouped as the carte Vitale prints it ("2 89 07 75 112 044 19")
_NIR_SHAPE = re.compile(r"(?<![\w-])[12][ ]?\d{2}[ ]?\d{2}[ ]?(?:\d{2}|2[AB])[ ]?\d{3}[ ]?\d{3}[ ]?\d{2}(?![\w-])")
_SSN_SHAPE = re.compile(r"(?<![\w-])\d{3}-\d{2}-\d{4}(?![\w-])")
#: a Spanish DNI or NIE and an Italian codice fiscale: their check letter decides (``python-stdnum``)
_DNI_SHAPE = re.compile(r"(?<![\w-])\d{8}-?[A-Z](?![\w-])")
_NIE_SHAPE = re.compile(r"(?<![\w-])[XYZ]-?\d{7}-?[A-Z](?![\w-])")
_CODICE_FISCALE_SHAPE = re.compile(r"(?<![\w-])[A-Z]{6}\d{2}[A-Z]\d{2}[A-Z]\d{3}[A-Z](?![\w-])")
#: a UK National Insurance number, spaced or not ("JT 48 29 17 B", "QQ123456C")
_NINO_SHAPE = re.compile(r"(?<![\w-])(?!BG|GB|KN|NK|NT|TN|ZZ)[A-CEGHJ-PR-TW-Z][A-CEGHJ-NPR-TW-Z]"
                         r"(?:[ \t]?\d{2}){3}[ \t]?[A-D](?![\w-])")
#: the words that name a codice fiscale: after them its shape is enough (a check letter mistyped
#: or made up leaves the person's data in it)
_CODICE_CUE = re.compile(r"(?i:\b(?:codice\s+fiscale|cod\.?\s+fisc\.?|c\.\s?f\.|cf|tax\s+code|fiscal\s+code)\b)"
                         r"[^\n]{0,24}\Z")
#: the personal identity numbers of many countries that hold a date of birth and a check digit
#: (or two checks; ``python-stdnum``): a number one of them accepts is a national identity number
#: in a customer's own message even with no word for one (about one random number of ten to
#: thirteen digits in thirty passes one of them)
_STRONG_ID_MODULES = tuple(importlib.import_module(f"stdnum.{name}") for name in (
    "ro.cnp", "cn.ric", "id.nik", "se.personnummer", "pl.pesel", "tr.tckimlik", "mx.curp", "gr.amka", "fr.nir",
    "be.nn", "bg.egn", "fi.hetu", "no.fodselsnummer", "ee.ik", "lt.asmens", "si.emso", "ch.ssn", "za.idnr",
    "br.cpf", "de.idnr", "is_.kennitala", "es.dni", "kr.rrn"))
#: numbers with one check digit or a date only, which one random number in five to ten passes:
#: read after a word for an identity document in the 40 characters before
_CHECKED_ID_MODULES = tuple(importlib.import_module(f"stdnum.{name}") for name in (
    "hr.oib", "in_.aadhaar", "jp.in_", "th.pin", "my.nric", "cz.rc", "at.vnr", "pt.cc", "dk.cpr",
    # (an Irish PPS number's check letter, an Indian PAN's and voter card's letters, a Belgian
    # foreigner's BIS number, a Cuban and a Mauritian number: a shape and a check or a date)
    "ie.pps", "in_.pan", "in_.epic", "be.bis", "cu.ni", "mu.nid"))
#: numbers of nine digits or fewer whose single check digit one number in ten passes: read only
#: right after a word for an identity document
_WEAK_ID_MODULES = tuple(importlib.import_module(f"stdnum.{name}") for name in (
    "nl.bsn", "ca.sin", "il.idnr", "us.ssn", "au.tfn", "cl.rut", "ec.ci", "ie.pps", "dk.cpr", "pt.nif", "es.nie",
    "ar.dni", "bg.pnf", "us.itin", "pe.cui", "ua.rntrc"))
#: a run of digits (and the capitals some numbers hold: a Chinese number's final "X", a CURP) in
#: up to five groups joined by a space, a dot, a dash or a slash; each group is bounded, so a
#: long run of digits stays linear
#: (bounded by letters of the Latin, Greek and Cyrillic alphabets only: in Japanese, Chinese or
#: Hindi a number sits right against the words around it, "マイナンバーは3118 4873 3313です")
_ID_CANDIDATE = re.compile(r"(?<![0-9A-Za-zÀ-ɏͰ-ӿ_.,/+:#$€£-])(?=[0-9A-Z]{0,24}\d)[0-9A-Z]{1,24}"
                           r"(?:[ ./-][0-9A-Z]{1,24}){0,4}(?![0-9A-Za-zÀ-ɏͰ-ӿ_@]|[-./,:]\w)")
#: personal numbers commonly written in groups (an Argentine CUIT "20-31456789-8", a British NHS
#: number "943 476 5919", a Pakistani CNIC, a New Zealand IRD number): read after a word for an
#: identity document when written in their own grouping, like the weaker checks below
_GROUPED_ID_MODULES = tuple(importlib.import_module(f"stdnum.{name}") for name in (
    "ar.cuit", "gb.nhs", "pk.cnic", "nz.ird"))
#: the words for an identity document or a personal number in the languages tickets come in
_ID_WORDS = (
    r"(?i:\b(?:id|identity|identification|national|citizen(?:ship)?|personal|passport|ssn|sin|tin|nin|nino|pesel|"
    r"bsn|nik|ktp|cnp|rrn|egn|oib|emšo|emso|amka|afm|nir|insee|cpr|hetu|henkilötunnu\w*|personnummer|personnr|"
    r"fødselsnummer|fodselsnummer|isikukood|asmens|kimlik|tc|aadhaar|aadhar|curp|rut|dni|nie|nif|cpf|c[ée]dula|"
    r"documento|ahv|avs|svnr|steuer-?id|nric|mykad|mykid|mykas|kad\s+pengenalan|pps|kennitala|zehut|hawiy+a|huwiy+a|iqama|buletin|identitate|"
    r"identité|identidad|identidade|identità|identiteit|tożsamości|dowodu|dowód|paspor|pasaport|passeport|"
    r"pasaporte|passaporto|passaporte|reisepass|paspoort|sozialversicherung\w*|social\s+security|"
    r"s[ée]curit[ée]\s+sociale|s[ée]cu|carte\s+vitale|seguridad\s+social|nomor\s+induk|cmnd|cccd|căn\s+cước|chứng\s+minh|"
    r"cuit|cuil|nhs|cnic|ird|assurance\s+sociale|(?-i:NAS)|(?:code|kod)-?e?\s+mel+i|shenasname|"
    # Nigeria's bank verification number, Malaysia's "IC", Japan's "My Number", Morocco's CIN,
    # Hong Kong's HKID
    r"bvn|(?-i:IC|I/C|CIN|CNIE|My\s+Number)|individual\s+number|hkid|"
    # Singapore's foreigner number, Australia's tax file and Medicare numbers, the Philippines'
    # SSS, UMID and PhilSys numbers, Bangladesh's NID, the Emirates ID, Botswana's Omang, Kenya's
    # Huduma number, Ghana's card
    r"(?-i:FIN)|tfn|tax\s+file|medicare|sss|umid|philsys|psn|nid|emirates\s+id|resident\s+(?:card|permit|id)|"
    r"residence\s+(?:card|permit)|di[čc]|omang|huduma|ghana\s+card|"
    # a Czech or Slovak birth number, a Portuguese citizen card or identity card ("BI n.º"), an
    # Italian identity card
    r"rodn[éeá]\s+[čc][íi]sl\w*|cart[ãa]o\s+de\s+cidad[ãa]o|(?-i:BI)|"
    # Tanzania's national identity number
    r"nida|"
    r"carta\s+d'identit[àa]|(?-i:CIE)|"
    # Serbia's and its neighbours' JMBG, Latvia's personal code, Hungary's personal, tax and
    # health numbers and identity card, a Czech or Slovak identity card, Ukraine's tax number,
    # Swahili's word for an identity card
    r"jmbg|personas\s+kods|matricule|pcn|szem[ée]lyi\s+(?:sz[áa]m|igazolv[áa]ny)\w*|ad[óo]azonos[íi]t[óo]\w*|(?-i:TAJ)|"
    r"ob[čc]ansk\w+\s+pr[ůu]kaz\w*|kitambulisho)\b|"
    r"(?<!\w)r\.[ \t]?č\.|ЈМБГ|ІПН|РНОКПП|ідентифікаційн\w+\s+код\w*|תעודת\s+זהות|ת\.ז\.?|מספר\s+זהות|شناختی\s+کارڈ|"
    r"आधार|पहचान|পরিচয়|জাতীয়|এনআইডি|کد\s*ملی|شناسنامه|"
    r"주민|외국인\s*등록|身份证|身份證|身分證|证件|證件|居民身份|公民身份|الرقم\s+(?:القومي|القومى|الوطني)|マイナンバー|個人番号|هوي[ةه]|الهوي[ةه]|إقامة|اقامة|رقم\s+وطني|"
    r"ταυτότητ\w*|ΑΜΚΑ|ΑΦΜ|ΑΔΤ|паспорт\w*|ИНН|СНИЛС|ЕГН|посвідчен\w*|เลขประจำตัว|บัตรประชาชน)")
#: such a word in the 40 characters before a number
_ID_CUE = re.compile(_ID_WORDS + r"[^\n]{0,30}\Z")
_ID_WORD = re.compile(_ID_WORDS)


def asks_id(text: str) -> bool:
    """Whether ``text`` speaks of an identity document or number ("Which My Number card do you
    hold?"): the number in the other side's reply is read as if the word stood before it."""
    return _ID_WORD.search(text) is not None
#: such a word right before a number, only "number", "is" or a colon between ("CNP 2910305407267",
#: "raqam al-hawiya 1087423356", "身份证号 …")
_ID_CUE_NEAR = re.compile(
    # (a word or two between: "NIF da empresa 194837203", "ID of my company 123")
    _ID_WORDS + r"(?:-[^\W\d_]{1,3})?(?:[ \t]+(?i:da|de|do|del|della|di|der|des|du|of|the|my|our|your|company|"
    r"empresa|firma|société|azienda|entreprise|pessoal|personal|fiscal|is|was|it['’]?s|it\s+is|it\s+was|on\s+it,?)){0,4}"
    r"(?:[ \t]*(?:नंबर|संख्या|নম্বর|(?i:no\.?|nr\.?|number|num[ée]ro|número|numero|nummer|"
    r"number|is|ist|est|es|är|er|jest|là|adalah|n\.?[ \t]?[º°]|号码|號碼|号|號|번호|番号|：|[:#=.-]|"
    # "number" in more languages: Polish, Czech, the South Slavic languages, Romanian, Turkish,
    # Indonesian, Hungarian (and its "sign"), Russian and Ukrainian
    r"numer|[čc][íi]slo|broj|num[ăa]rul|numaras[ıi]|nomor|sz[áa]m\w*|jel|номер)))*[ \t]*\Z")
#: a South Korean resident registration number: a date of birth, a dash and seven digits the
#: first of which gives the century and sex (numbers issued since October 2020 carry no check digit)
_KOREAN_RRN = re.compile(r"(?<![\w-])\d{2}(?:0[1-9]|1[0-2])(?:0[1-9]|[12]\d|3[01])[ \t]{0,2}-[ \t]{0,2}[1-8]\d{6}"
                         r"(?![\w-])")
#: a passport's or an identity card's number after the words that name one, in many languages:
#: letters and digits ("RX 482913", "X1234567", "C01X00T47")
_PASSPORT = re.compile(
    r"(?i:\b(?:passport|passeport|pasaporte|passaporto|passaporte|reisepass|paspoort|paszport\w*|pasaport\w*|"
    r"paspor|passi|pass|seria|série|serie|id\s+card|identity\s+card|carte\s+d'identit[ée]|cartea\s+de\s+identitate|"
    r"buletin\w*|personalausweis(?:nummer)?|ausweis(?:nummer|-?nr\.?)?|(?:reise)?passnummer|dowód\s+osobisty|documento\s+de\s+identidad|(?-i:CIN|CNIE|CIE)|"
    r"dow[óo]d\w*|carta\s+d'identit[àa])\b|паспорт\w*|護照|护照|여권|"
    r"パスポート|पासपोर्ट|جواز(?:\s+السفر)?|διαβατήριο\w*)"
    # (a few words between: "I uploaded my passport twice. number C4RJ8T2K9")
    r"(?:[ \t]*[.,?]?[ \t]+(?-i:[a-z]{2,12})){0,3}[.,?]?"
    r"(?:[ \t]*(?i:no\.?|nr\.?|n\.|number|num[ée]ro|número|numero|nummer|#|n[°º]|номер|नंबर|संख्या|:|=|is|ist|est|es))*"
    # (or a short clause up to a colon: "Passport number he gave for the pre-check: P8834127")
    r"(?:[ \t]+[^\n:.!?]{1,40}?:)?[ \t]*"
    r"((?-i:[A-Z]{1,3})[ -]?\d{5,9}(?-i:[A-Z])?|\d{2}[ \t]?(?-i:[A-Z]{2})[ \t]?\d{5}|"
    r"(?-i:[A-Z])\d{1,2}(?-i:[A-Z])\d{4,7}|\d{6,9}|"
    # an Italian electronic identity card's number ("CA12345AB")
    r"(?-i:[A-Z]{2})\d{5}(?-i:[A-Z]{2})|"
    # a German identity card's nine letters and digits ("L01X00T47", "LZ6311T47")
    r"(?-i:(?=[0-9A-Z]{0,8}\d)(?=[0-9A-Z]{0,8}[A-Z])[0-9A-Z]{9,10}))"
    r"(?![\w-])")


#: a space between two letters of the scripts written without spaces, as a card's OCR leaves
#: them ("個 人 番 号", "公 民 身 份 号 码", "주 민 등 록 번 호")
_CJK_SPACED = re.compile(r"(?<=[\u3040-\u30ff\u3400-\u9fff가-힣])[ \t]+(?=[\u3040-\u30ff\u3400-\u9fff가-힣])")


#: digits one space apart, eight or more (a dash between two of them too)
#: (and a check letter: "1 5 0 8 8 4 - 2 3 7 E")
_SPACED_DIGITS = re.compile(r"(?<![\w.,/+-])\d(?:[ ](?:-[ ])?\d){7,19}(?:[ ][A-Z])?(?![\w]|[ ]\d|[.,]\d)")


def _cue_before(cue: re.Pattern[str], text: str, start: int) -> bool:
    """Whether ``cue`` (a pattern closing on ``\\Z``) ends right before ``start`` within the 40
    characters before it, also with the spaces an OCR puts between CJK letters taken out."""
    if cue.search(text, max(0, start - 40), start) is not None:
        return True
    window = text[max(0, start - 80) : start]
    joined = _CJK_SPACED.sub("", window)
    return joined != window and cue.search(joined, max(0, len(joined) - 40)) is not None


#: a Russian passport's series and number ("серия 4510 номер 123456", "паспорт 45 10 № 123456")
_RU_PASSPORT = re.compile(r"(?i:\b(?:серия|серии|паспорт\w*)[ \t]*)(\d{2}[ \t]?\d{2})[ \t,]*(?i:номер|№|no\.?)[ \t]*"
                          r"(\d{6})\b")


def _groups(value: str) -> list[int]:
    return [len(g) for g in re.split(r"[ ./-]", value) if g]


def _keeps_separators(module: ModuleType) -> bool:
    """Whether ``module`` reads a separator as part of the number (a Finnish number's "-" or "A"
    tells the century, "230791-482H"): only those are asked about a number as written too."""
    try:
        return "-" in module.compact("123456-789A")
    except (ValidationError, ValueError, TypeError, IndexError, KeyError, AttributeError):
        return False


def _accepts(module: ModuleType, compact: str, written: str = "") -> bool:
    """Whether ``module`` accepts the number, its separators removed or (``written``) as written
    where the module keeps a separator (``_keeps_separators``)."""
    try:
        return bool(module.is_valid(compact)) or bool(
            written and written != compact and module in _SEPARATED and module.is_valid(written))
    except (ValidationError, ValueError, TypeError, IndexError, KeyError):
        return False  # a module's own table lacks an entry ("cn.ric" for some counties)


#: the modules that read a separator as part of the number
_SEPARATED = frozenset(m for m in (*_STRONG_ID_MODULES, *_CHECKED_ID_MODULES, *_WEAK_ID_MODULES)
                       if _keeps_separators(m))


def _written_as_its_own(compact: str, value: str) -> bool:
    """Whether a country's personal number accepts ``compact`` and ``value`` is written in that
    number's own grouping ("145 333 142" a Canadian SIN, "4407 2386 2555" an Aadhaar number,
    "20-31456789-8" a CUIT): the grouping is a second piece of evidence beside the check digit."""
    shape = _groups(value)
    if len(shape) < 2:
        return False
    for module in (*_CHECKED_ID_MODULES, *_WEAK_ID_MODULES, *_GROUPED_ID_MODULES):
        if _accepts(module, compact):
            try:
                formatted = module.format(compact)
            except (ValidationError, ValueError, TypeError, IndexError, KeyError, AttributeError):
                continue
            # (a number with no check of its own, an Argentine DNI "1.250.000", is grouped as a figure)
            if _groups(formatted) == shape and not re.fullmatch(r"\d{1,3}(?:[., ]\d{3})+", formatted):
                return True
    return False


def _personal_id(compact: str, cued: bool, near: bool, value: str = "") -> bool:
    """Whether a personal identity number of some country accepts ``compact`` (its check digit
    or the date of birth it holds); the weaker checks only when ``cued`` (a word for an identity
    document in the 40 characters before) or ``near`` (right before), or when cued and ``value``
    is written in the number's own grouping."""
    modules = (*_STRONG_ID_MODULES, *(_CHECKED_ID_MODULES if cued else ()), *(_WEAK_ID_MODULES if near else ()))
    if any(_accepts(module, compact, value) for module in modules):
        return True
    # a tax number is a personal number with its country before it ("DIČ: CZ7903042114")
    if cued and re.fullmatch(r"[A-Z]{2}\d{8,12}", compact) and any(
            _accepts(module, compact[2:], value[2:]) for module in modules):
        return True
    return cued and _written_as_its_own(compact, value)


#: the words before an identity word that make it another thing's ("transaction ID", "order number")
_NOT_PERSONAL_BEFORE = re.compile(r"(?i)\b(?:transaction|txn|tx|txid|order|ticket|case|invoice|reference|ref|request|"
                                  r"job|build|error|trace|session|message|chat|block|hash|device|serial|tracking)\b")


#: what says the number after it is a telephone's ("WhatsApp (11) 98734-2261")
_PHONE_BETWEEN = re.compile(r"(?i)\b(?:whats\s?app|phone|tel|mobile|cell|call|fax|telefon\w*|tel[ée]fono|celular|"
                            r"telemóvel|handy|signal|viber)\b|\(\d")


def _id_word_before(text: str, start: int) -> bool:
    """A word for an identity document in the 60 characters before ``start`` on its line, with no
    word for a telephone between them."""
    window = text[max(text.rfind("\n", 0, start) + 1, start - 60) : start]
    cues = list(_ID_WORD.finditer(window))
    return bool(cues) and not _PHONE_BETWEEN.search(window, cues[-1].end())


def _checked_ids(text: str, customer: bool, asked: bool = False) -> Iterator[Span]:
    """National identity numbers of any country recognised by their check digits: after a word
    for an identity document (``_ID_CUE``), or anywhere in a customer's own message (nine digits
    or more, a strongly checked number only); never a figure written with thousands separators,
    an address of four numbers, a number after a telephone's country code. ``asked``: the other
    side's last message asked for an identity number, which stands for a word before each."""
    phones = [(m.start(), m.end()) for m in _INTERNATIONAL.finditer(text)] if "+" in text else []

    def in_phone(a: int, b: int) -> bool:  # "+966 55 218 7740": a telephone number's national part
        # (or a number after an area code in brackets: "(11) 98452-3107")
        return any(a < e and b > s for s, e in phones) or bool(
            re.search(r"\(\d{1,4}\)[ \t]?\Z", text[max(0, a - 8) : a]))

    for m in _ID_CANDIDATE.finditer(text):
        value = m.group()
        if in_phone(m.start(), m.end()):
            continue
        compact = re.sub(r"[ ./-]", "", value)
        digits = sum(c.isdigit() for c in compact)
        if digits < 6 or len(compact) > 20:
            continue
        cued = asked or _cue_before(_ID_CUE, text, m.start())
        if re.fullmatch(r"\d{1,3}(?:\.\d{1,3}){3}", value) or (
                re.fullmatch(r"\d{1,3}(?:[., ]\d{3})+", value) and not (cued and _written_as_its_own(compact, value))):
            continue  # "15.000.000", "10.0.0.14" (but "NAS 145 333 142", a SIN in its own grouping)
        if not (cued or (customer and digits >= 9)):
            continue
        if asked and text.strip(" \t\n.") == value:
            # the whole reply to a question of an identity number is that number, whatever its country
            yield Span(m.start(), m.end(), "national_id")
            continue
        near = _cue_before(_ID_CUE_NEAR, text, m.start())
        if _personal_id(compact, cued, near, value):
            yield Span(m.start(), m.end(), "national_id")
    # a number an OCR or a careful writer spaced digit by digit ("2 9 0 0 3 1 5 0 1 0 1 8 7 3"):
    # read with the spaces taken out (a dash stays: it may be part of the number)
    for m in _SPACED_DIGITS.finditer(text):
        if in_phone(m.start(), m.end()):
            continue
        written = m.group().replace(" ", "")
        compact = written.replace("-", "")
        cued = _cue_before(_ID_CUE, text, m.start())
        if not (cued or (customer and len(compact) >= 9)):
            continue
        if _personal_id(compact, cued, _cue_before(_ID_CUE_NEAR, text, m.start()), written) or (
                _KOREAN_RRN.fullmatch(written) and cued):
            yield Span(m.start(), m.end(), "national_id")
    for m in _KOREAN_RRN.finditer(text):
        yield Span(m.start(), m.end(), "national_id")
    for m in _PASSPORT.finditer(text):
        if m.group(1).isdigit() and re.match(r"(?i)s[ée]ri[ae]\b", m.group()):
            continue  # "numéro de série 12345678": a device's serial number; an ID card's series has letters
        yield Span(m.start(1), m.end(1), "national_id")
    if customer:
        # after a word for an identity document, a customer's long number is theirs even when
        # no country's check accepts it (a check digit mistyped, a country without a module)
        # (a check letter may close it, "BI 110102847361B"; Tanzania's NIDA number has 20 digits)
        for m in re.finditer(r"(?<![\w.,/+-])\d(?:[ -]?\d){5,21}[A-Z]?(?![\w-]|[.,]\d)", text):
            if in_phone(m.start(), m.end()):
                continue
            # further from the word (other words between: "TIN ko kung kailangan: 304-582-716-000"),
            # a number of nine digits or more in three dashed groups or more, an identity number's shape
            grouped = (m.group().count("-") >= 2 and sum(c.isdigit() for c in m.group()) >= 9
                       and not re.match(r"(?:19|20)\d{2}-[01]\d-", m.group()))  # "2024-11-0042" is a reference
            # (or a run of nine digits or more after such a word in the sentence before, when it is
            # no transaction's or order's: "my tax ID ... It is 49099174027")
            long_run = (re.fullmatch(r"\d[\d ]{7,22}\d", m.group()) is not None
                        and sum(c.isdigit() for c in m.group()) >= 9) and not _NOT_PERSONAL_BEFORE.search(
                text, max(0, m.start() - 60), m.start())
            if _cue_before(_ID_CUE_NEAR, text, m.start()) or (grouped and _cue_before(_ID_CUE, text, m.start())) or (
                    long_run and _id_word_before(text, m.start())):
                yield Span(m.start(), m.end(), "national_id")


_CPF_SHAPE = re.compile(r"(?<![\w.-])\d{3}\.\d{3}\.\d{3}-\d{2}(?![\w-])")


def _code_parts(code: str) -> list[str]:
    return [part.lower() for part in re.findall(r"[^\W_]+", code)]


#: the words that name the support desk's own record of a conversation: its number leads back to
#: nothing but the ticket the draft is made from, and it stays ("we will look into it under
#: reference CV-20931", "Ticket CV-60331", "Following up on ticket 402117")
_CASE_WORDS = frozenset(("ticket", "case", "reference", "ref"))
#: the prefixes that name a customer's purchase, payment or delivery ("INV-88213", "ORD-771204",
#: "TX-88120"): such a code leads back to one customer wherever it stands
_PURCHASE_PREFIX = re.compile(r"(?i)(?:INV|INVOICE|ORD|ORDER|PO|SO|TX|TXN|TRX|TRN|BK|BKG|BOOK|BOOKING|RES|RSV|"
                              r"RCPT|RCP|RECEIPT|SHP|SHIP|TRK|AWB|PAY|PMT|RMA|SUB|CHG|CH|PI|IN|WIRE|WT)(?=[-/#]?\d)")
#: a payment's or a purchase's words before "reference": the reference a payer writes on a
#: transfer, a transaction's reference ("Txn ref 4128 7733 9021") are theirs
_PAYMENT_BEFORE = re.compile(r"(?i)\b(?:payment|transfer|wire|bank\w*|sepa|transaction|txn|deposit|withdrawal|order|"
                             r"överföring|insättning|betalning|"
                             r"invoice|booking|purchase|"
                             r"remittance|überweisung|virement|transferencia|bonifico|pagamento|pago)\b[^.!?\n]{0,20}\Z")


def _references(text: str, known: Collection[str] | None = None) -> Iterator[Span]:
    for m in _REFERENCE.finditer(text):
        group = 1 if m.group(1) else 2
        code = m.group(group)
        purchase = _PURCHASE_PREFIX.match(code.lstrip("#")) is not None
        if group == 2 and not purchase:
            continue  # a code nothing introduces: an error code, a product's or the desk's own number
        cue = (re.findall(r"[^\W\d_]+", m.group()) or [""])[0].lower() if group == 1 else ""
        if (cue in _CASE_WORDS and not purchase
                and not _PAYMENT_BEFORE.search(text, max(0, m.start() - 40), m.start())):
            continue
        parts = _code_parts(code)
        if known is not None and (group == 2 or len(parts) >= 2) and all(part in known for part in parts):
            continue  # a code the bot's own documents hold ("WD-4001" in its error-code table, the
            # example reference "TD-48213" of its help pages)
        if len(re.sub(r"\D", "", m.group(group))) >= 4:
            start = m.start(group)
            # "#A7731-2290": the sign that marks the number goes with it
            yield Span(start - 1 if start and text[start - 1] == "#" else start, m.end(group), "reference")


#: numbers of a shape of their own after the word for them: a US Medicare Beneficiary Identifier
#: ("5KW3-TN8-RE42"), an Australian Individual Healthcare Identifier (16 digits opening on 800360),
#: an Italian electronic identity card after "C.I." ("CA48213JK")
_SHAPED_IDS = re.compile(
    r"(?i:\bmedicare\b)[^\n]{0,30}?(?<![\w-])([1-9][AC-HJKMNP-RT-Y][AC-HJKMNP-RT-Y0-9]\d-?[AC-HJKMNP-RT-Y]"
    r"[AC-HJKMNP-RT-Y0-9]\d-?[AC-HJKMNP-RT-Y]{2}\d{2})(?![\w-])"
    r"|(?i:\bihi\b)[^\n\d]{0,20}(8003[ ]?60\d\d[ ]?\d{4}[ ]?\d{4})(?!\d)"
    r"|(?:\bC\.I\.|(?i:carta\s+d'identit[àa]|\bcie\b))[ \t]*(?:(?i:n\.?|nr\.?|no\.?|numero|n[°º])[ \t]*:?[ \t]*)?"
    r"([A-Z]{2}\d{5}[A-Z]{2})(?![\w])"
    # a Greek identity card (two capital Greek letters and six digits, "ΑΚ 284193"), a Portuguese
    # citizen card (eight digits, a check digit, two letters and a digit: "14829375 4 ZX7")
    r"|(?<![\w])([Α-Ω]{1,2}[ -]?\d{6})(?![\w])"
    r"|(?<![\w-])(\d{8}[ ]?\d[ ]?[A-Z]{2}\d)(?![\w-])"
    # an Indian PAN: five letters (the fourth the holder's kind), four digits and a check letter
    r"|(?<![\w-])([A-Z]{3}[ABCFGHLJPT][A-Z]\d{4}[A-Z])(?![\w-])"
    # a document's number after the words for one or for an identity card ("Dokumentnummer
    # T22M0P81N2", "het nummer op mijn ID-kaart IXR4K71P2", "numéro de document 18AB4420")
    r"|(?i:dokumentnummer|documentnummer|ausweisnummer|document\s+number|num[ée]ro\s+(?:du\s+|de\s+)?document|"
    r"n[úu]mero\s+(?:do\s+|de\s+)?documento|numero\s+(?:del\s+|di\s+)?documento|numer\s+dokumentu|"
    r"[čc][íi]slo\s+dokladu|id-kaart|identiteitskaart|personalausweis|id-kort|henkilökortti)"
    r"[^\n\d]{0,16}?(?<![\w-])((?=[A-Z0-9]*\d[A-Z0-9]*\d)(?=[A-Z0-9]*[A-Z])[A-Z0-9]{6,12}|\d{6,12})(?![\w-]|[ ]\w)")


def _id_documents(text: str) -> Iterator[Span]:
    for m in _SHAPED_IDS.finditer(text):
        g = next(i for i in range(1, 8) if m.group(i))
        yield Span(m.start(g), m.end(g), "national_id")
    yield from documents(text, lambda start: _cue_before(_ID_CUE, text, start))
    for m in _COLOMBIAN_CC.finditer(text):
        yield Span(m.start(1), m.end(1), "national_id")
    for m in _RU_PASSPORT.finditer(text):
        yield Span(m.start(1), m.end(2), "national_id")
    for m in _ID_DOCUMENT.finditer(text):
        value = m.group(1)
        if re.match(r"ID[ \t]", m.group()) and re.fullmatch(r"\d{5}(?:-\d{4})?", value) and \
                re.search(r",[ \t]*\Z", text[max(0, m.start() - 3) : m.start()]):
            continue  # "Boise, ID 83706": Idaho and a ZIP code
        if len(re.sub(r"\D", "", value)) >= 4:
            yield Span(m.start(1), m.end(1), "national_id")
    for pattern, module in ((_SSN_SHAPE, ssn), (_CPF_SHAPE, cpf), (_DNI_SHAPE, dni), (_NIE_SHAPE, nie),
                            (_NIR_SHAPE, nir),
                            (_CODICE_FISCALE_SHAPE, codicefiscale)):
        for m in pattern.finditer(text):
            if module.is_valid(m.group()) or (
                    module is codicefiscale and _CODICE_CUE.search(text, max(0, m.start() - 60), m.start())):
                yield Span(m.start(), m.end(), "national_id")
    for m in _NINO_SHAPE.finditer(text):
        yield Span(m.start(), m.end(), "national_id")


#: a code of letters and digits after the words for one's account ID within the next sentence
#: ("your account ID is shown under Profile › Account. For your reference it's CV-7730-1185-42")
_ACCOUNT_ID_LATER = re.compile(r"(?i:\b(?:your|my)\s+account\s+(?:id|number|no\.?)\b)[^\n]{0,100}?"
                               r"(?<![\w-])((?-i:[A-Z]{2,5})-\d{3,}(?:-\d+)*)(?![\w-])")


#: a British sort code and its account number ("20-45-77 31926654")
_SORT_CODE_ACCOUNT = re.compile(r"(?<![\w-])\d{2}-\d{2}-\d{2}[ \t]+\d{8}(?![\w-])")


def _accounts(text: str) -> Iterator[Span]:
    for m in _SORT_CODE_ACCOUNT.finditer(text):
        yield Span(m.start(), m.end(), "account_number")
    for m in _ACCOUNT_ID_LATER.finditer(text):
        yield Span(m.start(1), m.end(1), "account_number")
    for pattern in (_ACCOUNT, _CUSTOMER_NUMBER):
        for m in pattern.finditer(text):
            group = next(g for g in range(1, (pattern.groups or 1) + 1) if m.group(g))
            yield Span(m.start(group), m.end(group), "account_number")
