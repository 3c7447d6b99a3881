"""One configuration for the library, ``convmem serve``, ``convmem worker`` and ``convmem mcp``.

A TOML file (``convmem.toml``; its path from ``--config`` or ``CONVMEM_CONFIG``), environment
variables and command-line flags set the same keys; for each key the first of these that sets it
wins: **flag > environment > file > default**. ::

    database = "postgresql://convmem@db/convmem"      # CONVMEM_DB
    embedder = "openai:text-embedding-3-small"        # CONVMEM_EMBEDDER
    reranker = "cohere:rerank-v3.5"                   # CONVMEM_RERANKER

    [summarizer]                                      # the worker's model (and the service's)
    base_url = "http://127.0.0.1:11434/v1"            # CONVMEM_SUMMARIZER_BASE_URL
    model = "llama3.1"                                # CONVMEM_SUMMARIZER_MODEL
    api_key_env = "OPENAI_API_KEY"                    # CONVMEM_SUMMARIZER_API_KEY_ENV
    timeout = 60                                      # CONVMEM_SUMMARIZER_TIMEOUT

    [time_limits]                                     # seconds, or "none"
    retrieval = 1.0                                   # CONVMEM_TIME_LIMIT_RETRIEVAL
    reranker = 2.0                                    # CONVMEM_TIME_LIMIT_RERANKER

Keys never sit in the file or on the line: ``api_key_env`` (and a model name's ``api_key_env=``
option) names the variable that holds one. A bad setting is ``InvalidConfig`` naming the key and
where it came from; ``Settings.shown`` lists the effective values with passwords masked.
"""

from __future__ import annotations

import math
import os
import tomllib
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, replace
from typing import Any, TypeVar

from convmem.config import Config
from convmem.errors import InvalidConfig
from convmem.model.deadline import TIME_LIMITED_PARTS, TimeLimits
from convmem.retrieval.model_names import mask_url, parse_model_name
from convmem.retrieval.rerank import Reranker, reranker_of
from convmem.retrieval.vector import Embedder, embedder_of
from convmem.summarize.llm import LLMSummarizerConfig

CONFIG_ENV = "CONVMEM_CONFIG"
T = TypeVar("T")


def _text(value: object) -> str:
    if not isinstance(value, str) or not value.strip():
        raise ValueError("must be a non-empty string")
    return value.strip()


def _seconds(value: object) -> float:
    if isinstance(value, str):
        try:
            value = float(value)
        except ValueError:
            raise ValueError("must be a number of seconds") from None
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise ValueError("must be a number of seconds")
    if not (math.isfinite(value) and value > 0):
        raise ValueError("must be positive seconds")
    return float(value)


def _limit(value: object) -> float | None:
    if value is None or (isinstance(value, str) and value.strip().lower() in ("none", "off")):
        return None
    return _seconds(value)


def _model(kind: str) -> Callable[[object], str]:
    def check(value: object) -> str:
        text = _text(value)
        parse_model_name(text, "embedder" if kind == "embedder" else "reranker")
        return text

    return check


@dataclass(frozen=True)
class Key:
    """One setting: its dotted name (the file's table and key), its environment variable, how a
    value is read and its default."""

    name: str
    env: str
    read: Callable[[object], Any]
    default: Any
    help: str
    url: bool = False  # shown with its password masked


