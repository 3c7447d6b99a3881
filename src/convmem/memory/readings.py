"""The readings of one text that the never-store rules check: a wrapped disclosure is a disclosure.

A writer (or a model) can wrap a secret so that rules written for plain sentences miss it while
any reader, or the model it is recalled into, still reads it: JSON string escapes
(``contrase\\u00f1a``), percent-encoding, HTML entities, markdown or HTML markup inside a
sentence, leetspeak (``passw0rd``, ``d1abet1c``, ``p@ssword``), digits spelled out as words
("four eight one nine", "cuatro ocho uno nueve"), digits spaced or dotted apart ("4.8.1.9"),
words joined by underscores or dashes ("I_have_diabetes"), or a short base64 of the sentence.

Undoing a wrapping can also destroy evidence (unescaping a JSON value can merge two fields,
de-leeting turns a password's digits into letters), so no reading replaces another: the policy
checks the text as written *and* each reading, and any one that discloses decides. Each reading
is built only when the text has what it undoes, so a plain sentence (most memories) has one
reading, itself, and costs what it cost before.

* :func:`unwrap` — JSON (a parsed document is read as ``key: value`` lines; a fragment has its
  escapes undone), percent-encoding, HTML entities, then markup (tags, emphasis, code spans,
  links, list and heading markers) removed;
* :func:`respell` — on normalised text (``normalize.py``): leet digits and symbols inside words
  as the letters they stand for, spelled digits as digits, digits separated one by one closed
  up, words chained by ``_``, ``-`` or ``.`` split;
* :func:`decoded_runs` (``normalize.py``) — readable text hidden in base64 or hex, read the same
  way, one level deep;
* :func:`unmarked` — invisible characters read as spaces where a writer used one to separate
  words ("my\u200bpassword\u200bis", which ``normalize`` closes up into one word), and marks laid
  over letters dropped ("pássword", "pas\u0336sword": accents and strikethroughs a reader reads
  past, and that confusable folding keeps, as it keeps every accented letter);
* :func:`main_clause_order` — a German or Dutch subordinate clause put in main-clause order
  ("…, dass ich allergisch gegen Nüsse bin" read as "ich bin allergisch gegen Nüsse"): the
  finite verb goes last there, where rules written for statements do not look for it.
"""

from __future__ import annotations

import html
import json
import re
import unicodedata
from collections.abc import Iterator
from typing import Final
from urllib.parse import unquote, unquote_plus

from convmem.memory.normalize import INVISIBLE, decoded_runs, normalize

# ------------------------------------------------------------------------------------- unwrap

# JSON's escapes, and the \xNN and \UNNNNNNNN of Python, C and JavaScript string literals
_JSON_ESCAPE: Final = re.compile(
    r"\\(u[0-9a-fA-F]{4}|x[0-9a-fA-F]{2}|U[0-9a-fA-F]{8}|[nrtbf\"\\/'])"
)
_SIMPLE_ESCAPES: Final = {
    "n": "\n", "r": "\n", "t": " ", "b": "", "f": " ", '"': '"', "\\": "\\", "/": "/", "'": "'",
}  # fmt: skip
_SURROGATE: Final = re.compile("[\ud800-\udfff]")
_PERCENT: Final = re.compile(r"%[0-9A-Fa-f]{2}")
_PLUS_AS_SPACE: Final = re.compile(r"[^\W\d_]\+[^\W\d_]")
_QUERY_VALUE: Final = re.compile(r"=([^\s&#=]*\+[^\s&#=]*)")
_ENTITY: Final = re.compile(r"&(?:#[0-9]{1,7}|#[xX][0-9a-fA-F]{1,6}|[A-Za-z][A-Za-z0-9]{1,31});?")
_MAX_JSON: Final = 200_000
_MAX_DEPTH: Final = 4

