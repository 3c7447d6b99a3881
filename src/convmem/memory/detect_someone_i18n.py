"""Health disclosures about someone other than the speaker, in German, French, Spanish,
Italian, Portuguese and Dutch: by name ("juan tiene diabetes", "anna (meine schwester) hat
krebs") or a close person with a trait ("ma fille léa est diabétique"). The languages' rules in
``detect_sensitive_i18n`` are gated on the speaker's own words; these say nothing of the speaker,
so they run ungated, one pattern for the six languages each.
"""

from __future__ import annotations

import re
from typing import Final

from convmem.memory.detect_sensitive_i18n import (
    _ART,
    _DE_ADJ,
    _DE_COND,
    _DE_PERSON,
    _ES_ADJ,
    _ES_COND,
    _ES_PERSON,
    _FR_ADJ,
    _FR_COND,
    _FR_PERSON,
    _GAP,
    _IT_ADJ,
    _IT_COND,
    _IT_PERSON,
    _NAME_AFTER,
    _NL_ADJ,
    _NL_COND,
    _NL_PERSON,
    _PT_ADJ,
    _PT_COND,
    _PT_PERSON,
    _W,
    _rx,
)

# Words that begin a subject but name nobody: determiners, possessives, demonstratives (so "mon
# chat est diabétique" and "der Hund hat Krebs" pass, as in English).
_NOT_A_NAME: Final = (
    r"(?:mein\w*|dein\w*|sein\w*|ihr\w*|unser\w*|euer\w*|der|die|das|den|dem|ein\w*|kein\w*"
    r"|dies\w*|jede\w*|man|es|mon|ma|mes|ton|ta|tes|son|sa|ses|notre|nos|votre|vos|leurs?|le|la"
    r"|les|l|un|une|ce|cet|cette|ces|chaque|on|il|mi|mis|tu|tus|su|sus|nuestr\w*|vuestr\w*|el"
    r"|los|las|uno?|una|est[ea]s?|es[ea]s?|aquel\w*|cada|se|mio|mia|miei|mie|tuo|tua|suo|sua"
    r"|nostr\w*|vostr\w*|lo|gli|i|questo|questa|quel\w*|ogni|meu|minha|meus|minhas|teu|tua"
    r"|seu|sua|noss\w*|o|a|os|as|um|uma|est[ea]|ess[ea]|aquel[ea]|mijn|jouw|zijn|haar|onze|ons"
    r"|hun|de|het|een|deze|dit|die|dat|elke|ieder\w*|ik|je|jij|wij|we)"
)
# A name where a sentence starts: one or two words that are not a determiner or a possessive.
_SUBJECT_NAME: Final = r"\s*(?!" + _NOT_A_NAME + r"\b)" + _W + r"(?:\s+" + _W + r")?"
# "anna (meine schwester)", "tom, mon père,": the name with the person beside it
_APPOSED: Final = (
    r"\s*(?:,\s*(?:" + _W + r"\s+){1,2}?" + _W + r"\s*,|\(\s*(?:" + _W + r"\s+){1,2}?" + _W
    + r"\s*\))"
)  # fmt: skip
_SENTENCE_STARTS: Final = re.compile(r"[.;:!?]\s*")


# Someone else bound to a health term: by name ("juan tiene diabetes", "anna (meine schwester)
# hat krebs"), matched where a sentence starts only (a name can be any word, so anywhere else it
# would cost a try at every word), or a close person, named or not, with a trait ("ma fille léa
# est diabétique"). The languages' rules above are gated on the speaker's own words; these say
# nothing of the speaker, so they run ungated, as one pattern for the six languages each.
_SOMEONE_LANGUAGES: Final = (
    # (close person, "has" verbs, conditions, "is" verbs, traits)
    (
        r"meine?[mnrs]?\s+" + _DE_PERSON,
        r"hat|hatte|leidet\s+(?:an|unter)",
        _DE_COND,
        r"ist|war",
        _DE_ADJ,
    ),
    (
        r"(?:mon|ma)\s+" + _FR_PERSON,
        r"a|avait|souffre\s+d(?:'|e|u)",
        _FR_COND,
        r"est|[ée]tait",
        _FR_ADJ,
    ),
    (
        r"mi\s+" + _ES_PERSON,
        r"tiene|ten[íi]a|padece|sufre\s+de",
        _ES_COND,
        r"es|est[áa]|era|estaba",
        _ES_ADJ,
    ),
    (r"mi[oa]\s+" + _IT_PERSON, r"ha|aveva|soffre\s+di", _IT_COND, r"[èe]|era", _IT_ADJ),
    (
        r"(?:o\s+|a\s+)?(?:meu|minha)\s+" + _PT_PERSON,
        r"tem|tinha|sofre\s+de",
        _PT_COND,
        r"[ée]|est[áa]|era|estava",
        _PT_ADJ,
    ),
    (r"mijn\s+" + _NL_PERSON, r"heeft|had|lijdt\s+aan", _NL_COND, r"is|was", _NL_ADJ),
)
_SOMEONE_NAMED: Final = re.compile(
    _SUBJECT_NAME
    + r"(?:"
    + _APPOSED
    + r")?\s+(?:"
    + _rx(
        *(
            r"(?:" + have + r")\s+" + _ART + _GAP + conditions + r"\b"
            r"|(?:" + be + r")\s+" + _GAP + traits + r"\b"
            for _, have, conditions, be, traits in _SOMEONE_LANGUAGES
        )
    ).pattern
    + r")"
)
_SOMEONE_CLOSE: Final = _rx(
    *(
        r"\b" + close + _NAME_AFTER + r"\s+(?:" + be + r")\s+" + _GAP + traits + r"\b"
        for close, _, _, be, traits in _SOMEONE_LANGUAGES
    )
)


def someone_else_said(sem: str) -> bool:
    """A named person's or a close person's health stated in one of the six languages."""
    starts = (0, *(m.end() for m in _SENTENCE_STARTS.finditer(sem)))
    return any(_SOMEONE_NAMED.match(sem, at) for at in starts) or bool(_SOMEONE_CLOSE.search(sem))
