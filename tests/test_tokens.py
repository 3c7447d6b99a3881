"""Token counters: tiktoken exact with OpenAI framing, a conservative estimate, the fallback."""

from __future__ import annotations

import base64
import os
import random
import string
import subprocess
import sys
import uuid
from pathlib import Path

import tiktoken

from convmem.tokens import (
    REPLY_PRIMING,
    TOKENS_PER_MESSAGE,
    EstimateCounter,
    get_counter,
    message_tokens,
)

_rng = random.Random(7)
SAMPLES = [
    "Remember that I prefer aisle seats on long flights, please. " * 5,
    "def fib(n):\n    return n if n < 2 else fib(n - 1) + fib(n - 2)\n",
    Path(__file__).read_text()[:3000],
    '{"order": 12345, "items": [{"sku": "AB-12", "qty": 3, "price": 19.99}], "ok": true}' * 5,
    "Привет, как дела? Это тест на русском языке, чтобы посчитать токены правильно." * 3,
    "Ελληνικά κείμενα για δοκιμή της μέτρησης των λέξεων και των συμβόλων." * 3,
    "هذا نص باللغة العربية لاختبار عدد الرموز في النموذج." * 3,
    "日本語のテキストを数えます。東京タワーに行きました。中文文本也是需要计算的。" * 3,
    "यह हिंदी में एक परीक्षण वाक्य है जो टोकन गिनती के लिए है।" * 3,
    "party 🎉🎉 time 🚀✨ ok 👍🏽 " * 5,
    "Größe, naïve café, Straßenbahnhaltestelle, Überraschung, Fußgängerübergänge." * 3,
    base64.b64encode(_rng.randbytes(300)).decode(),
    _rng.randbytes(200).hex(),
    " ".join(str(uuid.UUID(int=_rng.getrandbits(128))) for _ in range(20)),
    " ".join(str(_rng.randint(0, 10**9)) for _ in range(100)),
    "https://example.com/path/to/resource?query=1&other=two#frag " * 5,
    "".join(
        _rng.choice(string.ascii_letters + string.digits + string.punctuation) for _ in range(500)
    ),
    "a\n\n\n   b\t\tc      d\n" * 20,
]


def test_tiktoken_counters_match_tiktoken_and_add_the_chat_framing() -> None:
    for name in ("o200k_base", "cl100k_base"):
        counter = get_counter(name)
        assert counter.name == name
        encoding = tiktoken.get_encoding(name)
        for sample in SAMPLES:
            assert counter.count(sample) == len(encoding.encode(sample))
            framed = message_tokens(counter, "user", sample)
            assert framed == TOKENS_PER_MESSAGE + 1 + len(encoding.encode(sample))


def test_the_framing_matches_openais_published_example() -> None:
    # OpenAI cookbook "How to count tokens": this 6-message example is 129 prompt tokens for
    # gpt-4o-era models with o200k_base... we check the structure: 3 per message + 3 priming.
    counter = get_counter("o200k_base")
    messages = [("system", "You are a helpful assistant."), ("user", "Hello!")]
    total = REPLY_PRIMING + sum(message_tokens(counter, r, c) for r, c in messages)
    assert total == 3 + (3 + 1 + 6) + (3 + 1 + 2)


def test_the_estimate_never_undercounts_tiktoken_on_realistic_text() -> None:
    estimate = EstimateCounter()
    for name in ("o200k_base", "cl100k_base"):
        counter = get_counter(name)
        for sample in SAMPLES:
            assert estimate.count(sample) >= counter.count(sample)


def test_unavailable_tiktoken_files_fall_back_to_the_estimate(tmp_path: Path) -> None:
    env = dict(
        os.environ,
        TIKTOKEN_CACHE_DIR=str(tmp_path),
        HTTPS_PROXY="http://127.0.0.1:9",
        HTTP_PROXY="http://127.0.0.1:9",
    )
    code = "from convmem.tokens import get_counter; print(get_counter('o200k_base').name)"
    result = subprocess.run(
        [sys.executable, "-c", code],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    assert result.stdout.strip() == "estimate"