# Tags that end a line or a cell separate words; inline tags (<b>, <span>, <code> ...) do not,
# so "pass<b>word</b>" reads "password".
_BLOCK_TAGS: Final = (
    r"(?:p|div|br|hr|li|ul|ol|tr|td|th|table|h[1-6]|blockquote|pre|section|article|header"
    r"|footer|dd|dt|dl|body|html|head|title|main|nav|aside|form|label|button|caption|thead|tbody)"
)
_INLINE_TAGS: Final = (
    r"(?:a|abbr|b|bdi|bdo|big|cite|code|del|dfn|em|font|i|ins|kbd|mark|q|s|samp|small|span"
    r"|strike|strong|sub|sup|time|tt|u|var)"
)
# a form field: <input name="password" value="x"> reads "password: x"
_FIELD: Final = re.compile(
    r"<[A-Za-z][^<>]{0,100}?\bname\s*=\s*[\"']([^\"'<>]{1,40})[\"'][^<>]{0,100}?\bvalue\s*=\s*"
    r"[\"']([^\"'<>]{1,200})[\"'][^<>]{0,100}>",
    re.I,
)
_BLOCK_TAG: Final = re.compile(r"(?i)</?" + _BLOCK_TAGS + r"\b[^<>]{0,300}>")
# An element that is not HTML labels its content ("<password>x</password>" in a config or an
# XML export): it reads "password: x".
_ELEMENT: Final = re.compile(
    r"<(?!(?:" + _INLINE_TAGS + r"|" + _BLOCK_TAGS + r")\b)([A-Za-z][\w.-]{0,40})"
    r"(?:\s[^<>]{0,200})?>([^<>]{1,300})</\1\s*>",
    re.I,
)
# a table's rule line ("|---|:--:|") under its header
_TABLE_RULE: Final = re.compile(r"^\s*\|?\s*:?-{3,}:?\s*(?:\|\s*:?-{3,}:?\s*)*\|?\s*$")
# a table cell's border: "| password | x |" reads "password : x"
_CELL: Final = re.compile(r"\s*\|\s*")
_TAG: Final = re.compile(
    r"<(?:[A-Za-z][A-Za-z0-9-]{0,20}|/[A-Za-z][A-Za-z0-9-]{0,20}|!--)[^<>]{0,300}>"
)
_MD_LINK: Final = re.compile(r"!?\[([^\[\]\n]{0,300})\]\([^()\s]{0,500}\)")
_MD_LINE_MARK: Final = re.compile(r"(?m)^[ \t]*(?:#{1,6}|>+|[-*+\u2022]|\d{1,3}[.)])(?:[ \t]+|$)")
# emphasis and code marks: asterisks, tildes and backticks anywhere; underscores only at a
# word's edge, so snake_case names keep theirs
_MD_MARK: Final = re.compile(r"[*`~]+|(?<![^\W_])_+|_+(?![^\W_])")
# Markup is looked for only when one of its characters is there; a list or heading mark needs a
# line start, so a text without one of these and without a line break has none.
_MARKUP_CHARS: Final = frozenset("*_`~<[|\n")
_MARKUP_LEAD: Final = frozenset("#>-+\u20220123456789")


def _json_unescape(text: str) -> str:
    def one(m: re.Match[str]) -> str:
        code = m.group(1)
        if code[0] in "uxU":
            point = int(code[1:], 16)
            return chr(point) if point <= 0x10FFFF else ""
        return _SIMPLE_ESCAPES[code]

    for _ in range(3):  # a JSON document inside a JSON string escapes twice
        undone = _JSON_ESCAPE.sub(one, text)
        if undone == text:
            break
        text = undone
    if _SURROGATE.search(text):  # an escaped pair (\ud83d\ude00) is one character
        text = text.encode("utf-16", "surrogatepass").decode("utf-16", "replace")
    return text


def _flatten(value: object, out: list[str], depth: int) -> None:
    """A parsed JSON value as lines a reader would see: ``key: value``, one per leaf."""
    if isinstance(value, dict):
        for key, item in value.items():
            if isinstance(item, dict | list):
                out.append(f"{key}:")
                _flatten(item, out, depth)
            else:
                inner: list[str] = []
                _flatten(item, inner, depth)
                out.append(f"{key}: {' '.join(inner)}")
    elif isinstance(value, list):
        for item in value:
            _flatten(item, out, depth)
    elif isinstance(value, str):
        nested = _parse_json(value, depth + 1)
        if nested is None:
            out.append(value)
        else:
            _flatten(nested, out, depth + 1)
    elif value is not None:
        out.append(str(value))


