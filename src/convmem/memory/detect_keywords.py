"""Credentials stated in words: a secret noun, in context, next to its value.

"my password is X", "wifi password: X", "DB_PASSWORD=X", "X as my password", "login: bob / X",
"PIN 1234", "the alarm code is 4821" ... in English, German, French, Spanish, Italian, Portuguese
and Dutch, any letter case. Three kinds of secret noun, because what counts as a value differs: a
password can be any word, a PIN or door code is digits (or a short code), and an API key or token
should look machine-made. Words that *describe* the password ("expired", "abgelaufen", "trop
court") are not values, so talking about a password passes and giving one does not.

The text arrives normalised (``normalize.py``), so look-alike letters, invisible characters and
spaced-out labels are already undone.
"""

from __future__ import annotations

import re
from typing import Final

from convmem.memory.detect_common import HEX_OR_UUID, Finding, looks_random

# Documentation writes placeholders where a secret goes; they are not disclosures.
PLACEHOLDER: Final = re.compile(
    r"""(?ix)^(?:
        pass(?:word|wd)?|pwd|secret|changeme|your[_-]?pass(?:word)?|my[_-]?pass(?:word)?
        |<[^>]*>|\{[^}]*\}|\[[^\]]*\]|\$\{?[A-Za-z_][A-Za-z0-9_]*\}?|%s|%\([a-z_]+\)s
        |\*+|x+|\.{3}|\u2026|redacted|hidden|example|dummy|placeholder
    )$"""
)

