"""The words the entity extractor reads names by, in the seven languages of
:mod:`convmem.memory.phrases`: words that are capitalised without being names (pronouns,
determiners, weekdays, months, greetings), relation nouns ("my sister Ana"), the cues that give a
name its type, and the key a name is looked up by."""

from __future__ import annotations

import re
import unicodedata

from convmem.memory.phrases import LANGUAGES
from convmem.memory.slots import word_set


def _pronouns() -> frozenset[str]:
    words: set[str] = set()
    for lang in LANGUAGES:
        for alternation in (lang.first_person, lang.second_person, lang.third_person):
            # the alternations' words, without regex syntax (the "s" of "\s+" included)
            words.update(re.findall(r"(?<!\\)\b[^\W\d_]{2,}(?:'[^\W\d_]+)?", alternation))
    return frozenset(w.lower() for w in words)


# "I" is a capital by itself and shorter than the alternations' words
PRONOUNS = _pronouns() | word_set(
    "i we us our ours they their we're wir uns nous on nosotros noi nós wij"
)

# Capitalised at a sentence's start or in a greeting, never a name by themselves.
NOT_NAMES = PRONOUNS | word_set(
    # English function words, interjections and courtesy
    "a an the this that these those there here what when where why how who which whose if "
    "and but or so then also just yes no not ok okay oh ah wow hey hi hello thanks thank "
    "please sorry cool great awesome nice yeah yep nope haha lol omg bye dear well anyway "
    "congrats congratulations good happy sure totally absolutely definitely maybe "
    "today tomorrow yesterday tonight last next every some any all many much more most "
    "is are was were do does did have has had can could would should will shall may might "
    "let lets let's it's that's i'm i've i'd i'll you're don't didn't can't won't isn't "
    "mr mrs ms dr sir madam "
    # German
    "der die das den dem des ein eine einen einem einer und aber oder ja nein nicht danke "
    "bitte hallo heute morgen gestern wie was wo wann warum wer welche ist sind war hat "
    # French
    "le la les un une des et mais ou oui non merci salut bonjour aujourd'hui demain hier "
    "comment quoi où quand pourquoi qui est sont était c'est "
    # Spanish
    "el los las una unos unas y pero sí gracias hola hoy mañana ayer cómo qué dónde cuándo "
    "por porque quién es son era "
    # Italian
    "il lo gli uno e ma sì grazie ciao oggi domani ieri come cosa dove quando perché chi "
    "sono era "
    # Portuguese
    "o os um uma mas sim obrigado obrigada olá hoje amanhã ontem onde quem são "
    # Dutch
    "de het een en maar ja nee dank bedankt hallo vandaag morgen gisteren hoe wat waar "
    "wanneer waarom wie zijn was"
)

# Imperatives and adverbs that open a sentence before a name ("Contact Ana Lopez", "Ask Bruno"):
# taken off the front of a sentence-opening run of capitalised words.
SENTENCE_OPENERS = word_set(
    "contact call ask tell meet email text message invite thank visit see check send remind "
    "ping help give get take make find introduce welcome congratulate maybe also only even "
    "ruf frag schreib kontaktiere appelle demande écris contacte llama pregunta escribe "
    "contacta chiama chiedi scrivi ligue pergunte escreva bel vraag schrijf"
)

WEEKDAYS_AND_MONTHS = word_set(
    "monday tuesday wednesday thursday friday saturday sunday "
    "january february march april may june july august september october november december "
    "montag dienstag mittwoch donnerstag freitag samstag sonntag januar februar märz mai juni "
    "juli oktober dezember "
    "lundi mardi mercredi jeudi vendredi samedi dimanche janvier février mars avril juin "
    "juillet août septembre octobre novembre décembre "
    "lunes martes miércoles jueves viernes sábado domingo enero febrero marzo abril mayo junio "
    "julio agosto septiembre octubre noviembre diciembre "
    "lunedì martedì mercoledì giovedì venerdì sabato domenica gennaio febbraio aprile maggio "
    "giugno luglio settembre ottobre dicembre "
    "segunda terça quarta quinta sexta janeiro fevereiro março maio junho julho setembro "
    "outubro novembro dezembro "
    "maandag dinsdag woensdag donderdag vrijdag zaterdag zondag januari februari maart juni "
    "juli augustus oktober "
    # their short forms ("last Tues", "Fri"), less those that are also given names (Jan, Jun,
    # Sam, Dom, Mei, Mo, Di)
    "mon tue tues wed weds thu thur thurs fri sat feb apr aug sep sept oct nov dec "
    "mär okt dez lun mer jeu ven dim fév avr juil déc mié jue vie sáb ene abr ago dic gen giu "
    "lug seg ter qua qui sex fev set out mrt"
)

