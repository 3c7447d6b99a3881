"""Language detectors: health, other GDPR art. 9 categories, and inferred sensitive traits.

They work on a lower-cased copy with English contractions expanded and look for a subject (the
user, "I", a person close to them) bound to a sensitive term by a verb, so that talking about a
topic passes while disclosing it does not.
"""

from __future__ import annotations

import re
from typing import Final

from convmem.memory.detect_common import Finding, Prepared
from convmem.memory.detect_politics_record_i18n import politics_record_or_origin
from convmem.memory.detect_sensitive_i18n import (
    health_disclosure,
    inferred_trait,
    sensitive_disclosure,
)
from convmem.memory.detect_someone_i18n import someone_else_said

# ---------------------------------------------------------------------------------------------
# Vocabulary for the language detectors (lower case)
# ---------------------------------------------------------------------------------------------

# People close to the user; health or beliefs of a third person are just as sensitive. Pets and
# organisations are not in the list, so "my dog has diabetes" passes.
_PERSON: Final = (
    r"(?:(?:older|younger|little|big|baby|eldest|oldest|youngest|twin|late|\d+[\s-]year[\s-]old)\s+)?"
    r"(?:wife|husband|partner|spouse|son|daughter|child|kid|toddler|mom|mum|mother|dad|father"
    r"|parents?|brother|sister|sibling|grandma|grandmother|granny|grandpa|grandfather|aunt|uncle"
    r"|cousin|niece|nephew|boyfriend|girlfriend|fianc[eé]e?|friend|best\s+friend|roommate"
    r"|flatmate|housemate|colleague|co-?worker|boss|manager|neighbou?r|step(?:son|daughter|mom"
    r"|dad|mother|father)|(?:mother|father|sister|brother)-in-law|ex|ex-wife|ex-husband"
    r"|teammate|employee|patient|client|student)"
)
# Subjects for "<subject> has/is <term>": the user ("i", "the user", a bare memory statement such as
# "Has type 2 diabetes"), or a person close to them.
_START: Final = r"(?:^|(?<=[.;:!?]\s)|(?<=[.;:!?]))\s*"
# A person by name, in the lower-cased text: one or two words that are not a pronoun, a
# determiner or a quantifier ("john", "mark jensen", "aunt rosa"). Health or beliefs of anyone
# named are as sensitive as the user's own; "my dog" and "the study" are not names.
_NOT_NAME: Final = (
    r"(?:i|me|my|mine|we|our|you|your|he|his|she|her|it|its|they|their|this|that|these|those"
    r"|there|here|which|what|who|whoever|the|a|an|no|every|each|any|some|many|most|all|both"
    r"|everyone|everybody|someone|somebody|anyone|anybody|nobody|none|people|one|is|was|has|had"
    r"|have|got|been|became|also|still|now|remember|note|btw|fyi|so|and|but|or|oh|if|when|then"
    r"|maybe|perhaps|just|only|even)"
)
_NAME_WORD: Final = r"(?!" + _NOT_NAME + r"\b)[^\W\d_][\w'\u2019.-]*"
_NAMED: Final = _NAME_WORD + r"(?:\s+" + _NAME_WORD + r")?"
# Someone other than the user: a close person ("my brother", "my neighbour's kid"), perhaps
# named after ("my brother john"); a name alone where a sentence starts ("sarah has ...",
# "remember that sarah has ..."); a name with the close person beside it ("tom, my dad, has",
# "ana (my sister) has").
_LEAD_IN: Final = (
    r"(?:(?:remember|note|fyi|btw|also|and|so|but|oh|please\s+remember)\s+(?:that\s+)?)?"
)
_THIRD: Final = (
    r"\bmy\s+" + _PERSON + r"(?:'s\s+" + _PERSON + r")?(?:\s+" + _NAMED + r")?"
    # a name only where a sentence starts (as a name can be any word, anywhere else it would cost
    # a try at every word), perhaps with the person beside it
    + r"|" + _START + _LEAD_IN + _NAMED
    + r"(?:\s*,\s*my\s+" + _PERSON + r"\s*,|\s*\(\s*my\s+" + _PERSON + r"\s*\))?"
)  # fmt: skip
_ADVERBS: Final = (
    r"(?:(?:also|still|now|currently|actually|really|so|very|pretty|quite|severely|mildly"
    r"|clinically|chronically|recently|newly|openly|proudly|not|technically|legally|partially"
    r"|completely|totally|officially|finally|just|definitely|probably|kind\s+of|sort\s+of"
    r"|borderline|a\s+bit|somewhat|slightly|always|never|sadly|unfortunately"
    r"|\d+\s+(?:weeks?|months?))\s+){0,3}"
)
_BE: Final = (
    r"(?:\bi\s+(?:(?:might|may|could|must|will|would|also|still|think\s+i|guess\s+i|believe\s+i"
    r"|have|had|always|never|recently|just|now)\s+){0,3}(?:am|be|was|been|became|got|identify\s+as)"
    r"|(?:\bthe\s+)?\buser\s+(?:is|was|has\s+been|became|identifies\s+as)"
    r"|(?:" + _THIRD + r")\s+(?:is|was|has\s+been|became|got|identifies\s+as)"
    r"|\b(?:he|she)\s+(?:is|was|has\s+been|identifies\s+as)"
    r"|\b(?:we|(?:my\s+)?\w+\s+and\s+i)\s+are(?:\s+both)?"
    r"|" + _START + r"(?:is|was|identifies\s+as))\s+" + _ADVERBS
)
_HAVE_VERB: Final = (
    r"(?:have|has|had|got|get|gets|suffer(?:s|ed)?\s+from|(?:am|is|was|been)\s+suffering\s+from"
    r"|live[sd]?\s+with|(?:am|is|been)\s+living\s+with|struggl(?:e|es|ed)\s+with"
    r"|(?:am|is|was|been)\s+struggling\s+with|battl(?:e|es|ed)|(?:am|is|been)\s+battling"
    r"|(?:was|were|got|been|am|is)\s+(?:\w+\s+)?diagnosed\s+with|diagnosed\s+with"
    r"|(?:am|is|was|been)\s+(?:being\s+)?treated\s+for|(?:am|is|was|been)\s+recovering\s+from"
    r"|recovered\s+from|survived|beat|developed|caught|tested\s+positive\s+for|contracted"
    r"|deal(?:s|t)?\s+with|(?:am|is|been)\s+dealing\s+with|(?:am|is)\s+in\s+remission\s+from)"
)
_HAVE: Final = (
    r"(?:(?:\bi|(?:\bthe\s+)?\buser|" + _THIRD + r"|\b(?:he|she))\s+|" + _START + r")"
    r"(?:(?:also|still|now|recently|just|actually|really|probably|might|may|could|definitely"
    r"|think\s+i|was|have|has|had|been|finally|officially|sadly|unfortunately|always|never|already"
    r"|currently|apparently|often|sometimes|regularly|occasionally)\s+){0,3}" + _HAVE_VERB + r"\s+"
)
_DET: Final = (
    r"(?:(?:a|an|the|some|first|second|another|recurring|frequent|occasional|constant|mild|severe"
    r"|chronic|early|late|terminal|bad|clinical|major|serious|acute|moderate|high-functioning"
    r"|diagnosed|stage\s+\w+|my|\d+|two|three|four|several|a\s+few|multiple|many|more)\s+){0,3}"
)
_CONDITION: Final = (
    r"(?:(?:type\s*(?:1|2|i|ii|one|two)\s+|pre-?|gestational\s+)?diabetes"
    r"|(?:breast|lung|prostate|colon|colorectal|skin|bowel|ovarian|cervical|pancreatic|brain|bone"
    r"|blood|testicular|thyroid|liver|kidney|stomach|throat|stage\s+\w+\s+)?\s?cancer"
    r"|leuka?emia|lymphoma|melanoma|tumou?rs?|hiv|aids|hepatitis(?:\s+[abc])?|tuberculosis|asthma"
    r"|copd|epilepsy|seizures|adhd|autism|asperger'?s|ocd|c?-?ptsd|bipolar(?:\s+disorder)?"
    r"|(?:postpartum\s+|postnatal\s+)?depression|anxiety(?:\s+disorder)?|panic\s+(?:attacks?"
    r"|disorder)|schizophrenia|psychosis|(?:an\s+)?eating\s+disorder|anorexia|bulimia"
    r"|binge[\s-]eating(?:\s+disorder)?|insomnia|narcolepsy|sleep\s+apno?ea|migraines?"
    r"|chronic\s+(?:pain|fatigue|illness|condition|disease)|fibromyalgia"
    r"|(?:rheumatoid\s+|psoriatic\s+|osteo)?arthritis|lupus|multiple\s+sclerosis|parkinson'?s"
    r"|alzheimer'?s|dementia|crohn'?s(?:\s+disease)?|ibs|(?:ulcerative\s+)?colitis"
    r"|c[eo]?eliac(?:\s+disease)?|hypertension|high\s+blood\s+pressure|high\s+cholesterol"
    r"|heart\s+(?:disease|failure|condition|problems)|arrhythmia|atrial\s+fibrillation|afib"
    r"|a\s+pacemaker|heart\s+attack|stroke(?!\s+of)|covid(?:-19)?|long\s+covid|the\s+flu"
    r"|stds?|stis?|chlamydia|gonorrh?o?ea|syphilis|herpes|hpv|(?:hypo|hyper)thyroidism"
    r"|thyroid\s+(?:disease|condition|problems)|hashimoto'?s|graves'?\s+disease|endometriosis"
    r"|pcos|infertility|erectile\s+dysfunction|(?:learning\s+)?disabilit(?:y|ies)|dyslexia"
    r"|dyspraxia|dyscalculia|tourette'?s|tinnitus|glaucoma|cataracts|macular\s+degeneration"
    r"|kidney\s+(?:disease|failure|stones)|liver\s+disease|cirrhosis|cystic\s+fibrosis"
    r"|sickle\s+cell(?:\s+(?:anaemia|anemia|disease))?|ha?emophilia|(?:\w+\s+)?allerg(?:y|ies)"
    r"|addiction|alcoholism|(?:an\s+)?(?:alcohol|drinking|drug|substance\s+abuse)\s+problem"
    r"|(?:a\s+)?mental\s+(?:illness|health\s+(?:issues|problems|condition))|concussion"
    r"|broken\s+(?:arm|leg|wrist|ankle|foot|hand|rib|ribs|nose|collarbone|hip)"
    r"|torn\s+(?:acl|meniscus|ligament|rotator\s+cuff)|scoliosis|osteoporosis|gout|psoriasis"
    r"|eczema|shingles|pneumonia|bronchitis|ana?emia|vertigo|hearing\s+loss|hearing\s+aids?"
    r"|colou?r[\s-]?blindness|terminal\s+illness|down\s+syndrome|cerebral\s+palsy|spina\s+bifida"
    r"|huntington'?s|gender\s+dysphoria|an\s+ostomy|a\s+stoma|a\s+prosthetic\s+\w+|a\s+disability"
    r"|a\s+(?:heart|lung|kidney|liver)\s+transplant|(?:a\s+)?miscarriage|diabetic\s+neuropathy"
    r"|neuropathy|sepsis|measles|mumps|malaria|ebola|mpox|monkeypox|obesity|an?\s+illness"
    r"|(?:\w+\s+)?surgery)"
)
_HEALTH_ADJ: Final = (
    r"(?:(?:a\s+)?(?:type\s*(?:1|2|one|two)\s+)?(?:pre-?)?diabetic|(?:an\s+)?epileptic"
    r"|(?:an\s+)?asthmatic|bipolar|depressed|suicidal|anorexic|bulimic|schizophrenic|autistic"
    r"|on\s+the\s+(?:autism\s+|autistic\s+)?spectrum|neurodivergent|dyslexic|dyspraxic|adhd"
    r"|hiv[\s-]?positive|hiv\s?\+|pregnant|expecting\s+(?:a\s+baby|a\s+child|twins|our\s+first"
    r"|my\s+first)|trying\s+to\s+(?:get\s+pregnant|conceive|have\s+a\s+baby)|infertile"
    r"|immunocompromised|immunosuppressed|deaf|hard\s+of\s+hearing|blind(?!-|\s+spot)"
    r"|partially\s+sighted|visually\s+impaired|hearing\s+impaired|colou?r[\s-]?blind"
    r"|in\s+a\s+wheelchair|wheelchair[\s-]bound|a\s+wheelchair\s+user|paraly[sz]ed|an\s+amputee"
    r"|(?:a\s+)?cancer\s+survivor|in\s+remission|(?:in|on|undergoing)\s+chemo(?:therapy)?"
    r"|on\s+dialysis|in\s+rehab|in\s+recovery(?!\s+mode)|sober(?!-|\s+curious)|(?:an?\s+)?(?:recovering\s+)?"
    r"(?:alcoholic|(?:drug\s+)?addict)|lactose[\s-]intolerant|gluten[\s-]intolerant"
    r"|allergic\s+to(?!\s+(?:nothing|anything))|c[eo]?eliac|ana?emic|hypertensive|terminally\s+ill|chronically\s+ill"
    r"|mentally\s+ill|in\s+therapy|obese|postpartum|breastfeeding|menopausal|perimenopausal"
    r"|going\s+through\s+(?:menopause|chemo|ivf|rehab)|hiv\s+negative"
    r"|(?:clean|sober)\s+(?:from|off)\s+(?:opioids|drugs|heroin|cocaine|meth|alcohol|booze|pills"
    r"|painkillers|fentanyl|crack))"
)
_MEDICATION: Final = (
    r"(?:sertraline|zoloft|fluoxetine|prozac|citalopram|celexa|escitalopram|lexapro|paroxetine"
    r"|paxil|venlafaxine|effexor|duloxetine|cymbalta|bupropion|wellbutrin|mirtazapine|trazodone"
    r"|amitriptyline|lithium|lamotrigine|lamictal|valproate|depakote|quetiapine|seroquel"
    r"|olanzapine|zyprexa|risperidone|risperdal|aripiprazole|abilify|clozapine|haloperidol"
    r"|adderall|ritalin|methylphenidate|concerta|vyvanse|lisdexamfetamine|strattera|atomoxetine"
    r"|modafinil|xanax|alprazolam|valium|diazepam|klonopin|clonazepam|ativan|lorazepam|ambien"
    r"|zolpidem|metformin|insulin|ozempic|wegovy|semaglutide|mounjaro|tirzepatide|jardiance"
    r"|levothyroxine|synthroid|lisinopril|amlodipine|losartan|metoprolol|atorvastatin|lipitor"
    r"|statins?|simvastatin|warfarin|eliquis|xarelto|clopidogrel|prednisone|prednisolone"
    r"|methotrexate|humira|adalimumab|enbrel|chemo(?:therapy)?|tamoxifen|letrozole"
    r"|antiretrovirals|truvada|biktarvy|hrt|hormone\s+(?:replacement\s+)?therapy|estrogen"
    r"|oestrogen|testosterone|puberty\s+blockers|birth\s+control|the\s+pill|contraceptives?"
    r"|antidepressants?|antipsychotics?|anti-?anxiety\s+(?:meds|medication|pills)"
    r"|mood\s+stabili[sz]ers?|benzodiazepines|benzos|opioids|oxycodone|oxycontin|hydrocodone"
    r"|vicodin|percocet|tramadol|morphine|fentanyl|methadone|suboxone|buprenorphine|naltrexone"
    r"|antabuse|disulfiram|gabapentin|pregabalin|lyrica|sumatriptan|propranolol|epi-?pens?"
    r"|inhalers?|albuterol|ventolin|steroids|accutane|isotretinoin|spironolactone|finasteride"
    r"|viagra|sildenafil|cialis|wheelchair|walking\s+(?:cane|frame)|walker|hearing\s+aids?"
    r"|cpap(?:\s+machine)?|insulin\s+pump|feeding\s+tube|oxygen\s+(?:tank|concentrator)|(?:blood\s+pressure|thyroid|cholesterol|heart|diabetes|anxiety"
    r"|depression|adhd|seizure|epilepsy|psychiatric|hiv)\s+(?:meds|medications?|medicine|pills"
    r"|tablets|drugs)|meds\s+for\s+\w+|medication\s+for\s+\w+)"
)
# Words right after a sensitive term that turn it into a topic ("diabetes research", "lithium
# batteries", "flu shot") rather than a condition of the speaker.
_TOPIC_AFTER: Final = (
    r"(?![\s-]*(?:research\w*|related|friendly|free|safe|specific|focused|themed|awareness|polic(?:y|ies)|charit(?:y|ies)|foundation|fundrais\w*"
    r"|drugs?|products?|stocks?|shares|apps?|data(?:set)?|stud(?:y|ies)|articles?|papers?|books?"
    r"|course\w*|class(?:es)?|lectures?|documentar(?:y|ies)|podcasts?|projects?|market\w*"
    r"|industr(?:y|ies)|sector|conferences?|meetups?|team|startup|compan(?:y|ies)|campaigns?"
    r"|walk|marathon|ion|batter(?:y|ies)|mines?|mining|prices?|vaccines?|vaccinations?|shots?"
    r"|jabs?|season|outbreak|pandemic|statistics|stats|rates?|patients|clinic|ward|module"
    r"|simulation|model|jokes?|memes?|episode|character|trials?|sales|pump\s+company|scenes?"
    r"|test\s+(?:cases?|suite)|lab|labs|unit|department|guidelines|scripts?|technique|width"
    r"|colou?r|style)\b)"
)
# A term ends a clause here: used for words that are also ordinary adjectives ("straight out of
# college", "conservative with estimates", "ace at chess").
_CLAUSE_END: Final = (
    r"(?=\s*(?:$|[.,;:!?)\]]|and\b|but\b|so\b|too\b|myself\b|btw\b|now\b|man\b|woman\b|men\b"
    r"|women\b|guy\b|girl\b|person\b|people\b|voter\b|supporter\b|member\b|and\s+proud\b"
    r"|american\b|british\b|canadian\b|australian\b|by\s+birth\b|though\b|here\b|as\s+well\b"
    r"|politically\b))"
)