_PASSWORD_NOUN: Final = (
    # English
    r"pass\s?words?|passwd|passcode|passphrase|pwd|pw|seed\s+phrase|recovery\s+phrase"
    r"|mnemonic(?:\s+phrase)?|master\s+password|login\s+password"
    # German (compounds: WLAN-Kennwort, Firmenpasswort), French, Spanish, Italian, Portuguese, Dutch
    r"|[a-zäöü]*-?(?:passwort|kennwort)|zugangsdaten|mot\s+de\s+passe|mdp|phrase\s+(?:secr[eè]te"
    r"|de\s+passe)|contrase[ñn]a|clave(?:\s+de\s+acceso)?|parola\s+d'ordine|parola\s+chiave"
    r"|senha|palavra[\s-]passe|[a-z]*-?wachtwoord|wachtzin"
)
_PLACE: Final = (
    r"(?:alarm|alarme|alarma|allarme|alarmanlage|door|gate|garage|safe|lock|locker|building"
    r"|keypad|house|apartment|flat|office|lockbox|padlock|front\s+door|back\s+door|t[üu]r|haust[üu]r"
    r"|tor|tresor|schlie[ßs]fach|immeuble|porte|portail|coffre|cadenas|puerta|portal|garaje"
    r"|caja\s+fuerte|porta|portone|cassaforte|port[ãa]o|garagem|cofre|deur|kluis|poort|cancello"
    r"|cancela|verja|port[óo]n|hek|voordeur|voorhek|storage\s+unit|shed|mailbox|bike\s+lock)"
)
# a payment card's PIN: "code de carte bleue", "código de la tarjeta", "Code der Bankkarte"
_CARD_PLACE: Final = (
    r"(?:(?:credit\s+|debit\s+|bank\s+)?card|carte(?:\s+bleue|\s+bancaire|\s+de\s+cr[ée]dit)?"
    r"|[a-zäöü]*karte|tarjeta|carta|cart[ãa]o|[a-z]*kaart|bancomat)"
)
_PLACE_ADJ: Final = r"(?:(?:front|back|main|side|garden|burglar|house|home|car|office)\s+)?"
_PIN_NOUN: Final = (
    r"pin(?:[\s-]?(?:code|number|no\.?|nummer|nr\.?))?|pincode|keypad"
    r"|(?:door|gate|alarm|garage|lock|safe|locker|entry|building|keypad|access|unlock|lockbox"
    r"|key\s+safe)\s+code|combination|2fa\s+code|otp|one[\s-]time\s+(?:password|code)"
    r"|verification\s+code|backup\s+codes?|recovery\s+codes?"
    r"|geheimzahl|geheimnummer|zugangscode|t[üu]rcode|alarmcode|entsperrcode|tresorcode"
    r"|code\s+secret|code\s+d'acc[eè]s|digicode|code\s+de\s+d[ée]verrouillage|toegangscode|deurcode"
    r"|ontgrendelcode|c[oó]digo\s+(?:de\s+)?(?:acceso|acesso|desbloqueo|desbloqueio)"
    r"|codice\s+(?:di\s+)?(?:accesso|sblocco)"
    # "code for the alarm", "Code für die Alarmanlage", "code de l'alarme", "código de la alarma"
    # "code to open the side gate", "code that unlocks the shed"
    r"|code\s+(?:to|that|which)\s+(?:open|opens|unlock|unlocks|disarm|disarms|get\s+into)\s+"
    r"(?:the\s+|my\s+|our\s+)?"
    + _PLACE_ADJ
    + r"(?:\w+\s+)?"
    + _PLACE
    + r"|(?:code|codice|c[oó]digo)\s+(?:for|to|f[üu]r|von|der|des|vom|de|du|d'|del|dell'|della"
    r"|dello|di|do|da|van|voor)\s*(?:the\s+|my\s+|our\s+|die\s+|den\s+|das\s+|l'|la\s+|le\s+|el\s+"
    r"|il\s+|lo\s+|o\s+|a\s+|het\s+|de\s+)?(?:" + _PLACE_ADJ + _PLACE + r"|" + _CARD_PLACE + r")"
)
_TOKEN_NOUN: Final = (
    r"api[\s_-]?key|apikey|access[\s_-]?key(?:[\s_-]?id)?|secret(?:[\s_-]?(?:access[\s_-]?)?key)?"
    r"|client[\s_-]?secret|auth[\s_-]?token|access[\s_-]?token|refresh[\s_-]?token|bearer[\s_-]?token"
    r"|session[\s_-]?(?:token|cookie|id)|token|private[\s_-]?key|signing[\s_-]?key"
    r"|encryption[\s_-]?key|licen[cs]e[\s_-]?key|product[\s_-]?key|serial[\s_-]?key"
    r"|webhook[\s_-]?secret|credentials?|wi-?fi\s+key|ssh\s+key|api-?schl[üu]ssel|cl[ée]\s+(?:d'api"
    r"|api|secr[eè]te)|clave\s+(?:de\s+)?api|chiave\s+(?:api|segreta)|chave\s+(?:de\s+)?api"
    r"|api-?sleutel"
)
# Between the noun and the verb: "for the admin panel", "für das Firmenkonto", "du wifi", "del
# banco", "di Instagram", "do email", "voor de bank", "meiner EC-Karte"; or one capitalised name
# ("mot de passe Gmail est"). Bounded to four words.
_PREP: Final = (
    r"for|to|of|on|at|in|f[üu]rs?|vom|von|der|des|meiner|meines|deiner|unserer|zum|zur|de|du|d'"
    r"|del|della|dello|dell'|di|per|do|da|dos|das|no|na|van|voor|bij|op"
)
_FILLER: Final = (
    r"(?:\s+(?:" + _PREP + r")\s*(?:[^\s:=]+\s+){0,3}?[^\s:=]+"
    r"|\s+(?!(?:Manager|Reset|Policy|Generator|Strength|Field|Hint|Prompt|Change|Hash)\b)"
    r"[A-Z][A-Za-z0-9]+)?"
)
_VERB: Final = (
    r"is|was|are|will\s+be|should\s+be|ist|lautet|war|hei[ßs]t|est|c'est|était|sera|es|era|será"
    r"|sería|è|sarà|é|seria|wordt|blijft|equals"
)
# A quoted key ("password": "x", 'api_key' => 'x') closes its quote before the colon.
_LINK: Final = (
    r"(?:'s\s+|[\"'`]?\s*(?:->|=>|[:=])\s*|\s+(?:"
    + _VERB
    + r")\s*:?\s+(?:still\s+|now\s+|jetzt\s+|noch\s+"
    r"|maintenant\s+|ahora\s+|ora\s+|agora\s+|nu\s+)?)"
)
# digits spaced one by one end at a space or at the end of the sentence ("4 8 1 9.")
_VALUE: Final = (
    r"(?P<v>\"[^\"]{1,120}\"|'[^']{1,120}'|`[^`]{1,120}`|\d(?:\s\d){3,9}(?![^\s.,;:!?)\]}])"
    r"|[^\s\"'`\\]+)"
)
_SECRET_PHRASE: Final = re.compile(
    r"(?<![^\W\d_])(?:(?P<pw>"
    + _PASSWORD_NOUN
    + r")|(?P<pin>"
    + _PIN_NOUN
    + r")|(?P<tok>"
    + _TOKEN_NOUN
    + r"))(?![^\W\d_])"
    + _FILLER
    + _LINK
    + _VALUE,
    re.I,
)
_SECRET_WORD_ALL: Final = (
    r"(?:password|passcode|passphrase|pin|passwort|kennwort|mot\s+de\s+passe|mdp|code"
    r"|contrase[ñn]a|clave|parola\s+d'ordine|senha|palavra-passe|wachtwoord|pincode)"
)
# "with the password X", "set my password to X", "changed the PIN to 1234"
_WITH_PASSWORD: Final = re.compile(
    r"\b(?:with|using|use|via|mit|avec|con|com|met)\s+(?:the\s+|dem\s+|le\s+|la\s+|el\s+|il\s+"
    r"|a\s+|o\s+|het\s+)?(?P<pw>" + _SECRET_WORD_ALL + r")\s+(?P<v>[^\s\"'`\\]+)"
    r"|\b(?:set|change[ds]?|reset|update[ds]?|switched)\s+(?:my|the|our)\s+(?:[\w-]+\s+){0,2}?"
    r"(?P<pw2>password|passcode|pin|passphrase)\s+to\s+(?P<v2>[^\s\"'`\\]+)",
    re.I,
)
# "I picked X as my password", "X als Passwort", "X comme mot de passe", "X como contraseña"
_AS_PASSWORD: Final = re.compile(
    r"(?<![^\s\"'`\\])(?P<v>[^\s\"'`\\]{1,200})\s+(?:as|als|comme|como|come)\s+(?:my|the|our|a|mein|das|unser|mon|le|notre"
    r"|mi|la|el|nuestra|mia|il|la\s+mia|minha|a|mijn|het)?\s*(?:\w+\s+)?[a-z]*-?"
    + _SECRET_WORD_ALL
    + r"(?![^\W\d_])",
    re.I,
)
_USER_LABEL: Final = (
    r"login|log-in|credentials?|username|user\s*name|user|sign-?in|benutzer(?:name)?|zugangsdaten"
    r"|anmeldedaten|identifiant|utilisateur|usuario|usuari[oa]|utente|utilizador|usu[áa]rio"
    r"|gebruikersnaam|gebruiker|account"
)
# "login: bob / X", "user: bob pass: X", "Benutzer klaus / Passwort X", "credentials are a / X"
_LOGIN_PAIR: Final = re.compile(
    r"\b(?:" + _USER_LABEL + r")(?:\s+(?:for|f[üu]r|de|du|del|di|do|voor)\s+(?:\S+\s+){0,2}?\S+)?"
    # the login: no angle brackets (markup like "user.</system>" is no "login/password")
    r"\s*(?:is|are|sind|sont|son|sono|s[ãa]o|zijn|:|=)?\s*[^\s/<>]{2,80}"
    r"(?:\s*/\s*(?:(?:" + _PASSWORD_NOUN + r"|pass)\s*:?\s*)?|[\s,;]+(?:(?:and|und|et|y|e|en)"
    r"\s+(?:my\s+|the\s+|mein\s+|das\s+|mon\s+|le\s+|mi\s+|la\s+|il\s+|a\s+|o\s+|mijn\s+"
    r"|het\s+)?)?(?:" + _PASSWORD_NOUN + r"|pass)\s*(?:[:=]|is|ist|est|es|è|é)?\s*)"
    r"(?P<v>[^\s\"'`\\]+)",
    re.I,
)
# Words that follow "password is" when the sentence is *about* the password, not giving it.
_NOT_A_VALUE_WORDS: Final = """
    a an the my your our their his her its this that these those it is are was were be been being
    not no none never also still now just only too very so really quite always usually
    in on at of for to from by with without into onto about over under after before between
    and or but if then than because since when while where which who what how why
    same different wrong right correct incorrect invalid valid expired expiring weak strong secure
    insecure required optional mandatory case sensitive long short hard easy simple complex random
    unique saved stored kept written hidden shared leaked compromised reset changed updated locked
    blocked working broken fine ok okay good bad great terrible useless missing empty blank
    something anything nothing everything somewhere here there below above attached encrypted
    hashed masked needed necessary managed handled out up down off set unset generated rotated
    revoked disabled enabled protected case-sensitive separate personal new old temporary
    default stronger weaker longer shorter one two three four five six seven eight nine ten
    characters chars digits letters numbers symbols words see check ask use try type enter please
    unchanged whatever n/a tbd sent given shown taken known told like all both more less most due
    almost super extremely fairly rather way memorable impossible obvious similar identical unknown
    visible available sufficient insufficient weird silly
    zu nicht sehr falsch richtig abgelaufen geändert gespeichert sicher unsicher lang kurz leer neu
    alt gleich anders geheim vergessen weg gesperrt ungültig gültig schwach stark dasselbe das die
    der ein eine mein meine jetzt immer noch auch irgendwo notiert zurückgesetzt dein ihr
    trop pas très faux correct expiré changé enregistré sûr court vide nouveau ancien le la les un
    une mon ma mes toujours encore aussi oublié bloqué invalide faible fort noté dans sur
    muy demasiado incorrecta correcta caducada cambiada guardada segura larga corta vacía nueva
    antigua el los las una mi mis siempre todavía también olvidada bloqueada inválida válida débil
    fuerte secreta en
    troppo non molto sbagliata corretta scaduta cambiata salvata sicura lunga vuota vecchia il lo
    gli mia mio sempre ancora anche dimenticata bloccata valida debole forte segreta nel sul
    muito não errada expirada alterada curta vazia nova o os as um uma minha meu ainda esquecida
    fraca
    te niet erg fout juist verlopen gewijzigd opgeslagen veilig leeg nieuw oud het een mijn altijd
    nog ook vergeten geblokkeerd ongeldig geldig zwak sterk geheim op
"""
_NOT_A_VALUE: Final = frozenset(_NOT_A_VALUE_WORDS.split())
_PIN_VALUE: Final = re.compile(r"#?\d(?:[ -]?\d){3,9}[#*]?")
# Recovery, verification and door codes such as "8H3K-2J9D-7F4L", "A7K29Q" or "4B719".
_CODE_VALUE: Final = re.compile(
    r"(?=[A-Za-z0-9-]*\d)(?=[A-Za-z0-9-]*[A-Za-z])[A-Za-z0-9]{3,}(?:-[A-Za-z0-9]{3,}){0,5}"
)
# "the passphrase is correct horse battery staple": several words, not a sentence about it
_PASSPHRASE: Final = re.compile(
    r"(?<![^\W\d_])(?:pass\s?phrase|seed\s+phrase|recovery\s+phrase|mnemonic|phrase\s+secr[eè]te"
    r"|phrase\s+de\s+passe|wachtzin|passphrase|frase\s+(?:de\s+)?(?:contrase[ñn]a|senha|segreta))"
    + _FILLER
    + _LINK
    + r"(?P<v>(?:[^\W\d_]+[ -]){2,11}[^\W\d_]+)",
    re.I,
)
# "to disarm the alarm press 2580", "unlock the door with 4471", "Alarm mit 1234 ausschalten"
_CODE_ACTION: Final = re.compile(
    r"\b(?:disarm|arm|deactivate|turn\s+off|switch\s+off|unlock|open|entsch[äa]rfen|[öo]ffnen"
    r"|d[ée]sactiver|d[ée]verrouiller|desactivar|desbloquear|disattivare|sbloccare|desativar"
    r"|uitschakelen|ontgrendelen)\s+(?:the\s+|die\s+|den\s+|l'|la\s+|le\s+|el\s+|il\s+|o\s+"
    r"|a\s+|de\s+|het\s+)?" + _PLACE + r"\s+(?:press|type|enter|punch\s+in|key\s+in|use|with"
    r"|using|by\s+typing|mit|avec|con|com|met)\s+(?P<v>#?\d{3,8}#?)\b",
    re.I,
)


