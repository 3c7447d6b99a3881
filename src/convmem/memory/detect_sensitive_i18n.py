"""Sensitive disclosures in German, French, Spanish, Italian, Portuguese and Dutch.

The same rule as the English detectors (``detect_sensitive``): a *subject* (I, a person close to
me) bound by a verb to a *sensitive term*, so that a topic ("ich arbeite in der Krebsforschung",
"mon chat est diabétique") passes and a disclosure ("ich habe Krebs", "je suis diabétique") does
not. Each language's rules only run when the text has that language's first-person words, which
keeps the cost of six languages low on the (mostly English) rest.

Patterns work on the lower-cased, normalised text and are bounded (no nested unbounded
repetition).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Final

from convmem.memory import detect_sensitive_cjk_ru as cjk_ru
from convmem.memory import detect_sensitive_pl_tr as pl_tr

_W: Final = r"[^\W\d_]+"  # one word, letters only (accents included)
# up to two in a row: "de l'asthme", "de la dépression"
_ART: Final = (
    r"(?:(?:une?|eine?[nmr]?|el|la|le|les|l'|lo|il|gli|uno|un'|um|uma|o|a|os|as|de|het|een|des"
    r"|du|der|die|das|den|dem)\s*){0,2}"
)
_SINCE: Final = (
    r"(?:(?:seit|depuis|desde|hace|da|h[áa]|al|sinds|already|schon|bereits|d[ée]j[àa]|ya|gi[àa]"
    r"|j[áa]|nog)\s+(?:" + _W + r"\s+){0,3})?"
)
_DURATION: Final = (
    r"(?:\d+|" + _W + r")\s+(?:tage?n?|wochen?|monate?n?|jahre?n?|jours?|semaines?|mois|ans?"
    r"|ann[ée]es?|d[íi]as?|semanas?|meses|mes|años?|giorni|settimane|mesi|anni|anno|anos?|dagen"
    r"|weken|maanden|jaar|jaren)"
)


@dataclass(frozen=True)
class _Language:
    gate: re.Pattern[str]
    health: re.Pattern[str]
    sensitive: re.Pattern[str]


_GAP: Final = r"(?:" + _W + r"\s+){0,2}?"  # up to two words, as few as will do


def _says(lead: str, terms: str, *, then: str = "", sep: str = r"\s+") -> str:
    """The one shape every language's disclosure takes: a subject and its verb ("ich bin",
    "mi madre tiene"), optionally an article or a "since ..." phrase, at most two more words,
    then one of the sensitive terms."""
    return r"\b" + lead + sep + then + _GAP + terms + r"\b"


# a close person's name after them: "mi hermano juan tiene", "meine frau anna ist"
_NAME_AFTER: Final = r"(?:\s+" + _W + r"){0,2}?"


def _rx(*parts: str) -> re.Pattern[str]:
    return re.compile("|".join(f"(?:{p})" for p in parts))


# --------------------------------------------------------------------------------------- German

_DE_PERSON: Final = (
    r"(?:mann|frau|ehemann|ehefrau|partner(?:in)?|sohn|tochter|kind|mutter|mama|vater|papa|eltern"
    r"|bruder|schwester|oma|opa|gro[ßs]mutter|gro[ßs]vater|tante|onkel|cousine?|freund(?:in)?"
    r"|kollegin|kollege|chefin|chef|nachbarin|nachbar)"
)
_DE_COND: Final = (
    r"(?:diabetes|\w*krebs|krebs|depressionen|depression|angstst[öo]rung\w*|panikattacken"
    r"|epilepsie|asthma|hiv|aids|alzheimer|demenz|parkinson|multiple\s+sklerose|schizophrenie"
    r"|bipolare\s+st[öo]rung|adhs|autismus|magersucht|bulimie|essst[öo]rung|tumor|leuk[äa]mie"
    r"|herzinfarkt|schlaganfall|bluthochdruck|hepatitis|migr[äa]ne|long\s+covid|covid|corona"
    r"|z[öo]liakie|morbus\s+crohn|rheuma|arthrose|arthritis|burn-?out|zwangsst[öo]rung|ptbs"
    r"|\w*sucht|tinnitus|endometriose|sklerose)"
)
_DE_ADJ: Final = (
    r"(?:allergisch|\w*intolerant|schwanger|diabetiker(?:in)?|depressiv|alkoholiker(?:in)?|drogenabh[äa]ngig|s[üu]chtig"
    r"|hiv-?positiv|epileptiker(?:in)?|autist(?:in)?|magers[üu]chtig|bipolar|schwerbehindert"
    r"|behindert|in\s+therapie|in\s+psychotherapie|in\s+behandlung|in\s+remission|in\s+chemo\w*"
    r"|krebskrank|unheilbar\s+krank|psychisch\s+krank|chronisch\s+krank)"
)
_DE_ORIENT: Final = (
    r"(?:bi(?=\s*(?:$|[.,;!?\x22')]))|schwul|lesbisch|bisexuell|pansexuell|asexuell|queer|transgender|transsexuell|trans"
    r"|nicht-?bin[äa]r|homosexuell|homo)"
)
_DE_RELIG: Final = (
    r"(?:muslim(?:in)?|muslimisch|christ(?:in)?|christlich|jude|j[üu]din|j[üu]disch|katholisch"
    r"|katholik(?:in)?|evangelisch|protestantisch|buddhist(?:in)?|hindu|atheist(?:in)?|orthodox"
    r"|gl[äa]ubig|religi[öo]s|zeuge\s+jehovas|mormone)"
)
_DE: Final = _Language(
    gate=re.compile(r"\b(?:ich|mein\w*|mir|mich|bei\s+mir)\b"),
    health=_rx(
        r"\bich\s+(?:\w+\s+){0,3}?(?:habe|hab|hatte)\s+"
        + _SINCE
        + r"(?:"
        + _W
        + r"\s+){0,2}?"
        + _DE_COND
        + r"\b(?!-?(?:forschung|studie|patienten|station|medikament))",
        r"\bich\s+(?:\w+\s+){0,2}?leide\s+"
        + _SINCE
        + r"(?:an|unter)\s+(?:"
        + _W
        + r"\s+){0,2}?"
        + _DE_COND,
        r"\bbei\s+mir\s+(?:wurde|ist|hat\s+man)\s+(?:\w+\s+){0,4}?" + _DE_COND,
        r"\bich\s+bin\s+(?:\w+\s+){0,2}?an\s+(?:\w+\s+){0,2}?" + _DE_COND + r"\s+erkrankt",
        _says(
            r"meine?[mnrs]?\s+"
            + _DE_PERSON
            + _NAME_AFTER
            + r"\s+(?:hat|hatte|leidet\s+(?:an|unter))",
            _DE_COND,
            then=_SINCE,
        ),
        _says(r"ich\s+bin", _DE_ADJ, then=_SINCE),
        r"\bich\s+bin\s+(?:seit\s+)?(?:"
        + _W
        + r"\s+)?"
        + _DURATION
        + r"\s+(?:trocken|clean|n[üu]chtern|abstinent)",
        r"\bich\s+nehme\s+(?:\w+\s+){0,3}?(?:antidepressiva|insulin|methadon|lithium|neuroleptika"
        r"|psychopharmaka|tabletten\s+gegen|medikamente\s+gegen|die\s+pille|chemo)",
        r"\bich\s+(?:gehe|bin)\s+(?:\w+\s+){0,3}?(?:zur\s+therapie|zum\s+psychiater|zur"
        r"\s+psychotherapie|zu\s+den\s+anonymen\s+alkoholikern|in\s+der\s+entzugsklinik)",
    ),
    sensitive=_rx(
        _says(r"ich\s+bin", _DE_ORIENT),
        r"\bmeine?[mnrs]?\s+"
        + _DE_PERSON
        + _NAME_AFTER
        + r"\s+ist\s+(?:"
        + _W
        + r"\s+)?"
        + _DE_ORIENT
        + r"\b",
        r"\bmein\s+(?:mann|freund)\s+und\s+ich\s+sind\s+(?:beide\s+)?(?:m[äa]nner|schwul)",
        r"\bmeine\s+(?:frau|freundin)\s+und\s+ich\s+sind\s+(?:beide\s+)?(?:frauen|lesbisch)",
        _says(r"ich\s+bin", _DE_RELIG),
        r"\bich\s+(?:gehe|bete)\s+(?:\w+\s+){0,3}?(?:in\s+die|zur|in\s+der)\s+(?:kirche|moschee"
        r"|synagoge|messe)",
        r"\bich\s+bete\s+(?:jeden|t[äa]glich|f[üu]nfmal)|\bich\s+faste\s+(?:im|w[äa]hrend)",
        r"\bich\s+w[äa]hle\s+(?:die\s+|den\s+)?(?:cdu|csu|spd|gr[üu]nen?|fdp|afd|linke|bsw)\b",
        r"\bich\s+bin\s+(?:\w+\s+)?(?:mitglied|parteimitglied|gewerkschaftsmitglied)\b",
        r"\bich\s+bin\s+(?:\w+\s+)?in\s+der\s+(?:gewerkschaft|cdu|csu|spd|fdp|afd|partei)\b",
        r"\bich\s+bin\s+(?:t[üu]rkischer|arabischer|kurdischer)\s+abstammung",
    ),
)

# --------------------------------------------------------------------------------------- French

_FR_PERSON: Final = (
    r"(?:mari|femme|[ée]pouse|[ée]poux|conjointe?|partenaire|fils|fille|enfant|m[èe]re|maman"
    r"|p[èe]re|papa|parents|fr[èe]re|s(?:œ|oe)ur|grand-m[èe]re|grand-p[èe]re|tante|oncle|cousine?"
    r"|copain|copine|amie?|coll[èe]gue|patron|voisine?)"
)
_FR_COND: Final = (
    r"(?:diab[èe]te|cancer|d[ée]pression|troubles?\s+anxieux|anxi[ée]t[ée]|crises?\s+d'angoisse"
    r"|attaques\s+de\s+panique|[ée]pilepsie|asthme|vih|sida|alzheimer|d[ée]mence|parkinson"
    r"|scl[ée]rose\s+en\s+plaques|schizophr[ée]nie|troubles?\s+bipolaires?|tdah|autisme"
    r"|anorexie|boulimie|tumeur|leuc[ée]mie|hypertension|h[ée]patite|migraines?|covid"
    r"|maladie\s+de\s+\w+|polyarthrite|endom[ée]triose|burn-?out|toc|addiction|alcoolisme"
    r"|d[ée]pendance\s+\w+|insuffisance\s+\w+)"
)
_FR_ADJ: Final = (
    r"(?:allergique|intol[ée]rante?|enceinte|diab[ée]tique|d[ée]pressi(?:f|ve)|alcoolique|s[ée]ropositi(?:f|ve)"
    r"|[ée]pileptique|autiste|anorexique|boulimique|bipolaire|handicap[ée]e?|en\s+r[ée]mission"
    r"|sous\s+chimio\w*|sous\s+antid[ée]presseurs|en\s+th[ée]rapie|toxicomane|en\s+cure"
    r"|atteinte?\s+d(?:'|e\s+|u\s+)\w+|malade\s+du\s+\w+)"
)
_FR_ORIENT: Final = (
    r"(?:bi(?=\s*(?:$|[.,;!?\x22')]))|gay|gai|homosexuel(?:le)?|lesbienne|bisexuel(?:le)?|pansexuel(?:le)?|asexuel(?:le)?"
    r"|queer|transgenre|trans|non-?binaire)"
)
_FR_RELIG: Final = (
    r"(?:musulman(?:e)?|chr[ée]tien(?:ne)?|juif|juive|catholique|protestante?|bouddhiste"
    r"|hindoue?|ath[ée]e|croyante?|pratiquante?|[ée]vang[ée]lique|t[ée]moin\s+de\s+j[ée]hovah)"
)
_FR: Final = _Language(
    gate=re.compile(r"(?:\b(?:je|j'|moi|mon|ma|mes|m')|\bon\s+m')"),
    health=_rx(
        r"\bj'ai\s+"
        + _ART
        + r"(?:"
        + _W
        + r"\s+){0,2}?"
        + _FR_COND
        + r"\b(?!\s+(?:de\s+mon|de\s+ma)\s+(?:chat|chien))",
        r"\bje\s+souffre\s+(?:d'|de\s+|du\s+|des\s+)"
        + _ART
        + r"(?:"
        + _W
        + r"\s+){0,2}?"
        + _FR_COND,
        r"\bon\s+m'a\s+(?:diagnostiqu[ée]|d[ée]couvert|d[ée]tect[ée])\s+"
        + _ART
        + r"(?:"
        + _W
        + r"\s+){0,2}?"
        + _FR_COND,
        r"\bj'ai\s+[ée]t[ée]\s+diagnostiqu[ée]e?",
        _says(
            r"(?:mon|ma)\s+" + _FR_PERSON + _NAME_AFTER + r"\s+(?:a|souffre\s+d(?:'|e|u))",
            _FR_COND,
            then=_ART,
            sep=r"\s*",
        ),
        _says(r"je\s+suis", _FR_ADJ, then=_SINCE),
        r"\bje\s+fais\s+(?:de\s+la\s+|de\s+l'|des\s+|une\s+)" + _FR_COND,
        r"\bje\s+suis\s+(?:sobre|abstinente?|clean)\s+depuis",
        r"\bje\s+ne\s+bois\s+plus\s+depuis\s+" + _DURATION,
        r"\bje\s+prends\s+(?:\w+\s+){0,2}?(?:antid[ée]presseurs|insuline|anxiolytiques"
        r"|somnif[èe]res|m[ée]thadone|lithium|neuroleptiques|traitement\s+contre)",
        r"\bje\s+(?:vois|consulte)\s+(?:un|une|mon|ma)\s+(?:psy|psychiatre|psychologue|oncologue)",
    ),
    sensitive=_rx(
        _says(r"je\s+suis", _FR_ORIENT),
        r"\b(?:mon|ma)\s+"
        + _FR_PERSON
        + _NAME_AFTER
        + r"\s+est\s+(?:"
        + _W
        + r"\s+)?"
        + _FR_ORIENT
        + r"\b",
        r"\bmon\s+(?:mari|copain|compagnon)\s+et\s+moi\s+sommes\s+(?:deux\s+hommes|tous\s+les"
        r"\s+deux\s+des\s+hommes|gays?)",
        r"\bma\s+(?:femme|copine|compagne)\s+et\s+moi\s+sommes\s+(?:deux\s+femmes|toutes\s+les"
        r"\s+deux\s+des\s+femmes|lesbiennes)",
        _says(r"je\s+suis", _FR_RELIG),
        r"\bje\s+vais\s+(?:\w+\s+){0,3}?(?:[àa]\s+la|[àa]\s+l'|au|[àa])\s*(?:mosqu[ée]e|synagogue"
        r"|[ée]glise|messe|temple)",
        r"\bje\s+prie\s+(?:tous|chaque|cinq)|\bje\s+(?:fais|observe)\s+(?:le\s+)?(?:ramadan"
        r"|shabbat|car[êe]me)",
        r"\bje\s+vote\s+(?:pour\s+)?(?:le\s+|la\s+|les\s+)?(?:rn|rassemblement\s+national|lfi"
        r"|france\s+insoumise|renaissance|r[ée]publicains|ps|parti\s+socialiste|[ée]cologistes"
        r"|verts|macron|le\s+pen|m[ée]lenchon|zemmour|reconqu[êe]te)\b",
        r"\bje\s+suis\s+(?:syndiqu[ée]e?|militante?|adh[ée]rente?|membre)\b",
    ),
)

# -------------------------------------------------------------------------------------- Spanish

_ES_PERSON: Final = (
    r"(?:marido|esposo|esposa|mujer|pareja|hijo|hija|madre|mam[áa]|padre|pap[áa]|padres|hermano"
    r"|hermana|abuela|abuelo|t[íi]a|t[íi]o|prim[oa]|novi[oa]|amig[oa]|compa[ñn]er[oa]|jefe|jefa"
    r"|vecin[oa])"
)
_ES_COND: Final = (
    r"(?:diabetes|c[áa]ncer|depresi[óo]n|ansiedad|ataques\s+de\s+p[áa]nico|epilepsia|asma|vih"
    r"|sida|alzheimer|demencia|parkinson|esclerosis\s+m[úu]ltiple|esquizofrenia|trastorno\s+\w+"
    r"|tdah|autismo|anorexia|bulimia|tumor|leucemia|hipertensi[óo]n|hepatitis|migra[ñn]as?|covid"
    r"|enfermedad\s+de\s+\w+|artritis|endometriosis|adicci[óo]n|alcoholismo)"
)
_ES_ADJ: Final = (
    r"(?:al[ée]rgic[oa]|intolerante|diab[ée]tic[oa]|alcoh[óo]lic[oa]|seropositiv[oa]|epil[ée]ptic[oa]|autista|anor[ée]xic[oa]"
    r"|bipolar|adict[oa]|drogadict[oa]|embarazada|deprimid[oa]|en\s+rehabilitaci[óo]n"
    r"|en\s+tratamiento|en\s+remisi[óo]n|en\s+quimio\w*|en\s+terapia|discapacitad[oa])"
)
_ES_ORIENT: Final = (
    r"(?:bi(?=\s*(?:$|[.,;!?\x22')]))|gay|homosexual|lesbiana|bisexual|pansexual|asexual|queer|transg[ée]nero|transexual|trans"
    r"|no\s+binari[oa])"
)
_ES_RELIG: Final = (
    r"(?:musulm[áa]na?|cristian[oa]|jud[íi][oa]|cat[óo]lic[oa]|protestante|evang[ée]lic[oa]"
    r"|budista|hind[úu]|ate[oa]|creyente|practicante|testigo\s+de\s+jehov[áa]|morm[óo]n)"
)
_ES: Final = _Language(
    gate=re.compile(
        r"\b(?:yo|mi|mis|me|tengo|soy|estoy|llevo|tomo|voy|sufro|padezco|rezo|voto|nosotr[oa]s)\b"
    ),
    health=_rx(
        r"\b(?:yo\s+)?tengo\s+"
        + _ART
        + r"(?:"
        + _W
        + r"\s+){0,2}?"
        + _ES_COND
        + r"\b(?!\s+(?:en\s+el\s+)?(?:perro|gato))",
        r"\b(?:sufro|padezco)\s+(?:de\s+)?" + _ART + r"(?:" + _W + r"\s+){0,2}?" + _ES_COND,
        r"\bme\s+(?:diagnosticaron|han\s+diagnosticado|detectaron|encontraron)\s+"
        + _ART
        + r"(?:"
        + _W
        + r"\s+){0,2}?"
        + _ES_COND,
        _says(
            r"mi\s+" + _ES_PERSON + _NAME_AFTER + r"\s+(?:tiene|padece|sufre\s+de)",
            _ES_COND,
            then=_ART,
        ),
        _says(r"(?:soy|estoy)", _ES_ADJ, then=_SINCE),
        r"\bllevo\s+(?:\w+\s+){1,3}?(?:sin\s+beber|sin\s+consumir|sobri[oa]|limpi[oa])",
        r"\bestoy\s+sobri[oa]\s+desde",
        r"\btomo\s+(?:\w+\s+){0,2}?(?:antidepresivos|insulina|ansiol[íi]ticos|metadona|litio"
        r"|pastillas\s+para\s+la\s+\w+)",
        r"\bvoy\s+(?:a|al)\s+(?:psiquiatra|psic[óo]logo|terapia|alcoh[óo]licos\s+an[óo]nimos)",
    ),
    sensitive=_rx(
        _says(r"soy", _ES_ORIENT),
        r"\bmi\s+" + _ES_PERSON + _NAME_AFTER + r"\s+es\s+(?:" + _W + r"\s+)?" + _ES_ORIENT + r"\b",
        r"\bmi\s+(?:marido|esposo|novio)\s+y\s+yo\s+somos\s+(?:dos\s+hombres|gays?)",
        r"\bmi\s+(?:mujer|esposa|novia)\s+y\s+yo\s+somos\s+(?:dos\s+mujeres|lesbianas)",
        _says(r"soy", _ES_RELIG),
        r"\bvoy\s+(?:\w+\s+){0,2}?a\s+(?:la\s+|misa|el\s+)?(?:mezquita|sinagoga|iglesia|misa"
        r"|templo)",
        r"\brezo\s+(?:cada|todos|cinco)|\bayuno\s+(?:en|durante)\s+(?:el\s+)?ramad[áa]n",
        r"\bvoto\s+(?:a|al|a\s+la|por)\s+(?:pp|psoe|vox|podemos|sumar|bildu|erc|junts|partido)\b",
        r"\b(?:soy|estoy)\s+(?:afiliad[oa]|militante|miembro|sindicad[oa])\b",
    ),
)

# -------------------------------------------------------------------------------------- Italian

_IT_PERSON: Final = (
    r"(?:marito|moglie|compagn[oa]|partner|figli[oa]|madre|mamma|padre|pap[àa]|genitori|fratello"
    r"|sorella|nonna|nonno|zia|zio|cugin[oa]|fidanzat[oa]|ragazz[oa]|amic[oa]|collega|capo"
    r"|vicin[oa])"
)
_IT_COND: Final = (
    r"(?:diabete|cancro|tumore|depressione|ansia|attacchi\s+di\s+panico|epilessia|asma|hiv|aids"
    r"|alzheimer|demenza|parkinson|sclerosi\s+multipla|schizofrenia|disturbo\s+\w+|adhd|autismo"
    r"|anoressia|bulimia|leucemia|ipertensione|epatite|emicrania|covid|morbo\s+di\s+\w+|artrite"
    r"|endometriosi|dipendenza|alcolismo|celiachia)"
)
_IT_ADJ: Final = (
    r"(?:allergic[oa]|intollerante|incinta|diabetic[oa]|depress[oa]|alcolista|sieropositiv[oa]|epilettic[oa]"
    r"|autistic[oa]|anoressic[oa]|bipolare|in\s+terapia|in\s+cura|in\s+remissione|disabile"
    r"|in\s+chemio\w*|tossicodipendente|celiac[oa])"
)
_IT_ORIENT: Final = (
    r"(?:bi(?=\s*(?:$|[.,;!?\x22')]))|gay|omosessuale|lesbica|bisessuale|pansessuale|asessuale|queer|transgender|trans"
    r"|non\s+binari[oa])"
)
_IT_RELIG: Final = (
    r"(?:musulman[oa]|cristian[oa]|ebre[oa]|cattolic[oa]|protestante|evangelic[oa]|buddista"
    r"|induista|ate[oa]|credente|praticante|testimone\s+di\s+geova)"
)
_IT: Final = _Language(
    gate=re.compile(r"\b(?:io|mio|mia|miei|mie|mi|ho|sono|prendo|vado|soffro|prego|voto)\b"),
    health=_rx(
        _says(r"(?:io\s+)?ho", _IT_COND, then=_ART),
        r"\bsoffro\s+(?:di|d')\s*" + _ART + r"(?:" + _W + r"\s+){0,2}?" + _IT_COND,
        r"\bmi\s+(?:hanno|ha|è\s+stat[oa]|e\s+stat[oa])\s+diagnosticat[oa]",
        _says(
            r"mi[oa]\s+" + _IT_PERSON + _NAME_AFTER + r"\s+(?:ha|soffre\s+di)",
            _IT_COND,
            then=_ART,
        ),
        _says(r"sono", _IT_ADJ, then=_SINCE),
        r"\bsono\s+(?:sobri[oa]|pulit[oa])\s+da\s+" + _DURATION,
        r"\bnon\s+bevo\s+da\s+" + _DURATION,
        r"\bprendo\s+(?:\w+\s+){0,2}?(?:antidepressivi|insulina|ansiolitici|metadone|litio"
        r"|psicofarmaci)",
        r"\bvado\s+(?:da|dallo|dal)\s+(?:psichiatra|psicologo|psicoterapeuta)",
    ),
    sensitive=_rx(
        _says(r"sono", _IT_ORIENT),
        r"\bmi[oa]\s+"
        + _IT_PERSON
        + _NAME_AFTER
        + r"\s+(?:è|e)\s+(?:"
        + _W
        + r"\s+)?"
        + _IT_ORIENT
        + r"\b",
        r"\bmio\s+(?:marito|compagno|ragazzo)\s+e\s+io\s+siamo\s+(?:due\s+uomini|gay)",
        r"\bmia\s+(?:moglie|compagna|ragazza)\s+e\s+io\s+siamo\s+(?:due\s+donne|lesbiche)",
        _says(r"sono", _IT_RELIG),
        r"\bvado\s+(?:\w+\s+){0,2}?(?:in|a|alla|al)\s+(?:moschea|sinagoga|chiesa|messa|tempio)",
        r"\bprego\s+(?:ogni|tutti|cinque)|\bfaccio\s+(?:il\s+)?ramadan",
        r"\bvoto\s+(?:per\s+)?(?:il\s+|la\s+|i\s+)?(?:pd|m5s|lega|fratelli\s+d'italia|forza"
        r"\s+italia|meloni|salvini|schlein)\b",
        r"\bsono\s+iscritt[oa]\s+(?:a|al|alla|ai)\s+(?:\w+\s+){0,2}?(?:cgil|cisl|uil|sindacato|pd"
        r"|lega|partito)",
    ),
)

# ----------------------------------------------------------------------------------- Portuguese

_PT_PERSON: Final = (
    r"(?:marido|esposa|mulher|companheir[oa]|filh[oa]|m[ãa]e|pai|pais|irm[ãa]o|irm[ãa]|av[óô]"
    r"|tia|tio|prim[oa]|namorad[oa]|amig[oa]|colega|chefe|vizinh[oa])"
)
_PT_COND: Final = (
    r"(?:diabetes|cancro|c[âa]ncer|depress[ãa]o|ansiedade|ataques\s+de\s+p[âa]nico|epilepsia"
    r"|asma|vih|hiv|sida|alzheimer|dem[êe]ncia|parkinson|esclerose\s+m[úu]ltipla|esquizofrenia"
    r"|(?:transtorno|perturba[çc][ãa]o)\s+\w+|tdah|autismo|anorexia|bulimia|tumor|leucemia"
    r"|hipertens[ãa]o|hepatite|enxaqueca|covid|doen[çc]a\s+de\s+\w+|artrite|endometriose"
    r"|depend[êe]ncia|alcoolismo)"
)
_PT_ADJ: Final = (
    r"(?:al[ée]rgic[oa]|intolerante|diab[ée]tic[oa]|alco[óo]lic[oa]|seropositiv[oa]|soropositiv[oa]|epil[ée]ptic[oa]"
    r"|autista|bipolar|toxicodependente|gr[áa]vida|deprimid[oa]|em\s+remiss[ãa]o"
    r"|em\s+tratamento|em\s+reabilita[çc][ãa]o|em\s+quimio\w*|em\s+terapia)"
)
_PT_ORIENT: Final = (
    r"(?:bi(?=\s*(?:$|[.,;!?\x22')]))|gay|homossexual|l[ée]sbica|bissexual|pansexual|assexual|queer|trans(?:g[ée]nero"
    r"|g[êe]nero)?|n[ãa]o\s+bin[áa]ri[oa])"
)
_PT_RELIG: Final = (
    r"(?:mu[çc]ulman[oa]|crist[ãa]o?|judeu|judia|cat[óo]lic[oa]|protestante|evang[ée]lic[oa]"
    r"|budista|hindu|ateu|ateia|crente|praticante|testemunha\s+de\s+jeov[áa]|esp[íi]rita)"
)
_PT: Final = _Language(
    gate=re.compile(r"\b(?:eu|meu|minha|tenho|sou|estou|tomo|vou|fui|sofro|rezo|voto|n[óo]s)\b"),
    health=_rx(
        _says(r"(?:eu\s+)?tenho", _PT_COND, then=_ART),
        r"\bsofro\s+de\s+" + _ART + r"(?:" + _W + r"\s+){0,2}?" + _PT_COND,
        r"\bfui\s+diagnosticad[oa]\s+com",
        _says(
            r"(?:o\s+)?(?:meu|minha)\s+" + _PT_PERSON + _NAME_AFTER + r"\s+(?:tem|sofre\s+de)",
            _PT_COND,
            then=_ART,
        ),
        _says(r"(?:sou|estou)", _PT_ADJ, then=_SINCE),
        r"\bestou\s+s[óo]bri[oa]\s+h[áa]",
        r"\bn[ãa]o\s+bebo\s+h[áa]\s+" + _DURATION,
        r"\btomo\s+(?:\w+\s+){0,2}?(?:antidepressivos|insulina|ansiol[íi]ticos|metadona|l[íi]tio)",
    ),
    sensitive=_rx(
        _says(r"sou", _PT_ORIENT),
        r"\b(?:o\s+|a\s+)?(?:meu|minha)\s+"
        + _PT_PERSON
        + _NAME_AFTER
        + r"\s+[ée]\s+(?:"
        + _W
        + r"\s+)?"
        + _PT_ORIENT
        + r"\b",
        r"\b(?:o\s+)?meu\s+(?:marido|namorado|companheiro)\s+e\s+eu\s+somos\s+(?:dois\s+homens"
        r"|gays?)",
        r"\b(?:a\s+)?minha\s+(?:mulher|esposa|namorada|companheira)\s+e\s+eu\s+somos\s+(?:duas"
        r"\s+mulheres|l[ée]sbicas)",
        _says(r"sou", _PT_RELIG),
        r"\bvou\s+(?:\w+\s+){0,2}?(?:[àa]|ao|na|no)\s+(?:mesquita|sinagoga|igreja|missa|templo)",
        r"\brezo\s+(?:todos|cada|cinco)",
        r"\bvoto\s+(?:no\s+|na\s+|em\s+)?(?:ps|psd|chega|bloco|livre|pt|pl|lula|bolsonaro)\b",
        r"\bsou\s+(?:sindicalizad[oa]|filiad[oa]|militante|membro)\b",
    ),
)

# ----------------------------------------------------------------------------------------- Dutch

_NL_PERSON: Final = (
    r"(?:man|vrouw|echtgenoo?t[e]?|partner|zoon|dochter|kind|moeder|mama|vader|papa|ouders|broer"
    r"|zus|oma|opa|tante|oom|neef|nicht|vriend(?:in)?|collega|baas|buurman|buurvrouw)"
)
_NL_COND: Final = (
    r"(?:diabetes|suikerziekte|\w*kanker|kanker|depressies?|\w*stoornis|paniekaanvallen|angsten"
    r"|epilepsie|astma|hiv|aids|alzheimer|dementie|parkinson|multiple\s+sclerose|ms"
    r"|schizofrenie|bipolaire\s+stoornis|adhd|autisme|anorexia|boulimia|tumor|leukemie"
    r"|hoge\s+bloeddruk|hepatitis|migraine|covid|ziekte\s+van\s+\w+|reuma|artritis"
    r"|endometriose|verslaving|alcoholisme|burn-?out)"
)
_NL_ADJ: Final = (
    r"(?:allergisch|\w*intolerant|zwanger|diabeet|depressief|alcoholist|verslaafd|hiv-?positief|seropositief"
    r"|epileptisch|autistisch|gehandicapt|in\s+therapie|in\s+behandeling|in\s+remissie"
    r"|aan\s+de\s+chemo)"
)
_NL_ORIENT: Final = (
    r"(?:bi(?=\s*(?:$|[.,;!?\x22')]))|homo|homoseksueel|lesbisch|lesbienne|biseksueel|panseksueel|aseksueel|queer"
    r"|transgender|trans|non-?binair)"
)
_NL_RELIG: Final = (
    r"(?:moslim|islamitisch|christen|christelijk|joods|jood|katholiek|protestants|gereformeerd"
    r"|boeddhist|hindoe|athe[iï]st|gelovig|religieus|jehova'?s\s+getuige)"
)
_NL: Final = _Language(
    gate=re.compile(r"\b(?:ik|mijn|mij|me|wij|we)\b"),
    health=_rx(
        _says(r"ik\s+heb", _NL_COND, then=_SINCE + _ART),
        _says(r"ik\s+heb\s+(?:\w+\s+)?last\s+van", _NL_COND, then=_ART),
        r"\bik\s+(?:lijd|leed)\s+"
        + _SINCE
        + r"aan\s+"
        + _ART
        + r"(?:"
        + _W
        + r"\s+){0,2}?"
        + _NL_COND,
        r"\bik\s+(?:ben|word)\s+(?:\w+\s+)?(?:onder\s+behandeling|behandeld|opgenomen)\s+(?:voor|aan"
        r"|bij\s+de\s+(?:psychiater|oncoloog|ggz))\b",
        r"\bbij\s+mij\s+is\s+(?:\w+\s+){0,4}?" + _NL_COND,
        r"\bik\s+ben\s+gediagnosticeerd\s+met",
        _says(
            r"mijn\s+" + _NL_PERSON + _NAME_AFTER + r"\s+(?:heeft|lijdt\s+aan)",
            _NL_COND,
            then=_ART,
        ),
        _says(r"ik\s+ben", _NL_ADJ, then=_SINCE),
        r"\bik\s+ben\s+(?:al\s+|sinds\s+)?" + _DURATION + r"\s+(?:nuchter|clean|droog)",
        r"\bik\s+(?:slik|neem|gebruik)\s+(?:\w+\s+){0,2}?(?:antidepressiva|insuline|methadon"
        r"|lithium|medicijnen\s+tegen)",
        r"\bik\s+(?:ga\s+naar|zit\s+bij)\s+(?:een\s+|de\s+)?(?:psychiater|psycholoog|therapeut"
        r"|anonieme\s+alcoholisten)",
    ),
    sensitive=_rx(
        _says(r"ik\s+ben", _NL_ORIENT),
        r"\bmijn\s+"
        + _NL_PERSON
        + _NAME_AFTER
        + r"\s+is\s+(?:"
        + _W
        + r"\s+)?"
        + _NL_ORIENT
        + r"\b",
        r"\bmijn\s+(?:man|vriend)\s+en\s+ik\s+zijn\s+(?:allebei\s+|beide\s+|twee\s+)?(?:mannen"
        r"|homo)",
        r"\bmijn\s+(?:vrouw|vriendin)\s+en\s+ik\s+zijn\s+(?:allebei\s+|beide\s+|twee\s+)?"
        r"(?:vrouwen|lesbisch)",
        _says(r"ik\s+ben", _NL_RELIG),
        r"\bik\s+ga\s+(?:\w+\s+){0,3}?naar\s+de\s+(?:moskee|synagoge|kerk|mis|tempel)",
        r"\bik\s+bid\s+(?:elke|iedere|vijf)|\bik\s+doe\s+(?:mee\s+aan\s+)?(?:de\s+)?ramadan",
        r"\bik\s+stem\s+(?:op\s+)?(?:de\s+)?(?:vvd|pvv|d66|cda|groenlinks|pvda|sp|bbb|nsc|fvd"
        r"|partij\s+voor\s+de\s+dieren|wilders)\b",
        r"\bik\s+ben\s+(?:\w+\s+)?lid\s+van\s+(?:de\s+|het\s+)?(?:\w+\s+){0,2}?(?:vakbond|fnv"
        r"|cnv|vvd|pvv|d66|cda|groenlinks|pvda|partij)",
    ),
)

_LANGUAGES: Final = (_DE, _FR, _ES, _IT, _PT, _NL)


def health_disclosure(sem: str) -> bool:
    """A first-person (or close person's) health statement in one of the six languages, or in
    Chinese, Japanese, Korean or Russian (``detect_sensitive_cjk_ru``)."""
    return (
        any(lang.gate.search(sem) and lang.health.search(sem) for lang in _LANGUAGES)
        or cjk_ru.health_disclosure(sem)
        or pl_tr.health_disclosure(sem)
    )


def sensitive_disclosure(sem: str) -> bool:
    """Orientation, religion, politics or union membership stated in one of the six languages,
    or in Chinese, Japanese, Korean or Russian."""
    return (
        any(lang.gate.search(sem) and lang.sensitive.search(sem) for lang in _LANGUAGES)
        or cjk_ru.sensitive_disclosure(sem)
        or pl_tr.sensitive_disclosure(sem)
    )


# Hedged statements about someone else ("der Nutzer ist wahrscheinlich depressiv").
_HEDGE: Final = re.compile(
    r"\b(?:wahrscheinlich|vermutlich|scheint|anscheinend|vielleicht|offenbar|semble|sembl[ea]"
    r"|probablement|sans\s+doute|peut-[êe]tre|parece|probablemente|quiz[áa]s|tal\s+vez"
    r"|probabilmente|forse|provavelmente|talvez|lijkt|waarschijnlijk|misschien|blijkbaar)\b"
)
_OTHER: Final = re.compile(
    r"\b(?:nutzer(?:in)?|benutzer(?:in)?|kunde|kundin|utilisat(?:eur|rice)|client(?:e)?"
    r"|usuari[oa]|cliente|utente|usu[áa]rio|utilizador|gebruiker|klant|er|sie|il|elle|[ée]l|ella"
    r"|lui|lei|ele|ela|hij|zij)\b"
)
_TERMS: Final = re.compile(
    r"(?:"
    + "|".join(
        (
            _DE_COND, _DE_ADJ, _DE_ORIENT, _DE_RELIG, _FR_COND, _FR_ADJ, _FR_ORIENT, _FR_RELIG,
            _ES_COND, _ES_ADJ, _ES_ORIENT, _ES_RELIG, _IT_COND, _IT_ADJ, _IT_ORIENT, _IT_RELIG,
            _PT_COND, _PT_ADJ, _PT_ORIENT, _PT_RELIG, _NL_COND, _NL_ADJ, _NL_ORIENT, _NL_RELIG,
        )
    )
    + r")\b"
)  # fmt: skip


def inferred_trait(sem: str) -> bool:
    """A hedged guess, in one of the six languages, that someone else has a sensitive trait."""
    hedge = _HEDGE.search(sem)
    return bool(hedge and _OTHER.search(sem) and _TERMS.search(sem, hedge.start()))
