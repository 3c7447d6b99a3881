"""What a user message asks of long-term memory, read by the grammar of requests (no model).

A message is split into sentences; a sentence is a request when it is built as one, in any of
the languages of :mod:`convmem.memory.phrases`:

* **remember** — ``HEAD SEPARATOR CLAUSE``: the head, once courtesy words are dropped, is
  exactly a request imperative ("remember", "please keep in mind", "can you note", "merk dir",
  "n'oublie pas", …); the separator is a complementizer ("that", "dass", "que", …), a colon or a
  comma (or, for a clause opening with a first-person pronoun, nothing); the clause is about the
  speaker: it opens with a first-person word (after at most a negation, an article or an
  adverb), addresses nobody ("you", "du", "tu" … make it advice or affection for the other
  person) and is no question unless the head was a polite question ("could you remember
  that …?"). "From now on …" takes an instruction to the assistant or such a clause.
  So "remember when …", "I remember …", "do you remember …", "remember to pause", "she told me
  to remember that …" and "remember, it takes time" are not requests. A clause opening with
  "she/he/they" takes its antecedent ("my sister Anna") from an earlier sentence of the same
  message, or the request is refused with the reason ``unclear_reference`` — as is a request
  with nothing named ("remember this").
* **forget** — a forget imperative followed by a first-person clause ("forget that I …"), a
  first-person noun phrase ("forget my …", not "forget my last question"), "what I told you
  about …", or a delete verb with a memory noun ("delete the memory about …"); never with a
  dismissal ("for now", "let's", "anyway"), never as a question unless polite.
* **propose** — the message opens with a plain first-person statement of a standing fact
  ("I prefer …", "my name is …", "ich wohne in …"), with nothing dangling ("them", "that",
  "your" …), and it is no question: at most a proposal, never recalled until confirmed.

Each intent carries the statement, a category and a subject key; ``slot`` says the subject key
names a slot with a value ("seat": aisle, "home": Porto), the only kind of subject on which a
newer statement may supersede an older one.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal

from convmem.memory.clause_order import main_clause
from convmem.memory.intent_cjk import cjk_request
from convmem.memory.language import Language
from convmem.memory.normalize import as_read
from convmem.memory.phrases import COMMON_FILLERS, ENGLISH, LANGUAGES
from convmem.memory.slots import classify, content_words, stem, subject_slot, word_set
from convmem.model.memory import Category

IntentKind = Literal["remember", "forget", "propose"]

# Sentences end at a stop (a CJK full stop needs no space after it), a semicolon, a line break or
# a dash between spaces, except after a Cyrillic word: there the dash is the copula ("мой
# пароль — …", "my password is …").
_SENTENCE = re.compile(
    r"(?<=[.!?…])\s+|(?<=[\u3002\uff01\uff1f])\s*|(?<=[!?])(?=[\u3040-\u30ff\u3400-\u9fff\uac00-\ud7af])|"
    r"(?<![\u0400-\u04ff])\s+[-\u2013\u2014]\s+|;\s*|\n+"
)
_QUOTES = "\"'\u201c\u201d\u201e\u00ab\u00bb\u201a\u2018\u2019"


# Words that may precede a clause's first-person subject: negation, article, frequency adverb,
# and the time adverbs that say a fact is current ("que ahora vivo", "che adesso abito").
_LEAD = word_set(
    "no non não ne n' nicht niet never always also still really actually usually il la el o a "
    "lo los las le les sempre siempre immer altijd toujours jamais nunca ya já también também "
    "anche auch ook aussi mai now currently nowadays recently jetzt nun inzwischen mittlerweile "
    "maintenant désormais actuellement ahora actualmente adesso ora ormai attualmente agora "
    "atualmente nu tegenwoordig inmiddels не уже теперь сейчас всегда никогда тоже nie już teraz "
    "zawsze nigdy też"
)
# First words of a noun phrase that name the conversation, not something about the user.
_CONVERSATION_NOUNS = word_set(
    "last previous earlier question questions message messages typo mistake draft request "
    "answer reply letzte letzten frage nachricht dernière dernier question message última "
    "último pregunta mensaje ultima ultimo domanda messaggio pergunta mensagem laatste vraag "
    "bericht"
)
_DEMONSTRATIVE_ONLY = re.compile(
    r"^(?:this|that|it|das|dies|es|ça|cela|ceci|esto|eso|esta|questo|quello|isto|isso|dit|dat)"
    r"\W*$",
    re.IGNORECASE,
)
_ANTECEDENT_PRONOUN = re.compile(r"^(?:she|he|they)\b", re.IGNORECASE)
_ANTECEDENT = re.compile(r"\b[Mm]y\s+(?P<np>[a-z][\w-]*(?:\s+[A-Z][\w-]+)?)")
_MY_CLAUSE_VERB = re.compile(
    r"^my\s+(?:[\w'-]+\s+){1,4}?(?:is|are|has|have|'s|lives|works|likes|loves|hates|plays|"
    r"prefers)\b",
    re.IGNORECASE,
)
_MEMORY_VERB = re.compile(
    r"\b(?:forg[eo]t\w*|remember\w*|vergess\w*|vergiss|vergeet|oubli\w*|olvid\w*|dimentic\w*|"
    r"esquec\w*|esqueç\w*)",
    re.IGNORECASE,
)
_DANGLING = re.compile(
    r"\b(?:them|they|it|its|it's|that|this|those|these|there|here|he|she|him|her|his|their|"
    r"you|your|yours|we|us|our|one|ones|other)\b",
    re.IGNORECASE,
)


def _words(pattern: str) -> re.Pattern[str]:
    return re.compile(rf"(?:{pattern})", re.IGNORECASE)


@dataclass(frozen=True)
class _Grammar:
    """One language's phrases compiled into the patterns the rules use."""

    language: Language
    # Every request of the language holds one of these words (see _may_request): a sentence
    # without any is no request in it, and the rules need not run (two searches, not dozens).
    request_words: re.Pattern[str]
    remember_head: re.Pattern[str]
    from_now: re.Pattern[str]
    instruction: re.Pattern[str]
    forget_head: re.Pattern[str]
    delete_head: re.Pattern[str]
    comp: re.Pattern[str]
    first_person: re.Pattern[str]
    second_person: re.Pattern[str]
    third_person: re.Pattern[str]
    forget_what: re.Pattern[str]
    memory_noun: re.Pattern[str]
    possessive: re.Pattern[str]
    dismissal: re.Pattern[str]
    future: re.Pattern[str]
    fillers: re.Pattern[str]
    statement: re.Pattern[str]
    forget_about: re.Pattern[str]
    first_person_end: re.Pattern[str] | None