# "PIN 1234", "Alarmcode 4471", "the card code is 4521": a PIN-like noun, or "code" after a card or
# a place word, directly before digits.
_PIN_BARE: Final = re.compile(
    r"(?<![^\W\d_])(?:(?:" + _PIN_NOUN + r")|(?:" + _PLACE + r"|card|karte|carte(?:\s+bleue)?"
    r"|tarjeta|carta|cart[ãa]o|kaart|bankkarte)\b[^.;!?\d]{0,30}?\b(?:code|pin|codice|c[oó]digo"
    r"|pincode|geheimzahl))(?![^\W\d_])\s*(?:#|no\.?|nr\.?|is|ist|est|es|è|é|:|=)?\s*"
    r"(?P<v>#?\d{4,8}#?)(?![\d.,/-]\d)",
    re.I,
)
# "wifi password hunter2xyz99", "WLAN-Passwort Sommer2024!", "contraseña del wifi Sol2024!x": the
# noun, one word naming what it opens (after a preposition too), then the value with no verb
# between. Without a verb only a made-up value counts (letters with digits or symbols), and a
# preposition or a word about passwords ("password hash SHA256") is not what it opens.
_PASSWORD_BARE: Final = re.compile(
    r"(?<![^\W\d_])(?:" + _PASSWORD_NOUN + r")(?![^\W\d_])"
    r"(?:\s+(?:" + _PREP + r")\s*(?:the\s+|my\s+|el\s+|la\s+|le\s+|il\s+|o\s+|a\s+|de\s+|het\s+)?"
    r"[^\W\d_]{2,20}|\s+(?!(?:"
    + _PREP
    + r")\b)(?!(?:manager|managers|reset|policy|policies|generator|strength|field|hint|prompt"
    r"|change|hash|hashes|length|rules?|requirements?|expiry|history|form|box)\b)[^\W\d_]{2,20})?"
    r"\s+(?P<v>[^\s\"'`\\]{6,120})",
    re.I,
)
# "wifi: network HomeNet, key Bluebird2020!"
_NETWORK_KEY: Final = re.compile(
    r"\b(?:wi-?fi|wlan|network|netzwerk|r[ée]seau|red|rete|rede|netwerk|router)\b[^.;!?]{0,40}?"
    r"(?<![^\W\d_])(?:key|pass|schl[üu]ssel|cl[ée]|clave|chiave|chave|sleutel)(?![^\W\d_])"
    r"\s*[:=]?\s*(?P<v>[^\s\"'`\\]+)",
    re.I,
)