def _parse_json(text: str, depth: int = 0) -> object | None:
    stripped = text.strip()
    if depth >= _MAX_DEPTH or len(stripped) > _MAX_JSON or stripped[:1] not in ("{", "[", '"'):
        return None
    try:
        value: object = json.loads(stripped)
    except (ValueError, RecursionError):  # a document nested past the parser's depth is not read
        return None
    return value if isinstance(value, dict | list | str) else None


def _table_as_labels(text: str) -> str:
    """A markdown table as "header: cell" statements, one row a line."""
    lines = text.split("\n")
    out: list[str] = []
    header: list[str] | None = None
    for i, line in enumerate(lines):
        lead, bar, row = line.partition("|")  # a table may start after a label ("text: | a |")
        cells = [c.strip() for c in (bar + row).strip().strip("|").split("|")]
        if header is not None and bar:
            out.append(". ".join(f"{h}: {c}" for h, c in zip(header, cells, strict=False)) + ".")
            continue
        header = None
        nxt = lines[i + 1] if i + 1 < len(lines) else ""
        if bar and _TABLE_RULE.match(nxt):
            header = cells
            if lead.strip():
                out.append(lead)
            continue
        out.append(line)
    return "\n".join(line for line in out if not _TABLE_RULE.match(line))


def _strip_markup(text: str) -> str:
    if "value" in text:
        text = _FIELD.sub(r" \1: \2 ", text)
    if "</" in text:
        text = _ELEMENT.sub(r" \1: \2 ", text)
    text = _BLOCK_TAG.sub(" ", text)
    text = _TAG.sub("", text)
    text = _MD_LINK.sub(r"\1", text)
    if "---" in text and "|" in text:
        text = _table_as_labels(text)
    text = _MD_LINE_MARK.sub("", text)
    if " |" in text or "| " in text:
        text = _CELL.sub(" : ", text)
    return _MD_MARK.sub("", text)


def unwrap(text: str) -> str:
    """``text`` with JSON, percent-encoding, HTML entities and markup undone (``text`` itself
    when it has none of them)."""
    parsed = _parse_json(text)
    lines: list[str] = []
    try:
        if parsed is not None:
            _flatten(parsed, lines, 0)
    except RecursionError:
        lines = []
    if lines:
        # each value is a statement of its own: a line break is lost when the text is
        # normalised, so a full stop ends it ("Sou de direita. ts: 1700000000")
        text = "\n".join(line if line[-1:] in ".!?:" else line + "." for line in lines)
    if "\\" in text:
        text = _json_unescape(text)
    if "+" in text and "=" in text:  # a form-encoded value writes its spaces as "+"
        text = _QUERY_VALUE.sub(lambda m: "=" + unquote_plus(m.group(1)), text)
    for _ in range(2):  # percent-encoding of percent-encoding ("%2520")
        if not _PERCENT.search(text):
            break
        plus = " " not in text and _PLUS_AS_SPACE.search(text) is not None
        text = unquote_plus(text) if plus else unquote(text)
    if "&" in text and _ENTITY.search(text):
        text = html.unescape(text)
        if "\\" in text:
            text = _json_unescape(text)
    if not _MARKUP_CHARS.isdisjoint(text) or text.lstrip()[:1] in _MARKUP_LEAD:
        text = _strip_markup(text)
    return text


# ------------------------------------------------------------------------------------ respell

# Leet: a digit or symbol standing for the letter it looks like, in a word that is mostly
# letters ("d1abet1c", "p@ssw0rd", "Musl1m"). A digit only counts alone (a run of two or more is
# a number: "iPhone15", "B12"), and a token with many digits is a key or an id, not a word.
_LEET: Final = {"0": "o", "1": "i", "3": "e", "4": "a", "5": "s", "7": "t", "8": "b",
                "@": "a", "$": "s", "!": "i", "|": "l", "€": "e"}  # fmt: skip
_HAS_LEET: Final = re.compile(r"[^\W\d_][013-578@$!|€]|[013-578@$][^\W\d_]")
_LEET_CANDIDATE: Final = re.compile(
    r"(?<![\w@$!|€])[\w@$!|€]*(?:[^\W\d_][013-578@$!|€]|[013-578@$][^\W\d_])[\w@$!|€]*"
)
_MAX_LEET: Final = 4