_ORIENTATION: Final = (
    r"(?:(?:an?\s+)?(?:gay|lesbian|bisexual|pansexual|asexual|aromantic|queer|homosexual|heterosexual"
    r"|transgender|non-?binary|genderqueer|gender-?fluid|intersex|two-spirit|polyamorous"
    r"|a\s+trans\s+(?:man|woman|person)|(?:a\s+)?(?:gay|bi|lesbian|queer)\s+(?:man|woman|guy"
    r"|girl|person))(?![\w-])|(?:trans|bi|pan|ace|straight)" + _CLAUSE_END + r")"
)
_RELIGION: Final = (
    r"(?:(?:an?\s+)?(?:(?:devout|practi[cs]ing|observant|born-again|lapsed|non-practi[cs]ing"
    r"|converted|orthodox|reform|sunni|shia|shi'a|roman|ultra-orthodox|hasidic|evangelical"
    r"|conservative|proud|committed)\s+){0,2}(?:muslim|christian|catholic|protestant|jew|jewish"
    r"|hindu|buddhist|sikh|mormon|lds|jehovah'?s\s+witness|atheist|agnostic|evangelical|baptist"
    r"|methodist|lutheran|anglican|episcopalian|presbyterian|pentecostal|quaker|adventist"
    r"|pagan|wiccan|jain|bah[aá]'?[ií]|zoroastrian|rastafarian|taoist|shintoist|unitarian"
    r"|scientologist|christ[\s-]follower|follower\s+of\s+(?:christ|jesus|islam))"
    r"(?!-|\s+(?:about|when|regarding|in\s+my\s+approach|bale|dior|school\w*|educated|university"
    r"|college)\b|\s+\w+'s\b)\b"
    r"|(?:not\s+)?(?:very\s+)?religious(?!\s+(?:about|when|with))\b"
    r"|(?:a\s+)?believer\b(?!\s+in\b)"
    r"|spiritual\s+but\s+not\s+religious)"
)
_POLITICS: Final = (
    r"(?:(?:an?\s+)?(?:(?:registered|lifelong|proud|staunch|committed|card-carrying|die-?hard"
    r"|loyal)\s+)?(?:republican|democrat|tory|socialist|democratic\s+socialist|communist|marxist"
    r"|libertarian|anarchist|leftist|fascist|neo-?nazi|white\s+nationalist|maga(?:\s+supporter)?"
    r"|(?:trump|biden|harris|obama|sanders|corbyn|starmer|farage|modi)\s+supporter"
    r"|(?:labour|tory|conservative|lib\s+dem|liberal\s+democrat|green|reform|snp|spd|cdu|afd|fdp"
    r"|republican|democratic|democrat)\s+(?:party\s+)?(?:voter|supporter|member|activist))\b"
    r"|(?:an?\s+)?(?:(?:registered|lifelong|proud|staunch|committed|die-?hard)\s+)?"
    r"(?:conservative|liberal|progressive|left-?wing|right-?wing|centrist"
    r"|left-?leaning|right-?leaning|nationalist|populist)" + _CLAUSE_END + r")"
)
_ETHNICITY: Final = (
    r"(?:(?:an?\s+)?(?:proud\s+|mixed\s+|half\s+)?(?:hispanic|latin[oaex]|african[\s-]american"
    r"|asian[\s-]american|native\s+american|indigenous|first\s+nations|aboriginal|torres\s+strait"
    r"\s+islander|pacific\s+islander|native\s+hawaiian|alaska\s+native|arab(?:[\s-]american)?"
    r"|romani|mixed[\s-]race|biracial|multiracial|(?:a\s+)?person\s+of\s+colou?r|poc|bipoc"
    r"|caucasian|kurdish|uyghur|berber|amazigh|yazidi|rohingya)\b"
    # "black and white about it" is a manner, not a colour of skin
    r"|(?:an?\s+)?(?:black|white|asian|brown|roma|desi|mestizo)(?!\s+(?:and|or|&)\s+(?:black|white)\b)"
    + _CLAUSE_END
    + r")"
)

