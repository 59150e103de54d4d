"""Pytest fixtures around the fake OpenAI server; import them into a test module to use them."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from tests.fakes.openai_server import FakeOpenAIServer

#: a key-like value; tests assert it never shows up in results, reports or errors
FAKE_KEY = "sk-test-secret-4f9a2c7e"


@pytest.fixture
def openai_server() -> Iterator[FakeOpenAIServer]:
    """A fresh fake server on 127.0.0.1 answering "ok"; script it per test."""
    with FakeOpenAIServer() as server:
        yield server


def fake_chat_model(server: FakeOpenAIServer, model: str = "fake-model", **kwargs: Any) -> Any:
    """``ChatOpenAI`` pointed at ``server`` through ragloop's own provider factory."""
    from ragloop.providers import get_chat_model

    return get_chat_model(f"openai:{model}", env=server.env(FAKE_KEY), **kwargs)