# ISO 4217: every active currency code, and the funds and metals codes ("9,500 EUR"). Written in
# capitals they are units, not things; written as a name ("Bob", "Gel") they stay names.
CURRENCY_CODES = word_set(
    "aed afn all amd ang aoa ars aud awg azn bam bbd bdt bgn bhd bif bmd bnd bob bov brl bsd "
    "btn bwp byn bzd cad cdf che chf chw clf clp cny cop cou crc cuc cup cve czk djf dkk dop "
    "dzd egp ern etb eur fjd fkp gbp gel ghs gip gmd gnf gtq gyd hkd hnl hrk htg huf idr ils "
    "inr iqd irr isk jmd jod jpy kes kgs khr kmf kpw krw kwd kyd kzt lak lbp lkr lrd lsl lyd "
    "mad mdl mga mkd mmk mnt mop mru mur mvr mwk mxn mxv myr mzn nad ngn nio nok npr nzd omr "
    "pab pen pgk php pkr pln pyg qar ron rsd rub rwf sar sbd scr sdg sek sgd shp sle sll sos "
    "srd ssp stn svc syp szl thb tjs tmt tnd top try ttd twd tzs uah ugx usd usn uyi uyu uyw "
    "uzs ved ves vnd vuv wst xaf xag xau xba xbb xbc xbd xcd xcg xdr xof xpd xpf xpt xsu xts "
    "xua xxx yer zar zmw zwg zwl"
)
# Acronyms of technologies and of everyday office shorthand, in capitals ("SQL", "the API",
# "PDFs"), with the ones the other languages use ("KI", "IA", "BDD"): words of the trade, not
# things the user mentioned. Capitals only: "Ram", "Pip" and "Ai" are names too.
TECH_ACRONYMS = word_set(
    "ai ml llm nlp ocr gpt api apis sdk cli gui ui ux ide sql nosql db dbms rdbms orm etl "
    "json xml yaml yml csv tsv pdf html css js ts php jsx http https url uri rest grpc rpc "
    "graphql soap tcp udp ip dns vpn ssh ssl tls ftp sftp smtp imap pop3 lan wan wifi "
    "cpu gpu tpu ram rom ssd hdd usb hdmi os ios vm vms cpu saas paas iaas iot "
    "ci cd qa pr prs mr sso jwt oauth saml ldap 2fa mfa otp aws gcp k8s crm erp cms seo "
    "kpi okr roi faq fyi asap eta tbd tba pm am utc gmt cet cest pst est "
    "svg png jpg jpeg gif mp3 mp4 zip "
    "ki edv ia bdd sgbd bd ti"
)


def is_code_word(word: str) -> bool:
    """A word written in capitals that is a currency code or a technology's acronym (a plural
    "APIs" too): a unit or a word of the trade, never a person or a thing mentioned."""
    letters = word.rstrip(".'’-")
    if letters.endswith("s") and letters[:-1].isupper():
        letters = letters[:-1]  # "PDFs", "APIs"
    if len(letters) < 2 or not letters.isupper():
        return False
    key = letters.casefold()
    return key in CURRENCY_CODES or key in TECH_ACRONYMS


# "my <relation> <Name>": the relation nouns per language; the animals among them name pets.
PERSON_RELATIONS = word_set(
    "sister brother mother mom mum mommy father dad daddy wife husband partner boyfriend "
    "girlfriend fiance fiancé fiancée son daughter kid child friend bestie boss manager "
    "colleague coworker co-worker neighbour neighbor cousin aunt uncle grandma grandmother "
    "grandpa grandfather granny niece nephew teacher mentor roommate flatmate buddy pal "
    "schwester bruder mutter mama vater papa frau mann freund freundin chef chefin kollege "
    "kollegin sohn tochter nachbar nachbarin cousine tante onkel oma opa "
    "sœur soeur frère frere mère père femme mari ami amie copain copine patron patronne "
    "collègue fils fille voisin voisine cousin tante oncle "
    "hermana hermano madre mamá padre papá esposa esposo marido amigo amiga jefe jefa colega "
    "hijo hija vecino vecina prima primo tía tío abuela abuelo novio novia "
    "sorella fratello mamma papà moglie marito amico amica capo collega figlio figlia "
    "vicino vicina cugino cugina zia zio nonna nonno fidanzato fidanzata "
    "irmã irmão mãe pai esposa chefe colega filho filha vizinho vizinha primo prima tia tio "
    "avó avô namorado namorada "
    "zus zuster broer moeder vader vrouw man vriend vriendin baas collega zoon dochter buurman "
    "buurvrouw neef nicht tante oom oma opa"
)
ANIMAL_RELATIONS = word_set(
    "dog cat puppy kitten horse pony pet bird parrot rabbit bunny hamster fish turtle "
    "hund katze pferd hase chien chat chienne chatte cheval lapin perro perra gato gata "
    "caballo conejo cane gatto cavallo coniglio cachorro cadela cão cavalo coelho hond kat "
    "paard konijn"
)
# an optional word between the relation and the name: "my dog, named Rex", "mon chien Rex"
NAMING_WORDS = (
    r"named|called|genannt|namens|nommée?|appelée?|llamad[oa]|chiamat[oa]|chamad[oa]|genaamd"
)