# Digits as words in the languages the rules read (English, German, French, Spanish, Italian,
# Portuguese, Dutch, Turkish, Polish, Russian, Ukrainian). A run of three or more (a PIN, a card
# number, a security code) is read as the digits; one number word in a sentence is left alone.
_DIGIT_WORDS: Final[dict[str, str]] = {}
for _digit, _words in enumerate(
    (
        "zero oh nought nil null cero zéro nul sifir ноль нуль",
        "one eins ein eine un une uno una um uma een één bir jeden jedna один одна",
        "two zwei zwo deux dos due dois duas twee iki dwa dwie два дві",
        "three drei trois tres tre três drie üç uc trzy три",
        "four vier quatre cuatro quattro quatro dört dort cztery четыре чотири",
        "five fünf funf cinq cinco cinque vijf beş bes pięć piec пять",
        "six sechs seis sei zes alti sześć szesc шесть шість",
        "seven sieben sept siete sette sete zeven yedi siedem семь сім",
        "eight acht huit ocho otto oito sekiz osiem восемь вісім",
        "nine neun neuf nueve nove negen dokuz dziewięć dziewiec девять",
    )
):
    for _word in _words.split():
        _DIGIT_WORDS[normalize(_word).lower()] = str(_digit)
# English teens and tens, for codes read out in pairs ("forty-eight nineteen")
_PAIRS: Final = {
    "ten": "10", "eleven": "11", "twelve": "12", "thirteen": "13", "fourteen": "14",
    "fifteen": "15", "sixteen": "16", "seventeen": "17", "eighteen": "18", "nineteen": "19",
}  # fmt: skip
_TENS: Final = {
    "twenty": "2", "thirty": "3", "forty": "4", "fifty": "5", "sixty": "6", "seventy": "7",
    "eighty": "8", "ninety": "9",
}  # fmt: skip
_TIMES: Final = {"double": 2, "triple": 3}
_NUMBER_WORD: Final = (
    r"(?:(?:double|triple)\s+)?(?:"
    + "|".join(
        sorted((re.escape(w) for w in (*_DIGIT_WORDS, *_PAIRS, *_TENS)), key=len, reverse=True)
    )
    + r"|(?<![0-9])[0-9](?![0-9]))"
)
_SPELLED_RUN: Final = re.compile(
    r"(?i)(?<![^\W\d_])" + _NUMBER_WORD + r"(?:\s*[,/-]?\s*" + _NUMBER_WORD + r"){2,}(?![^\W\d_])"
)
_ONE_NUMBER: Final = re.compile(r"(?i)(?:(double|triple)\s+)?([^\W\d_]+|[0-9])")
_EDGE_TO_SPACE: Final = str.maketrans(dict.fromkeys(".,;:!?\"'()[]{}-/", " "))
_NUMBER_WORDS: Final = frozenset((*_DIGIT_WORDS, *_PAIRS, *_TENS))

# "4 8 1 9", "4.8.1.9", "4-8-1-9": four or more digits written one at a time
_SPLIT_DIGITS: Final = re.compile(r"(?<![0-9])[0-9](?:(?: ?[.\u00b7_/-] ?| )[0-9]){3,}(?![0-9])")
_DIGIT_SEPARATOR: Final = re.compile(r"[ .\u00b7_/-]")
_HAS_SPLIT_DIGITS: Final = re.compile(r"[0-9] ?[ .\u00b7_/-] ?[0-9] ?[ .\u00b7_/-] ?[0-9]")
# a pause between two words: "I have... diabetes", "I have -- diabetes", "I am … gay"
_PAUSE: Final = re.compile(
    r"(?<=[^\W\d_])\s*(?:\.{2,}|\u2026|-{2,}|\s-\s|[,;:]\s*(?:like|um|uh|erm),?)\s*(?=[^\W\d_])"
)
_PAUSE_MARKS: Final = ("..", "\u2026", "--", " - ", " like", " um", " uh", " erm")
# three or more words chained by one joiner: "I_have_diabetes", "my-password-is-x", "i.am.gay"
_CHAINED: Final = re.compile(
    r"(?<![^\W_])[^\W_]{1,20}(?:([_.-])[^\W_]{1,20})(?:\1[^\W_]{1,20})+(?![^\W_])"
)


