"""The deterministic entity extractor over the classes it must read: names and capitalised
phrases (not sentence-initial ordinary words, weekdays, months or pronouns), @handles, quoted
titles in every common quote style, "my <relation> <Name>" in seven languages, stated nicknames,
and a named speaker's first-person sentences."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from convmem.entities.extract import extract
from convmem.entities.lookup import name_keys
from convmem.entities.names import name_key
from convmem.model.entities import Mention


def strong(text: str, speaker: str | None = None) -> dict[str, Mention]:
    return {m.name: m for m in extract(text, speaker).strong}


@pytest.mark.parametrize(
    ("text", "name", "kind", "alias"),
    [
        ("I had dinner with my sister Ana yesterday.", "Ana", "person", "my sister"),
        ("My boss, Heidrun Kessler, approved it.", "Heidrun Kessler", "person", "my boss"),
        ("my dog named Rex barks.", "Rex", "animal", "my dog"),
        ("Meine Schwester Lena wohnt hier.", "Lena", "person", "meine schwester"),
        ("Mon frère Julien arrive demain.", "Julien", "person", "mon frère"),
        ("Mi perro Toby es feliz.", "Toby", "animal", "mi perro"),
        ("Il mio capo Marco è severo.", "Marco", "person", "il mio capo"),
        ("A minha irmã Beatriz mora longe.", "Beatriz", "person", "minha irmã"),
        ("Mijn buurman Pieter fietst.", "Pieter", "person", "mijn buurman"),
    ],
)
def test_my_relation_name_in_seven_languages(text: str, name: str, kind: str, alias: str) -> None:
    found = strong(text)
    assert name in found, list(found)
    assert found[name].type == kind
    assert any(alias in a for a in found[name].aliases), found[name].aliases


@pytest.mark.parametrize(
    ("text", "title"),
    [
        ('I just finished "The Lean Startup" again.', "The Lean Startup"),
        ("I just finished “Nothing is impossible” again.", "Nothing is impossible"),
        ("J'ai lu « Le Petit Prince » hier.", "Le Petit Prince"),
        ("Ich lese „Der Zauberberg“ gerade.", "Der Zauberberg"),
        ("昨日「千と千尋の神隠し」を見た。", "千と千尋の神隠し"),
        ("We watched 'Spirited Away' twice.", "Spirited Away"),
        ("We watched ‘Spirited Away’ twice.", "Spirited Away"),
    ],
)
def test_quoted_titles_in_every_common_quote_style(text: str, title: str) -> None:
    found = strong(text)
    assert title in found, list(found)
    assert found[title].type == "work"


def test_handles_organisations_places_and_projects() -> None:
    found = strong("Ping @bob_smith about Project Apollo at Acme Inc when you are in Berlin.")
    assert found["@bob_smith"].type == "person"
    assert found["Project Apollo"].type == "project"
    assert found["Acme Inc"].type == "organisation"
    assert found["Berlin"].type == "place"
    assert "bob@example.com" not in strong("Mail bob@example.com now.")


@pytest.mark.parametrize(
    "text",
    [
        "Yesterday was long. Monday I start. She said hi.",
        "Montag war gut. Heute ist Dienstag.",
        "Hier, c'était lundi. Demain, mardi.",
        "Hoy es lunes. Ayer fue domingo.",
        "Oggi è lunedì. Domani è martedì.",
        "Hoje é segunda. Ontem foi domingo.",
        "Vandaag is het maandag. Gisteren was zondag.",
        "Thanks! Wow. OK. Sure, I will. Hello there.",
    ],
)
def test_no_entities_from_ordinary_capitalised_words(text: str) -> None:
    assert strong(text) == {}


def test_a_sentence_opening_word_is_weak_until_known() -> None:
    found = extract("Bruno runs marathons.")
    assert [m.name for m in found.strong] == []
    assert [m.name for m in found.weak] == ["Bruno"]


def test_stated_nicknames_are_aliases_not_entities_of_their_own() -> None:
    found = strong("Caroline (Caro) moved here. We call her Caro. Robert, aka Bob, sings.")
    assert "Caro" in found["Caroline"].aliases and "Caro" not in found
    assert "Bob" in found["Robert"].aliases
    assert len(found["Caroline"].sentences) == 2


def test_a_named_speakers_first_person_sentences_are_about_them() -> None:
    found = strong("I went to a support group. It was great. My kids loved it.", "Melanie")
    assert [s for s, _ in found["Melanie"].sentences] == [
        "I went to a support group.",
        "My kids loved it.",
    ]


def test_name_keys_fold_case_possessives_and_quotes() -> None:
    assert name_key("Caroline's") == name_key("CAROLINE") == "caroline"
    assert name_key("“The Lean Startup”") == "the lean startup"
    keys = name_keys("What did caro's sister read in the Lean Startup?")
    assert "caro" in keys and "lean startup" in keys and "the lean startup" in keys
    assert "what" not in keys


@pytest.mark.parametrize(
    "text",
    [
        "Wish I could come. Now I know. Since I moved here, Fri I rest.",
        "Last Tues I ran, and on Thurs we swam.",
        "Nos vemos el Mié o el Jue por la tarde, y el Sáb también.",
    ],
)
def test_the_pronoun_i_and_short_weekdays_are_never_names(text: str) -> None:
    assert strong(text) == {}


def test_a_possessive_s_is_not_part_of_the_name() -> None:
    found = strong("I fed Oliver's cat and read Charlotte's Web to Ed Sheeran's fans.")
    assert "Oliver" in found and "Oliver's" not in found
    assert "Charlotte's Web" in found  # inside a name it stays
    assert "Ed Sheeran" in found


def test_a_sentence_opening_run_carries_its_rest_for_the_derivation() -> None:
    found = extract("Remember Jon said hi? Grand Canyon was amazing. Bank of America called.")
    assert found.opening["remember jon"] == "Jon"
    assert found.opening["grand canyon"] == "Canyon"
    assert "bank of america" not in found.opening  # "of America" is not a name's rest
    assert {m.name for m in found.strong} >= {"Remember Jon", "Grand Canyon", "Bank of America"}


@pytest.mark.parametrize(
    ("text", "nouns", "names"),
    [
        (
            "Ich habe gestern mit meinem Hund gespielt und danach Kuchen gegessen.",
            {"Hund", "Kuchen"}, set(),
        ),
        (
            "Wir haben die Großeltern besucht, und meine Schwester Lena hat Kuchen gebacken.",
            {"Großeltern", "Kuchen"}, {"Lena"},
        ),
        ("Heute war ich bei Thomas Müller im Büro.", {"Büro"}, {"Thomas Müller"}),
        ("Morgen fliege ich nach Wien, und mein Bruder kommt mit.", set(), {"Wien"}),
    ],
)  # fmt: skip
def test_in_german_a_lone_capitalised_word_is_a_noun_until_known(
    text: str, nouns: set[str], names: set[str]
) -> None:
    found = extract(text)
    assert {m.name for m in found.strong} == names
    assert nouns <= {m.name for m in found.weak}


def test_an_english_text_naming_a_german_place_keeps_its_names() -> None:
    found = strong("We had dinner with Lena at Biergarten Zum Hirschen in Munich.")
    assert {"Lena", "Munich"} <= set(found)


def test_a_lone_place_or_organisation_word_is_the_noun_not_a_type() -> None:
    found = strong("We met at the Park. Then Central Park, then the Bank and Acme Bank.")
    assert found["Central Park"].type == "place"
    assert found["Acme Bank"].type == "organisation"
    assert found.get("Park") is None or found["Park"].type == "thing"


def _naive_name_keys(text: str) -> list[str]:
    """``name_keys`` as it was first written: every run normalised whole."""
    import re

    from convmem.entities.lookup import MAX_KEYS, MAX_NAME_WORDS
    from convmem.entities.names import NOT_NAMES, WEEKDAYS_AND_MONTHS

    tokens = [t.rstrip(".'’-") for t in re.findall(r"@?[\w'’.-]+", text)]
    tokens = [t for t in tokens if t]
    keys: dict[str, None] = {}
    for start in range(len(tokens)):
        for width in range(1, MAX_NAME_WORDS + 1):
            if start + width > len(tokens):
                break
            key = name_key(" ".join(tokens[start : start + width]))
            if width == 1 and (key in NOT_NAMES or key in WEEKDAYS_AND_MONTHS or len(key) < 2):
                continue
            if key:
                keys[key] = None
            if len(keys) >= MAX_KEYS:
                return list(keys)
    return list(keys)


@settings(max_examples=400, deadline=None)
@given(
    st.lists(
        st.sampled_from(
            ["Ana", "ana's", "Caro’s", "@bob", "-", "'", ".", "’s", "'s", "É", "ﬁne", "Ｍｅｌ",
             "Straße", "the", "I", "x", "..x", "-Ana-", "ΣΑΣ", "İstanbul", "e\u0301", " ", "?",
             "Lean", "Startup", "Mon", "_", "a.b", "'t", "d'Arc"]
        ),
        max_size=14,
    ).map(" ".join)
)  # fmt: skip
def test_name_keys_folding_each_token_once_gives_the_same_keys(text: str) -> None:
    assert name_keys(text) == _naive_name_keys(text)


def test_in_a_sentence_in_capitals_every_capitalised_word_is_weak() -> None:
    found = extract("HEY JON, CALL ME NOW! I love NASA and the BBC.")
    assert {m.name for m in found.strong} == {"NASA", "BBC"}  # acronyms among lower case
    assert {"JON", "CALL", "NOW"} <= {m.name for m in found.weak}
    shouted = strong("MY SISTER ANA MOVED TO LISBON.")
    assert list(shouted) == ["ANA"] and "my sister" in shouted["ANA"].aliases
    assert strong("ΓΕΙΑ ΣΟΥ ΜΑΡΙΑ ΠΑΠΑΔΟΠΟΥΛΟΥ") == {}
    assert "千と千尋" in strong("昨日「千と千尋」を見た。")  # no case at all: quotes still read


@pytest.mark.parametrize(
    "text",
    [
        "The offsite must stay under 9,500 EUR, about 10,300 USD or 8,100 GBP.",
        "Le budget est de 900 CHF, soit 950 EUR. Das kostet 40 PLN oder 10 BRL.",
        "Tickets were 12,000 JPY and 80 AUD; the hotel wanted 400 MXN and 2 KWD.",
        "We store it as JSON in SQL behind a REST API over HTTPS, with a CLI and an SDK.",
        "The PDFs and CSVs go through OCR on the GPU; our LLM and the UI read the APIs.",
        "Die KI liest die PDF über die API. L'IA lit le JSON. La IA usa la API REST.",
        "We meet on Tuesday in March, then in May and on Fri 3 Oct.",
        "Wir treffen uns am Dienstag im März. On se voit mardi en avril.",
    ],
)
def test_currency_codes_technology_acronyms_weekdays_and_months_are_not_things(
    text: str,
) -> None:
    assert strong(text) == {}


def test_a_name_spelled_like_a_code_is_still_a_name() -> None:
    # BOB, TOP and GEL are currency codes, PIP and RAM acronyms: written as names, they are names
    found = strong("I met Bob in Lisbon, then Gel and Ram came over with Pip.")
    assert {"Bob", "Lisbon", "Gel", "Ram", "Pip"} <= set(found)


@pytest.mark.parametrize("apostrophe", ["'", "\u2019"])
@pytest.mark.parametrize(
    ("text", "names"),
    [
        ("Hey Kate I{a}m so glad you wrote", {"Kate"}),
        ("Thanks Kate I{a}ve been busy all week", {"Kate"}),
        ("That is so cool Kate You{a}re amazing", {"Kate"}),
        ("Hi Ana We{a}ll be there at six", {"Ana"}),
        ("Oh Tom They{a}re coming too", {"Tom"}),
        ("Hello Bruno I{a}d love to", {"Bruno"}),
        ("Good luck Lea It{a}s going to be fine", {"Lea"}),
    ],
)
def test_a_name_ends_where_a_pronoun_opens_the_next_clause(
    text: str, names: set[str], apostrophe: str
) -> None:
    # chat writes no full stop between an address and the next clause ("Hey Kate I'm …"): the
    # contraction of a pronoun is no part of the name, with either apostrophe
    assert set(strong(text.format(a=apostrophe))) == names


@pytest.mark.parametrize("apostrophe", ["'", "\u2019"])
def test_names_with_an_apostrophe_stay_names(apostrophe: str) -> None:
    found = strong(f"I met Sinead O{apostrophe}Brien and D{apostrophe}Angelo at the fair.")
    assert f"Sinead O{apostrophe}Brien" in found and f"D{apostrophe}Angelo" in found