KEYS: tuple[Key, ...] = (
    Key(
        "database",
        "CONVMEM_DB",
        _text,
        None,
        "the database: a path, sqlite:///… or postgresql://…",
        url=True,
    ),
    Key(
        "session",
        "CONVMEM_SESSION",
        _text,
        None,
        "the session tier in front of the database: redis://… (none: without)",
        url=True,
    ),
    Key(
        "embedder",
        "CONVMEM_EMBEDDER",
        _model("embedder"),
        "none",
        "vectors for search and recall (convmem.retrieval.model_names)",
    ),
    Key(
        "reranker",
        "CONVMEM_RERANKER",
        _model("reranker"),
        "none",
        "reorders the fused best of search and recall",
    ),
    Key(
        "summarizer.base_url",
        "CONVMEM_SUMMARIZER_BASE_URL",
        _text,
        None,
        "the summarizer's OpenAI-compatible endpoint",
        url=True,
    ),
    Key(
        "summarizer.model",
        "CONVMEM_SUMMARIZER_MODEL",
        _text,
        None,
        "the summarizer's model; unset: the extractive summarizer",
    ),
    Key(
        "summarizer.api_key_env",
        "CONVMEM_SUMMARIZER_API_KEY_ENV",
        _text,
        "OPENAI_API_KEY",
        "the environment variable holding the summarizer's key",
    ),
    Key(
        "summarizer.timeout",
        "CONVMEM_SUMMARIZER_TIMEOUT",
        _seconds,
        60.0,
        "seconds per summarizer call",
    ),
    *(
        Key(
            f"time_limits.{part}",
            f"CONVMEM_TIME_LIMIT_{part.upper()}",
            _limit,
            getattr(TimeLimits(), part),
            f"seconds the {part} part of a request may take",
        )
        for part in TIME_LIMITED_PARTS
    ),
)
_BY_NAME = {key.name: key for key in KEYS}
# keys a file must not hold: the secret goes in the environment, the file names the variable
_SECRETS = {"api_key", "key", "password", "token", "secret"}


@dataclass(frozen=True)
class Settings:
    """The effective settings: each key's value and where it came from (``"flag"``,
    ``"env CONVMEM_…"``, ``"file PATH"``, ``"default"``)."""

    values: Mapping[str, Any]
    sources: Mapping[str, str]
    file: str | None = None

    def __getitem__(self, name: str) -> Any:
        return self.values[name]

    @property
    def database(self) -> str | None:
        value: str | None = self.values["database"]
        return value

    @property
    def session(self) -> str | None:
        """The session tier's Redis URL, or None (``none`` or unset: without a tier)."""
        value: str | None = self.values["session"]
        return None if value is None or value.strip().lower() == "none" else value

    def embedder(self) -> Embedder | None:
        """The embedder the settings name (loaded lazily; a local model without the extra is
        ``BackendUnavailable``)."""
        return self._built("embedder", lambda v: embedder_of(parse_model_name(v, "embedder")))

    def reranker(self) -> Reranker | None:
        """The reranker the settings name (None: ``none``)."""
        return self._built("reranker", lambda v: reranker_of(parse_model_name(v, "reranker")))

    def _built(self, name: str, build: Callable[[str], T]) -> T:
        try:
            return build(self.values[name])
        except InvalidConfig as exc:
            raise InvalidConfig(exc.key, f"{_problem(exc)} ({self.sources[name]})") from None

    def time_limits(self) -> TimeLimits:
        return TimeLimits(
            **{part: self.values[f"time_limits.{part}"] for part in TIME_LIMITED_PARTS}
        )

    def summarizer(self) -> LLMSummarizerConfig | None:
        """The model summarizer, or None (extractive) without ``summarizer.model``."""
        model, base = self.values["summarizer.model"], self.values["summarizer.base_url"]
        if model is None:
            return None
        if base is None:
            raise InvalidConfig(
                "summarizer.base_url",
                f"needed with summarizer.model ({self.sources['summarizer.model']})",
            )
        key = os.environ.get(self.values["summarizer.api_key_env"])
        return LLMSummarizerConfig(
            base_url=base, model=model, api_key=key or "not-needed",
            timeout=self.values["summarizer.timeout"],
        )  # fmt: skip

    def config(self, base: Config | None = None) -> Config:
        """``base`` (default ``Config()``) with the summarizer and the time limits set here."""
        return replace(
            base or Config(), summarizer=self.summarizer(), time_limits=self.time_limits()
        )

    def shown(self) -> Iterator[str]:
        """``key = value  # source`` lines, passwords masked and keys never present."""
        if self.file is not None:
            yield f"# file: {self.file}"
        for key in KEYS:
            value = self.values[key.name]
            if key.url and isinstance(value, str):
                value = mask_url(value)
            elif key.name in ("embedder", "reranker") and isinstance(value, str):
                value = parse_model_name(value, key.name).shown()  # type: ignore[arg-type]
            text = "none" if value is None else value
            note = self.sources[key.name]
            if key.name == "summarizer.api_key_env" and isinstance(value, str):
                note += ", set" if os.environ.get(value) else ", not set"
            yield f"{key.name} = {text}  # {note}"