def _compile(lang: Language) -> _Grammar:
    fillers = rf"(?:{lang.fillers}|{COMMON_FILLERS})"
    demonstrative = r"(?:\s+(?:this|das|ceci|esto|questo|isto|dit))?"
    return _Grammar(
        language=lang,
        request_words=re.compile(
            rf"{lang.remember}|{lang.store}|{lang.forget}|{lang.delete}|{lang.from_now}",
            re.IGNORECASE,
        ),
        remember_head=re.compile(
            rf"(?:(?:{lang.polite})\s+)?(?:(?:{lang.remember}){demonstrative}"
            rf"(?:\s+(?:{lang.memory_place}))?|(?:{lang.store})\s+(?:{lang.memory_place}))",
            re.IGNORECASE,
        ),
        from_now=re.compile(rf"^(?:{fillers}\W+)*(?:{lang.from_now})\b[\s,:]*", re.IGNORECASE),
        instruction=re.compile(rf"^(?:{lang.instruction})(?![\w'])", re.IGNORECASE),
        forget_head=re.compile(rf"(?:(?:{lang.polite})\s+)?(?:{lang.forget})", re.IGNORECASE),
        delete_head=re.compile(rf"(?:(?:{lang.polite})\s+)?(?:{lang.delete})", re.IGNORECASE),
        comp=re.compile(rf"^(?:{lang.complementizer})(?:\s+|(?<=')(?=\w))", re.IGNORECASE),
        first_person=_words(lang.first_person),
        second_person=re.compile(rf"(?<![\w'])(?:{lang.second_person})(?![\w'])", re.I),
        third_person=re.compile(rf"^(?:{lang.third_person})(?![\w'])", re.IGNORECASE),
        forget_what=re.compile(rf"^(?:{lang.forget_what})\s+", re.IGNORECASE),
        memory_noun=re.compile(rf"^(?:{lang.memory_noun})\s+", re.IGNORECASE),
        possessive=re.compile(rf"^(?:about\s+)?(?:{lang.possessive})\s+", re.IGNORECASE),
        dismissal=re.compile(rf"(?<![\w'])(?:{lang.dismissal})(?![\w'])", re.IGNORECASE),
        future=re.compile(rf"^(?:{lang.future})(?![\w'])", re.IGNORECASE),
        fillers=re.compile(rf"(?<![\w'])(?:{fillers})(?![\w'])", re.IGNORECASE),
        statement=re.compile(rf"^(?:{lang.statement})", re.IGNORECASE),
        forget_about=re.compile(rf"^(?:{lang.forget_about})\s+", re.IGNORECASE),
        first_person_end=(
            re.compile(rf"(?:{lang.first_person_end})", re.IGNORECASE)
            if lang.first_person_end
            else None
        ),
    )


