"""One JSON endpoint of a model API (embeddings, rerank), called the way a production client must.

* **Retries with jitter** on 429, 5xx and transport errors (tenacity): random exponential waits,
  or the server's ``Retry-After`` when it gives one, never past the call's time limit.
* **A time limit per call**, every attempt and wait included: a server that hangs costs the
  caller ``timeout`` seconds, then ``BackendUnavailable``.
* **The key from the environment**, read once when the client is made, sent as a header and
  never logged, printed or put in an error.
* **Errors that hold no content**: a server's error body may echo the texts it was sent, so an
  error names the endpoint's kind, the status and the attempts only.

Safe across threads (one ``httpx.Client``, whose pool is) and across ``fork`` (``convmem serve
--workers`` forks after the model is warmed): a process makes its own client.
"""

from __future__ import annotations

import logging
import os
import random
import threading
from typing import TYPE_CHECKING, Any

from tenacity import (
    RetryCallState,
    Retrying,
    retry_if_exception,
)

from convmem.errors import BackendUnavailable, InvalidConfig
from convmem.model.deadline import Deadline

if TYPE_CHECKING:
    import httpx

log = logging.getLogger(__name__)


class RequestRefused(BackendUnavailable):
    """The API answered 4xx: the request itself was refused (a retry would get the same)."""

    def __init__(self, what: str, status: int) -> None:
        hint = " (check the key)" if status in (401, 403) else ""
        super().__init__(f"the {what} API refused the request: HTTP {status}{hint}")
        self.status = status


# statuses worth another attempt: rate limited, or the server's own failure
_RETRIED = frozenset({408, 409, 425, 429, 500, 502, 503, 504})
_MAX_WAIT = 8.0  # seconds between attempts at most (Retry-After included)


class _Retryable(Exception):
    """An attempt that failed in a way another attempt may not."""

    def __init__(self, status: int | None, retry_after: float | None = None) -> None:
        super().__init__(f"HTTP {status}" if status else "no response")
        self.status = status
        self.retry_after = retry_after


def api_key(env_name: str | None, what: str, *, required: bool) -> str | None:
    """The key in environment variable ``env_name`` (None when no variable is named). A named
    variable that is unset is ``InvalidConfig`` when ``required``; its value is never shown."""
    if env_name is None:
        return None
    value = os.environ.get(env_name)
    if not value and required:
        raise InvalidConfig(
            f"{what}.api_key_env", f"the environment variable {env_name} is not set"
        )
    return value or None


class JsonEndpoint:
    """POSTs JSON to ``url`` and returns the decoded reply (see the module's docstring)."""

    def __init__(
        self,
        url: str,
        *,
        what: str,
        key: str | None = None,
        key_header: str = "Authorization",
        timeout: float = 30.0,
        attempts: int = 4,
    ) -> None:
        """``what`` names the endpoint in errors and logs ("embeddings", "rerank"); ``key`` goes
        in ``key_header`` (``Authorization``: as a bearer token; Azure's ``api-key``: as is)."""
        self.url = url
        self.what = what
        self.timeout = timeout
        self.attempts = attempts
        self._headers = {"Content-Type": "application/json"}
        if key is not None:
            self._headers[key_header] = f"Bearer {key}" if key_header == "Authorization" else key
        self._client: httpx.Client | None = None
        self._pid = 0
        self._lock = threading.Lock()

    def __repr__(self) -> str:  # never the headers: they hold the key
        return f"JsonEndpoint({self.what}, {self.url!r})"

    def post(self, body: dict[str, Any]) -> Any:
        """The reply's JSON, after at most ``attempts`` attempts within ``timeout`` seconds."""
        deadline = Deadline(self.timeout)
        retrying = Retrying(
            retry=retry_if_exception(lambda exc: isinstance(exc, _Retryable)),
            stop=lambda state: state.attempt_number >= self.attempts or deadline.passed(),
            wait=lambda state: _wait(state, deadline),
            before_sleep=self._log_retry,
            reraise=True,
        )
        try:
            for attempt in retrying:
                with attempt:
                    return self._attempt(body, deadline)
        except _Retryable as exc:
            if deadline.passed():
                raise BackendUnavailable(
                    f"the {self.what} API did not answer within {self.timeout:g} s"
                ) from None
            raise BackendUnavailable(
                f"the {self.what} API failed: {exc} after {self.attempts} attempts"
            ) from None
        raise AssertionError("unreachable: tenacity returns or raises")  # pragma: no cover

    def _attempt(self, body: dict[str, Any], deadline: Deadline) -> Any:
        import httpx

        left = deadline.remaining()
        if left <= 0:
            raise _Retryable(None)
        try:
            reply = self._http().post(self.url, json=body, headers=self._headers, timeout=left)
        except httpx.TransportError:  # refused, reset, timed out: the server may come back
            raise _Retryable(None) from None
        if reply.status_code in _RETRIED or reply.status_code >= 500:
            raise _Retryable(reply.status_code, _retry_after(reply))
        if reply.status_code >= 400:
            raise RequestRefused(self.what, reply.status_code)
        try:
            return reply.json()
        except ValueError:
            raise BackendUnavailable(f"the {self.what} API answered with no JSON") from None

    def _http(self) -> httpx.Client:
        import httpx  # when a model API is used, not whenever convmem opens

        pid = os.getpid()
        with self._lock:
            if self._client is None or self._pid != pid:  # a forked child: connections of its own
                self._client = httpx.Client(follow_redirects=False)
                self._pid = pid
            return self._client

    def _log_retry(self, state: RetryCallState) -> None:
        outcome = state.outcome
        failure = outcome.exception() if outcome is not None else None
        log.warning(
            "%s API attempt %d failed (%s); retrying", self.what, state.attempt_number, failure
        )


def _wait(state: RetryCallState, deadline: Deadline) -> float:
    """Random exponential (full jitter), or the server's Retry-After; never past the deadline."""
    outcome = state.outcome
    failure = outcome.exception() if outcome is not None else None
    after = failure.retry_after if isinstance(failure, _Retryable) else None
    ceiling = min(_MAX_WAIT, 0.25 * 2 ** (state.attempt_number - 1))
    wait = after if after is not None else random.uniform(0, ceiling)
    return max(0.0, min(wait, _MAX_WAIT, deadline.remaining()))


def _retry_after(reply: httpx.Response) -> float | None:
    value = reply.headers.get("retry-after")
    if value is None:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:  # an HTTP date: wait our own way
        return None
