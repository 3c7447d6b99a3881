"""Grammar of memory requests in Russian, Polish and Turkish: the same fields as
:mod:`convmem.memory.phrases` (see its docstring), kept apart to keep each module small.

Turkish is verb-final and marks the person on the verb ("çay sever-im", "İzmir'de yaşıyor-um"), and
has no complementizer before a clause ("Unutma, çay severim"): its clause is about the speaker
when its last word carries a first-person ending (``first_person_end``), not only when it opens
with a first-person word. Fields a language has no words for hold ``NEVER``, a pattern that
matches nothing.

Only grammar lives here: no sentence of any corpus is listed.
"""

from __future__ import annotations

from convmem.memory.language import Language

NEVER = r"(?!)"

RUSSIAN = Language(
    code="ru",
    remember=(
        r"запомни(?:те)?|запомнить|помни(?:те)?|не\s+забудь(?:те)?|не\s+забывай(?:те)?|"
        r"имей(?:те)?\s+в\s+виду|учти(?:те)?|запиши(?:те)?|записать|сохрани(?:те)?|сохранить|"
        r"заметь(?:те)?"
    ),
    complementizer=r"что",
    polite=r"(?:ты\s+)?(?:можешь|можете|не\s+мог(?:ли|ла)?\s+бы|мог(?:ли|ла)?\s+бы)(?:\s+ты|\s+вы)?",
    from_now=r"отныне|впредь|с\s+этого\s+момента|с\s+этих\s+пор|в\s+дальнейшем|в\s+будущем",
    instruction=(
        r"(?:(?:всегда|никогда\s+не|не)\s+)*(?:отвечай(?:те)?|пиши(?:те)?|говори(?:те)?|"
        r"называй(?:те)?\s+меня|обращайся\s+ко\s+мне|используй(?:те)?|будь(?:те)?)"
    ),
    first_person=(
        r"я|мой|моя|моё|мое|мои|мою|моего|моей|моему|моим|моих|мне|меня|мной|люблю|живу|"
        r"работаю|предпочитаю|ем|пью|учусь|говорю|ненавижу|обожаю|занимаюсь"
    ),
    second_person=(
        r"ты|тебя|тебе|тобой|твой|твоя|твоё|твое|твои|твою|твоего|твоей|вы|вас|вам|вами|ваш|"
        r"ваша|ваше|ваши"
    ),
    third_person=r"он|она|оно|они|это|этом|этого|том|того|его|её|ее|их",
    forget=r"забудь(?:те)?|забыть",
    forget_what=(
        r"(?:всё|все|то),?\s+что\s+(?:я\s+(?:тебе\s+|вам\s+)?(?:говорил|говорила|сказал|сказала|"
        r"рассказывал|рассказывала)|ты\s+знаешь|вы\s+знаете|ты\s+запомнил)\s+(?:о|об|про)|"
        r"(?:всё|все)\s+(?:о|об|про)"
    ),
    delete=r"удали(?:те)?|сотри(?:те)?",
    memory_noun=(
        r"(?:запись|записи|воспоминание|заметку|заметки)\s+(?:о|об|про)|"
        r"(?:всё|все|то),?\s+что\s+ты\s+знаешь\s+(?:о|об|про)"
    ),
    possessive=r"мой|моя|моё|мое|мои|мою|моего|моей|моих",
    dismissal=r"пока\s+что|на\s+время|на\s+сегодня|ладно|давай|лучше|неважно|не\s+важно",
    future=r"я\s+(?:буду|собираюсь|хочу|планирую)",
    fillers=r"пожалуйста|спасибо|кстати|и|также|ещё|еще|ну|слушай|а|и\s+ещё",
    statement=(
        r"меня\s+зовут|я\s+живу\s+в|я\s+работаю\s+(?:в|на)|я\s+(?:вегетарианец|вегетарианка)|"
        r"я\s+переехал(?:а)?\s+в"
    ),
    forget_about=r"про|о|об",
    memory_place=r"(?:(?:это|следующее)\s+)?в\s+(?:свою\s+|твою\s+)?памят[ьи]",
    store=r"сохрани|добавь|запиши|занеси",
    newer=(
        r"теперь|сейчас|уже\s+не|больше\s+не|переехал|переехала|отныне|с\s+этого\s+момента|"
        r"вместо"
    ),
)