# ---------------------------------------------------------------------------------------------
# Health
# ---------------------------------------------------------------------------------------------

_SUBJECT_ANY: Final = (
    r"(?:(?:\bi|(?:\bthe\s+)?\buser|" + _THIRD + r"|\b(?:he|she))\s+|" + _START + r")"
)
_HEALTH_RULES: Final[tuple[tuple[re.Pattern[str], str], ...]] = (
    (re.compile(_HAVE + _DET + _CONDITION + r"(?!\w)" + _TOPIC_AFTER), "a health condition"),
    (re.compile(_BE + _HEALTH_ADJ + r"(?!\w)" + _TOPIC_AFTER), "a health condition"),
    (
        re.compile(
            _SUBJECT_ANY + _ADVERBS + r"(?:(?:am|is|was|have\s+been|has\s+been|been)\s+)?"
            r"(?:take|takes|took|taking|on|use|uses|using|prescribed|started|starting|stopped"
            r"|quit|inject|injects|injecting|switched\s+to|switching\s+to|weaning\s+off|coming"
            r"\s+off|came\s+off|need|needs|got\s+prescribed)\s+(?:(?:a|an|the|my|some|daily|low"
            r"|high|dose|doses|of|\d+\s*mg|mg|again|also|now|back|on)\s+){0,4}"
            + _MEDICATION
            + r"(?!\w)"
            + _TOPIC_AFTER
        ),
        "medication",
    ),
    (
        re.compile(
            r"\b(?:prescribed|(?:put|started|switched)\s+(?:me|him|her|them)\s+on)\s+(?:me\s+)?"
            + _MEDICATION
            + r"(?!\w)"
            + _TOPIC_AFTER
        ),
        "medication",
    ),
    (
        re.compile(
            r"\b(?:i|user|my\s+" + _PERSON + r"|he|she)\s+(?:\w+\s+){0,2}?(?:was|were|been|got"
            r"|am|is)\s+(?:\w+\s+)?diagnosed\b|\bdiagnosed\s+(?:me|him|her|my\s+" + _PERSON + r")\b"
        ),
        "a medical diagnosis",
    ),
    (
        re.compile(
            r"\bmy\s+(?:"
            + _PERSON
            + r"'s\s+)?(?:"
            + _CONDITION
            + r"|"
            + _MEDICATION
            + r"|therapist|psychiatrist|psychologist|oncologist|cardiologist|endocrinologist"
            r"|neurologist|rheumatologist|gyn(?:a|ae)?ecologist|ob-?gyn|urologist|hepatologist"
            r"|nephrologist|fertility\s+(?:doctor|clinic|treatment)|diagnosis|prognosis|symptoms"
            r"|medical\s+(?:condition|history|records?)|health\s+(?:condition|issues|problems)"
            r"|mental\s+health|blood\s+(?:type|sugar|glucose|pressure|test\s+results|work)|a1c"
            r"|hba1c|glucose\s+levels?|cholesterol|viral\s+load|cd4(?:\s+count)?|t[\s-]cell\s+count"
            r"|bmi|hiv\s+status|pregnancy|abortion|surgery|rehab|relapse|sobriety|disability"
            r"|(?:insulin|infusion)\s+pump|cgm|glucose\s+monitor|wheelchair|cpap(?:\s+machine)?"
            r"|meds|medications?|prescriptions?(?!\s+(?:glasses|sunglasses|lenses))|chemo"
            r"|ivf|sponsor\s+(?:at|in)\s+(?:aa|na))\b" + _TOPIC_AFTER
        ),
        "health information",
    ),
    (
        re.compile(
            r"\b(?:i|we|my\s+" + _PERSON + r")\s+(?:\w+\s+){0,2}?(?:had|have|am\s+having|having"
            r"|am\s+scheduled\s+for|got|underwent|need|needs|am\s+getting|getting|will\s+have"
            r"|am\s+going\s+through|are\s+going\s+through|are\s+doing|started)\s+(?:an?\s+|my\s+"
            r"|the\s+|a\s+round\s+of\s+)?(?:\w+\s+)?(?:surgery|mastectomy|lumpectomy|hysterectomy"
            r"|vasectomy|abortion|miscarriage|c-section|caesarean|chemo(?:therapy)?|radiation"
            r"\s+therapy|radiotherapy|transplant|biopsy|colonoscopy|mammogram|dialysis|ivf"
            r"|egg\s+retrieval|top\s+surgery|bottom\s+surgery|stillbirth|gastric\s+bypass)\b"
        ),
        "a medical procedure",
    ),
    (
        re.compile(
            r"\b(?:i|my\s+" + _PERSON + r")\s+(?:\w+\s+){0,2}?(?:see|sees|saw|am\s+seeing"
            r"|is\s+seeing|been\s+seeing|started\s+seeing|go\s+to|goes\s+to|went\s+to|attend"
            r"|attends|started|am\s+in|is\s+in)\s+(?:an?\s+|my\s+|the\s+)?(?:therapist|therapy"
            r"|psychiatrist|psychologist|counsell?ing|rehab|aa|na|aa\s+meetings|na\s+meetings"
            r"|alcoholics\s+anonymous|narcotics\s+anonymous|group\s+therapy|cbt|dbt|emdr"
            r"|couples\s+therapy|a\s+support\s+group\s+for\s+\w+)\b"
        ),
        "mental-health treatment",
    ),
    # "disabled" alone is also an account state ("the user is disabled"), so only a person counts.
    (
        re.compile(
            r"\b(?:i\s+am|my\s+" + _PERSON + r"\s+is)\s+(?:\w+\s+)?disabled\b(?!\s+(?:in|on|for"
            r"|by|from|until|after)\b)|\b(?:i\s+am|as)\s+an?\s+disabled\s+(?:person|veteran|woman"
            r"|man|parent|adult|student)\b"
        ),
        "a disability",
    ),
    # Indirect statements of addiction and recovery: "eight months sober", "clean for two years"
    (
        re.compile(
            r"\b(?:\d+|an?|one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|\w+teen"
            r"|twenty|thirty|forty|fifty|several|few|many)\s+(?:days?|weeks?|months?|years?)"
            r"\s+(?:sober|clean|dry|alcohol-free|drug-free|in\s+recovery)\b(?!-)"
            r"|\b(?:i|we|my\s+" + _PERSON + r")\s+(?:(?:am|is|are|have|has|been|was|stayed|stay"
            r"|staying)\s+){1,2}(?:sober|clean)\s+(?:for|since)\b"
            r"|\bsince\s+i\s+(?:stopped|quit|gave\s+up)\s+(?:drinking|using|drugs|alcohol|the"
            r"\s+bottle|pills)\b|\bi\s+(?:have|had)\s+not\s+had\s+a\s+drink\s+(?:in|for|since)\b"
            r"|\bmy\s+(?:sobriety|relapse|sober\s+date|clean\s+date|(?:aa|na)\s+(?:chip|sponsor"
            r"|meetings?)|recovery\s+from\s+(?:alcohol|drugs|addiction|drinking))\b"
        ),
        "a health condition",
    ),
    (
        re.compile(
            r"\b(?:i|my\s+" + _PERSON + r")\s+(?:was|were|got|have\s+been|has\s+been|am|is)"
            r"\s+(?:\w+\s+)?(?:hospitali[sz]ed|admitted|treated|sectioned|committed)\s+(?:for"
            r"|with|because\s+of)\s+" + _DET + _CONDITION + r"(?!\w)"
            r"|\bmy\s+type\s*(?:1|2|one|two|i|ii)\b(?!\s+(?:error|fun|font|personality|class))"
            # found in the body: "doctors found a tumour in my lung"
            r"|\b(?:found|detected|discovered|diagnosed|spotted)\s+(?:a\s+|an\s+|some\s+)?"
            r"(?:\w+\s+)?(?:tumou?rs?|cancer|malignan\w+|lesions?|carcinoma|metastas[ie]s)\s+"
            r"(?:in|on)\s+my\b"
        ),
        "a health condition",
    ),
    (
        re.compile(
            r"\bwe\s+are\s+(?:\w+\s+)?(?:pregnant|expecting(?=\s*(?:$|[.,;!?]|a\s+baby|twins"
            r"|our\s+first|a\s+(?:boy|girl)|in\b|next\b|this\b))|trying\s+to\s+conceive)"
        ),
        "pregnancy",
    ),
)