def _problem(exc: InvalidConfig) -> str:
    return str(exc).removeprefix(f"{exc.key}: ")


def load_settings(
    *,
    flags: Mapping[str, object] | None = None,
    path: str | os.PathLike[str] | None = None,
    env: Mapping[str, str] | None = None,
    defaults: Mapping[str, object] | None = None,
) -> Settings:
    """The effective settings. ``flags``: values given on the command line or as arguments (None
    means not given); ``path``: the TOML file (default: ``CONVMEM_CONFIG``, else none);
    ``env``: the environment (default ``os.environ``); ``defaults``: a command's own defaults
    (``convmem backfill``'s embedder is minilm)."""
    env = os.environ if env is None else env
    if path is None and env.get(CONFIG_ENV):
        path = env[CONFIG_ENV]
    file_values = _read_file(os.fspath(path)) if path is not None else {}
    where = f"file {os.fspath(path)}" if path is not None else ""
    values: dict[str, Any] = {}
    sources: dict[str, str] = {}
    for key in KEYS:
        given = (flags or {}).get(key.name)
        if given is not None:
            raw, source = given, "flag"
        elif env.get(key.env):
            raw, source = env[key.env], f"env {key.env}"
        elif key.name in file_values:
            raw, source = file_values[key.name], where
        else:
            values[key.name] = (defaults or {}).get(key.name, key.default)
            sources[key.name] = "default"
            continue
        values[key.name] = _read(key, raw, source)
        sources[key.name] = source
    return Settings(values, sources, os.fspath(path) if path is not None else None)


def _read(key: Key, raw: object, source: str) -> Any:
    try:
        return key.read(raw)
    except InvalidConfig as exc:  # a model name's own key ("embedder.api_key") is kept
        raise InvalidConfig(exc.key, f"{_problem(exc)} ({source})") from None
    except ValueError as exc:
        raise InvalidConfig(key.name, f"{exc} ({source})") from None


def _read_file(path: str) -> dict[str, object]:
    """The file's settings as dotted keys; an unknown or secret key is ``InvalidConfig``."""
    try:
        with open(path, "rb") as handle:
            data = tomllib.load(handle)
    except FileNotFoundError:
        raise InvalidConfig("config", f"no such file: {path}") from None
    except OSError as exc:
        raise InvalidConfig("config", f"cannot read {path}: {exc.strerror}") from None
    except tomllib.TOMLDecodeError as exc:
        raise InvalidConfig("config", f"{path} is not valid TOML: {exc}") from None
    flat: dict[str, object] = {}

    def walk(table: Mapping[str, object], prefix: str) -> None:
        for name, value in table.items():
            dotted = f"{prefix}{name}"
            if name.lower() in _SECRETS or name.lower().endswith("_key"):
                raise InvalidConfig(
                    dotted, f"a key is never read from a file ({path}); put it in an "
                    "environment variable and name that variable (api_key_env)",
                )  # fmt: skip
            if isinstance(value, dict):
                walk(value, f"{dotted}.")
            elif dotted in _BY_NAME:
                flat[dotted] = value
            else:
                raise InvalidConfig(
                    dotted, f"unknown setting in {path}; known: {', '.join(_BY_NAME)}"
                )

    walk(data, "")
    return flat