# A made-up secret used to get in, with no secret noun: "I log in to the bank with Falcon!9921",
# "I use tulip-rain-44 for gmail". Only a value with letters, digits and a symbol counts here
# ("I use Python3 for work" passes).
_USED_TO_LOG_IN: Final = re.compile(
    r"\b(?:log(?:ging)?\s*(?:in|on)|sign(?:ing)?\s*in|get\s+into|unlock|access)\b[^.;!?\n]{0,40}?"
    r"\bwith\s+(?P<v>[^\s\"'`\\]{6,120})"
    r"|\buse\s+(?P<v2>[^\s\"'`\\]{6,120})\s+(?:for|on|to\s+(?:log\s*in|sign\s*in)\s+(?:to|on))\s+"
    r"(?:my\s+|the\s+|our\s+)?(?:\w+\s+)?(?:e-?mail|g?mail|outlook|hotmail|yahoo|icloud|bank(?:ing)?"
    r"|netflix|spotify|amazon|facebook|instagram|twitter|paypal|apple\s+id|wi-?fi|router|vpn"
    r"|login|account|laptop|computer|phone|server|portal|app)\b",
    re.I,
)


def _symbolic(value: str) -> bool:
    core = value.rstrip(".,;:!?)]}")
    return (
        any(c.isalpha() for c in core)
        and any(c.isdigit() for c in core)
        and any(not c.isalnum() for c in core)
    )


