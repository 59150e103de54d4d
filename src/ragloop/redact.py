"""One place that knows what a secret looks like: key formats, auth headers, key=value pairs."""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Mapping
from typing import Any
from urllib.parse import urlsplit, urlunsplit

from pydantic import BaseModel, SecretStr

REDACTED = "[REDACTED]"

#: a pattern's first group, when it has one, is kept ("api_key=", "Authorization: ")
PATTERNS = (
    re.compile(r"(?i)\b(bearer\s+)(?=[A-Za-z._~+/=\-]*\d)[A-Za-z0-9._~+/=\-]{8,}"),
    re.compile(
        r"(?i)(authorization[\"']?\s*[:=]\s*[\"']?)(?:basic\s+|token\s+|bearer\s+)?"
        r"[^\s\"',;}]+"
    ),
    re.compile(
        r"(?i)\b((?:[a-z]+[_-])?(?:api[_-]?key|access[_-]?token|auth[_-]?token|secret|"
        r"password)[\"']?\s*[:=]\s*[\"']?)[^\s\"',;&}]{6,}"
    ),
    re.compile(r"\b(?:sk|tvly|pk|rk)-[A-Za-z0-9_\-]{8,}"),
    re.compile(r"\b(?:ghp|gho|ghs|ghu|github_pat|hf|xox[abprs])_[A-Za-z0-9_\-]{8,}"),
    re.compile(r"\bxox[abprs]-[A-Za-z0-9\-]{8,}"),
    re.compile(r"\bAKIA[0-9A-Z]{16}\b"),
    re.compile(r"\bAIza[0-9A-Za-z_\-]{30,}"),
)


def redact_text(
    text: str,
    secrets: Iterable[str] = (),
    *,
    patterns: Iterable[re.Pattern[str]] = PATTERNS,
    marker: str = REDACTED,
) -> str:
    """``text`` with each known secret value, then each key-like match, replaced by ``marker``."""
    for secret in secrets:
        if secret and len(secret) >= 4:
            text = text.replace(secret, marker)
    for pattern in patterns:
        text = pattern.sub(lambda m: (m.group(1) or "" if m.re.groups else "") + marker, text)
    return text


def redact_value(value: Any, secrets: Iterable[str] = ()) -> Any:
    """``value`` with every string inside it (dict keys and values, lists, tuples, the fields
    of pydantic models such as LangChain messages) redacted.

    Other objects pass through; an exception that carries a secret becomes a ``RuntimeError``
    of its redacted text (its type name kept in the text), so a stored error never holds a key.
    """
    secrets = list(secrets)
    if isinstance(value, str):
        return redact_text(value, secrets)
    if isinstance(value, Exception):  # kept as it is unless it carries a secret
        text = f"{type(value).__name__}: {value}"
        clean = redact_text(text, secrets)
        return value if clean == text else RuntimeError(clean)
    if isinstance(value, Mapping):
        return {redact_value(k, secrets): redact_value(v, secrets) for k, v in value.items()}
    if isinstance(value, list):
        return [redact_value(v, secrets) for v in value]
    if isinstance(value, tuple):
        return tuple(redact_value(v, secrets) for v in value)
    if isinstance(value, BaseModel):  # a LangChain message in the chat state, say
        fields = type(value).model_fields
        return value.model_copy(
            update={name: redact_value(getattr(value, name), secrets) for name in fields}
        )
    return value


_SECRET_ENV = re.compile(r"KEY|TOKEN|SECRET|PASSWORD|PASSWD|CREDENTIAL|AUTH", re.IGNORECASE)
_MIN_SECRET = 8


def secret_values(env: Mapping[str, str] | None = None) -> list[str]:
    """Values of variables named like *KEY*/*TOKEN*/*SECRET* (longest first, short ones skipped)."""
    env = os.environ if env is None else env
    values = {v for k, v in env.items() if _SECRET_ENV.search(k) and len(v or "") >= _MIN_SECRET}
    return sorted(values, key=len, reverse=True)


def secrets_of(model: Any) -> list[str]:
    """Secret values held by a model or the model it wraps (scrubbed from reasons and logs)."""
    found = []
    for obj in (model, getattr(model, "inner", None)):
        for value in (getattr(obj, "__dict__", None) or {}).values():
            if isinstance(value, SecretStr):
                found.append(value.get_secret_value())
    return found


def redact(
    value: Any, env: Mapping[str, str] | None = None, *, _secrets: list[str] | None = None
) -> Any:
    """``value`` (str, or dict/list of them) with key-like strings and secret env values removed."""
    secrets = secret_values(env) if _secrets is None else _secrets
    if isinstance(value, str):
        return redact_text(value, secrets)
    if isinstance(value, Mapping):
        return {redact(k, _secrets=secrets): redact(v, _secrets=secrets) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [redact(v, _secrets=secrets) for v in value]
    return value


def safe_url(url: str) -> str:
    """``url`` with its password replaced, for messages (a URL may carry one)."""
    parts = urlsplit(url)
    if parts.password is None:
        return url
    netloc = parts.netloc.replace(f":{parts.password}@", ":***@")
    return urlunsplit(parts._replace(netloc=netloc))