# "MS" is multiple sclerosis only in capitals and not before a product name ("MS Office").
_MS: Final = re.compile(
    r"\b(?:[Ii]\s+(?:have|had)|[Ii]'ve\s+got|(?:[Hh]e|[Ss]he|[Uu]ser)\s+has|[Mm]y\s+\w+\s+has"
    r"|diagnosed\s+with)\s+MS\b(?![\s-]+(?:[A-Z]\w*|dos\b))"
)


def detect_health(p: Prepared) -> Finding | None:
    for pattern, what in _HEALTH_RULES:
        if pattern.search(p.sem):
            return Finding("health", f"a personal statement about {what}")
    if _MS.search(p.text):
        return Finding("health", "a personal statement about a health condition")
    if health_disclosure(p.lower) or someone_else_said(p.lower):
        return Finding("health", "a personal statement about health (in another language)")
    return None


# ---------------------------------------------------------------------------------------------
# Other special categories (GDPR art. 9 and art. 10)
# ---------------------------------------------------------------------------------------------

_SENSITIVE_RULES: Final[tuple[tuple[re.Pattern[str], str], ...]] = (
    (re.compile(_BE + _ORIENTATION), "sexual orientation or gender identity"),
    (
        re.compile(
            r"\bi\s+(?:\w+\s+)?came\s+out\s+(?:as\b|to\s+my\s+(?:family|parents|mom|mum|dad|friends"
            r"|wife|husband|boss|colleagues))"
            r"|\bmy\s+(?:same-sex|gay|lesbian)\s+(?:partner|relationship|marriage|wedding)"
            r"|\bi\s+am\s+(?:in\s+)?(?:a\s+)?(?:same-sex\s+relationship|an?\s+open\s+relationship"
            r"|polyamorous|a\s+virgin\b|celibate|a\s+sex\s+worker)"
            r"|\bi\s+am\s+(?:only\s+)?attracted\s+to\s+(?:men|women|both|guys|girls|the\s+same\s+sex"
            r"|people\s+of\s+the\s+same)|\bmy\s+sex\s+life\b|\bmy\s+sexual(?:ity|\s+orientation)\b"
            r"|\bi\s+am\s+transitioning\b(?!\s+(?:to|from|into|our|the|my\s+(?:team|role|career)))"
        ),
        "sexual orientation or sex life",
    ),
    # Indirect: a same-sex couple described without the word ("my husband and I are both men")
    (
        re.compile(
            r"\bmy\s+(?:husband|boyfriend|wife|girlfriend|partner|fianc[eé]e?)\s+and\s+i\s+are"
            r"\s+(?:both\s+)?(?:men|guys|women|girls|gay|lesbians|two\s+(?:men|women))\b"
            r"|\bi\s+am\s+a\s+(?:man|guy|boy|dude)\b[^.;!?]{0,40}\bmy\s+(?:husband|boyfriend)\b"
            r"|\bi\s+am\s+a\s+(?:woman|girl|lady)\b[^.;!?]{0,40}\bmy\s+(?:wife|girlfriend)\b"
        ),
        "sexual orientation or sex life",
    ),
    (re.compile(_BE + _RELIGION), "religious belief"),
    (
        re.compile(
            r"\bi\s+(?:\w+\s+)?(?:converted\s+to|practi[cs]e|follow|believe\s+in|worship)\s+(?:the\s+)?"
            r"(?:islam|judaism|christianity|catholicism|buddhism|hinduism|sikhism|jainism|shinto"
            r"|taoism|paganism|wicca|god|jesus(?:\s+christ)?|allah|the\s+(?:bible|quran|koran|torah"
            r"|lord)|lord)\b"
            r"|\bi\s+(?:\w+\s+)?(?:go\s+to|attend|pray\s+at|worship\s+at)\s+(?:church|mass"
            r"|(?:the\s+|a\s+|my\s+|our\s+)?(?:mosque|synagogue|temple|shul|gurdwara|kingdom\s+hall"
            r"|church|parish|chapel|congregation))\b(?!\s+(?:street|road|st|lane|square|ruins|tour"
            r"|concert|wedding|fair|market|run))"
            r"|\bi\s+(?:\w+\s+)?pray\s+(?:every|daily|five|5|\d+\s+times|before|to\s+(?:god|allah"
            r"|jesus))"
            r"|\bi\s+(?:\w+\s+)?(?:observe|fast\s+(?:during|for|on)|keep|eat(?:\s+only)?)\s+(?:the\s+)?"
            r"(?:ramadan|shabbat|sabbath|lent|yom\s+kippur|passover|eid|kosher|halal)\b"
            r"|\bi\s+(?:\w+\s+)?(?:read|recite|study)\s+(?:the\s+|my\s+)?(?:quran|koran|bible|torah"
            r"|talmud|bhagavad\s+gita|gita|guru\s+granth\s+sahib)\s+(?:every|each|daily|before"
            r"|after|at)\b"
            r"|\bi\s+(?:\w+\s+)?wear\s+(?:a\s+)?(?:hijab|headscarf|niqab|burqa|kippah|yarmulke"
            r"|turban)\b"
            r"|\bmy\s+(?:religion|religious\s+(?:beliefs|views|practice)|faith(?!\s+in\b)|church"
            r"|mosque|synagogue|pastor|priest|imam|rabbi|parish|congregation|bible\s+study)\b"
            r"|\bas\s+an?\s+(?:devout\s+|practi[cs]ing\s+)?(?:muslim|christian|catholic|jew|hindu"
            r"|buddhist|sikh|mormon|atheist|agnostic|evangelical)\b"
        ),
        "religious belief",
    ),
    (re.compile(_BE + _POLITICS), "political opinion"),
    (
        re.compile(
            r"\bi\s+(?:\w+\s+)?(?:vote|voted|votes|voting)\s+(?:for\s+)?(?:the\s+)?(?:republicans?"
            r"|democrats?|democratic|gop|labour|conservatives?|tory|tories|lib\s+dems?|liberal"
            r"\s+democrats?|greens?|green\s+party|snp|reform(?:\s+uk)?|ukip|spd|cdu|csu|afd|fdp"
            r"|die\s+linke|linke|bsw|ndp|liberals|bloc|trump|biden|harris|kamala|obama|clinton"
            r"|sanders|bernie|desantis|macron|le\s+pen|m[eé]lenchon|modi|bjp)\b"
            r"|\bi\s+(?:\w+\s+)?vote[ds]?\s+(?:left|right)"
            + _CLAUSE_END
            + r"|\bi\s+(?:\w+\s+)?(?:support|back|campaign\s+for|donate\s+to)\s+(?:the\s+)?"
            r"(?:republicans|democrats|gop|labour\s+party|conservative\s+party|tories|lib\s+dems"
            r"|green\s+party|snp|reform\s+uk|ukip|spd|cdu|afd|fdp|bjp|trump|biden|harris|maga)\b"
            r"|\bi\s+(?:am\s+)?(?:a\s+)?(?:member\s+of|joined|belong\s+to|vote\s+for)\s+the\s+"
            r"(?:labou?r|conservative|republican|democratic|green|communist|socialist|libertarian"
            r"|liberal|liberal\s+democratic?|national|pirate|reform|left|workers'?|people'?s"
            r"|social\s+democratic|christian\s+democratic|free\s+democratic|independence"
            r"|freedom|progressive|alternative\s+for\s+germany)\s+party\b"
            r"|\bmy\s+political\s+(?:views|leanings?|affiliation|beliefs|party|opinions|stance"
            r"|orientation)\b|\bi\s+am\s+politically\s+\w+"
            r"|\bi\s+lean\s+(?:left|right|conservative|liberal|democrat|republican)" + _CLAUSE_END
        ),
        "political opinion",
    ),
    (
        re.compile(
            r"\bi\s+(?:am|was|have\s+been)\s+(?:a\s+|an\s+)?(?:(?:active|proud|paid-up)\s+)?"
            r"(?:union\s+(?:member|rep(?:resentative)?|steward|organi[sz]er)|shop\s+steward"
            r"|unioni[sz]ed|member\s+of\s+(?:the|a|my)\s+(?:\w+\s+){0,3}(?<!european\s)"
            r"(?<!student\s)(?<!students\s)(?<!students'\s)(?<!credit\s)(?<!postal\s)"
            r"(?<!rugby\s)union\b)"
            r"|\bi\s+(?:\w+\s+)?(?:joined|belong\s+to)\s+(?:the\s+|a\s+|my\s+)?(?:(?:trade|labou?r"
            r"|teachers'?|nurses'?|workers'?|local)\s+)+union\b"
            r"|\bi\s+(?:\w+\s+)?(?:joined|am\s+in|am\s+a\s+member\s+of|belong\s+to)\s+(?:the\s+)?"
            r"(?:teamsters|unison|unite\s+the\s+union|gmb|ver\.di|ig\s+metall|afl-cio|seiu|uaw"
            r"|rmt|cwu|unifor|the\s+nea|the\s+aft)\b|\bmy\s+(?:trade\s+)?union\s+(?:rep|dues"
            r"|membership|steward|card)\b"
        ),
        "trade-union membership",
    ),
    (re.compile(_BE + _ETHNICITY), "racial or ethnic origin"),
    (
        re.compile(
            r"\bmy\s+(?:ethnicity|race|ethnic\s+(?:background|origin|group|identity)|racial"
            r"\s+(?:background|identity))\b|\bi\s+am\s+of\s+(?:\w+\s+){1,2}(?:descent|heritage"
            r"|ancestry|ethnicity)\b|\bas\s+an?\s+(?:black|latina|latino|hispanic|asian|arab"
            r"|indigenous|native\s+american)\s+(?:woman|man|person)\b"
        ),
        "racial or ethnic origin",
    ),
    (
        re.compile(
            r"\bi\s+(?:have|had|got)\s+(?:a\s+)?(?:criminal|police)\s+record\b(?!\s+check)"
            r"|\bi\s+(?:\w+\s+)?(?:have|had|got)\s+(?:a\s+)?(?:prior\s+)?(?:felony|misdemeanou?r"
            r"|conviction(?!\s+that)|dui|dwi)\b|\bi\s+am\s+(?:an?\s+)?(?:convicted\s+|registered\s+)?(?:felon"
            r"|ex-con|ex-offender|sex\s+offender)\b|\bi\s+(?:was|got|have\s+been|had\s+been|am)"
            r"\s+(?:\w+\s+)?(?:convicted|arrested|incarcerated|imprisoned|jailed|sentenced|indicted"
            r"|on\s+parole|out\s+on\s+bail|charged\s+with\s+(?:a\s+)?(?:crime|felony|misdemeanou?r"
            r"|assault|theft|fraud|dui|dwi|drunk|possession|murder|manslaughter|battery|burglary"
            r"|robbery|shoplifting|vandalism|trespass\w*|drug\w*))\b"
            r"|\bi\s+(?:was|have\s+been|had\s+been|am)\s+(?:\w+\s+)?in\s+(?:prison|jail)\b"
            r"|\bi\s+(?:\w+\s+)?(?:served|did)\s+(?:time|\w+\s+(?:years?|months?)\s+in\s+(?:prison"
            r"|jail))\b|\bi\s+(?:went|was\s+sent)\s+to\s+(?:prison|jail)\b"
            r"|\bi\s+did\s+(?:\w+\s+){1,2}(?:years?|months?)\s+(?:for|in)\b(?!\s+(?:a\s+)?row)"
            r"|\bi\s+spent\s+(?:\w+\s+)"
            r"{0,3}in\s+(?:prison|jail)\b|\bmy\s+(?:criminal\s+record|conviction|probation\s+officer"
            r"|parole\s+officer|prison\s+sentence|rap\s+sheet|arrest\s+record)\b"
        ),
        "criminal record",
    ),
    (
        re.compile(
            r"\bmy\s+(?:dna(?:\s+test)?|genome|genetic\s+(?:data|test|testing|results?|profile"
            r"|markers?|makeup)|23andme|ancestry\s?dna)(?:\s+(?:results?|data|report))?\s+"
            r"(?:shows?|showed|says|said|revealed|reveals|indicates?|is|are|came\s+back|results?)\b"
            r"|\bi\s+(?:\w+\s+)?(?:carry|have|tested\s+positive\s+for|am\s+a\s+carrier\s+(?:of|for))"
            r"\s+(?:the\s+|a\s+)?(?:brca[12]?|apoe\s?-?e?4|mthfr|lynch\s+syndrome|factor\s+v\s+leiden"
            r"|tay-sachs)(?:\s+(?:gene|mutation|variant|allele))?\b|\bi\s+am\s+a\s+carrier\s+(?:of"
            r"|for)\b|\bmy\s+(?:biometric\s+(?:data|template|profile)|fingerprint\s+(?:data|template"
            r"|hash)|face\s?print|voice\s?print|iris\s+scan|retina\s+scan|facial\s+(?:geometry"
            r"|template))\b"
        ),
        "genetic or biometric data",
    ),
)