POLISH = Language(
    code="pl",
    remember=(
        r"pamiętaj(?:cie)?|zapamiętaj(?:cie)?|zapamiętać|nie\s+zapomnij(?:cie)?|"
        r"nie\s+zapominaj|miej\s+na\s+uwadze|zanotuj|zapisz|zapisać"
    ),
    complementizer=r"że|iż",
    polite=r"(?:czy\s+)?(?:możesz|mógłbyś|mogłabyś|może\s+pan|może\s+pani)",
    from_now=r"od\s+teraz|od\s+tej\s+pory|od\s+dziś|odtąd|na\s+przyszłość|w\s+przyszłości",
    instruction=(
        r"(?:(?:zawsze|nigdy\s+nie|nie)\s+)*(?:odpowiadaj|odpowiedz|pisz|mów|nazywaj\s+mnie|"
        r"zwracaj\s+się\s+do\s+mnie|używaj|bądź)"
    ),
    first_person=(
        r"ja|mnie|mną|mój|moja|moje|moi|moją|mojego|mojej|mojemu|moim|moich|jestem|mam|lubię|"
        r"kocham|uwielbiam|nienawidzę|wolę|mieszkam|pracuję|piję|jem|uczę|studiuję|nazywam|"
        r"urodziłem|urodziłam|przeprowadziłem|przeprowadziłam|jeżdżę|mówię"
    ),
    second_person=(
        r"ty|cię|ciebie|tobie|tobą|twój|twoja|twoje|twoi|twoją|twojego|twojej|twoim|jesteś|"
        r"masz|możesz|wy|was|wam"
    ),
    third_person=r"on|ona|ono|oni|one|to|tym|tamtym|tego|tamtego|jej|ich",
    forget=r"zapomnij(?:cie)?",
    forget_what=(
        r"(?:wszystko,?\s+|to,?\s+)?co\s+(?:ci\s+)?(?:powiedziałem|powiedziałam|mówiłem|mówiłam|"
        r"wiesz)\s+(?:o|na\s+temat)|wszystko\s+o"
    ),
    delete=r"usuń|skasuj|wymaż",
    memory_noun=(
        r"(?:wspomnienie|wspomnienia|notatkę|notatki|wpis)\s+(?:o|na\s+temat)|"
        r"(?:wszystko,?\s+)?co\s+wiesz\s+o"
    ),
    possessive=r"mój|moja|moje|moi|moją|mojego|mojej|moich",
    dismissal=r"na\s+razie|na\s+chwilę|na\s+dziś|nieważne|dajmy\s+spokój|lepiej|chodźmy",
    future=r"(?:ja\s+)?(?:będę|zamierzam|chcę|planuję)",
    fillers=r"proszę|dzięki|dziękuję|przy\s+okazji|swoją\s+drogą|i|też|także|a|no|słuchaj",
    statement=(
        r"nazywam\s+się|mam\s+na\s+imię|mieszkam\s+w|pracuję\s+(?:w|jako)|"
        r"jestem\s+(?:wegetarianinem|wegetarianką|weganinem|weganką)"
    ),
    forget_about=r"o",
    memory_place=(
        r"(?:(?:to|następujące)\s+)?(?:w\s+(?:swojej|twojej)\s+pamięci|"
        r"do\s+(?:swojej\s+|twojej\s+)?pamięci)"
    ),
    store=r"zapisz|dodaj|wpisz|zachowaj",
    newer=(
        r"teraz|obecnie|już\s+nie|przeprowadziłem|przeprowadziłam|zamiast|odtąd|od\s+teraz|"
        r"od\s+kiedy"
    ),
)

TURKISH = Language(
    code="tr",
    remember=(
        r"unutma(?:yın)?|hatırla(?:yın)?|aklında\s+tut|aklınızda\s+tutun|not\s+al|not\s+et|"
        r"kaydet|bunu\s+unutma|bunu\s+hatırla|şunu\s+unutma|şunu\s+hatırla"
    ),
    complementizer=r"ki",
    polite=r"lütfen",
    from_now=r"bundan\s+sonra|bundan\s+böyle|şu\s+andan\s+itibaren|gelecekte",
    instruction=r"bana\s+\S+\s+(?:de|diye\s+hitap\s+et)",
    # no "ben": it is also a name ("Ben"), and these words are read by entity extraction too
    first_person=r"benim|bana|beni|bende|benden|bence|adım",
    second_person=r"sen|sana|seni|senin|sende|senden|siz|size|sizi|sizin",
    third_person=r"o|bu|şu|onlar|onun|bunu|şunu",
    forget=r"unut(?:un)?",
    forget_what=NEVER,
    delete=r"sil(?:in)?",
    memory_noun=NEVER,
    possessive=r"benim",
    dismissal=r"şimdilik|boş\s+ver|neyse|bugünlük|hadi",
    # a plan ends in the future tense ("gideceğim") or "I want" ("istiyorum")
    future=r".*(?:acağım|eceğim|acağız|eceğiz|istiyorum)",
    fillers=r"lütfen|teşekkürler|sağ\s+ol|bu\s+arada|ve|ayrıca|hem",
    statement=r"benim\s+adım|adım\s+\S+\s*$",
    forget_about=NEVER,
    memory_place=NEVER,
    store=NEVER,
    newer=r"artık|şimdi|taşındım|yerine|bundan\s+sonra",
    # the last word ends in a first-person-singular suffix: -(y)Im, -(y)Um, negative aorist -mAm;
    # not a common noun that merely ends like one ("resim", "durum")
    first_person_end=(
        r"(?!(?:resim|isim|kim|bilim|hekim|teslim|tanım|yapım|durum|konum|doğum|ölüm|kurum|"
        r"forum|album|albüm|müzeum)$)\w{2,}(?:ım|im|um|üm|mam|mem)"
    ),
)

MORE_LANGUAGES: tuple[Language, ...] = (RUSSIAN, POLISH, TURKISH)
