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
* ``dismissal`` — what turns "forget X" into "set X aside" ("for now", "let's", "anyway");
* ``forget_about`` — the preposition of "forget about the coffee" ("olvídate del café"), which
  takes a noun phrase and nothing after it;
* ``memory_place`` — where a remember imperative may say it keeps the clause ("store this in
  your memory:", "speichere das in deinem Gedächtnis:");
* ``newer`` — words that say a statement moves a slot rather than merely differing from what was
  kept ("I moved to", "now", "since", "from now on", "no longer"): only such a statement
  replaces an older value of the user's own without asking.

Only grammar lives here: no sentence of any corpus is listed.
"""

from __future__ import annotations

from convmem.memory.language import Language
from convmem.memory.phrases_more import MORE_LANGUAGES

# Words shared by every language: courtesy and attention that may open a request.
COMMON_FILLERS = r"ok|okay|hey|hi|hello|also|and|so|just|oh|well|quick\s+thing|one\s+more\s+thing"

ENGLISH = Language(
    code="en",
    remember=(
        r"remember|don'?t\s+forget|do\s+not\s+forget|never\s+forget|keep\s+in\s+mind|"
        r"bear\s+in\s+mind|make\s+a\s+note|take\s+note|note\s+for\s+the\s+future|note|"
        r"for\s+future\s+reference|memori[sz]e|store|save|"
        r"please\s+remember|going\s+forward,?\s+remember"
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
        r"what\s+i\s+(?:said|told\s+you|mentioned|wrote)\s+(?:about|regarding)|"
        r"(?:what|everything|anything|whatever|all)\s+(?:(?:that\s+)?you\s+(?:know|remember|"
        r"have\s+(?:saved|stored|noted|on\s+file)|saved|stored|noted|learned|learnt)\s+)?"
        r"(?:about|on|regarding|of)"
    ),
    delete=r"delete|remove|erase|wipe|clear|drop",
    memory_noun=(
        r"(?:the\s+|that\s+|your\s+|any\s+)?(?:memory|memories|note|notes|record)\s+"
        r"(?:about|of|on|that|saying|regarding)|(?:what|everything|anything|whatever)\s+you\s+"
        r"(?:know|remember|saved|stored|have\s+(?:saved|stored))\s+(?:about|on)"
    ),
    possessive=r"my",
    dismissal=(
        r"for\s+now|for\s+(?:a|the)\s+(?:moment|second|sec|minute|bit|while|time\s+being)|"
        r"for\s+(?:today|tonight|the\s+weekend)|anyway|"
        r"let'?s|instead|tell\s+me|never\s+mind|it\s+was|it'?s\s+(?:fine|ok|silly)"
    ),
    future=r"i'?m\s+going\s+to|i'?m\s+gonna|i'?ll|i\s+will|i\s+shall|i\s+want\s+to|i\s+plan",
    fillers=r"please|pls|thanks|thank\s+you|by\s+the\s+way|btw|for\s+the\s+record",
    forget_about=r"about",
    store=r"keep|add|put|write(?:\s+down)?|record|commit",
    memory_place=(
        r"(?:(?:this|it|the\s+following|that)\s+)?(?:(?:to|in|into|on)\s+(?:your\s+|the\s+)?"
        r"(?:long[- ]term\s+)?(?:memory|memories|notes|profile))"
    ),
    newer=(
        r"now|nowadays|these\s+days|currently|since|moved|relocated|switched|changed|"
        r"from\s+now\s+on|going\s+forward|any\s*more|no\s+longer|not\s+any\s+longer|"
        r"instead|from\s+today|as\s+of"
    ),
    statement=(
        r"i\s+(?:really\s+|usually\s+|always\s+|never\s+|now\s+|just\s+|recently\s+)?"
        r"(?:prefer|like|love|hate|dislike|enjoy|"
        r"don'?t\s+(?:like|eat|drink)|usually|always|never|live\s+in|work\s+(?:at|for|as|in)|"
        r"(?:have\s+)?(?:moved|relocated)\s+to|drink|eat|"
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
    forget_what=(
        r"(?:alles,?\s+|das,?\s+)?was\s+(?:ich\s+(?:dir\s+|ihnen\s+)?|du\s+|sie\s+)(?:alles\s+)?"
        r"(?:über|zu|von)|alles\s+(?:über|zu)|das\s+mit"
    ),
    delete=r"lösch(?:e|en\s+sie)?|entfern(?:e|en\s+sie)?",
    memory_noun=(
        r"(?:die\s+|deine\s+)?(?:erinnerung|erinnerungen|notiz|notizen|eintrag)\s+(?:an|über|zu|"
        r"von)|(?:alles,?\s+|das,?\s+)?was\s+du\s+(?:über|von)"
    ),
    possessive=r"mein|meine|meinen|meinem|meiner|meines",
    dismissal=(
        r"erstmal|erst\s+mal|vorerst|für\s+jetzt|egal|lass\s+uns|stattdessen|schon\s+gut|"
        r"(?:für\s+)?eine\s+weile|heute"
    ),
    future=r"ich\s+werde|ich\s+will|ich\s+möchte",
    fillers=r"bitte|gut|danke|übrigens|also|und|ach|noch\s+was",
    forget_about=r"das\s+mit|alles\s+über",
    store=r"behalte?|leg(?:e)?|schreib(?:e)?|nimm|füge?",
    memory_place=(
        r"(?:(?:das|dies|folgendes)\s+)?(?:in\s+(?:deinem|deinen|ihrem|dein|das)\s+"
        r"(?:gedächtnis|speicher|erinnerung|erinnerungen|notizen)|ab)"
    ),
    newer=(
        r"jetzt|nun|inzwischen|mittlerweile|seit|gezogen|umgezogen|ab\s+jetzt|ab\s+sofort|"
        r"nicht\s+mehr|kein\w*\s+\w+\s+mehr|stattdessen|neuerdings|gewechselt|künftig"
    ),
    statement=(
        r"ich\s+heiße|mein\s+name\s+ist|ich\s+(?:wohne|lebe)\s+(?:jetzt\s+|nun\s+|seit\s+\w+\s+)?in|"
        r"ich\s+bin\s+(?:jetzt\s+|gerade\s+)?nach\s+\w+\s+(?:gezogen|umgezogen)|ich\s+trinke|"
        r"ich\s+arbeite\s+(?:bei|als)|ich\s+bin\s+(?:vegetarier|veganer|allergisch)"
    ),
)

FRENCH = Language(
    code="fr",
    remember=(
        r"souviens-toi|souvenez-vous|rappelle-toi|rappelez-vous|retiens|retenez|"
        r"n'oublie\s+pas|n'oubliez\s+pas|garde(?:z)?\s+(?:en\s+tête|à\s+l'esprit)|"
        r"prends\s+note|prenez\s+note|note(?:z)?(?:\s+bien)?|mémorise(?:z)?|enregistre(?:z)?|"
        r"retenir|noter|mémoriser|sauvegarde(?:z)?"
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
        r"(?:tout\s+)?ce\s+que\s+(?:je\s+(?:t'|vous\s+)?(?:ai\s+dit|ai\s+raconté)|tu\s+sais|"
        r"vous\s+savez|tu\s+as\s+retenu|tu\s+as\s+noté)\s+(?:sur|à\s+propos\s+d[eu']|de|du|des|d')"
        r"|tout\s+(?:sur|à\s+propos\s+d[eu'])"
    ),
    delete=r"supprime(?:z)?|efface(?:z)?|retire(?:z)?",
    memory_noun=(
        r"(?:le\s+|la\s+|les\s+|ton\s+|ta\s+)?(?:souvenir|souvenirs|mémoire|note|notes)\s+"
        r"(?:de|du|des|sur|à\s+propos\s+de|concernant)|(?:tout\s+)?ce\s+que\s+(?:tu\s+sais|vous\s+"
        r"savez)\s+(?:sur|de|du|des|d')"
    ),
    possessive=r"mon|ma|mes",
    dismissal=(
        r"pour\s+l'instant|pour\s+le\s+moment|pour\s+aujourd'hui|laisse|pas\s+grave|plutôt|"
        r"un\s+moment|un\s+peu|ce\s+soir"
    ),
    future=r"je\s+vais|je\s+veux|j'irai",
    fillers=r"bien|s'il\s+te\s+plaît|s'il\s+vous\s+plaît|stp|svp|merci|au\s+fait|et|aussi|bon|alors",
    forget_about=r"l'histoire\s+d[eu']|(?:tout\s+)?ce\s+qui\s+concerne",
    store=r"garde(?:z)?|ajoute(?:z)?|mets|mettez|inscris|inscrivez",
    memory_place=(
        r"(?:(?:ceci|cela|ça|ce\s+qui\s+suit)\s+)?(?:dans\s+(?:ta|votre|la)\s+(?:mémoire|"
        r"mémoire\s+à\s+long\s+terme))"
    ),
    newer=(
        r"maintenant|désormais|dorénavant|depuis|actuellement|déménagé|déménagée|déménager|"
        r"installé|installée|ne\s+\w+\s+plus|n'\w+\s+plus|plus\s+maintenant|à\s+la\s+place|"
        r"à\s+partir\s+de"
    ),
    statement=(
        r"je\s+m'appelle|mon\s+nom\s+est|j'habite\s+(?:à|en|au)|je\s+vis\s+(?:à|en|au)|"
        r"je\s+travaille\s+(?:chez|comme|à)|je\s+suis\s+(?:végétarien|végan|allergique)|"
        r"je\s+(?:me\s+suis\s+installée?|suis\s+(?:parti|partie|allé|allée)\s+vivre|"
        r"viens\s+de\s+déménager|(?:ai\s+)?déménagée?)\s+(?:à|en|au)|je\s+bois|j'habite\s+"
        r"(?:maintenant|désormais)"
    ),
)

SPANISH = Language(
    code="es",
    remember=(
        r"recuerda|recuerde|acuérdate|acuerdate|no\s+olvides|no\s+olvide|no\s+te\s+olvides|"
        r"ten(?:ga)?\s+en\s+cuenta|toma\s+nota|tome\s+nota|anota|apunta|guarda|memoriza|"
        r"recordar|anotar|apuntar|almacena"
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
        r"practico|llevo|hago|puedo|sé|mudé|viví|trabajé|empecé|dejé|cambié|volví|conduzco|"
        r"manejo|fumo"
    ),
    second_person=r"tú|tu|tus|te|ti|contigo|usted|vosotros|estás|eres|tienes|puedes|vales",
    third_person=r"él|ella|ellos|ellas|eso|esto",
    forget=r"olvida|olvide|olvídate|olvidate",
    forget_what=(
        r"(?:todo\s+)?lo\s+que\s+(?:(?:te\s+)?(?:dije|conté)|sabes|recuerdas|guardaste|"
        r"sepas)\s+(?:sobre|de|del|acerca\s+de)|todo\s+(?:sobre|acerca\s+de)"
    ),
    delete=r"borra|borre|elimina|elimine|quita",
    memory_noun=(
        r"(?:el\s+|la\s+|los\s+|tu\s+)?(?:recuerdo|recuerdos|memoria|nota|notas)\s+(?:sobre|de|"
        r"del|acerca\s+de)|(?:todo\s+)?lo\s+que\s+sabes\s+(?:sobre|de|del|acerca\s+de)"
    ),
    possessive=r"mi|mis",
    dismissal=(
        r"por\s+ahora|por\s+el\s+momento|por\s+hoy|no\s+importa|mejor|vamos\s+a|"
        r"(?:por\s+)?un\s+rato|esta\s+noche"
    ),
    future=r"voy\s+a|quiero|pienso",
    fillers=r"bien|por\s+favor|gracias|oye|y|también|bueno|además",
    forget_about=r"de(?:l)?",
    store=r"añade|agrega|pon|mete|registra",
    memory_place=(r"(?:(?:esto|eso|lo\s+siguiente)\s+)?(?:en\s+(?:tu|su|la)\s+memoria)"),
    newer=(
        r"ahora|actualmente|desde|ya\s+no|mudé|mudado|mudo|trasladé|cambié|en\s+lugar\s+de|"
        r"a\s+partir\s+de|de\s+ahora\s+en\s+adelante|últimamente"
    ),
    statement=(
        r"me\s+llamo|mi\s+nombre\s+es|(?:ahora\s+)?vivo\s+(?:ahora\s+)?en|trabajo\s+(?:en|como|para)|"
        r"me\s+(?:he\s+)?(?:mudé|mudado)\s+a|bebo|tomo\s+(?:café|té)|"
        r"soy\s+(?:vegetarian|vegan|alérgic)"
    ),
)

ITALIAN = Language(
    code="it",
    remember=(
        r"ricorda(?:ti)?|ricordate|non\s+dimenticare|non\s+dimenticarti|non\s+scordare|"
        r"non\s+scordarti|tieni\s+(?:a\s+mente|presente)|tenga\s+(?:a\s+mente|presente)|"
        r"prendi\s+nota|prenda\s+nota|annota|memorizza|salva|ricordare|annotare|memorizzare|"
        r"registra"
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
        r"mangio|bevo|parlo|uso|studio|gioco|soffro|adoro|detesto|faccio|posso|suono|guido|"
        r"fumo|prendo"
    ),
    second_person=r"tu|ti|te|tuo|tua|tuoi|tue|lei|sei|hai|voi|vostro",
    third_person=r"lui|lei|loro|esso|essa|ciò|questo|quello",
    forget=r"dimentica|dimenticati|dimentichi|scordati|scorda|scordatevi|dimenticatevi",
    forget_what=(
        r"(?:tutto\s+)?(?:quello|ciò)\s+che\s+(?:(?:ti\s+)?ho\s+detto|sai|ricordi|hai\s+salvato)"
        r"\s+(?:su|sul|sulla|sui|sulle|di|del|della|dei|riguardo(?:\s+a)?)|tutto\s+(?:su|sul|sulla)"
    ),
    delete=r"cancella|elimina|rimuovi",
    memory_noun=(
        r"(?:il\s+|la\s+|i\s+|le\s+)?(?:ricordo|ricordi|memoria|nota|note)\s+(?:su|sul|sulla|"
        r"di|del|della|dei|riguardo)|(?:tutto\s+)?(?:quello|ciò)\s+che\s+sai\s+(?:su|sul|sulla|"
        r"sui|di|del|della|dello|dei|delle)"
    ),
    possessive=r"(?:il\s+|la\s+|i\s+|le\s+)?(?:mio|mia|miei|mie)",
    dismissal=(
        r"per\s+ora|per\s+adesso|per\s+il\s+momento|non\s+importa|lascia\s+perdere|"
        r"per\s+un\s+po'|stasera|oggi"
    ),
    future=r"voglio|ho\s+intenzione",
    fillers=r"bene|per\s+favore|grazie|ehi|e|anche|allora|poi",
    forget_about=r"di|del|della|dello|dei|delle",
    store=r"conserva|aggiungi|metti|tieni",
    memory_place=(
        r"(?:(?:questo|ciò|quanto\s+segue)\s+)?(?:nella\s+(?:tua|sua)\s+memoria|in\s+memoria)"
    ),
    newer=(
        r"ora|adesso|ormai|attualmente|da\s+quando|dal|dalla|trasferit[oa]|traslocat[oa]|"
        r"non\s+\w+\s+più|invece|d'ora\s+in\s+poi|da\s+ora"
    ),
    statement=(
        r"mi\s+chiamo|il\s+mio\s+nome\s+è|(?:ora\s+|adesso\s+)?(?:abito|vivo)\s+(?:ora\s+|adesso\s+)?a|"
        r"lavoro\s+(?:a|come|per|da)|mi\s+sono\s+trasferit[oa]\s+a|bevo|"
        r"sono\s+(?:vegetarian|vegan|allergic)"
    ),
)

PORTUGUESE = Language(
    code="pt",
    remember=(
        r"lembre-se|lembra-te|lembre|lembra|não\s+(?:se\s+|te\s+)?esqueça|não\s+te\s+esqueças|"
        r"não\s+esquece|tenha\s+em\s+mente|tem\s+em\s+mente|anote|anota|guarde|guarda|"
        r"memorize|memoriza|lembrar|anotar|memorizar|salve|salva|armazene"
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
        r"detesto|faço|posso|gosto|mudei|mudei-me|morei|vivi|trabalhei|comecei|deixei|"
        r"troquei|voltei|conduzo|dirijo|fumo"
    ),
    second_person=r"você|vocês|tu|te|ti|contigo|teu|tua|teus|tuas|seu|sua|está|és",
    third_person=r"ele|ela|eles|elas|isso|isto",
    forget=r"esqueça|esquece|esqueçam|esquece-te|esqueça-se|esqueça-te|esqueçe",
    forget_what=(
        r"(?:tudo\s+)?o\s+que\s+(?:(?:eu\s+)?(?:te\s+|lhe\s+)?(?:disse|contei)|(?:você\s+)?sabe|"
        r"sabes|(?:você\s+)?guardou)\s+(?:sobre|de|do|da|dos|das)|tudo\s+sobre"
    ),
    delete=r"apague|apaga|remova|remove|exclua|exclui|delete|deleta",
    memory_noun=(
        r"(?:a\s+|o\s+|as\s+|os\s+|sua\s+)?(?:memória|memórias|lembrança|lembranças|nota|notas)"
        r"\s+(?:sobre|de|do|da|dos|das)|(?:tudo\s+)?o\s+que\s+(?:você\s+)?sabes?\s+"
        r"(?:sobre|de|do|da|dos|das)"
    ),
    possessive=r"(?:o\s+|a\s+|os\s+|as\s+)?(?:meu|minha|meus|minhas)",
    dismissal=(
        r"por\s+enquanto|por\s+agora|por\s+hoje|não\s+importa|deixa\s+pra\s+lá|vamos|"
        r"(?:por\s+)?um\s+(?:pouco|tempo)|esta\s+noite"
    ),
    future=r"vou|quero",
    fillers=r"bem|por\s+favor|obrigad[oa]|ei|e|também|então",
    forget_about=r"de|do|da|dos|das",
    store=r"adicione|adiciona|coloque|coloca|ponha|põe|registre|registra",
    memory_place=(r"(?:(?:isto|isso|o\s+seguinte)\s+)?(?:na\s+(?:sua|tua)\s+memória|na\s+memória)"),
    newer=(
        r"agora|atualmente|desde|já\s+não|não\s+\w+\s+mais|mudei|mudei-me|mudou|em\s+vez|"
        r"a\s+partir\s+de|de\s+agora\s+em\s+diante|ultimamente"
    ),
    statement=(
        r"me\s+chamo|meu\s+nome\s+é|(?:agora\s+)?(?:moro|vivo)\s+(?:agora\s+)?(?:em|no|na)|"
        r"trabalho\s+(?:em|como|na|no)|(?:me\s+)?mudei(?:-me)?\s+para|bebo|"
        r"sou\s+(?:vegetarian|vegan|alérgic)"
    ),
)

DUTCH = Language(
    code="nl",
    remember=(
        r"onthoud|onthou|vergeet\s+niet|denk\s+eraan|houd?\s+er\s+rekening\s+mee|"
        r"houd?\s+in\s+gedachten|noteer|sla\s+op|sla|bewaar|onthouden|noteren"
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
    forget_what=(
        r"(?:alles\s+)?wat\s+(?:ik\s+(?:je\s+|jou\s+|u\s+)?|je\s+|jij\s+|u\s+)(?:allemaal\s+)?"
        r"(?:(?:weet|onthouden\s+hebt|bewaard\s+hebt)\s+)?over|alles\s+over"
    ),
    delete=r"verwijder|wis",
    memory_noun=(
        r"(?:de\s+|je\s+)?(?:herinnering|herinneringen|notitie|notities)\s+(?:aan|over|van)|"
        r"wat\s+je\s+(?:weet\s+)?over"
    ),
    possessive=r"mijn",
    dismissal=(
        r"even|voorlopig|voor\s+nu|maakt\s+niet\s+uit|laat\s+maar|laten\s+we|"
        r"een\s+tijdje|vanavond|vandaag"
    ),
    future=r"ik\s+ga|ik\s+wil|ik\s+zal",
    fillers=r"goed|alsjeblieft|alstublieft|a\.u\.b\.|graag|bedankt|en|ook|trouwens|even",
    forget_about=r"het\s+van|dat\s+van",
    store=r"sla|zet|voeg|schrijf|bewaar",
    memory_place=(
        r"(?:(?:dit|dat|het\s+volgende)\s+)?(?:(?:op\s+)?in\s+(?:je|jouw|uw|het)\s+geheugen|op)"
    ),
    newer=(
        r"nu|tegenwoordig|inmiddels|sinds|verhuisd|niet\s+meer|geen\s+\w+\s+meer|voortaan|"
        r"vanaf\s+nu|in\s+plaats\s+van"
    ),
    statement=(
        r"ik\s+heet|mijn\s+naam\s+is|ik\s+woon\s+(?:nu\s+|sinds\s+\w+\s+)?in|"
        r"ik\s+werk\s+(?:bij|als)|ik\s+ben\s+(?:net\s+|onlangs\s+)?(?:naar\s+\w+\s+)?verhuisd|"
        r"ik\s+drink|"
        r"ik\s+ben\s+(?:vegetariër|veganist|allergisch)"
    ),
)

LANGUAGES: tuple[Language, ...] = (
    ENGLISH,
    GERMAN,
    FRENCH,
    SPANISH,
    ITALIAN,
    PORTUGUESE,
    DUTCH,
    *MORE_LANGUAGES,
)