def _digits_of_run(m: re.Match[str]) -> str:
    out: list[str] = []
    tens = ""  # "forty" waits for a digit: "forty-eight" is 48, "forty" alone 40
    for part in _ONE_NUMBER.finditer(m.group(0)):
        word = part.group(2).lower()
        digit = word if word.isdigit() else _DIGIT_WORDS.get(word)
        if tens:
            out.append(tens + (digit if digit and digit != "0" else "0"))
            tens = ""
            if digit and digit != "0":
                continue
        if word in _TENS:
            tens = _TENS[word]
            continue
        digit = digit or _PAIRS.get(word)
        if digit is None:
            return m.group(0)
        out.append(digit * _TIMES.get((part.group(1) or "").lower(), 1))
    if tens:
        out.append(tens + "0")
    return "".join(out)


def _spelled_digits(text: str) -> str:
    # Most texts hold fewer than two number words; counting them (C-speed translate, split and
    # set lookups) is far cheaper than running the alternation of every language's words.
    tokens = text.lower().translate(_EDGE_TO_SPACE).split()
    if sum(map(_NUMBER_WORDS.__contains__, tokens)) < 2:
        return text
    return _SPELLED_RUN.sub(_digits_of_run, text)


def _leet_digit(token: str, i: int) -> bool:
    """Does the digit at ``token[i]`` stand for a letter? Alone, or two between letters or
    symbols ("p@55w0rd"); a longer run, or two at a word's end, is a number ("c0vid19",
    "iPhone15"). At the start of a word only before two letters ("3pilepsy", not "4pm")."""
    start = i
    while start and token[start - 1].isdigit():
        start -= 1
    end = i + 1
    while end < len(token) and token[end].isdigit():
        end += 1
    run = end - start
    before, after = token[start - 1 : start], token[end : end + 1]
    if run == 1:
        return bool(before) or (token[1:3].isalpha() and len(token) >= 5)
    return run == 2 and bool(before) and not before.isdigit() and after.isalpha()


def _leet_token(m: re.Match[str], one: str) -> str:
    token = m.group(0)
    letters = sum(c.isalpha() for c in token)
    others = len(token) - letters
    if others > _MAX_LEET or letters < others or len(token) > 24:
        return token
    out: list[str] = []
    for i, c in enumerate(token):
        letter = one if c == "1" else _LEET.get(c)
        if letter is not None and c.isdigit():
            # a lone digit: next to another digit it is part of a number ("c0vid19"); at the
            # start of a word only before three letters ("3pilepsy", not "4pm" or "3rd")
            out.append(letter if _leet_digit(token, i) else c)
        elif letter is not None:
            # a symbol inside the word, before a letter, never at its end ("p@ss", "pa$$word";
            # not "Hello!", "Gingerbread!88")
            rest = token[i + 1 :].lstrip("@$!|€")
            out.append(letter if rest[:1].isalpha() or rest[:1] in _LEET else c)
        else:
            out.append(c)
    return "".join(out)


def _unchain(m: re.Match[str]) -> str:
    chain = m.group(0)
    parts = chain.split(m.group(1))
    # words, not a key or an identifier: two parts at least are letters, one has lower case
    if sum(p.isalpha() for p in parts) < 2 or chain.isupper():
        return chain
    return " ".join(parts)


def respell(norm: str, *, one: str = "i") -> str:
    """Normalised ``norm`` with leet undone (a lone "1" read as ``one``), spelled digits as
    digits, digits apart closed up, pauses between words dropped and chained words split
    (``norm`` itself when it has none of them)."""
    text = norm
    if _HAS_LEET.search(text):
        text = _LEET_CANDIDATE.sub(lambda m: _leet_token(m, one), text)
    text = _spelled_digits(text)
    # each rule below is tried only when the characters it needs are there (substring tests
    # run in C; most texts have none of them)
    if _HAS_SPLIT_DIGITS.search(text):
        text = _SPLIT_DIGITS.sub(lambda m: _DIGIT_SEPARATOR.sub("", m.group(0)), text)
    if any(mark in text for mark in _PAUSE_MARKS):
        text = _PAUSE.sub(" ", text)
    if text.count("_") > 1 or text.count("-") > 1 or text.count(".") > 1:
        text = _CHAINED.sub(_unchain, text)
    return text


# ---------------------------------------------------------------------- main-clause order

