"""Which memories a "forget …" request names, in whichever of the grammar's languages each is.

A request is compared with a memory in two ways:

1. **by slot** — when the request states a value for a slot ("forget that I live in Lisbon")
   and the memory holds one for the same slot ("My home city is Lisbon."), it names the memory
   when the values agree, their words compared loosely enough for a place named in another
   language ("Lissabon", "Lisboa", "Lisbon"); a different value names it only as a question
   (``Match.ASK``: the user may misremember what they said);
2. **by content** — otherwise most of the request's content words must be in the memory, read
   in any of the languages: function words (articles, possessives, prepositions, the verbs of
   "what you know about") are dropped, each word stands for its concept when the lexicon knows
   it ("Hund", "chien", "dog"; "Wohnort", "where I live", "home"), and other words compare by
   their stem or, for names, loosely.

No sentence of any corpus is listed here: only words and the concepts they name.
"""

from __future__ import annotations

import re
import unicodedata
from difflib import SequenceMatcher
from enum import Enum
from typing import Final

from convmem.memory.place_names import same_place
from convmem.memory.slots import SlotValue, content_words, slot_value, stem, word_set


def _bare(word: str) -> str:
    folded = unicodedata.normalize("NFKD", word.lower())
    return "".join(c for c in folded if not unicodedata.combining(c))


# Words that carry no subject in a forget request, in the grammar's seven languages.
_FUNCTION: Final = word_set(
    "a an the my mine me i you your about of on in at to for with from and or that this what "
    "everything anything whatever all know knew remember remembered saved stored said told "
    "mentioned wrote have has had was were is are be been do did noted learned learnt please der "
    "die das den dem des ein eine einen einem einer mein meine meinen meinem meiner meines über "
    "von zu mit ich du dir mich mir was alles weißt weisst gesagt erzählt habe hast hat "
    "gespeichert bitte und oder le la les l' un une des du de d' mon ma mes je tu te t' ce que "
    "qui sur à au aux tout sais savez dit raconté ai as et ou concerne histoire retenu noté el "
    "los las lo una unos mi mis yo que sobre del al todo sabes sabe dije conté acerca y il gli i "
    "uno mio mia miei mie io che su sul sulla sui di della dello dei delle tutto sai detto ho "
    "quello ciò riguardo o os as um uma meu minha meus minhas eu você sobre do da dos das tudo "
    "sabe disse contei em no na guardou het een mijn ik je jij u wat over weet alles gezegd heb "
    "hebt verteld van where wo où dónde donde dove onde waar"
)

# Concepts a request may name in one language and the memory in another: the slots' own keys
# (a memory's subject key is its slot) and the nouns people ask to forget most. Each row is
# the concept's key, then its words (a word's first five letters match, as stems do).
_CONCEPTS: Final = {
    "home": "home hometown wohnort zuhause heimat domicile domicilio casa woonplaats thuis",
    "name": "name nom nombre nome naam heiße llamo chiamo chamo heet",
    "job": "job work occupation profession beruf arbeit travail métier trabajo profesión "
    "empleo lavoro professione mestiere trabalho profissão emprego werk beroep baan",
    "employer": "employer company arbeitgeber firma employeur entreprise empresa azienda "
    "empregador werkgever bedrijf",
    "seat": "seat seats sitzplatz sitz siège asiento posto assento stoel zitplaats",
    "diet": "diet ernährung régime alimentation dieta dieet",
    "birthday": "birthday geburtstag anniversaire cumpleaños compleanno aniversário verjaardag",
    "language": "language sprache langue idioma lingua língua taal",
    "drink": "drink drinks getränk trinke boisson bois bebida bebo bevanda bevo drank",
    "coffee": "coffee kaffee café caffè caffe koffie",
    "tea": "tea tee thé té tè chá thee",
    "dog": "dog hund chien perro cane cão cachorro hond",
    "cat": "cat katze chat gato gatto kat poes",
    "sister": "sister schwester sœur soeur hermana sorella irmã zus",
    "brother": "brother bruder frère frere hermano fratello irmão broer",
    "wife": "wife frau femme esposa mujer moglie mulher vrouw",
    "husband": "husband mann mari marido esposo marito man",
    "son": "son sohn fils hijo figlio filho zoon",
    "daughter": "daughter tochter fille hija figlia filha dochter",
    "mother": "mother mum mom mutter mère madre mamma mãe moeder",
    "father": "father dad vater père padre papà pai vader",
    "partner": "partner partnerin compagnon compagne pareja compagno compagna parceiro "
    "parceira vriend vriendin",
    "car": "car auto wagen voiture coche carro macchina",
    "colour": "colour color farbe couleur colore cor kleur",
    "address": "address adresse dirección indirizzo endereço adres",
}

