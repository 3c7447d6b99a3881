"""Memory requests in Chinese, Japanese and Korean, read by their heads (no model).

These scripts put no space between words, so the word-boundary grammar of
:mod:`convmem.memory.intent` cannot cut them. A request here is a sentence that is exactly

* ``HEAD [separator] CLAUSE`` — the head a remember or forget imperative at the sentence's start
  ("请记住", "记住", "覚えておいて", "기억해 줘", "忘掉", "忘れて", "잊어 줘"), after at most a
  courtesy opener ("对了，", "あと、", "그리고"), then an optional "，,、：:"; or
* ``CLAUSE [particle] HEAD`` — in Japanese and Korean, whose verbs come last, the clause and its
  quoting particle ("…と覚えておいて", "…는 걸 기억해 줘", "…を忘れて").

The clause must open with a first-person word ("我", "私", "僕", "나는", "제가"), name nobody
addressed ("你", "あなた", "너"), be no question and no plan ("我要…", "…つもり", "…겠"). What is
not read this way is no request: nothing is saved or forgotten.

Only grammar lives here: no sentence of any corpus is listed.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal

Kind = Literal["remember", "forget"]

_CJK = re.compile(r"[\u3040-\u30ff\u3400-\u9fff\uf900-\ufaff\uac00-\ud7af\u1100-\u11ff]")
_SEPARATOR = r"[，,、：:\s]*"
_STOPS = "。．.!！?？…～~ "


@dataclass(frozen=True)
class _Script:
    code: str
    opener: re.Pattern[str]
    remember_head: re.Pattern[str]  # at the start, the clause after it
    forget_head: re.Pattern[str]
    remember_tail: re.Pattern[str] | None  # at the end, the clause before it (verb-final)
    forget_tail: re.Pattern[str] | None
    first_person: re.Pattern[str]  # matched where the clause opens
    second_person: re.Pattern[str]  # searched anywhere in the clause
    plan: re.Pattern[str]  # searched: a plan or a wish, not a standing fact
    question: re.Pattern[str]  # matched where the clause ends
    past_forgetting: re.Pattern[str] | None  # "忘记…了": the speaker forgot, no request
    stop: str


def _head(words: str) -> re.Pattern[str]:
    return re.compile(rf"^(?:{words}){_SEPARATOR}", re.IGNORECASE)


def _tail(particles: str, words: str) -> re.Pattern[str]:
    return re.compile(rf"^(?P<clause>.+?)\s*(?:{particles})?\s*(?:{words})[{_STOPS}]*$")


_CHINESE = _Script(
    code="zh",
    opener=re.compile(r"^(?:好的?|对了|對了|另外|还有|還有|嗯|哦|那么|那麼)[，,、\s]*"),
    remember_head=_head(
        r"(?:请你?|請你?|麻烦你|麻煩你|帮我|幫我)?(?:一定要)?(?:记住|記住|记得|記得|别忘了|別忘了|"
        r"不要忘记|不要忘記|别忘记|別忘記)(?:哦|喔|啊)?"
    ),
    forget_head=_head(r"(?:请你?|請你?)?(?:忘掉|忘记|忘記|删掉|刪掉|删除|刪除)(?:关于|關於)?"),
    remember_tail=None,
    forget_tail=None,
    first_person=re.compile(r"^我(?![们們])"),
    second_person=re.compile(r"[你您妳]"),
    plan=re.compile(r"^我(?:要|将|將|打算|想|会|會|准备|準備|明天|后天|後天)"),
    question=re.compile(r"[吗嗎呢吧?？]$"),
    past_forgetting=re.compile(r"了$"),
    stop="。",
)

_JA_REMEMBER = r"覚えておいて|覚えといて|覚えて|忘れないで|記憶しておいて|記憶して|メモして"
_JA_FORGET = r"忘れて|消して"
_JA_POLITE = r"(?:ください|下さい|くれ|ね|よ|ほしい|欲しい)*"
_JA_PARTICLES = r"ということを|ということ|ってことを|ってこと|ことを|のを|と|って|を"

_JAPANESE = _Script(
    code="ja",
    opener=re.compile(r"^(?:あと|それと|ねえ|ところで|あ|そうだ)[、,，\s]*"),
    remember_head=_head(rf"(?:{_JA_REMEMBER}){_JA_POLITE}"),
    forget_head=_head(rf"(?:{_JA_FORGET}){_JA_POLITE}"),
    remember_tail=_tail(_JA_PARTICLES, rf"(?:{_JA_REMEMBER}){_JA_POLITE}"),
    forget_tail=_tail(_JA_PARTICLES, rf"(?:{_JA_FORGET}){_JA_POLITE}"),
    first_person=re.compile(r"^(?:私|わたし|僕|ぼく|俺|おれ|あたし)"),
    second_person=re.compile(r"あなた|君|きみ|お前|おまえ|あんた"),
    plan=re.compile(r"つもり|予定|たい(?:です)?$"),
    question=re.compile(r"(?:[か?？]|かな|の\?)$"),
    past_forgetting=None,
    stop="。",
)

_KO_REMEMBER = (
    r"(?:꼭\s*)?(?:기억해\s*(?:줘|주세요|둬|두세요|줄래|주실래요)|기억해|잊지\s*마(?:세요|라)?|"
    r"명심해(?:\s*줘)?)"
)
_KO_FORGET = r"잊어\s*(?:줘|주세요|버려(?:\s*줘)?)|잊어버려(?:\s*줘)?|지워\s*(?:줘|주세요)"

_KOREAN = _Script(
    code="ko",
    opener=re.compile(r"^(?:그리고|아|참|저기요)[,，\s]+"),
    remember_head=re.compile(rf"^(?:{_KO_REMEMBER})(?:[，,:：]\s*|\s+)"),
    forget_head=re.compile(rf"^(?:{_KO_FORGET})(?:[，,:：]\s*|\s+)"),
    remember_tail=_tail(r"는\s*(?:걸|것을|거|사실을)", _KO_REMEMBER),
    forget_tail=_tail(r"는\s*(?:걸|것을|거|사실을)|을|를", _KO_FORGET),
    first_person=re.compile(
        r"^(?:(?:나|저)(?:는|도|를|의|만|한테)?|난|전|내가|제가|내|제|날)(?=[\s,，]|$)"
    ),
    second_person=re.compile(
        r"(?<!\w)(?:너|너는|너도|너를|너의|너한테|네가|니가|넌|널|당신|당신은|당신이|당신을|"
        r"당신의|당신도)(?!\w)"
    ),
    plan=re.compile(r"(?<!\S)거(?:야|예요|에요)|겠"),
    question=re.compile(r"(?:[?？]|니|냐|까)$"),
    past_forgetting=None,
    stop=".",
)

_SCRIPTS = (_CHINESE, _JAPANESE, _KOREAN)


def _clause_text(script: _Script, clause: str) -> str | None:
    """The clause as a statement about the speaker, or None when it is not one."""
    clause = clause.strip().strip("「」『』\"'")
    bare = clause.rstrip(_STOPS)
    if not bare or script.question.search(clause.rstrip(" 。．.!！")):
        return None
    if not script.first_person.match(bare) or script.second_person.search(bare):
        return None
    if script.plan.search(bare):
        return None
    return bare + script.stop


def cjk_request(sentence: str) -> tuple[Kind, str] | None:
    """A remember or forget request in Chinese, Japanese or Korean: its kind and the clause it
    names, or None."""
    if not _CJK.search(sentence):
        return None
    for script in _SCRIPTS:
        said = script.opener.sub("", sentence.strip(), count=1)
        readings: tuple[tuple[Kind, re.Pattern[str], re.Pattern[str] | None], ...] = (
            ("remember", script.remember_head, script.remember_tail),
            ("forget", script.forget_head, script.forget_tail),
        )
        for kind, head, tail in readings:
            found = head.match(said)
            clause = said[found.end() :] if found else None
            if clause is None and tail is not None:
                at_end = tail.match(said)
                clause = at_end.group("clause") if at_end else None
            if clause is None:
                continue
            if (
                kind == "forget"
                and script.past_forgetting is not None
                and script.past_forgetting.search(clause.rstrip(_STOPS))
            ):
                return None
            text = _clause_text(script, clause)
            return (kind, text) if text is not None else None
    return None
