"""Credentials stated in words in Chinese, Japanese, Korean, Russian, Ukrainian, Arabic, Hindi,
Turkish and Polish: a secret noun, its link ("是", "は", "는", ":", "—", "это", "هي", "to"), its
value.

``detect_keywords`` reads the Latin-script languages, where words are spaced and a value is the
next word. Here the value often follows with no space ("我的密码是hunter2x9",
"パスワードはabc123です") or comes before a closing verb ("मेरा पासवर्ड abc123 है"), and the
value of a sentence about the password is a word of the language ("пароль слишком короткий",
"密码是错的"). So a value counts only when it could not be a word of the sentence: it holds an
ASCII letter or digit (passwords, PINs and codes are typed on Latin keyboards) and passes
``value_is_secret``, or it is quoted (「芝麻开门」, «сезам»). Talking about a password
("我忘记密码了", "비밀번호를 잊어버렸어요") passes.
"""

from __future__ import annotations

import re
from typing import Final

from convmem.memory.detect_common import Finding
from convmem.memory.detect_keywords import made_up, value_is_secret
from convmem.memory.normalize import any_case_pattern

_PASSWORD: Final = (
    r"密码|密碼|口令|パスワード|暗号|비밀번호|비번|패스워드|암호|пароль|паролем|пароля|парол[ьі]"
    r"|كلمة\s+(?:المرور|السر)|كلمة\s+سر|باسورد|पासवर्ड|कूटशब्द"
    # Turkish nouns take their possessive and case endings as suffixes ("şifresi", "parolanız",
    # "şifremi"); dotless ı arrives as i after normalising
    r"|şifre(?:m|n|si|miz|niz|leri|lerim)?(?:i|yi|ni|yle|si)?|parola(?:m|n|si|miz|niz|lari)?(?:yi|ni)?"
    r"|hasło|hasła|hasłem"
)
_PIN: Final = (
    r"pin\s?码|pin\s?碼|验证码|驗證碼|门禁码|門禁碼|暗証番号|暗證番號|pin\s?コード|認証コード"
    r"|핀\s?번호|pin\s?번호|인증\s?번호|пин-?код|пин|код\s+(?:доступа|домофона)|код(?=\s+(?:от|для)\s)"
    r"|(?:الرقم|رقم)\s+(?:السري|التعريف\s+الشخصي)|पिन(?:\s+कोड)?|pin\s+kodu|kod\s+pin"
    r"|kod\s+dostępu|kod(?=\s+do\s)|pin(?=\s+(?:do|od)\s)"
    r"|pin(?:\s+(?:kodu|kodum|kodunuz|numarasi|numaram|numarasi))|(?:kapi|alarm|giriş|kasa)\s+kodu"
)
# what may stand between the noun and the value: a particle, a copula, a colon or a dash, in
# any of the languages (a value only counts if it is ASCII or quoted, so a loose link is safe;
# full-width colons arrive as ":" after normalising)
_LINK: Final = (
    r"(?:\s*(?:是|為|为|は|が|って|는|은|가|이|:|=|\u2014|\u2013|-|это|будет|был|є|هي|هو|है|hai|to|jest)"
    r")*\s*"
)
# "for the mailbox" between noun and link: a few words in Russian, Polish, Turkish, Arabic
_FOR: Final = (
    r"(?:\s+(?:(?:от|для|к|від|до|do|od|के|की|का)\s+|(?:للـ?|ل)\s*)\S{1,20}){0,2}"
    # or up to two words of the sentence's own script ("كلمة السر الخاصة بي هي"): the value must
    # then be ASCII, so no word of the sentence can be taken for it
    r"(?:\s+[^\sA-Za-z0-9]{2,12}){0,2}"
    # or one word naming what it opens, right before digits ("пин-код карты 4819")
    r"(?:\s+[^\W\d_]{2,20}(?=\s+\d))?"
)
# quoted (any letters) first, else one token: it starts on a word boundary (not inside a word of a
# spaced script: "şifresi" is not "şifre" + "si") and runs to a space or to the next CJK
# character ("パスワードはabc123です")
_CJK: Final = r"\u3000-\u30ff\u3400-\u9fff\uac00-\ud7af\uff00-\uffef"
_VALUE: Final = (
    r"(?:(?P<q>「[^」]{3,80}」|“[^”]{3,80}”|«[^»]{3,80}»|\"[^\"]{3,80}\"|'[^']{3,80}')"
    r"|(?<![A-Za-z\u00c0-\u024f\u0400-\u04ff])(?P<v>[^\s\"'«»“”\\" + _CJK + r"]{1,120}))"
)
# The policy reads normalised text (``normalize.py``), where Cyrillic letters that look like Latin
# ones are Latin ("пароль" arrives as "пapoль", "Код" as "Koд"): each letter of the patterns
# reads every form it may take (``any_case_pattern``).
_PHRASE: Final = re.compile(
    any_case_pattern(
        r"(?:(?P<pw>" + _PASSWORD + r")|(?P<pin>" + _PIN + r"))" + _FOR + _LINK + _VALUE
    ),
    re.I,
)
# "मेरा पासवर्ड abc123 है", "şifrem abc123": the value right after the noun and a space is
# covered by the link being optional; Hindi and Turkish need no more.

_TRIGGERS: Final = (
    "密", "口令", "パスワード", "暗", "비밀", "비번", "패스", "암호", "парол", "пин", "код",
    "كلمة", "باسورد", "رقم", "पासवर्ड", "कूट", "पिन", "şifre", "parola", "hasł", "pin", "码",
    "碼", "番号", "番號", "コード", "번호", "kod",
)  # fmt: skip
_TRIGGER: Final = re.compile("|".join(any_case_pattern(re.escape(t)) for t in _TRIGGERS), re.I)
_ASCII_ALNUM: Final = re.compile(r"[A-Za-z0-9]")
# what only a typed value has: two digits in a row, or an ASCII symbol
_TYPED: Final = re.compile(r"[0-9]{2}|[!#$%&*@^~+=?_/]")
_LATIN_NOUN: Final = re.compile(r"[a-zçğöşüł]", re.I)
_LABEL_LINK: Final = re.compile(r"[:=]\s*$")


def detect_keyword_credential_i18n(text: str) -> Finding | None:
    """A credential stated in words in one of the languages above, or None."""
    if not _TRIGGER.search(text):
        return None
    for m in _PHRASE.finditer(text):
        kind = "pw" if m.group("pw") else "pin"
        quoted = m.group("q")
        if quoted is not None and quoted[1:-1].strip():
            return Finding("credential", "a password or code stated in words")
        value = m.group("v")
        if not value or not _ASCII_ALNUM.search(value) or not value_is_secret(kind, value):
            continue
        # A plain word is a value only where it cannot be a word of the sentence: an ASCII word
        # after a noun of another script ("пароль: hunter"), or after a label's colon. After a
        # Latin-script noun (Turkish, Polish) or with letters of the sentence's script in it,
        # only a made-up value counts ("şifremi unuttum" passes, "şifrem Kedi2024x" does not).
        noun = m.group("pw") or m.group("pin")
        labelled = _LABEL_LINK.search(m.group(0)[: m.start("v") - m.start()]) is not None
        plain_ok = value.isascii() and not _LATIN_NOUN.search(noun)
        if not value.isascii() and not _TYPED.search(value):
            # letters of the sentence's own script, and no more than one digit: a word whose
            # look-alike letters the skeleton made ASCII ("быть" reads "6ыть"), not a value
            continue
        if kind == "pin" or labelled or plain_ok or made_up(value):
            return Finding("credential", "a password or code stated in words")
    return None
