"""Places whose names differ across the grammar's seven languages (en, de, fr, es, it, pt, nl)
more than spelling does: "Wien" and "Vienna", "Firenze" and "Florence". A forget or a
replacement that names a place in one language finds the memory that named it in another. Names
that differ only a little ("Lisbon", "Lissabon", "Lisboa") are matched by spelling already."""

from __future__ import annotations

import unicodedata
from typing import Final

# one line a place: every name it goes by in those languages (and its own), lower case
_PLACES: Final = """
vienna wien vienne viena
florence firenze florenz florencia florenca
munich münchen munique monaco-di-baviera munchen
cologne köln colonia keulen
venice venezia venedig venise venecia veneza
naples napoli neapel nápoles napels
milan milano mailand milán milao
turin torino turijn
genoa genova genua gênes genes
rome roma rom
brussels bruxelles brüssel bruselas bruxelas brussel
antwerp antwerpen anvers amberes antuérpia
the-hague den-haag la-haye la-haya l'aia haia
geneva genève genf ginevra ginebra genebra
prague praha prag praga
warsaw warszawa warschau varsovie varsovia varsavia varsóvia
moscow moskau moscou moscú mosca moscovo moskou
athens athen athènes atenas atene
copenhagen københavn kopenhagen copenhague copenaghen
beijing peking pékin pequim pechino
london londres londra londen
lisbon lisboa lissabon lisbonne lisbona
seville sevilla séville siviglia sevilha
saragossa zaragoza saragosse saragozza
basel bâle basilea basileia bazel
nuremberg nürnberg nuremberga norimberga neurenberg
aachen aix-la-chapelle aquisgrán aquisgrana aken
bruges brugge brujas brugia
ghent gent gand gante
leuven louvain lovaina lovanio
liège lüttich lieja liegi luik
germany deutschland allemagne alemania germania alemanha duitsland
spain spanien espagne españa spagna espanha spanje
italy italien italie italia itália
netherlands niederlande pays-bas países-bajos paesi-bassi países-baixos nederland holland
belgium belgien belgique bélgica belgio belgië
switzerland schweiz suisse suiza svizzera suíça zwitserland
austria österreich autriche áustria oostenrijk
greece griechenland grèce grecia grécia griekenland
england inglaterra inghilterra angleterre engeland
"""


def _fold(name: str) -> str:
    folded = unicodedata.normalize("NFKD", name.lower())
    return "".join(c for c in folded if not unicodedata.combining(c))


_PLACE_OF: Final = {
    _fold(name.replace("-", " ")): n
    for n, line in enumerate(_PLACES.strip().splitlines())
    for name in line.split()
}


def same_place(a: str, b: str) -> bool:
    """Whether two names (words or phrases, any case and accents) name one place in the table."""
    first, second = _PLACE_OF.get(_fold(a)), _PLACE_OF.get(_fold(b))
    return first is not None and first == second