def detect_sensitive_category(p: Prepared) -> Finding | None:
    for pattern, what in _SENSITIVE_RULES:
        if pattern.search(p.sem):
            return Finding("sensitive_category", f"a personal statement about {what}")
    if sensitive_disclosure(p.lower):
        return Finding(
            "sensitive_category",
            "a personal statement about orientation, belief or affiliation (in another language)",
        )
    other = politics_record_or_origin(p.lower)
    if other is not None:
        return Finding(
            "sensitive_category", f"a personal statement about {other} (in another language)"
        )
    return None


# ---------------------------------------------------------------------------------------------
# Inferred sensitive traits
# ---------------------------------------------------------------------------------------------

_SENTENCES: Final = re.compile(r"(?<=[.!?;])\s+|\n")
_TRAIT: Final = re.compile(
    r"\b(?:"
    + _CONDITION
    + r"|"
    + _HEALTH_ADJ
    + r"|"
    + _ORIENTATION
    + r"|"
    + _RELIGION
    + r"|"
    + _POLITICS
    + r"|"
    + _ETHNICITY
    + r"|"
    + _MEDICATION
    + r"|mental\s+health\s+(?:issues|problems|struggles)|criminal\s+record|suicid\w+)\b"
    + _TOPIC_AFTER
)
_HEDGE: Final = re.compile(
    r"\b(?:seems?|seemingly|appears?|apparently|looks?|sounds?|probably|likely|possibly"
    r"|presumably|perhaps|maybe|might|may|could|must|suspected|suspect|thought|believed|assumed"
    r"|inferred|infer|guess|signs?\s+of|indicat\w*|suggest\w*|consistent\s+with|implies"
    r"|hints?\s+(?:at|that)|chances\s+are|i\s+(?:bet|think|believe|reckon))\b"
)
_INFER_SUBJECT: Final = re.compile(
    r"\b(?:user|user's|customer|client|they|them|their|he|she|him|her|you|your|this\s+person"
    r"|the\s+person|individual)\b"
)
# Words between the hedge and the trait that show the trait is a topic of interest, not a trait.
_TOPIC_BETWEEN: Final = re.compile(
    r"\b(?:about|regarding|reading|researching|research|studying|interested|interest|writing"
    r"|article|articles|news|book|books|course|learn|learning|topics?|content|posts?|videos?"
    r"|discussing|asked|asking|questions?|help\s+with|work\s+on|works\s+on|working\s+on|like|likes"
    r"|enjoy|enjoys|fan|prefers?)\b"
)
_FIRST_PERSON: Final = re.compile(r"\b(?:i|me|my|we|us|our)\b")


def detect_inferred_trait(p: Prepared) -> Finding | None:
    if inferred_trait(p.lower):
        return Finding(
            "inferred_sensitive_trait",
            "an inference about a person's health or other sensitive trait",
        )
    for sentence in _SENTENCES.split(p.sem):
        if not _HEDGE.search(sentence):
            continue  # cheap pre-check: most sentences hedge nothing, and _TRAIT is large
        for trait in _TRAIT.finditer(sentence):
            hedges = list(_HEDGE.finditer(sentence, 0, trait.start()))
            if not hedges:
                continue
            between = sentence[hedges[-1].end() : trait.start()]
            if len(between.split()) > 6 or _TOPIC_BETWEEN.search(between):
                continue
            head = sentence[: trait.start()]
            about_someone = _INFER_SUBJECT.search(head) is not None
            # A bare inference ("likely has ADHD", "probably gay") starts with its hedge; a
            # hedged statement about oneself ("I think I might have ADHD") is a disclosure and
            # is left to the health and category detectors.
            bare = hedges[0].start() <= 12 and not _FIRST_PERSON.search(head)
            if about_someone or bare:
                return Finding(
                    "inferred_sensitive_trait",
                    "an inference about a person's health or other sensitive trait",
                )
    return None