# Words ending like a participle or an adverb that say how a password *is* when the sentence
# ends on them ("my password is expiring.", "… is working now"): a sentence that ends on another
# such word gives the value ("the password is starling", "password: butterfly").
_DESCRIBING_LAST_WORDS: Final = """
    expiring working changing missing failing pending loading rotating resetting existing
    matching mismatching annoying confusing boring interesting amazing frustrating exhausting
    nothing something anything everything coming going being lacking waiting processing
    syncing updating outstanding remaining lasting misleading refusing rejecting rejected
    timing charging blocking breaking crashing sticking logging signing
    only likely unlikely lovely ugly silly weekly monthly daily yearly early properly correctly
    securely safely randomly automatically entirely completely really actually clearly exactly
    currently recently temporarily friendly costly deadly barely nearly hardly mostly fully
    generally usually normally typically probably possibly definitely certainly easily
"""
_DESCRIBING_LAST: Final = frozenset(_DESCRIBING_LAST_WORDS.split())


def value_is_secret(kind: str, raw: str, *, ends_sentence: bool = False) -> bool:
    """Is ``raw`` (the word after the noun) a value of that kind of secret? ``ends_sentence``:
    nothing but punctuation follows it (a describing word then rarely stands alone)."""
    quoted = raw[:1] in "\"'`" and len(raw) >= 2
    value = raw[1:-1] if quoted else raw.rstrip(".,;:!?)]}")
    if not quoted:
        # a value ends where markup starts ("verlopen</note>"), and emphasis marks around a
        # word are not part of it ("_expired_")
        value = value.split("</", 1)[0].strip("*_~")
    if not value or PLACEHOLDER.match(value):
        return False
    if kind == "pin":
        return bool(_PIN_VALUE.fullmatch(value) or _CODE_VALUE.fullmatch(value))
    if kind == "tok":
        has_digit = any(c.isdigit() for c in value)
        has_alpha = any(c.isalpha() for c in value)
        if value.lower() in _NOT_A_VALUE or (HEX_OR_UUID.fullmatch(value) and len(value) < 16):
            return False
        return (
            looks_random(value)
            or (len(value) >= 8 and has_digit and has_alpha)
            or (quoted and len(value) >= 8)
        )
    # password-like: any word that is not part of a sentence about the password
    if quoted:
        return len(value) >= 3
    low = value.lower()
    if len(value) < 3 or low in _NOT_A_VALUE:
        return False
    # "expired", "missing", "securely": describing the password, not disclosing it — unless the
    # sentence ends on a word that is no such description ("the password is starling.")
    if value.isalpha() and re.search(r"(?:ing|ly)$", low) and ends_sentence:
        return low not in _DESCRIBING_LAST
    return not (value.isalpha() and re.search(r"(?:ed|ing|ly)$", low))


