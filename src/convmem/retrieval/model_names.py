"""The one URL-like name that picks a model: parsed here, and only here.

The library (``convmem.open(embedder=…, reranker=…)``), the command line (``--embedder``,
``--reranker``), the configuration file and the environment all name a model the same way::

    minilm | minilm-int8 | hashing | auto | none          built-in choices
    st:/models/bge-small                                   a local sentence-transformers model
    openai:text-embedding-3-small                          OpenAI's API
    openai+http://127.0.0.1:8080/v1:bge                    any OpenAI-compatible /v1/embeddings
                                                           (Ollama, vLLM, TEI, LiteLLM …)
    azure:my-deployment                                    Azure OpenAI (AZURE_OPENAI_ENDPOINT)
    azure+https://res.openai.azure.com:my-deployment       Azure OpenAI at that endpoint
    cross-encoder:/models/ms-marco-MiniLM                  a local cross-encoder (rerankers)
    cohere:rerank-v3.5 | jina:jina-reranker-v2-base-multilingual
    cohere+http://host/v1:model | jina+http://… | tei+http://127.0.0.1:8080

Options follow a ``?`` as a query string: ``openai:text-embedding-3-small?dimensions=512``,
``…?api_key_env=MY_KEY&batch_size=32&concurrency=2&timeout=10``. A key itself never goes in a
name (names are shown and logged): ``api_key_env`` names the environment variable holding it.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Literal
from urllib.parse import parse_qsl, urlsplit, urlunsplit

from convmem.errors import InvalidConfig

Kind = Literal["embedder", "reranker"]

# what each provider accepts, per kind
_API = frozenset({"api_key_env", "timeout", "attempts", "max_chars", "name"})
_API_EMBEDDER = _API | {"dimensions", "batch_size", "concurrency", "encoding_format"}
_PROVIDERS: dict[Kind, dict[str, frozenset[str]]] = {
    "embedder": {
        "auto": frozenset(),
        "none": frozenset(),
        "minilm": frozenset(),
        "minilm-int8": frozenset(),
        "hashing": frozenset({"dimensions"}),
        "st": frozenset({"batch_size", "threads", "name"}),
        "openai": _API_EMBEDDER,
        "azure": _API_EMBEDDER | {"api_version"},
    },
    "reranker": {
        "none": frozenset(),
        "cross-encoder": frozenset({"batch_size", "max_length", "threads", "name"}),
        "cohere": _API,
        "jina": _API,
        "tei": _API,
    },
}
# built-ins named by a bare word (no model after a colon)
_BARE = frozenset({"auto", "none", "minilm", "minilm-int8", "hashing"})
# providers reached at a URL of the user's (``provider+http://…``)
_AT_URL = frozenset({"openai", "azure", "cohere", "jina", "tei"})
# providers whose model may be left out (the server serves one: TEI's /rerank)
_MODEL_OPTIONAL = frozenset({"tei"})
_SECRET_OPTIONS = frozenset({"api_key", "key", "token", "password", "secret"})


@dataclass(frozen=True)
class ModelName:
    """A parsed model name: the provider, the model, the endpoint (``provider+URL`` names) and
    the options after ``?``."""

    kind: Kind
    provider: str
    model: str | None = None
    base_url: str | None = None
    options: Mapping[str, str] = field(default_factory=dict)

    def number(self, option: str, default: float) -> float:
        """A positive number option (``timeout=2.5``), or ``default`` when absent."""
        value = self.options.get(option)
        if value is None:
            return default
        try:
            number = float(value)
        except ValueError:
            number = float("nan")
        if not number > 0 or number == float("inf"):
            raise InvalidConfig(f"{self.kind}.{option}", "must be a positive number")
        return number

    def count(self, option: str, default: int | None) -> int | None:
        """A positive whole-number option (``batch_size=32``), or ``default`` when absent."""
        value = self.options.get(option)
        if value is None:
            return default
        if not value.isdigit() or int(value) < 1:
            raise InvalidConfig(f"{self.kind}.{option}", "must be a positive whole number")
        return int(value)

    def shown(self) -> str:
        """The name as written, with any password in its URL masked: safe to print."""
        text = self.provider
        if self.base_url is not None:
            text += "+" + mask_url(self.base_url)
            if self.model is not None:
                text += ":" + self.model
        elif self.model is not None:
            text += ":" + self.model
        if self.options:
            text += "?" + "&".join(f"{k}={v}" for k, v in self.options.items())
        return text


def parse_model_name(text: object, kind: Kind) -> ModelName:
    """``text`` parsed as an embedder's or a reranker's name; ``InvalidConfig`` (naming
    ``kind``) says what is wrong."""
    if not isinstance(text, str) or not text.strip():
        raise InvalidConfig(kind, "a model name is a non-empty string, e.g. 'minilm'")
    head, _, query = text.strip().partition("?")
    options = _options(query, kind)
    providers = _PROVIDERS[kind]
    if head in _BARE:
        if head not in providers:
            raise InvalidConfig(kind, f"unknown {kind} {head!r}; {_known(kind)}")
        return _checked(ModelName(kind, head, options=options), providers)
    provider, plus, rest = head.partition("+")
    if plus and "://" in rest:
        if provider not in _AT_URL or provider not in providers:
            raise InvalidConfig(kind, f"{provider!r} is not reached at a URL; {_known(kind)}")
        url, model = _split_url(rest, kind)
        return _checked(ModelName(kind, provider, model, url, options), providers)
    provider, _, model = head.partition(":")
    if provider not in providers:
        raise InvalidConfig(kind, f"unknown {kind} {provider!r}; {_known(kind)}")
    if provider == "hashing" and model:
        if "dimensions" in options:
            raise InvalidConfig(kind, "give the hashing dimensions once")
        options = {**options, "dimensions": model}
        model = ""
    return _checked(ModelName(kind, provider, model or None, None, options), providers)


def _checked(name: ModelName, providers: Mapping[str, frozenset[str]]) -> ModelName:
    allowed = providers[name.provider]
    unknown = sorted(set(name.options) - allowed)
    if unknown:
        accepted = ", ".join(sorted(allowed)) or "none"
        raise InvalidConfig(
            name.kind, f"{name.provider} takes no option {unknown[0]!r} (options: {accepted})"
        )
    wants_model = name.provider not in _BARE and name.provider not in _MODEL_OPTIONAL
    if wants_model and not name.model:
        raise InvalidConfig(
            name.kind,
            f"{name.provider} needs a model after a colon, e.g. {_EXAMPLES[name.provider]}",
        )
    if name.provider in _BARE and name.model:
        raise InvalidConfig(name.kind, f"{name.provider} takes no model")
    return name


_EXAMPLES = {
    "st": "st:/models/bge-small",
    "openai": "openai:text-embedding-3-small or openai+http://127.0.0.1:8080/v1:bge",
    "azure": "azure:my-deployment",
    "cross-encoder": "cross-encoder:/models/ms-marco-MiniLM-L6",
    "cohere": "cohere:rerank-v3.5",
    "jina": "jina:jina-reranker-v2-base-multilingual",
}


def _known(kind: Kind) -> str:
    return "known: " + ", ".join(_PROVIDERS[kind])


def _options(query: str, kind: Kind) -> dict[str, str]:
    if not query:
        return {}
    try:
        pairs = parse_qsl(query, keep_blank_values=True, strict_parsing=True)
    except ValueError:
        raise InvalidConfig(kind, "options after '?' are key=value pairs joined by '&'") from None
    options: dict[str, str] = {}
    for key, value in pairs:
        if key.lower() in _SECRET_OPTIONS:
            # the value is never echoed: it may be the key itself
            raise InvalidConfig(
                f"{kind}.{key}",
                "a key never goes in a model name; name its environment variable: api_key_env=…",
            )
        if key in options:
            raise InvalidConfig(f"{kind}.{key}", "given twice")
        options[key] = value
    return options


def _split_url(rest: str, kind: Kind) -> tuple[str, str | None]:
    """``http://host:port/path:model`` → (the URL, the model). The model follows the first colon
    of the path; a URL without a path may end with ``:model`` where a port would be."""
    parts = urlsplit(rest)
    if parts.scheme not in ("http", "https") or not parts.netloc:
        raise InvalidConfig(kind, "the URL after '+' must be http:// or https:// with a host")
    path, colon, model = parts.path.partition(":")
    netloc = parts.netloc
    if not parts.path:
        host, colon, last = netloc.rpartition(":")
        if colon and not last.isdigit() and not last.endswith("]") and "@" not in last:
            netloc, model = host, last
        else:
            model = ""
    try:
        urlsplit(f"//{netloc}").port  # noqa: B018  (a bad port raises here)
    except ValueError:
        raise InvalidConfig(kind, "the URL's port is not a number") from None
    return urlunsplit((parts.scheme, netloc, path.rstrip("/"), "", "")), model or None


def mask_url(url: str) -> str:
    """``url`` with the password of its user part, and a ``password=`` in its query, replaced
    by ``***`` (database URLs, endpoints): safe to print."""
    parts = urlsplit(url)
    netloc, query = parts.netloc, parts.query
    if parts.password is not None:
        netloc = f"{parts.username or ''}:***@{netloc.rpartition('@')[2]}"
    if query:
        pairs = parse_qsl(query, keep_blank_values=True)
        query = "&".join(f"{k}={'***' if k.lower() in _SECRET_OPTIONS else v}" for k, v in pairs)
    return urlunsplit((parts.scheme, netloc, parts.path, query, parts.fragment))
