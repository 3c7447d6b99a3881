"""Other names of a chat's speakers, read from what the chat says: in a conversation between two
named speakers, a name one of them addresses the other by ("Hey Kate!", "thanks Kate", "Kate,
guess what") is the other's name too, whatever name their messages carry. Real messaging apps
show a handle or a profile name; the people write each other's given names, and so do questions
about them ("What does Kate study?" where the turns are signed "Emi"). Without the alias the
speaker priors of ``convmem.domain.search`` never apply to such a speaker.

Derived at query time from what the store already keeps — the entities a question names and
the sentences of the conversation they have facts from, each with the name it was said under —
so nothing is written, and an alias follows the chat as it grows. A name counts as the other's
when one speaker addresses someone by it at least ``MIN_ADDRESSES`` times and the other speaker
never does (nobody addresses themselves; a third person both talk about is addressed by
neither). With more than two named speakers the addressee is not known, and nothing is derived.

Chosen on REALTALK's split A (``convmem.eval.splits``; MiniLM, evidence recall@10), where one
speaker signed "Emi" is "Kate" in the chat and in half the questions: hybrid 0.529 -> 0.570
(multi-hop 0.306 -> 0.350, temporal 0.767 -> 0.817, open-domain 0.490 held; recall@5 0.450 ->
0.514). Split B, whose speakers go by the names they sign with, is unchanged (0.706), and so are
LoCoMo A (0.876) and BEAM A (0.710). The entity ranking counts an alias as a speaker: the
turns that mention "Kate" are the ones addressing her, not what she said.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence

from convmem.entities.names import name_key
from convmem.entities.recall import query_name_keys
from convmem.store.base import ReadTxn

# the times one speaker must address the other by a name before it is taken as theirs: once
# may be a quotation or a slip
MIN_ADDRESSES = 2
# how many of an entity's sentences in the conversation are read (newest first)
MAX_FACTS = 400

# the words that open an address, in the languages of ``convmem.memory.phrases``: greetings,
# thanks, wishes and exclamations ("Hey Kate", "Thanks so much, Kate", "Love you Kate")
_ADDRESS_OPENERS = (
    r"hey+|hi+|hello|hiya|yo|heya|howdy|morning|good\s+morning|good\s+night|night|evening|"
    r"thanks?(?:\s+(?:so|very)\s+much)?|thank\s+you(?:\s+(?:so|very)\s+much)?|thx|ty|"
    r"congrats|congratulations|well\s+done|good\s+luck|happy\s+birthday|bye|see\s+you|"
    r"love\s+you|miss\s+you|sorry|dear|oh+|aw+|ah+|wow+|omg|haha+|lol|yes|yeah|yay|no|ok|okay|"
    r"hallo|hej|danke|tschüss|liebe|lieber|salut|coucou|bonjour|bonsoir|merci|cher|chère|"
    r"hola|gracias|querida|querido|ciao|grazie|cara|caro|olá|oi|obrigad[oa]|hoi|dank\s+je|"
    r"bedankt|lieve"
)


def _address(name: str) -> re.Pattern[str]:
    """Where ``name`` is addressed: after an opener ("Hey Kate", "thanks, Kate!"), opening a
    sentence before a comma or an exclamation ("Kate, guess what", "Kate!"), or closing one
    after a comma ("That's great, Kate!")."""
    said = re.escape(name)
    end = r"(?=\s*(?:[,!?.…:;)]|$))"
    return re.compile(
        rf"(?:(?<!\w)(?:{_ADDRESS_OPENERS})\s*,?\s+{said}(?!\w))"
        rf"|(?:^\W*{said}\s*[,!])"
        rf"|(?:,\s*{said}{end})",
        re.IGNORECASE,
    )


def addressed_by(sentence: str, names: Sequence[str]) -> bool:
    """Whether ``sentence`` addresses someone by one of ``names``."""
    return any(_address(name).search(sentence) for name in names)


def speaker_aliases(
    tx: ReadTxn,
    tenant: str,
    user: str,
    conversation_id: str,
    query: str,
    speakers: Sequence[str],
) -> Mapping[str, str]:
    """The names ``query`` writes that are another name of one of ``speakers`` (the
    conversation's named speakers), each mapped to that speaker; empty unless there are exactly
    two of them. Reads nothing when the query names no one but them."""
    if len(speakers) != 2:
        return {}
    spoken = {name_key(s): s for s in speakers}
    keys = [key for key in query_name_keys(query) if key not in spoken]
    if not keys:
        return {}
    aliases: dict[str, str] = {}
    for entity in tx.entities_named(tenant, user, keys, scopes=None):
        names = (entity.name, *entity.aliases)
        if any(name_key(n) in spoken for n in names):
            continue
        facts = tx.entity_facts(
            tenant, user, [entity.id], conversation_id=conversation_id, limit=MAX_FACTS
        )
        addresses = dict.fromkeys(spoken, 0)
        for fact in facts:
            by = name_key(fact.speaker_name or "")
            if by in addresses and addressed_by(fact.text, names):
                addresses[by] += 1
        (one, once), (other, twice) = addresses.items()
        if once >= MIN_ADDRESSES and twice == 0:
            addressee = spoken[other]
        elif twice >= MIN_ADDRESSES and once == 0:
            addressee = spoken[one]
        else:
            continue
        for name in names:
            aliases[name] = addressee
    return aliases