# after a value: the end of the text, or sentence punctuation and then no further word of it
_SENTENCE_END: Final = re.compile(r"\s*(?:$|[.!?;)\]}\n]|,\s*(?:and|but|so)?\s*$)")


def made_up(value: str) -> bool:
    """A value that is not a plain word: it has a digit, a symbol or a capital inside."""
    core = value.rstrip(".,;:!?)]}")
    return not core.isalpha() or any(c.isupper() for c in core[1:])


# Every rule above needs one of these fragments; a text with none (most memories) skips them all.
# Substring tests run in C, far faster than the rules' alternations.
# "my pa55word is starling": the noun itself disguised (a digit or symbol for a letter). Hiding
# the word says the value beside it is the secret, so any value counts that is not a word
# about the password ("my passw0rd is weak").
_DISGUISED_PASSWORD: Final = re.compile(
    r"\b(?P<noun>p[a@4][s5$][s5$]w[o0]rd|p[a@4][s5$][s5$])\s*(?:is|:|=|ist|est|es)\s*"
    r"(?P<v>[^\s\"'`\\]{4,80})",
    re.I,
)

_TRIGGERS: Final = (
    "pass", "pw", "pin", "cod", "cód", "kenn", "mot de", "mdp", "contras", "clave", "parola",
    "senha",
    "palavra", "wacht", "key", "token", "secret", "credential", "login", "log-in", "user",
    "benutzer", "ident", "utili", "usuari", "utente", "usuá", "gebruik", "account", "alarm",
    "combination", "otp", "geheim", "zugang", "phrase", "mnemonic", "schlüssel", "schlussel",
    "clé", "cle", "chiav", "chave", "sleutel", "wifi", "wi-fi", "wlan", "network", "netzwerk",
    "réseau", "reseau", "router", "rete", "rede", "netwerk", "disarm", "unlock", "ontgrendel",
    "card", "karte", "carte", "tarjeta", "carta", "cartão", "cartao", "kaart", "keypad", "safe",
    "tresor", "coffre", "kluis", "cofre", "cassaforte", "entsch", "déverr", "desbloq", "sbloc",
    "öffnen", "open", "log", "sign", "use", "access", "get into",
)  # fmt: skip


