"""Which failures are worth retrying, how long to wait, and reasons with no secrets in them."""

from __future__ import annotations

import asyncio
import email.utils
import random
import re
import time
from collections.abc import Awaitable, Callable, Iterable
from dataclasses import dataclass, field
from typing import Any, Literal, TypeVar

from ragloop.redact import PATTERNS, redact_text

T = TypeVar("T")
Kind = Literal[
    "timeout",
    "connection",
    "rate_limited",
    "server_error",
    "auth",
    "client_error",
    "bad_response",
    "oversized",
    "truncated",
    "skipped",
    "error",
]

#: statuses worth another try besides 5xx (request timeout, conflict, too early, rate limit)
RETRYABLE_STATUS = frozenset({408, 409, 425, 429})
AUTH_STATUS = frozenset({401, 403})

_SECRET_PATTERNS = (
    re.compile(r"\bsk-[A-Za-z0-9_\-*.]{3,}"),
    re.compile(r"(?i)(bearer\s+)[^\s'\",}]+"),
    re.compile(r"(?i)((?:api[_-]?key|authorization|token)['\"]?\s*[:=]\s*['\"]?)[^\s'\",}]+"),
)


def redact(text: str, secrets: Iterable[str] = ()) -> str:
    """``text`` with known secret values and key-like strings replaced by ``***``.

    Error messages get the looser runner patterns on top of the shared ones: any bearer
    value and short ``sk-`` fragments that an SDK may echo.
    """
    return redact_text(text, secrets, patterns=(*_SECRET_PATTERNS, *PATTERNS), marker="***")


class Skip(Exception):
    """Raised by a call to end its job at once, unretried, with the message as the reason."""


@dataclass(frozen=True)
class Failure:
    """A classified exception: its kind, a short secret-free reason and whether to retry."""

    kind: Kind
    reason: str
    retryable: bool
    retry_after: float | None = None
    status: int | None = None


def status_of(exc: BaseException) -> int | None:
    """The HTTP status behind an exception (openai, httpx or anything with ``status_code``)."""
    status = getattr(exc, "status_code", None)
    if status is None:
        status = getattr(getattr(exc, "response", None), "status_code", None)
    return status if isinstance(status, int) else None


def retry_after(exc: BaseException) -> float | None:
    """Seconds the server asked us to wait (``retry-after-ms`` or ``Retry-After``), if any."""
    headers = getattr(getattr(exc, "response", None), "headers", None)
    if not headers:
        return None
    try:
        if headers.get("retry-after-ms"):
            return max(0.0, float(headers["retry-after-ms"]) / 1000)
        value = headers.get("retry-after")
        if not value:
            return None
        try:
            return max(0.0, float(value))
        except ValueError:
            when = email.utils.parsedate_to_datetime(value)
            return max(0.0, when.timestamp() - time.time())
    except (TypeError, ValueError, OverflowError):
        return None


def _message(exc: BaseException) -> str:
    body = getattr(exc, "body", None)
    if isinstance(body, dict):
        inner = body.get("error", body)
        if isinstance(inner, dict) and inner.get("message"):
            return str(inner["message"])[:200]
    return (str(exc) or type(exc).__name__)[:200]


def _is_timeout(exc: BaseException) -> bool:
    if isinstance(exc, TimeoutError | asyncio.TimeoutError):
        return True
    names = {cls.__name__ for cls in type(exc).__mro__}
    return bool(names & {"APITimeoutError", "TimeoutException", "ReadTimeout", "ConnectTimeout"})


def _is_connection(exc: BaseException) -> bool:
    if isinstance(exc, ConnectionError):
        return True
    names = {cls.__name__ for cls in type(exc).__mro__}
    return bool(names & {"APIConnectionError", "TransportError", "ClientConnectionError"})


def _oversized(exc: BaseException) -> BaseException | None:
    """The reply-cap error behind ``exc`` (the SDK wraps it in a connection error), if any."""
    seen: set[int] = set()
    current: BaseException | None = exc
    while current is not None and id(current) not in seen:
        if getattr(current, "ragloop_kind", None) == "oversized":
            return current
        seen.add(id(current))
        current = current.__cause__ or current.__context__
    return None