# "Caroline (Caro)", "Robert, aka Bob", "Margaret, known as Peggy"
NICKNAME_WORDS = (
    r"aka|a\.k\.a\.?|also\s+known\s+as|known\s+as|nicknamed|alias|genannt|dite?|apodad[oa]|"
    r"dett[oa]|apelidad[oa]|bijgenaamd|or\s+just"
)
# "we call her Caro", "everyone calls him Bob": a nickname for the sentence's name
CALL_NICKNAME = (
    r"(?:we|everyone|everybody|people|i|they|friends)\s+(?:all\s+)?calls?\s+(?:him|her|them)"
)

ORGANISATION_WORDS = word_set(
    "inc inc. ltd ltd. llc gmbh ag sa bv corp corp. corporation company co co. group bank "
    "university universität université universidad università universidade universiteit "
    "college institute foundation association agency labs council ministry hospital school "
    "club team studio studios"
)
PLACE_WORDS = word_set(
    "city town street st. avenue road lake river mountain mount park beach island bay "
    "county state province country valley"
)
# the words before a name that make it a place
PLACE_CUE = re.compile(
    r"(?:\b(?:in|from|near|visited|visiting|moved\s+to|went\s+to|trip\s+to|flew\s+to|"
    r"travel+ed\s+to|nach|aus|à|en|em|naar|uit|vivo\s+en|moro\s+em)\s+)$",
    re.I,
)
PERSON_CUE_AFTER = re.compile(
    r"^\s*(?:said|says|told|tells|asked|asks|thinks|wants|loves|likes|is\s+my|was\s+my|"
    r"and\s+I|and\s+me|sagt|dit|dice|disse|zegt)\b",
    re.I,
)
PERSON_CUE_BEFORE = re.compile(
    r"(?:\b(?:hey|hi|hello|thanks|thank\s+you|dear|met|with|hallo|salut|hola|ciao|olá|"
    r"mit|avec|con|com|met)\s*,?\s*)$",
    re.I,
)
PROJECT_WORDS = word_set("project projekt projet proyecto progetto projeto")

# Languages that capitalise every noun (German; Luxembourgish writes the same way): there a
# capitalised word is a noun ("Hund", "Kuchen"), no sign of a name. A text is read as one when
# at least ``_NOUN_CAPITALS_MIN`` of its words are their function words and they outnumber
# English ones (a German name in an English sentence changes nothing).
_NOUN_CAPITALISING = word_set(
    "der die das den dem des ein eine einen einem einer und ist nicht ich du wir ihr sie mit "
    "auf für von zu zum zur im am bei nach aus habe hat haben sind war waren wird auch noch "
    "schon sehr aber oder mein meine meinen meinem dein deine sich ja nein"
)
_ENGLISH = word_set("the and is are was to of in a an it that this with for on my you i")
_NOUN_CAPITALS_MIN = 2
_TEXT_WORD = re.compile(r"[^\W\d_]+", re.U)


def capitalises_nouns(text: str) -> bool:
    """Whether ``text`` reads as written in a language that capitalises every noun."""
    noun_capitalising = english = 0
    for word in _TEXT_WORD.findall(text):
        if word.islower():
            noun_capitalising += word in _NOUN_CAPITALISING
            english += word in _ENGLISH
    return noun_capitalising >= _NOUN_CAPITALS_MIN and noun_capitalising > english


_SPACE = re.compile(r"\s+")
_START = re.compile(r"^[\W_]+")
_END = re.compile(r"[\W_]+$")
_POSSESSIVE = re.compile(r"['’]s$")


def fold(text: str) -> str:
    """Case and width folded: the part of ``name_key`` that reads every character."""
    return unicodedata.normalize("NFKC", text).casefold().strip()


def trim_start(folded: str) -> str:
    """A folded name's start as ``name_key`` trims it (outer punctuation)."""
    return _START.sub("", folded)


def trim_end(folded: str) -> str:
    """A folded name's end as ``name_key`` trims it (a possessive 's, outer punctuation)."""
    return _END.sub("", _POSSESSIVE.sub("", folded))


def name_key(name: str) -> str:
    """The key a name is looked up by: case and width folded, outer punctuation and a
    possessive 's dropped, spaces collapsed."""
    return _SPACE.sub(" ", trim_start(trim_end(fold(name))))


# The endings of a pronoun's contraction ("I'm", "we'll", "they're", "you'd", with a straight or
# a curly apostrophe): chat writes no full stop between an address and the next clause ("Hey Kate
# I'm back"), and such a word then opens that clause; it is never part of a name. "O'Brien" and
# "D'Angelo" start with no pronoun.
_CONTRACTION = re.compile(r"^(?P<head>[^\W\d_]+)['’](?:m|s|re|ve|ll|d)$")


def _is_pronoun_contraction(key: str) -> bool:
    match = _CONTRACTION.match(key)
    return match is not None and match.group("head") in PRONOUNS


def is_name_word(word: str) -> bool:
    """A capitalised word that may be (part of) a name."""
    if not word or not word[0].isupper():
        return False
    key = name_key(word)
    return (
        bool(key)
        and key not in NOT_NAMES
        and key not in WEEKDAYS_AND_MONTHS
        and not _is_pronoun_contraction(key)
        and not is_code_word(word)
    )