_GRAMMARS = tuple(_compile(lang) for lang in LANGUAGES)


@dataclass(frozen=True)
class Intent:
    kind: IntentKind
    text: str
    category: Category
    subject_key: str
    slot: bool = False  # the subject key names a slot the statement gives a value for
    refusal: str | None = None  # a request that cannot be kept as said, and why


# --- sentences and heads ------------------------------------------------------------------------


def _sentences(message: str) -> list[str]:
    return [s.strip() for s in _SENTENCE.split(message.strip()) if s.strip()]


def _clean_head(g: _Grammar, head: str) -> str:
    """The head without courtesy words and punctuation, lower-cased."""
    text = g.fillers.sub(" ", head.replace("¿", " ").replace("¡", " "))
    text = re.sub(r"[!,.:;…]+", " ", text)
    return " ".join(text.lower().split())


def _drop_lead_fillers(g: _Grammar, rest: str) -> str:
    """The rest of a sentence after the courtesy words that follow its head ("bitte, dass")."""
    while True:
        lead = g.fillers.match(rest)
        if not lead:
            return rest
        rest = rest[lead.end() :].lstrip(" ,")


def _may_request(g: _Grammar, sentence: str) -> bool:
    """Whether the sentence holds a request word of the grammar, as said or once courtesy words
    are dropped ("denke bitte daran" holds "denke daran"): without one it is no request."""
    return bool(
        g.request_words.search(sentence) or g.request_words.search(_clean_head(g, sentence))
    )


def _splits(sentence: str) -> list[tuple[str, str, str]]:
    """Every (head, separator, rest) cut of a sentence at a word boundary in its first words;
    the separator is the punctuation ending the head (":" or ",") or ""."""
    cuts = []
    for match in re.finditer(r"\s+", sentence):
        head, rest = sentence[: match.start()], sentence[match.end() :]
        separator = head[-1] if head[-1] in ",:" else ""
        cuts.append((head.rstrip(",:"), separator, rest))
        if len(cuts) >= 10:
            break
    return cuts


def _first_tokens(clause: str, n: int = 3) -> list[str]:
    return re.findall(r"[\w'\u2019-]+", clause.lower())[:n]


def _opens_first_person(g: _Grammar, clause: str) -> bool:
    """The clause's subject is the speaker: its first word, after at most two lead words
    (negation, article, adverb), is a first-person word ("j'habite" counts by its "j'")."""
    for token in _first_tokens(clause):
        bare = token.replace("\u2019", "'")
        if g.first_person.fullmatch(bare) or (
            "'" in bare and g.first_person.fullmatch(bare.split("'")[0] + "'")
        ):
            return True
        if bare not in _LEAD:
            return False
    return False