def classify(exc: BaseException, secrets: Iterable[str] = ()) -> Failure:
    """Sort an exception into a retryable or final failure with a secret-free reason."""
    if isinstance(exc, Skip):
        return Failure("skipped", str(exc), False)
    if (big := _oversized(exc)) is not None:  # the same server would flood again: final
        return Failure("oversized", redact(str(big), secrets), False)
    if "LengthFinishReasonError" in {c.__name__ for c in type(exc).__mro__}:
        reason = "the reply was cut at the reply cap before its JSON ended (raise --max-tokens)"
        return Failure("truncated", reason, False)
    if _is_timeout(exc):
        return Failure("timeout", "timeout", True)
    status = status_of(exc)
    if status is not None:
        msg = redact(_message(exc), secrets)
        wait = retry_after(exc)
        if status < 400:  # a success status with a body the client could not read
            return Failure("bad_response", f"malformed response (HTTP {status}): {msg}", False)
        if status in AUTH_STATUS:
            return Failure(
                "auth",
                f"authentication failed (HTTP {status}): {msg} - check the API key "
                "(OPENAI_API_KEY) and that it may use this model",
                False,
                status=status,
            )
        if status == 429:
            return Failure("rate_limited", "rate limited (HTTP 429)", True, wait, status)
        if status >= 500 or status in RETRYABLE_STATUS:
            return Failure("server_error", f"server error (HTTP {status})", True, wait, status)
        return Failure(
            "client_error", f"request rejected (HTTP {status}): {msg}", False, None, status
        )
    if _is_connection(exc):
        return Failure("connection", f"connection error: {redact(_message(exc), secrets)}", True)
    return Failure("error", redact(f"{type(exc).__name__}: {_message(exc)}", secrets), False)


@dataclass
class RetryPolicy:
    """Exponential backoff with jitter; ``Retry-After`` is honoured up to ``max_retry_after``."""

    max_retries: int = 5
    base_delay: float = 0.5
    max_delay: float = 30.0
    max_retry_after: float = 120.0
    #: False for a single-slot local server: it is still busy with the request that timed out
    retry_timeouts: bool = True
    sleep: Callable[[float], Awaitable[Any]] = asyncio.sleep
    rng: random.Random = field(default_factory=random.Random)

    def retries(self, failure: Failure) -> bool:
        """Whether ``failure`` is worth another attempt under this policy."""
        return failure.retryable and (self.retry_timeouts or failure.kind != "timeout")

    def delay(self, attempt: int, failure: Failure) -> float:
        """Seconds to wait before retry number ``attempt + 1``."""
        if failure.retry_after is not None:
            wait = min(failure.retry_after, self.max_retry_after)
            return wait + self.rng.uniform(0.0, min(1.0, 0.1 * wait + 0.05))
        backoff = min(self.max_delay, self.base_delay * 2**attempt)
        return backoff / 2 + self.rng.uniform(0.0, backoff / 2)


class Backpressure:
    """A run-wide pause: after a ``Retry-After`` no job starts an attempt before it ends."""

    def __init__(self, sleep: Callable[[float], Awaitable[Any]] = asyncio.sleep):
        self.until = 0.0
        self._sleep = sleep

    def hold(self, seconds: float) -> None:
        self.until = max(self.until, time.monotonic() + seconds)

    async def wait(self) -> None:
        left = self.until - time.monotonic()
        if left > 0:
            await self._sleep(left)


@dataclass
class Outcome:
    """What ``with_retries`` ended with: a value or the last failure, and the attempts made."""

    value: Any = None
    failure: Failure | None = None
    attempts: int = 0


async def with_retries(
    call: Callable[[], Awaitable[T]],
    policy: RetryPolicy,
    *,
    slots: asyncio.Semaphore,
    gate: Backpressure,
    timeout: float | None,
    secrets: Iterable[str] = (),
    stop: Callable[[], bool] = lambda: False,
) -> Outcome:
    """Run ``call`` in a concurrency slot with a timeout, retrying retryable failures.

    The slot is given back while waiting between attempts; ``stop()`` true ends retrying.
    """
    secrets = tuple(secrets)
    outcome = Outcome()
    for attempt in range(policy.max_retries + 1):
        await gate.wait()
        outcome.attempts = attempt + 1
        async with slots:
            try:
                async with asyncio.timeout(timeout):  # no extra task, unlike wait_for
                    outcome.value = await call()
                outcome.failure = None
                return outcome
            except asyncio.CancelledError:
                raise
            except Exception as exc:  # noqa: BLE001 - classified below
                outcome.failure = classify(exc, secrets)
        failure = outcome.failure
        if not policy.retries(failure) or attempt == policy.max_retries or stop():
            break
        if failure.retry_after is not None:
            gate.hold(min(failure.retry_after, policy.max_retry_after))
        await policy.sleep(policy.delay(attempt, failure))
    return outcome
