"""Token counters: tiktoken exact (from the packaged files) with OpenAI framing, an estimate."""

from __future__ import annotations

import base64
import hashlib
import os
import random
import string
import subprocess
import sys
import uuid
from importlib import resources
from pathlib import Path

import pytest
import tiktoken
import tiktoken_ext.openai_public

from convmem.content.tokens import (
    REPLY_PRIMING,
    TIKTOKEN_ENCODINGS,
    TOKENS_PER_MESSAGE,
    EstimateCounter,
    batch_counter,
    get_counter,
    message_tokens,
    tiktoken_encoding,
)

TIKTOKEN_URL = "https://openaipublic.blob.core.windows.net/encodings/{name}.tiktoken"

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


@pytest.fixture(scope="module")
def official(tmp_path_factory: pytest.TempPathFactory) -> dict[str, tiktoken.Encoding]:
    """tiktoken's own encodings, built by its own constructors from a cache folder holding the
    packaged files under tiktoken's cache names (sha1 of the URL); tiktoken checks their sha256."""
    cache = tmp_path_factory.mktemp("tiktoken-cache")
    packaged = resources.files("convmem.content") / "tokenizers"
    encodings = {}
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("TIKTOKEN_CACHE_DIR", str(cache))
        for name in ("o200k_base", "cl100k_base"):
            key = hashlib.sha1(TIKTOKEN_URL.format(name=name).encode()).hexdigest()
            (cache / key).write_bytes((packaged / f"{name}.tiktoken").read_bytes())
            spec = tiktoken_ext.openai_public.ENCODING_CONSTRUCTORS[name]()
            encodings[name] = tiktoken.Encoding(**spec)
    return encodings


def test_the_packaged_encodings_are_tiktokens_own(official: dict[str, tiktoken.Encoding]) -> None:
    for name, encoding in official.items():
        ours = tiktoken_encoding(name)
        assert ours._pat_str == encoding._pat_str
        assert ours._special_tokens == encoding._special_tokens
        assert ours._mergeable_ranks == encoding._mergeable_ranks
        assert ours.n_vocab == encoding.n_vocab


def test_tiktoken_counters_match_tiktoken_and_add_the_chat_framing(
    official: dict[str, tiktoken.Encoding],
) -> None:
    for name in ("o200k_base", "cl100k_base"):
        counter = get_counter(name)
        assert counter.name == name
        encoding = official[name]
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


def test_counting_is_exact_with_no_network_and_no_tiktoken_cache(tmp_path: Path) -> None:
    # an empty cache folder and a dead proxy: any download attempt would fail or warn
    env = {k: v for k, v in os.environ.items() if k != "TIKTOKEN_CACHE_DIR"}
    env.update(
        TIKTOKEN_CACHE_DIR=str(tmp_path),
        HTTPS_PROXY="http://127.0.0.1:9",
        HTTP_PROXY="http://127.0.0.1:9",
    )
    code = (
        "from convmem.content.tokens import get_counter\n"
        "for name in ('o200k_base', 'cl100k_base'):\n"
        "    counter = get_counter(name)\n"
        "    print(counter.name, counter.count('What seat do I like?'))\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", code],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    assert result.stdout.split("\n")[:2] == ["o200k_base 6", "cl100k_base 6"]
    assert result.stderr == ""
    assert list(tmp_path.iterdir()) == []  # nothing fetched, nothing cached


@pytest.mark.parametrize("name", TIKTOKEN_ENCODINGS)
def test_special_token_text_is_counted_as_plain_text(name: str) -> None:
    # a message may quote "<|endoftext|>": it costs what its characters cost, never one token
    encoding = tiktoken_encoding(name)
    for text in ["<|endoftext|>", "a <|endofprompt|> b <|fim_prefix|>", "plain text", "Ünïcödé 🎉"]:
        assert get_counter(name).count(text) == len(encoding.encode(text, disallowed_special=()))
    assert get_counter(name).count("<|endoftext|>") > 1


@pytest.mark.parametrize("name", [*TIKTOKEN_ENCODINGS, "estimate"])
def test_a_batch_counter_counts_what_the_counter_counts(name: str) -> None:
    """What an import counts with remembers short texts and the estimate's pieces: every text,
    first seen or seen again, long pieces past what it keeps and all, counts the same."""
    plain, batch = get_counter(name), batch_counter(get_counter(name))
    assert batch.name == plain.name
    words = [w for sample in SAMPLES for w in sample.split()]
    texts = [*SAMPLES, *words, "", "user", "assistant", "x" * 30, "日本" * 40, *SAMPLES, *words]
    assert [batch.count(t) for t in texts] == [plain.count(t) for t in texts]
    role = message_tokens(plain, "tool", "42 EUR", tool_call_id="call-1")
    assert [message_tokens(batch, "tool", "42 EUR", tool_call_id="call-1")] * 2 == [role, role]