def _about_speaker(g: _Grammar, clause: str) -> bool:
    """The clause is the speaker's: it opens with a first-person word or, in a verb-final
    language, its last word carries a first-person ending ("çay severim")."""
    if _opens_first_person(g, clause):
        return True
    last = re.findall(r"[\w'\u2019-]+", clause.lower())[-1:]
    return bool(g.first_person_end and last and g.first_person_end.fullmatch(last[0]))


def _finish(text: str) -> str:
    text = text.strip().strip(_QUOTES).strip()
    text = re.sub(r"\s*[?!]+$", "", text).strip()
    return text if text.endswith((".", "!")) else text + "."


# --- remember -----------------------------------------------------------------------------------


@dataclass(frozen=True)
class _Request:
    text: str
    refusal: str | None = None


def _antecedent(earlier: list[str]) -> str | None:
    """The one "my <noun> [Name]" of the message's earlier sentences a pronoun can stand for."""
    found = {m.group("np") for s in earlier for m in _ANTECEDENT.finditer(s)}
    return f"my {found.pop()}" if len(found) == 1 else None


def _about_user(
    g: _Grammar, clause: str, *, polite: bool, earlier: list[str], said: str | None = None
) -> _Request | None:
    """The clause as a statement about the speaker, a refusal, or None (not a request).
    ``said``: the whole sentence, when the clause followed a complementizer (in German and
    Dutch its verb is then last: the clause is kept in main-clause order, or, when that order
    cannot be read, the user's own sentence is, never the fragment)."""
    clause = clause.strip().strip(_QUOTES).strip()
    if not clause or (clause.rstrip().endswith("?") and not polite):
        return None
    if _DEMONSTRATIVE_ONLY.match(clause):
        return _Request(clause, "unclear_reference")
    if g.second_person.search(clause) and not re.search(
        r"\bi\s+(?:want|need|would\s+like|'d\s+like)\s+you\s+to\b", clause, re.IGNORECASE
    ):
        return None
    if g.third_person.match(clause):
        if g.language is ENGLISH and _ANTECEDENT_PRONOUN.match(clause):
            antecedent = _antecedent(earlier)
            if antecedent is None:
                return _Request(clause, "unclear_reference")
            return _Request(_finish(_ANTECEDENT_PRONOUN.sub(antecedent, clause, count=1)))
        if g.first_person.search(clause) or _ANTECEDENT_PRONOUN.match(clause):
            return _Request(clause, "unclear_reference")
        return None
    if not _about_speaker(g, clause):
        return None
    if g.future.match(clause):
        return None
    if said is not None and g.language.code in ("de", "nl"):
        return _Request(main_clause(g.language.code, _finish(clause)) or _finish(said))
    return _Request(_finish(clause))


def _remember_request(g: _Grammar, sentence: str, earlier: list[str]) -> _Request | None:
    cleaned_all = _clean_head(g, sentence)
    if g.remember_head.fullmatch(re.sub(r"\s+(?:that|it|this)$", "", cleaned_all)) and re.search(
        r"\b(?:that|this|it)\W*$", sentence, re.IGNORECASE
    ):
        return _Request(sentence, "unclear_reference")  # "remember that!" names nothing
    for head, separator, rest in _splits(sentence):
        cleaned = _clean_head(g, head)
        if not cleaned or not g.remember_head.fullmatch(cleaned):
            continue
        polite = bool(re.match(rf"(?:{g.language.polite})\s", cleaned + " ", re.IGNORECASE))
        rest = _drop_lead_fillers(g, rest)
        comp = g.comp.match(rest)
        if comp:
            return _about_user(g, rest[comp.end() :], polite=polite, earlier=earlier, said=sentence)
        if separator:
            clause = rest
        elif g.first_person.fullmatch(_first_tokens(rest, 1)[0] if rest.strip() else ""):
            clause = rest  # "remember I always fly economy", "remember my wife is …"
            if clause.lower().startswith("my") and not _MY_CLAUSE_VERB.match(clause):
                continue  # "remember my first car?" names a thing, says nothing of it
            if clause.lower().startswith("me "):
                continue  # "remember me telling you …"
        else:
            continue
        request = _about_user(g, clause, polite=polite, earlier=earlier)
        if request is not None and request.refusal is None:
            return request
        return None
    return None


