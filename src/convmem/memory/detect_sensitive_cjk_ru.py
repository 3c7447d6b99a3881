"""Sensitive disclosures in Chinese, Japanese, Korean and Russian.

The rule of the other languages (``detect_sensitive``, ``detect_sensitive_i18n``): a *subject* (I,
a person close to me) bound by a verb to a *sensitive term* — a disclosure ("我得了糖尿病",
"у меня диабет") — while a topic ("我在癌症研究所工作", "я изучаю диабет") passes. In Chinese and
Japanese there are no spaces, so the subject, the verb and the term are matched as substrings
with at most a few characters between them (an adverb, "轻度", "一点").

The policy reads normalised, lower-cased text (``normalize.py``), where Cyrillic letters that look
like Latin ones are Latin; the Russian patterns are compiled to read every form a letter may take
there (``any_case_pattern``).
"""

from __future__ import annotations

import re
from typing import Final

from convmem.memory.normalize import any_case_pattern

# ------------------------------------------------------------------------------ Chinese (简/繁)
_ZH_WHO: Final = (
    r"我(?:的)?(?:妈妈|媽媽|妈|媽|母亲|母親|爸爸|爸|父亲|父親|老公|老婆|丈夫|妻子|太太|先生|儿子|兒子"
    r"|女儿|女兒|孩子|男朋友|女朋友|男友|女友|哥哥|哥|姐姐|姐|弟弟|弟|妹妹|妹|奶奶|爷爷|爺爺|外婆|外公"
    r"|伴侣|伴侶)?"
)
_ZH_COND: Final = (
    r"(?:糖尿病|\w{0,3}癌|癌症|抑郁症|憂鬱症|抑郁|焦虑症|焦慮症|艾滋病|愛滋病|hiv|哮喘|高血压|高血壓"
    r"|心脏病|心臟病|癫痫|癲癇|精神分裂|双相|雙相|躁郁症|躁鬱症|自闭症|自閉症|多动症|過動症|adhd"
    r"|老年痴呆|阿尔茨海默|阿茲海默|帕金森|白血病|肝炎|乙肝|肿瘤|腫瘤|厌食症|厭食症|暴食症|强迫症"
    r"|強迫症|创伤后应激|創傷後壓力|中风|中風|肾病|腎病|红斑狼疮|紅斑狼瘡|不孕)"
)
_ZH_HAVE: Final = (
    r"(?:有|得了|得过|患有|患了|患上|被诊断(?:出|为)?|被診斷(?:出|為)?|确诊(?:为|了)?|確診)"
)
_ZH_GAP: Final = r"[^，,。.！!？?；;]{0,3}?"
_ZH_HEALTH: Final = re.compile(
    _ZH_WHO + r"(?:也|还|還|一直|已经|已經|最近|从小|從小|去年|今年|刚|剛)?" + _ZH_HAVE + _ZH_GAP
    + _ZH_COND
    + r"|" + _ZH_WHO + r"(?:怀孕|懷孕)(?:了|中|\d+周)"
    + r"|我对" + _ZH_GAP + r"\w{1,6}过敏|我對" + _ZH_GAP + r"\w{1,6}過敏|我(?:有|是)\w{0,4}过敏"
    + r"|我(?:在)?(?:吃|服用)(?:抗抑郁|抗抑鬱|胰岛素|胰島素|抗精神病)"
    + r"|我(?:在)?(?:看|接受)(?:心理医生|心理醫生|精神科|心理治疗|心理治療|化疗|化療)"
)  # fmt: skip
_ZH_SENSITIVE: Final = re.compile(
    _ZH_WHO + r"是" + _ZH_GAP
    + r"(?:同性恋|同性戀|双性恋|雙性戀|跨性别|跨性別|gay|拉拉|女同|男同|酷儿|酷兒|无性恋|無性戀"
    r"|穆斯林|基督徒|佛教徒|天主教徒|犹太教徒|猶太教徒|印度教徒|无神论者|無神論者|共产党员|共產黨員)"
    + r"|我(?:信|信仰|信奉)(?:伊斯兰教|伊斯蘭教|基督教|佛教|天主教|犹太教|猶太教|印度教|道教)"
    + r"|我(?:是|加入了)\w{0,6}(?:党员|黨員|工会会员|工會會員)"
    + r"|我(?:一直|总是|總是)?(?:投票给|投票給|投给|投給|支持)了?\w{0,8}(?:党|黨)"
)  # fmt: skip

