"""A recording HTTP proxy in front of an OpenAI-compatible server, on 127.0.0.1.

Every chat request passes through unchanged; the proxy keeps what the server said about it:
the reply cap sent (``max_tokens`` / ``max_completion_tokens``), the ``response_format`` type,
whether it was a repair turn, and the server's own ``usage.completion_tokens``,
``usage.prompt_tokens`` and ``finish_reason``. That is how a bench checks that no request
generated past the cap without trusting the client that sent it. Streamed replies are passed
on whole (the benches' calls are not streamed).
"""

from __future__ import annotations

import json
import threading
import time
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import httpx

#: how the judge's repair turn starts (``ragloop.eval.judge.Judge.ask``)
REPAIR_START = "Your reply could not be used"


@dataclass
class Call:
    """One chat request as the server answered it."""

    cap: int | None
    response_format: str | None
    repair: bool
    status: int
    completion_tokens: int | None
    #: the server's ``usage.prompt_tokens`` (how much it had to read)
    prompt_tokens: int | None
    finish_reason: str | None
    seconds: float

    @property
    def past_cap(self) -> bool:
        return None not in (self.cap, self.completion_tokens) and (
            int(self.completion_tokens or 0) > int(self.cap or 0)
        )

    @property
    def at_cap(self) -> bool:
        """The server stopped the reply at the cap (it would have gone on)."""
        return self.finish_reason == "length"


def _call(body: dict[str, Any], status: int, reply: dict[str, Any], seconds: float) -> Call:
    messages = body.get("messages") or [{}]
    last = messages[-1].get("content")
    choice = (reply.get("choices") or [{}])[0]
    usage = reply.get("usage") or {}
    return Call(
        cap=body.get("max_tokens", body.get("max_completion_tokens")),
        response_format=(body.get("response_format") or {}).get("type"),
        repair=isinstance(last, str) and last.startswith(REPAIR_START),
        status=status,
        completion_tokens=usage.get("completion_tokens"),
        prompt_tokens=usage.get("prompt_tokens"),
        finish_reason=choice.get("finish_reason"),
        seconds=seconds,
    )


class RecordingProxy:
    """``with RecordingProxy(upstream) as proxy``: point the client at ``proxy.url``."""

    def __init__(self, upstream: str, timeout: float = 900.0):
        self.upstream = upstream.rstrip("/")
        self.calls: list[Call] = []
        self._lock = threading.Lock()
        self._client = httpx.Client(timeout=timeout)
        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self._httpd.daemon_threads = True
        self._thread = threading.Thread(target=self._httpd.serve_forever, daemon=True)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self._httpd.server_address[1]}/v1"

    def take(self) -> list[Call]:
        """The calls recorded since the last ``take``."""
        with self._lock:
            calls, self.calls = self.calls, []
        return calls

    def __enter__(self) -> RecordingProxy:
        self._thread.start()
        return self

    def __exit__(self, *exc: Any) -> None:
        self._httpd.shutdown()
        self._httpd.server_close()
        self._client.close()

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        proxy = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: Any) -> None:
                pass

            def _forward(self, method: str) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                raw = self.rfile.read(length) if length else b""
                path = self.path.removeprefix("/v1")
                headers = {"Content-Type": self.headers.get("Content-Type", "application/json")}
                started = time.perf_counter()
                try:
                    upstream = proxy._client.request(
                        method, proxy.upstream + path, content=raw, headers=headers
                    )
                except httpx.HTTPError as exc:
                    self._send(502, json.dumps({"error": {"message": str(exc)}}).encode(), {})
                    return
                seconds = time.perf_counter() - started
                if path.endswith("/chat/completions"):
                    try:
                        body, reply = json.loads(raw or b"{}"), upstream.json()
                    except ValueError:
                        body, reply = {}, {}
                    with proxy._lock:
                        proxy.calls.append(_call(body, upstream.status_code, reply, seconds))
                kind = upstream.headers.get("content-type", "application/json")
                self._send(upstream.status_code, upstream.content, {"Content-Type": kind})

            def _send(self, status: int, payload: bytes, headers: dict[str, str]) -> None:
                try:
                    self.send_response(status)
                    for key, value in headers.items():
                        self.send_header(key, value)
                    self.send_header("Content-Length", str(len(payload)))
                    self.end_headers()
                    self.wfile.write(payload)
                except OSError:  # the client gave up (its timeout)
                    self.close_connection = True

            def do_GET(self) -> None:  # noqa: N802 - http.server naming
                self._forward("GET")

            def do_POST(self) -> None:  # noqa: N802 - http.server naming
                self._forward("POST")

        return Handler