# A subordinate clause of German or Dutch ("dass/weil/ob …", "dat/omdat/of …") with a person as
# its subject and a form of be, have, become or suffer as its last word. Bounded: a clause of at
# most 80 characters without sentence punctuation.
_SUBORDINATE: Final = re.compile(
    r"\b(?:dass|daß|weil|obwohl|ob|wenn|da|dat|omdat|hoewel|of|als)\s+"
    r"(?P<subject>ich|wir|er|sie|(?:mein|meine|meinen|meinem|meiner|unser|unsere)\s+\w+"
    r"|ik|wij|we|hij|zij|ze|(?:mijn|onze|ons)\s+\w+)\s+"
    r"(?P<rest>[^.;:!?,\n]{1,80}?)\s+"
    r"(?P<verb>bin|bist|ist|sind|war|waren|habe|hab|hat|haben|hatte|hatten|werde|wird|wurde"
    r"|leide|leidet|ben|is|zijn|was|heb|heeft|hebben|had|hadden|word|wordt|lijd|lijdt)\b",
    re.IGNORECASE,
)


# the same clause cut out of its sentence: "ich allergisch gegen Nüsse bin."
_FRAGMENT: Final = re.compile(
    r"^\s*" + _SUBORDINATE.pattern.split(r"\s+", 1)[1] + r"\s*[.!?]?\s*$", re.IGNORECASE
)


def main_clause_order(text: str) -> str:
    """``text`` with each German or Dutch subordinate clause of a person (or a text that is one
    such clause) put in main-clause order (subject, verb, the rest); ``text`` itself when it
    has none."""

    def ordered(m: re.Match[str]) -> str:
        return f"{m['subject']} {m['verb']} {m['rest']}"

    if _SUBORDINATE.search(text):
        return _SUBORDINATE.sub(ordered, text)
    whole = _FRAGMENT.match(text)
    return text if whole is None else ordered(whole)


# ----------------------------------------------------------------------------------- unmarked


def unmarked(text: str) -> str:
    """``text`` with its invisible characters as spaces and its letters' marks dropped (or
    ``text`` itself when it has neither). An added reading, never a replacement: dropping an
    accent can make another language's word, and a space can split a word an invisible was
    wedged into — the text as written and normalised is checked too."""
    if text.isascii():
        return text
    spaced = INVISIBLE.sub(" ", text)
    decomposed = unicodedata.normalize("NFKD", spaced)
    bare = "".join(c for c in decomposed if not unicodedata.combining(c))
    if bare == decomposed and spaced == text:
        return text
    return unicodedata.normalize("NFKC", bare)


# ----------------------------------------------------------------------------------- readings


def _own_readings(text: str, norm: str) -> tuple[str, list[str]]:
    """``text``'s unwrapped form, and its readings: as written, unwrapped, respelled (``norm``
    is ``normalize(text)``, which the caller has already computed)."""
    unwrapped = unwrap(text)
    found = [text] if unwrapped == text else [text, unwrapped]
    reordered = main_clause_order(unwrapped)
    if reordered != unwrapped:
        found.append(reordered)
    bare = unmarked(unwrapped)
    if bare not in found:
        found.append(bare)
    for variant in list(found):
        normal = norm if variant is text else normalize(variant)
        respelled = respell(normal)
        if respelled != normal:
            found.append(respelled)
            # a lone "1" in a word is an i ("d1abetic") or an l ("a1coho1ic"): read both
            if "1" in normal:
                as_l = respell(normal, one="l")
                if as_l != respelled:
                    found.append(as_l)
    return unwrapped, found


def other_readings(text: str, norm: str) -> Iterator[str]:
    """Each distinct reading of ``text`` other than itself (see the module's docstring), then
    the readings of the text hidden in its base64 or hex runs (at most a few, one level deep).
    ``norm`` is ``normalize(text)``: the policy has it already, from checking ``text``."""
    seen = {text}
    unwrapped, own = _own_readings(text, norm)
    for reading in own:
        if reading not in seen:
            seen.add(reading)
            yield reading
    # as written and unwrapped: a run may be percent-encoded or inside a JSON string
    for source in (text,) if unwrapped == text else (text, unwrapped):
        for hidden in decoded_runs(source):
            for reading in _own_readings(hidden, normalize(hidden))[1]:
                if reading not in seen:
                    seen.add(reading)
                    yield reading


def readings(text: str) -> Iterator[str]:
    """``text`` first, then :func:`other_readings`."""
    yield text
    yield from other_readings(text, normalize(text))