# ---------------------------------------------------------------------------------- Japanese
_JA_WHO: Final = (
    r"(?:私|わたし|僕|ぼく|俺|おれ|母|父|夫|妻|主人|息子|娘|彼氏|彼女|兄|姉|弟|妹|祖母|祖父)"
    r"(?:は|が|も)"
)
_JA_COND: Final = (
    r"(?:糖尿病|\w{0,3}がん|\w{0,3}癌|うつ病|鬱病|不安障害|パニック障害|エイズ|hiv|喘息|ぜんそく|高血圧"
    r"|心臓病|てんかん|統合失調症|双極性障害|自閉症|adhd|発達障害|認知症|アルツハイマー|パーキンソン"
    r"|白血病|肝炎|腫瘍|摂食障害|強迫性障害|ptsd|脳卒中|腎臓病|不妊)"
)
_JA_HEALTH: Final = re.compile(
    _JA_WHO + r"[^、。！？]{0,4}?" + _JA_COND
    + r"(?:です|だ|を患って|にかかって|になった|になりました|と診断|があります"
    r"|がある|で(?:す|通院))"
    + r"|" + _JA_WHO + r"[^、。！？]{0,4}?妊娠(?:中|して|しています|しました)"
    + r"|(?:私|僕|俺)(?:は)?\w{1,8}(?:に|の)?アレルギー(?:があ|持ち|です)"
    + r"|(?:私|僕|俺)(?:は)?(?:抗うつ薬|インスリン|抗精神病薬)を(?:飲|使)"
)  # fmt: skip
_JA_SENSITIVE: Final = re.compile(
    _JA_WHO + r"[^、。！？]{0,3}?"
    + r"(?:ゲイ|レズビアン|バイセクシュアル|バイセクシャル|トランスジェンダー|同性愛者|ムスリム"
    r"|イスラム教徒|キリスト教徒|クリスチャン|仏教徒|ユダヤ教徒|ヒンドゥー教徒|無神論者)(?:です|だ)"
    + r"|(?:私|僕|俺)(?:は)?\w{0,6}(?:党員|組合員)です"
    + r"|(?:私|僕|俺)(?:は)?(?:いつも|毎回|前回)?\w{1,8}党(?:に投票|を支持)"
)  # fmt: skip

# ------------------------------------------------------------------------------------ Korean
_KO_WHO: Final = (
    r"(?:저는|저도|제가|나는|나도|내가|저희\s*|우리\s*)(?:\s*(?:엄마|어머니|아빠|아버지|남편|아내|아들|딸"
    r"|남자친구|여자친구|형|오빠|언니|누나|동생|할머니|할아버지)(?:는|가|도|께서))?"
)
_KO_COND: Final = (
    r"(?:당뇨병?|\w{0,3}암|우울증|불안\s*장애|공황\s*장애|에이즈|hiv|천식|고혈압|심장병|간질|뇌전증"
    r"|조현병|양극성\s*장애|조울증|자폐|adhd|치매|알츠하이머|파킨슨|백혈병|간염|종양|섭식\s*장애"
    r"|강박증|ptsd|뇌졸중|신장병|불임)"
)
_KO_HEALTH: Final = re.compile(
    _KO_WHO + r"\s*(?:\S+\s+){0,2}?" + _KO_COND
    + r"(?:이|가|을|를|에)?\s*(?:있어|있습니다|있다|있는|걸렸|걸려|진단|앓고|앓아|투병)"
    + r"|" + _KO_WHO + r"\s*(?:\S+\s+){0,1}?" + _KO_COND + r"\s*환자"
    + r"|" + _KO_WHO + r"\s*(?:\S+\s+){0,1}?임신(?:했|중|을\s*했)"
    + r"|" + _KO_WHO + r"\s*\S{1,8}\s*알레르기가\s*(?:있|심)"
)  # fmt: skip
_KO_SENSITIVE: Final = re.compile(
    _KO_WHO + r"\s*(?:\S+\s+){0,1}?"
    + r"(?:동성애자|게이|레즈비언|양성애자|트랜스젠더|무슬림|이슬람교도|기독교인|기독교\s*신자"
    r"|불교\s*신자|불교도|천주교\s*신자|가톨릭\s*신자|유대교\s*신자|무신론자)"
    + r"(?:이에요|예요|입니다|이다|야|이야)"
    # a vote or a party supported: "나는 민주당을 지지해요", "국민의힘을 찍었어요"
    + r"|" + _KO_WHO + r"\s*(?:\S+\s+){0,1}?\S{1,10}당(?:을|를)\s*(?:지지|찍었|찍어|뽑았|투표)"
)  # fmt: skip