def _from_now_request(g: _Grammar, sentence: str, earlier: list[str]) -> _Request | None:
    opener = g.from_now.match(sentence)
    if not opener:
        return None
    rest = sentence[opener.end() :]
    nested = _remember_request(g, rest, earlier)
    if nested is not None:
        return nested
    rest = g.fillers.sub("", rest, count=0).strip(" ,") if g.fillers.match(rest) else rest
    if rest.rstrip().endswith("?"):
        return None
    if g.instruction.match(rest):
        return _Request(_finish(rest))
    if g.second_person.search(rest) or not _about_speaker(g, rest) or g.future.match(rest):
        return None
    return _Request(_finish(rest))


# --- forget -------------------------------------------------------------------------------------


def _forget_target(g: _Grammar, rest: str, *, polite: bool) -> str | None:
    """What a forget request names, or None when the rest does not make it one."""
    rest = rest.strip()
    if rest.endswith("?") and not polite:
        return None
    if g.dismissal.search(rest):
        return None
    comp = g.comp.match(rest)
    if comp:
        clause = rest[comp.end() :]
        if not _about_speaker(g, clause):
            return None
        if g.language.code in ("de", "nl"):  # "dass ich in Berlin wohne": "Ich wohne in Berlin"
            return main_clause(g.language.code, clause) or clause
        return clause
    what = g.forget_what.match(rest)
    if what:
        return rest[what.end() :] or None
    where = _WHERE.match(rest)
    if where and _opens_first_person(g, rest[where.end() :]):
        return rest  # "forget where I live": the slot, named by the clause
    about = g.forget_about.match(rest)
    if about:
        return _named_thing(g, rest[about.end() :])
    owned = g.possessive.match(rest)
    if owned:
        noun = _first_tokens(rest[owned.end() :], 1)
        if noun and noun[0] not in _CONVERSATION_NOUNS:
            return rest
    return None


# "from your memory" closing a delete request, in the grammar's languages
_FROM_MEMORY = re.compile(
    r"\s+(?:from\s+(?:your\s+)?memory|aus\s+(?:deinem|ihrem|dem)\s+(?:gedächtnis|speicher)|"
    r"de\s+(?:ta|votre|la)\s+mémoire|de\s+(?:tu|su|la)\s+memoria|dalla\s+(?:tua|sua)\s+memoria|"
    r"da\s+(?:sua|tua)\s+memória|uit\s+(?:je|jouw|uw|het)\s+geheugen)\W*$",
    re.IGNORECASE,
)
# "where" opening an indirect question, in the grammar's languages ("forget where I live")
_WHERE = re.compile(r"^(?:where|wo|où|dónde|donde|dove|onde|waar)\s+", re.IGNORECASE)
# A noun phrase is a few words: more, and "forget about …" is advice ("forget about the rain, we
# had so much fun").
_MAX_THING_WORDS = 6


def _named_thing(g: _Grammar, rest: str) -> str | None:
    """The noun phrase of "forget about the coffee": alone in its sentence (after it, at most
    courtesy words), naming a thing, not a person addressed or a pronoun."""
    thing, _, after = rest.partition(",")
    if after.strip(" .!") and g.fillers.sub("", after).strip(" ,.!"):
        return None
    thing = thing.strip().rstrip(".!")
    words = _first_tokens(thing, _MAX_THING_WORDS + 1)
    if not words or len(words) > _MAX_THING_WORDS:
        return None
    if _DANGLING.search(thing) or g.second_person.search(thing) or g.third_person.match(thing):
        return None
    if _DEMONSTRATIVE_ONLY.match(thing) or set(words) & _CONVERSATION_NOUNS:
        return None
    return thing


