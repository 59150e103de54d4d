"""OpenAI-shaped response bodies for the fake server: chat completions and embeddings."""

from __future__ import annotations

import base64
import hashlib
import json
import re
import struct
import time
from typing import Any


def messages_text(body: dict) -> str:
    """All message contents of a chat request joined, for reply callables to inspect."""
    parts = []
    for msg in body.get("messages", []):
        content = msg.get("content")
        parts.append(content if isinstance(content, str) else json.dumps(content))
    return "\n".join(parts)


def fake_vector(text: str, dim: int = 16) -> list[float]:
    """A deterministic unit vector: hashed bag of words (shared words give positive cosine)."""
    vec = [0.0] * dim
    for word in re.findall(r"\w+", text.lower()) or [""]:
        digest = hashlib.sha256(word.encode()).digest()
        for i in range(dim):
            vec[i] += digest[i % len(digest)] / 127.5 - 1.0
    norm = sum(v * v for v in vec) ** 0.5 or 1.0
    return [v / norm for v in vec]


def chat_completion(content: str, body: dict) -> dict:
    prompt_tokens = len(messages_text(body).split())
    completion_tokens = len(content.split())
    return {
        "id": "chatcmpl-fake",
        "object": "chat.completion",
        "created": int(time.time()),
        "model": body.get("model", "fake"),
        "choices": [
            {
                "index": 0,
                "finish_reason": "stop",
                "message": {"role": "assistant", "content": content},
            }
        ],
        "usage": {
            "prompt_tokens": prompt_tokens,
            "completion_tokens": completion_tokens,
            "total_tokens": prompt_tokens + completion_tokens,
        },
    }


def embeddings_response(body: dict, default_dim: int) -> dict:
    texts = body.get("input", [])
    texts = [texts] if isinstance(texts, str) else list(texts)
    dim = int(body.get("dimensions") or default_dim)
    data = []
    for i, text in enumerate(texts):
        vec = fake_vector(text if isinstance(text, str) else json.dumps(text), dim)
        if body.get("encoding_format") == "base64":
            emb: Any = base64.b64encode(struct.pack(f"<{dim}f", *vec)).decode()
        else:
            emb = vec
        data.append({"object": "embedding", "index": i, "embedding": emb})
    tokens = sum(len(str(t).split()) for t in texts)
    return {
        "object": "list",
        "data": data,
        "model": body.get("model", "fake"),
        "usage": {"prompt_tokens": tokens, "total_tokens": tokens},
    }
