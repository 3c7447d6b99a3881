"""Per-language grammar of memory requests: the words each rule in ``intent`` is built from.

Each language names, as regular-expression alternations (matched case-insensitively, on word
boundaries):

* ``remember`` — imperatives asking the listener to keep something ("remember", "merk dir",
  "souviens-toi", "recuerda", "ricorda", "lembre-se", "onthoud") and their complementizer
  ("that", "dass", "que", "che", "dat"), which must follow for the request to take a clause;
* ``polite`` — the modal question that makes the same imperative a request ("can you …");
* ``from_now`` — "from now on" and its equivalents, which take an instruction or a fact;
* ``instruction`` — verbs of an instruction addressed to the assistant ("answer", "call me");
* ``first_person`` — the words that make a clause about the speaker (pronouns, possessives,
  and, for pro-drop languages, common first-person-singular verb forms);
* ``second_person`` — the words that address the listener: a clause holding one is advice or
  affection for the other person, not a fact about the speaker;
* ``third_person`` — subject pronouns that need an antecedent;
* ``forget`` — imperatives of forgetting, ``forget_what`` "what I told you about",
  ``delete`` / ``memory_noun`` for "delete the memory about …";
* ``dismissal`` — what turns "forget X" into "set X aside" ("for now", "let's", "anyway").

Only grammar lives here: no sentence of any corpus is listed.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Language:
    code: str
    remember: str
    complementizer: str
    polite: str
    from_now: str
    instruction: str
    first_person: str
    second_person: str
    third_person: str
    forget: str
    forget_what: str
    delete: str
    memory_noun: str
    possessive: str  # first-person possessives that open a noun phrase ("my", "mein", "mon")
    dismissal: str
    future: str  # "I'm going to …": a plan, not a standing fact
    fillers: str
    statement: str  # a plain first-person statement of a standing fact: at most a proposal


# Words shared by every language: courtesy and attention that may open a request.
COMMON_FILLERS = r"ok|okay|hey|hi|hello|also|and|so|just|oh|well|quick\s+thing|one\s+more\s+thing"

ENGLISH = Language(
    code="en",
    remember=(
        r"remember|don'?t\s+forget|do\s+not\s+forget|never\s+forget|keep\s+in\s+mind|"
        r"bear\s+in\s+mind|make\s+a\s+note|take\s+note|note\s+for\s+the\s+future|note|"
        r"for\s+future\s+reference|memori[sz]e|store|save(?:\s+(?:this|it))?(?:\s+(?:to|in)\s+"
        r"(?:your\s+)?memory)?|please\s+remember|going\s+forward,?\s+remember"
    ),
    complementizer=r"that",
    polite=(
        r"(?:can|could|would|will)\s+you(?:\s+please)?|i\s+(?:want|need)\s+you\s+to|"
        r"i'?d\s+like\s+you\s+to|i\s+would\s+like\s+you\s+to|please"
    ),
    from_now=(
        r"from\s+now\s+on|going\s+forward|from\s+here\s+on(?:\s+out)?|in\s+(?:the\s+)?future|"
        r"henceforth"
    ),
    instruction=(
        r"(?:(?:please|always|never|don'?t|do\s+not)\s+)*(?:answer|reply|respond|write|speak|"
        r"talk|use|call\s+me|address\s+me|refer\s+to\s+me|give\s+me|show\s+me|keep|format|"
        r"include|avoid|explain|assume|spell|be\s+(?:brief|concise|formal|informal))"
    ),
    first_person=r"i|i'm|i've|i'd|i'll|me|my|mine|myself",
    second_person=r"you|your|yours|yourself|you're|you've|you'll|you'd|ya",
    third_person=r"he|she|they|it|this|that|these|those|him|her|them",
    forget=(
        r"forget|stop\s+remembering|(?:you\s+can|you\s+may|can\s+you|could\s+you|please)\s+"
        r"forget"
    ),
    forget_what=(
        r"what\s+i\s+(?:said|told\s+you|mentioned|wrote)\s+(?:about|regarding)|everything\s+"
        r"(?:you\s+know\s+|you\s+remember\s+)?about|all\s+about"
    ),
    delete=r"delete|remove|erase|wipe|clear|drop",
    memory_noun=(
        r"(?:the\s+|that\s+|your\s+|any\s+)?(?:memory|memories|note|notes|record)\s+"
        r"(?:about|of|on|that|saying|regarding)|what\s+you\s+(?:know|remember|saved|stored)\s+"
        r"about|everything\s+you\s+(?:know|remember)\s+about"
    ),
    possessive=r"my",
    dismissal=(
        r"for\s+now|for\s+(?:a|the)\s+(?:moment|second|sec|minute|bit)|for\s+today|anyway|"
        r"let'?s|instead|tell\s+me|never\s+mind|it\s+was|it'?s\s+(?:fine|ok|silly)"
    ),
    future=r"i'?m\s+going\s+to|i'?m\s+gonna|i'?ll|i\s+will|i\s+shall|i\s+want\s+to|i\s+plan",
    fillers=r"please|pls|thanks|thank\s+you|by\s+the\s+way|btw|for\s+the\s+record",
    statement=(
        r"i\s+(?:really\s+|usually\s+|always\s+|never\s+)?(?:prefer|like|love|hate|dislike|enjoy|"
        r"don'?t\s+(?:like|eat|drink)|usually|always|never|live\s+in|work\s+(?:at|for|as|in)|"
        r"am\s+(?:a|an)|have\s+(?:a|an|two|three|four)|speak)\b|"
        r"i'?m\s+(?:a|an|vegetarian|vegan|pescatarian|allergic|lactose|gluten|left-handed|"
        r"right-handed|married|divorced|retired|based\s+in|from|colou?r-blind)\b|"
        r"i\s+am\s+(?:vegetarian|vegan|pescatarian|allergic|left-handed|right-handed|married|"
        r"retired|based\s+in|from)\b|my\s+\w+(?:\s+\w+)?\s+(?:is|are)\b|call\s+me\b"
    ),
)

GERMAN = Language(
    code="de",
    remember=(
        r"merk(?:e)?\s+(?:dir|euch)|merken\s+sie\s+sich|vergiss\s+nicht|vergessen\s+sie\s+nicht|"
        r"denk(?:e)?\s+dran|denk(?:e)?\s+daran|behalte?\s+(?:im\s+hinterkopf|im\s+kopf)|"
        r"notier(?:e)?\s+(?:dir)?|speicher(?:e|n\s+sie)?|halte?\s+fest|dir\s+merken|"
        r"erinnere\s+dich\s+daran"
    ),
    complementizer=r"dass|daß",
    polite=r"(?:kannst|könntest|würdest)\s+du|(?:können|könnten|würden)\s+sie",
    from_now=r"ab\s+jetzt|ab\s+sofort|von\s+nun\s+an|von\s+jetzt\s+an|künftig|in\s+zukunft",
    instruction=(
        r"(?:(?:bitte|immer|nie)\s+)*(?:antworte|antworten|schreib(?:e)?|sprich|nenn(?:e)?\s+mich|"
        r"sag(?:e)?\s+mir|gib\s+mir|verwende|benutze|nutze|halte|fasse)"
    ),
    first_person=r"ich|mein|meine|meinen|meinem|meiner|meines|mir|mich",
    second_person=r"du|dich|dir|dein|deine|deinen|deinem|deiner|ihr|euch|euer",
    third_person=r"er|sie|es|das|dies",
    forget=r"vergiss|vergessen\s+sie",
    forget_what=r"was\s+ich\s+(?:dir\s+|ihnen\s+)?(?:über|zu|von)",
    delete=r"lösch(?:e|en\s+sie)?|entfern(?:e|en\s+sie)?",
    memory_noun=(
        r"(?:die\s+|deine\s+)?(?:erinnerung|erinnerungen|notiz|notizen|eintrag)\s+(?:an|über|zu|"
        r"von)|was\s+du\s+(?:über|von)"
    ),
    possessive=r"mein|meine|meinen|meinem|meiner|meines",
    dismissal=r"erstmal|erst\s+mal|vorerst|für\s+jetzt|egal|lass\s+uns|stattdessen|schon\s+gut",
    future=r"ich\s+werde|ich\s+will|ich\s+möchte",
    fillers=r"bitte|gut|danke|übrigens|also|und|ach|noch\s+was",
    statement=(
        r"ich\s+heiße|mein\s+name\s+ist|ich\s+wohne\s+in|ich\s+lebe\s+in|"
        r"ich\s+arbeite\s+(?:bei|als)|ich\s+bin\s+(?:vegetarier|veganer|allergisch)"
    ),
)

FRENCH = Language(
    code="fr",
    remember=(
        r"souviens-toi|souvenez-vous|rappelle-toi|rappelez-vous|retiens|retenez|"
        r"n'oublie\s+pas|n'oubliez\s+pas|garde(?:z)?\s+(?:en\s+tête|à\s+l'esprit)|"
        r"prends\s+note|prenez\s+note|note(?:z)?(?:\s+bien)?|mémorise(?:z)?|enregistre(?:z)?|"
        r"retenir|noter|mémoriser"
    ),
    complementizer=r"que|qu'",
    polite=r"(?:peux|pourrais|veux)-tu|(?:pouvez|pourriez|voulez)-vous|tu\s+peux|vous\s+pouvez",
    from_now=(
        r"désormais|dorénavant|à\s+partir\s+de\s+maintenant|a\s+partir\s+de\s+maintenant|"
        r"à\s+l'avenir|dès\s+maintenant"
    ),
    instruction=(
        r"(?:(?:toujours|jamais)\s+)*(?:réponds|répondez|écris|écrivez|parle|parlez|"
        r"appelle-moi|appelez-moi|donne-moi|donnez-moi|utilise|utilisez|tutoie-moi|vouvoie-moi|"
        r"sois|soyez)"
    ),
    first_person=r"je|j'|moi|mon|ma|mes|me|m'",
    second_person=r"tu|t'|te|toi|ton|ta|tes|vous|votre|vos",
    third_person=r"il|elle|ils|elles|ça|cela|ce|c'",
    forget=r"oublie|oubliez",
    forget_what=(
        r"ce\s+que\s+je\s+(?:t'|vous\s+)?(?:ai\s+dit|ai\s+raconté)\s+(?:sur|à\s+propos\s+de|de)"
    ),
    delete=r"supprime(?:z)?|efface(?:z)?|retire(?:z)?",
    memory_noun=(
        r"(?:le\s+|la\s+|les\s+|ton\s+|ta\s+)?(?:souvenir|souvenirs|mémoire|note|notes)\s+"
        r"(?:de|du|des|sur|à\s+propos\s+de|concernant)|ce\s+que\s+tu\s+sais\s+(?:sur|de)"
    ),
    possessive=r"mon|ma|mes",
    dismissal=r"pour\s+l'instant|pour\s+le\s+moment|pour\s+aujourd'hui|laisse|pas\s+grave|plutôt",
    future=r"je\s+vais|je\s+veux|j'irai",
    fillers=r"bien|s'il\s+te\s+plaît|s'il\s+vous\s+plaît|stp|svp|merci|au\s+fait|et|aussi|bon|alors",
    statement=(
        r"je\s+m'appelle|mon\s+nom\s+est|j'habite\s+(?:à|en|au)|je\s+vis\s+(?:à|en|au)|"
        r"je\s+travaille\s+(?:chez|comme|à)|je\s+suis\s+(?:végétarien|végan|allergique)"
    ),
)

SPANISH = Language(
    code="es",
    remember=(
        r"recuerda|recuerde|acuérdate|acuerdate|no\s+olvides|no\s+olvide|no\s+te\s+olvides|"
        r"ten(?:ga)?\s+en\s+cuenta|toma\s+nota|tome\s+nota|anota|apunta|guarda|memoriza|"
        r"recordar|anotar|apuntar"
    ),
    complementizer=r"de\s+que|que",
    polite=r"¿?\s*(?:puedes|podrías|podrias|puede|podría)",
    from_now=(
        r"a\s+partir\s+de\s+ahora|de\s+ahora\s+en\s+adelante|desde\s+ahora|en\s+adelante|"
        r"en\s+el\s+futuro"
    ),
    instruction=(
        r"(?:(?:siempre|nunca)\s+)*(?:respóndeme|responde|responda|contéstame|contesta|escribe|"
        r"escríbeme|habla|háblame|llámame|llamame|dame|usa|utiliza|sé)"
    ),
    first_person=(
        r"yo|mi|mis|me|mí|conmigo|soy|estoy|tengo|vivo|trabajo|prefiero|odio|amo|quiero|"
        r"necesito|como|bebo|tomo|hablo|uso|estudio|juego|sufro|nací|cumplo|detesto|adoro|"
        r"practico|llevo|hago|puedo|sé"
    ),
    second_person=r"tú|tu|tus|te|ti|contigo|usted|vosotros|estás|eres|tienes|puedes|vales",
    third_person=r"él|ella|ellos|ellas|eso|esto",
    forget=r"olvida|olvide|olvídate|olvidate",
    forget_what=r"lo\s+que\s+(?:te\s+)?(?:dije|conté)\s+(?:sobre|de|acerca\s+de)",
    delete=r"borra|borre|elimina|elimine|quita",
    memory_noun=(
        r"(?:el\s+|la\s+|los\s+|tu\s+)?(?:recuerdo|recuerdos|memoria|nota|notas)\s+(?:sobre|de|"
        r"del|acerca\s+de)|lo\s+que\s+sabes\s+(?:sobre|de)"
    ),
    possessive=r"mi|mis",
    dismissal=r"por\s+ahora|por\s+el\s+momento|por\s+hoy|no\s+importa|mejor|vamos\s+a",
    future=r"voy\s+a|quiero|pienso",
    fillers=r"bien|por\s+favor|gracias|oye|y|también|bueno|además",
    statement=(
        r"me\s+llamo|mi\s+nombre\s+es|vivo\s+en|trabajo\s+(?:en|como|para)|"
        r"soy\s+(?:vegetarian|vegan|alérgic)"
    ),
)

ITALIAN = Language(
    code="it",
    remember=(
        r"ricorda(?:ti)?|ricordate|non\s+dimenticare|non\s+dimenticarti|non\s+scordare|"
        r"non\s+scordarti|tieni\s+(?:a\s+mente|presente)|tenga\s+(?:a\s+mente|presente)|"
        r"prendi\s+nota|prenda\s+nota|annota|memorizza|salva|ricordare|annotare|memorizzare"
    ),
    complementizer=r"che",
    polite=r"(?:puoi|potresti|può|potrebbe)",
    from_now=r"d'ora\s+in\s+poi|da\s+ora\s+in\s+poi|da\s+adesso\s+in\s+poi|d'ora\s+in\s+avanti",
    instruction=(
        r"(?:(?:sempre|mai)\s+)*(?:rispondi|rispondimi|risponda|scrivi|scrivimi|parla|parlami|"
        r"chiamami|dammi|usa|utilizza|sii)"
    ),
    first_person=(
        r"io|mio|mia|miei|mie|mi|me|sono|ho|abito|vivo|lavoro|preferisco|odio|amo|voglio|"
        r"mangio|bevo|parlo|uso|studio|gioco|soffro|adoro|detesto|faccio|posso|suono"
    ),
    second_person=r"tu|ti|te|tuo|tua|tuoi|tue|lei|sei|hai|voi|vostro",
    third_person=r"lui|lei|loro|esso|essa|ciò|questo|quello",
    forget=r"dimentica|dimenticati|dimentichi",
    forget_what=r"quello\s+che\s+(?:ti\s+)?ho\s+detto\s+(?:su|sul|sulla|di|del|della|riguardo)",
    delete=r"cancella|elimina|rimuovi",
    memory_noun=(
        r"(?:il\s+|la\s+|i\s+|le\s+)?(?:ricordo|ricordi|memoria|nota|note)\s+(?:su|sul|sulla|"
        r"di|del|della|dei|riguardo)|quello\s+che\s+sai\s+(?:su|di)"
    ),
    possessive=r"(?:il\s+|la\s+|i\s+|le\s+)?(?:mio|mia|miei|mie)",
    dismissal=r"per\s+ora|per\s+adesso|per\s+il\s+momento|non\s+importa|lascia\s+perdere",
    future=r"voglio|ho\s+intenzione",
    fillers=r"bene|per\s+favore|grazie|ehi|e|anche|allora|poi",
    statement=(
        r"mi\s+chiamo|il\s+mio\s+nome\s+è|abito\s+a|vivo\s+a|lavoro\s+(?:a|come|per|da)|"
        r"sono\s+(?:vegetarian|vegan|allergic)"
    ),
)

PORTUGUESE = Language(
    code="pt",
    remember=(
        r"lembre-se|lembra-te|lembre|lembra|não\s+(?:se\s+|te\s+)?esqueça|não\s+te\s+esqueças|"
        r"não\s+esquece|tenha\s+em\s+mente|tem\s+em\s+mente|anote|anota|guarde|guarda|"
        r"memorize|memoriza|lembrar|anotar|memorizar"
    ),
    complementizer=r"de\s+que|que",
    polite=r"(?:pode|podes|poderia|você\s+pode)",
    from_now=(
        r"a\s+partir\s+de\s+agora|de\s+agora\s+em\s+diante|daqui\s+(?:pra|para\s+a)\s+frente|"
        r"no\s+futuro"
    ),
    instruction=(
        r"(?:(?:sempre|nunca)\s+)*(?:responda|responde|me\s+responda|escreva|escreve|fale|fala|"
        r"me\s+chame|chame-me|chama-me|me\s+dê|dá-me|use|usa|seja)"
    ),
    first_person=(
        r"eu|meu|minha|meus|minhas|me|mim|comigo|sou|estou|tenho|moro|vivo|trabalho|prefiro|"
        r"odeio|amo|quero|preciso|como|bebo|tomo|falo|uso|estudo|jogo|sofro|nasci|adoro|"
        r"detesto|faço|posso|gosto"
    ),
    second_person=r"você|vocês|tu|te|ti|contigo|teu|tua|teus|tuas|seu|sua|está|és",
    third_person=r"ele|ela|eles|elas|isso|isto",
    forget=r"esqueça|esquece|esqueçam",
    forget_what=r"o\s+que\s+(?:eu\s+)?(?:te\s+|lhe\s+)?(?:disse|contei)\s+(?:sobre|de|do|da)",
    delete=r"apague|apaga|remova|remove|exclua|exclui|delete|deleta",
    memory_noun=(
        r"(?:a\s+|o\s+|as\s+|os\s+|sua\s+)?(?:memória|memórias|lembrança|lembranças|nota|notas)"
        r"\s+(?:sobre|de|do|da|dos|das)|o\s+que\s+você\s+sabe\s+(?:sobre|de)"
    ),
    possessive=r"(?:o\s+|a\s+|os\s+|as\s+)?(?:meu|minha|meus|minhas)",
    dismissal=r"por\s+enquanto|por\s+agora|por\s+hoje|não\s+importa|deixa\s+pra\s+lá|vamos",
    future=r"vou|quero",
    fillers=r"bem|por\s+favor|obrigad[oa]|ei|e|também|então",
    statement=(
        r"me\s+chamo|meu\s+nome\s+é|moro\s+em|vivo\s+em|trabalho\s+(?:em|como|na|no)|"
        r"sou\s+(?:vegetarian|vegan|alérgic)"
    ),
)

DUTCH = Language(
    code="nl",
    remember=(
        r"onthoud|onthou|vergeet\s+niet|denk\s+eraan|houd?\s+er\s+rekening\s+mee|"
        r"houd?\s+in\s+gedachten|noteer|sla\s+op|bewaar|onthouden|noteren"
    ),
    complementizer=r"dat",
    polite=r"(?:wil|kun|kan|zou)\s+(?:je|jij|u)",
    from_now=r"vanaf\s+nu|voortaan|van\s+nu\s+af\s+aan|in\s+het\s+vervolg|in\s+de\s+toekomst",
    instruction=(
        r"(?:(?:altijd|nooit)\s+)*(?:antwoord|schrijf|spreek|praat|noem\s+me|geef\s+me|gebruik|"
        r"wees|houd|hou)"
    ),
    first_person=r"ik|mijn|me|mij|mezelf",
    second_person=r"je|jij|jou|jouw|u|uw|jullie",
    third_person=r"hij|zij|ze|het|dat|dit",
    forget=r"vergeet",
    forget_what=r"wat\s+ik\s+(?:je\s+|jou\s+|u\s+)?over",
    delete=r"verwijder|wis",
    memory_noun=(
        r"(?:de\s+|je\s+)?(?:herinnering|herinneringen|notitie|notities)\s+(?:aan|over|van)|"
        r"wat\s+je\s+(?:weet\s+)?over"
    ),
    possessive=r"mijn",
    dismissal=r"even|voorlopig|voor\s+nu|maakt\s+niet\s+uit|laat\s+maar|laten\s+we",
    future=r"ik\s+ga|ik\s+wil|ik\s+zal",
    fillers=r"goed|alsjeblieft|alstublieft|a\.u\.b\.|graag|bedankt|en|ook|trouwens|even",
    statement=(
        r"ik\s+heet|mijn\s+naam\s+is|ik\s+woon\s+in|ik\s+werk\s+(?:bij|als)|"
        r"ik\s+ben\s+(?:vegetariër|veganist|allergisch)"
    ),
)

LANGUAGES: tuple[Language, ...] = (ENGLISH, GERMAN, FRENCH, SPANISH, ITALIAN, PORTUGUESE, DUTCH)