def _forget_request(g: _Grammar, sentence: str) -> str | None:
    for head, separator, rest in _splits(sentence):
        cleaned = _clean_head(g, head)
        if not cleaned:
            continue
        polite = bool(re.match(rf"(?:{g.language.polite})\s", cleaned + " ", re.IGNORECASE))
        rest = _drop_lead_fillers(g, rest)
        if g.forget_head.fullmatch(cleaned) and separator and g.first_person_end:
            # no complementizer in a verb-final language: "Unut: çay severim"
            if rest.rstrip().endswith("?") or g.dismissal.search(rest):
                return None
            return rest if _about_speaker(g, rest) else None
        if g.forget_head.fullmatch(cleaned):
            return _forget_target(g, rest, polite=polite or sentence.lower().startswith("can"))
        if g.delete_head.fullmatch(cleaned):
            if rest.rstrip().endswith("?") and not polite:
                return None
            noun = g.memory_noun.match(rest)
            if noun:
                return rest[noun.end() :] or None
            if g.possessive.match(rest) and _FROM_MEMORY.search(rest):
                return _FROM_MEMORY.sub("", rest)
            return None
    return None


# --- proposals ----------------------------------------------------------------------------------


def _proposal(g: _Grammar, sentence: str, whole: str) -> str | None:
    if not g.statement.match(sentence) or "?" in whole or _MEMORY_VERB.search(sentence):
        return None  # "I always forget my keys" is about forgetting, not a standing fact
    if _DANGLING.search(sentence) or g.second_person.search(sentence):
        return None
    if len(re.findall(r"\w+", sentence)) < 2:
        return None
    return _finish(sentence)


def _intent(kind: IntentKind, text: str, refusal: str | None = None) -> Intent:
    category, subject = classify(text)
    return Intent(kind, text, category, subject, subject_slot(text) is not None, refusal)


def detect_intent(message: str) -> Intent | None:
    """The memory intent of a user message, if any: the first request among its sentences,
    else a proposal from its opening statement."""
    # Full-width letters, ligatures and invisible characters read like plain words to the user,
    # so the grammar sees them that way too (full-width "PLEASE REMEMBER", "remem\u200bber").
    sentences = _sentences(as_read(message[:4000]))
    for index, sentence in enumerate(sentences):
        if sentence[0] in _QUOTES:
            continue  # quoted words are someone else's
        earlier = sentences[:index]
        cjk = cjk_request(sentence)
        if cjk is not None:
            kind, text = cjk
            return _intent(kind, text[:500])
        for g in _GRAMMARS:
            if not _may_request(g, sentence):
                continue
            request = _remember_request(g, sentence, earlier) or _from_now_request(
                g, sentence, earlier
            )
            if request is not None:
                return _intent("remember", request.text[:500], request.refusal)
            target = _forget_target_of(g, sentence)
            if target is not None:
                return _intent("forget", target[:500])
    if sentences:
        for g in _GRAMMARS:
            proposal = _proposal(g, sentences[0], message)
            if proposal is not None:
                return _intent("propose", proposal[:500])
    return None


def _forget_target_of(g: _Grammar, sentence: str) -> str | None:
    target = _forget_request(g, sentence)
    if target is None or not content_words(target):
        return None
    return target.strip().rstrip(".!?")


def matches_forget(request: str, subject_key: str, memory_text: str) -> bool:
    """Whether a memory is what a forget request names: most of the request's content words
    (compared by their first five letters, a cheap stem) occur in the memory or its subject."""
    wanted = {stem(w) for w in content_words(request)} - {"forge"}
    if not wanted:
        return False
    have = {stem(w) for w in content_words(memory_text + " " + subject_key)}
    return len(wanted & have) / len(wanted) >= 0.6


def statements(message: str) -> list[str]:
    """The sentences of a message that are the speaker's own (quoted ones are someone else's),
    read as the intent grammar reads them."""
    return [s for s in _sentences(as_read(message[:4000])) if s[0] not in _QUOTES]