# Phrases that name a slot without a value: "forget where I live", "vergiss meinen Wohnort".
_SLOT_PHRASES: Final = (
    (
        re.compile(
            r"\bwhere\s+i\s+live|\bwo\s+ich\s+wohne|\boù\s+j'habite|\bdónde\s+vivo|"
            r"\bdove\s+(?:abito|vivo)|\bonde\s+(?:moro|vivo)|\bwaar\s+ik\s+woon|"
            r"\bhome\s+city|\bcity\b|\bstadt\b|\bville\b|\bciudad\b|\bcittà\b|\bcidade\b|"
            r"\bstad\b",
            re.I,
        ),
        "home",
    ),
    (re.compile(r"\bwhat\s+i\s+do\s+for\s+a\s+living|\bwhere\s+i\s+work", re.I), "employer"),
)
_LOOSE: Final = 0.75  # SequenceMatcher ratio at which two names are one ("Lisbon", "Lissabon")
_SHARE: Final = 0.6  # the share of a request's content a memory must hold


class Match(Enum):
    NONE = "none"
    YES = "yes"
    ASK = "ask"  # the slot the request names, holding another value: asked, never deleted


_CONCEPT_OF: Final = {
    stem(_bare(word)): key for key, words in _CONCEPTS.items() for word in words.split()
}


def _terms(text: str) -> set[str]:
    """The content of a text: concept keys for the words the lexicon knows, else bare words."""
    terms: set[str] = set()
    for word in content_words(text):
        for part in re.split(r"['\u2019]", word):  # "l'adresse", "j'habite"
            bare = _bare(part)
            if len(bare) < 2 or part in _FUNCTION or bare in _FUNCTION:
                continue
            terms.add(_CONCEPT_OF.get(stem(bare), bare))
    return terms


def _same_word(a: str, b: str) -> bool:
    if a == b or (len(a) >= 4 and len(b) >= 4 and stem(a) == stem(b)) or same_place(a, b):
        return True
    if min(len(a), len(b)) < 3 or a in _CONCEPTS or b in _CONCEPTS:
        return False
    return SequenceMatcher(None, a, b).ratio() >= _LOOSE


def _holds(terms: set[str], word: str) -> bool:
    return any(_same_word(word, have) for have in terms)


def _values_agree(asked: SlotValue, kept: SlotValue) -> bool:
    """Every value word of the request is one of the memory's or the other way round, loosely
    (a place in another language), whatever the polarity ("forget that I don't drink coffee"
    names the coffee; "my vegetarian diet" names "I'm vegetarian")."""
    asked_words, kept_words = set(asked.words or asked.value), set(kept.words or kept.value)
    return all(_holds(kept_words, w) for w in asked_words) or all(
        _holds(asked_words, w) for w in kept_words
    )


# Words that stand for any value of a slot, in the grammar's seven languages.
_ANY_VALUE_WORDS: Final = (
    "anything whatever something everything it that this irgendwas irgendetwas alles was etwas "
    "quoi quelque chose tout n'importe algo cualquier cosa todo qualsiasi qualcosa tutto "
    "qualquer coisa tudo iets alles wat dat"
)
_ANY_VALUE: Final = frozenset(_ANY_VALUE_WORDS.split())


def _any_value(asked: SlotValue) -> bool:
    """Whether a request's value is no value but a stand-in for whatever is kept."""
    words = set(asked.words or asked.value)
    return bool(words) and all(_bare(w) in _ANY_VALUE for w in words)


def _named_slot(request: str) -> str | None:
    for pattern, slot in _SLOT_PHRASES:
        if pattern.search(request):
            return slot
    return None


# Chinese, Japanese and Korean write no space between words, so a request's words are one run:
# it names a memory when what follows its first-person opener ("我的", "私の", "내") is in it.
_CJK = re.compile(r"[\u3040-\u30ff\u3400-\u9fff\uac00-\ud7af]")
_CJK_SPEAKER = re.compile(
    r"^(?:我的|我|私の|私は|私が|僕の|僕は|俺の|나의|나는|내가|내|저의|저는|제가|제)\s*"
)
_CJK_STOPS = "\u3002\uff0e.!\uff01?\uff1f "


def _cjk_named(request: str, memory_text: str) -> bool:
    core = _CJK_SPEAKER.sub("", request.strip().rstrip(_CJK_STOPS), count=1)
    return bool(core) and core.replace(" ", "") in memory_text.replace(" ", "")


def forget_match(request: str, subject_key: str, memory_text: str) -> Match:
    """Whether a forget request names a memory (its subject key and text)."""
    kept = slot_value(memory_text, (subject_key,)) if len(subject_key.split()) <= 2 else None
    asked = slot_value(request, (kept.subject,)) if kept is not None else None
    if kept is not None and asked is not None:
        if _any_value(asked):  # "forget that my locker word is anything": whatever it is
            return Match.YES
        return Match.YES if _values_agree(asked, kept) else Match.ASK
    if kept is not None and _named_slot(request) == kept.subject:
        return Match.YES
    if _CJK.search(request) and _cjk_named(request, memory_text):
        return Match.YES
    wanted = _terms(request)
    if not wanted:
        return Match.NONE
    have = _terms(memory_text) | _terms(subject_key) | {subject_key}
    held = sum(1 for word in wanted if _holds(have, word))
    return Match.YES if held / len(wanted) >= _SHARE else Match.NONE