# ----------------------------------------------------------------------------------- Russian
# stems, so that every case reads: "у моей мамы", "у моего отца", "у моей сестры"
_RU_CLOSE: Final = (
    r"(?:мам|мат[ье]р|пап|от[е]?ц|муж|жен|сын|доч|брат|сестр|бабушк|дедушк|пар[е]?н|девушк"
    r"|ребён|ребен|партн[её]р)"
)
# "у меня (есть) диабет": the owner; "я болею", "моя мама страдает": the sufferer
_RU_HAS: Final = r"(?:у\s+(?:меня|нас|мо(?:ей|его|их)\s+" + _RU_CLOSE + r"\w*))"
_RU_WHO: Final = r"(?:я|мо[йяи]\s+" + _RU_CLOSE + r"\w*)"
_RU_ADJ: Final = r"(?:\w+(?:ый|ий|ой|ая|яя|ое|ее|ые|ие|ого|ей)\s+)?"
_RU_COND: Final = (
    r"(?:диабет\w*|рак\w*|депресси\w*|тревожн\w+\s+расстройств\w*|вич|спид|астм\w*|гипертони\w*"
    r"|эпилепси\w*|шизофрени\w*|биполярн\w*|аутизм\w*|сдвг|деменци\w*|альцгеймер\w*|паркинсон\w*"
    r"|лейкоз\w*|гепатит\w*|опухол\w*|анорекси\w*|булими\w*|птср|инсульт\w*|бесплоди\w*)"
)
_RU_HEALTH: Final = re.compile(
    any_case_pattern(
        r"\b" + _RU_HAS + r"\s+(?:есть\s+|был\w*\s+|нашли\s+|диагностировали\s+|уже\s+|тоже\s+)?"
        + _RU_ADJ + _RU_COND + r"\b"
        + r"|\b" + _RU_WHO + r"\s+(?:болеет|болею|страда\w+|лечится|лечусь)\s+(?:от\s+)?"
        + _RU_ADJ + _RU_COND
        + r"|\bмне\s+поставили\s+диагноз|\bя\s+беременна\b|\bу\s+меня\s+аллергия\s+на\b"
        + r"|\bя\s+(?:вич-?положительн\w*|вич-?инфицирован\w*|вич-?позитивн\w*)"
        + r"|\bя\s+(?:принимаю|пью)\s+(?:антидепрессанты|инсулин|нейролептики)"
    )
)  # fmt: skip
_RU_SENSITIVE: Final = re.compile(
    any_case_pattern(
        r"\b(?:я|мо[йя]\s+\w+)\s+(?:—\s+|-\s+)?(?:гей|лесбиянка|бисексуал\w*|трансгендер\w*"
        r"|гомосексуал\w*|мусульман\w*|христиан\w*|буддист\w*|иуде\w*|католи\w*|православн\w*"
        r"|атеист\w*|свидетель\s+иеговы)\b"
        + r"|\bя\s+(?:состою\s+в|член)\s+\w*\s*(?:партии|профсоюз\w*)"
        + r"|\bя\s+(?:\w+\s+)?(?:голосую|голосовал\w*|проголосовал\w*)\s+за\b"
        + r"|\bя\s+(?:—\s+|-\s+)?(?:коммунист\w*|социалист\w*|анархист\w*|националист\w*"
        r"|монархист\w*|либертарианец|фашист\w*)\b"
    )
)  # fmt: skip

_HEALTH: Final = (_ZH_HEALTH, _JA_HEALTH, _KO_HEALTH, _RU_HEALTH)
_SENSITIVE: Final = (_ZH_SENSITIVE, _JA_SENSITIVE, _KO_SENSITIVE, _RU_SENSITIVE)


def health_disclosure(sem: str) -> bool:
    """A first-person (or close person's) health statement in Chinese, Japanese, Korean or
    Russian (``sem``: the lower-cased normalised text)."""
    # every rule needs a letter of those scripts: ASCII text (most of it) is not read
    return not sem.isascii() and any(rule.search(sem) for rule in _HEALTH)


def sensitive_disclosure(sem: str) -> bool:
    """Orientation, religion or party / union membership stated in those languages."""
    return not sem.isascii() and any(rule.search(sem) for rule in _SENSITIVE)