def detect_keyword_credential(text: str) -> Finding | None:
    """A credential stated in words, or None."""
    for m in _DISGUISED_PASSWORD.finditer(text):
        disguised = m.group("noun").lower() not in ("password", "pass")
        if disguised and m.group("v").rstrip(".,;:!?").lower() not in _NOT_A_VALUE:
            return Finding("credential", "states a password, its name disguised, with a value")
    low = text.lower()
    if not any(fragment in low for fragment in _TRIGGERS):
        return None
    for m in _SECRET_PHRASE.finditer(text):
        kind = "pw" if m.group("pw") else "pin" if m.group("pin") else "tok"
        if _SECRET_PHRASE.match(m.group("v")):
            continue  # "mot de passe : mot de passe" style repetition: the label, not a value
        final = _SENTENCE_END.match(text, m.end())
        if value_is_secret(kind, m.group("v"), ends_sentence=final is not None):
            noun = {"pw": "a password", "pin": "a PIN or access code", "tok": "a key or token"}
            return Finding("credential", f"states {noun[kind]} with its value")
    for m in _WITH_PASSWORD.finditer(text):
        word = (m.group("pw") or m.group("pw2")).lower()
        value = m.group("v") or m.group("v2")
        kind = "pin" if word in ("pin", "code", "pincode") else "pw"
        if value_is_secret(kind, value) and (kind == "pin" or made_up(value)):
            return Finding("credential", "states a password with its value")
    for m in _AS_PASSWORD.finditer(text):
        value = m.group("v")
        if value_is_secret("pw", value) and made_up(value):
            return Finding("credential", "states a password with its value")
    for m in _LOGIN_PAIR.finditer(text):
        value = m.group("v")
        if value_is_secret("pw", value) and made_up(value):
            return Finding("credential", "states a login together with its password")
    for m in _PASSPHRASE.finditer(text):
        words = re.split(r"[ -]", m.group("v").lower())
        if sum(w in _NOT_A_VALUE for w in words) <= 1:
            return Finding("credential", "states a password with its value")
    for m in _PASSWORD_BARE.finditer(text):
        value = m.group("v").rstrip(".,;:!?)]}")
        mixed = any(c.isalpha() for c in value) and not value.isalpha()
        if mixed and value_is_secret("pw", value) and made_up(value):
            return Finding("credential", "states a password with its value")
    for m in _USED_TO_LOG_IN.finditer(text):
        value = m.group("v") or m.group("v2")
        if _symbolic(value) and value_is_secret("pw", value):
            return Finding("credential", "states a password with its value")
    if _PIN_BARE.search(text):
        return Finding("credential", "states a PIN or access code with its value")
    for m in _NETWORK_KEY.finditer(text):
        if value_is_secret("pw", m.group("v")) and made_up(m.group("v")):
            return Finding("credential", "states a key or token with its value")
    if _CODE_ACTION.search(text):
        return Finding("credential", "states a PIN or access code with its value")
    return None
