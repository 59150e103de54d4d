"""A scripted OpenAI-compatible server on 127.0.0.1 for wire-level tests (stdlib only).

Serves ``POST /v1/chat/completions``, ``POST /v1/embeddings`` and ``GET /_fake/stats``.
Each chat request takes the next scripted ``Behaviour`` (or the default one): a reply text
(or a callable of the request JSON), an HTTP status with headers such as ``Retry-After``,
a delay to simulate a hang, or a raw malformed body. Every request is logged with its body
and headers. ``bench/eval_throughput.py`` shows how to run it in a separate process.
"""

from __future__ import annotations

import contextlib
import json
import re
import socket
import sys
import threading
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from tests.fakes.openai_payloads import (  # noqa: F401 - fake_vector, messages_text re-exported
    chat_completion,
    embeddings_response,
    fake_vector,
    messages_text,
)

Content = str | dict | list | Callable[[dict], Any]
CHAT_PATH = "/v1/chat/completions"
EMBEDDINGS_PATH = "/v1/embeddings"
STATS_PATH = "/_fake/stats"


@dataclass
class Behaviour:
    """What the server does with one chat request."""

    reply: Content = "ok"
    status: int = 200
    headers: dict[str, str] = field(default_factory=dict)
    delay: float = 0.0
    #: body sent verbatim instead of a chat.completion object (malformed responses)
    raw: bytes | None = None
    #: error message for status >= 400; a callable gets (request JSON, request headers)
    message: str | Callable[[dict, dict], str] = "scripted error"
    #: send a 200 and then body bytes without end (a server that ignores the reply cap)
    endless: bool = False
    #: a streamed reply (``"stream": true``) drops the connection after this many token
    #: events (a server that dies mid-reply); None: the whole reply, then ``[DONE]``
    break_after: int | None = None


def reply(content: Content, delay: float = 0.0) -> Behaviour:
    """Answer with ``content`` (a dict/list is sent as JSON text)."""
    return Behaviour(reply=content, delay=delay)


def error(
    status: int,
    message: str | Callable[[dict, dict], str] = "scripted error",
    headers: dict[str, str] | None = None,
) -> Behaviour:
    """Fail with an OpenAI-style error body, e.g. ``error(429, headers={"Retry-After": "1"})``."""
    return Behaviour(status=status, message=message, headers=dict(headers or {}))


def endless() -> Behaviour:
    """Answer 200 and stream body bytes until the client hangs up (or the server stops)."""
    return Behaviour(endless=True)


def breaks_after(tokens: int, content: Content = "ok") -> Behaviour:
    """Stream ``tokens`` token events of ``content``, then drop the connection."""
    return Behaviour(reply=content, break_after=tokens)


def hang(seconds: float = 3600.0) -> Behaviour:
    """Say nothing for ``seconds`` (the server's stop() releases it early)."""
    return Behaviour(delay=seconds)


@dataclass
class Request:
    """One request the server received."""

    path: str
    body: Any
    headers: dict[str, str]
    at: float


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    request_queue_size = 256  # the default 5 drops connects under concurrency (1 s SYN retry)

    def handle_error(self, request: Any, client_address: Any) -> None:
        if isinstance(sys.exc_info()[1], ConnectionError):  # a client that hung up: expected
            return
        super().handle_error(request, client_address)


class FakeOpenAIServer:
    """The server object: start/stop (or ``with``), ``script()``, ``requests``, ``url``."""

    def __init__(
        self,
        default: Behaviour | Content = "ok",
        *,
        delay: float = 0.0,
        embedding_dim: int = 16,
        port: int = 0,
        response_formats: tuple[str, ...] | None = None,
        unsupported_status: int = 400,
    ):
        """``response_formats``: the ``response_format`` types accepted (None: any); another
        one is answered ``unsupported_status`` (llama.cpp's server answers 500 to json_schema).
        """
        self.response_formats = response_formats
        #: body chunks an endless behaviour sent, and whether its client hung up
        self.flood_sent = 0
        self.hung_up = threading.Event()
        self.unsupported_status = unsupported_status
        self.default = default if isinstance(default, Behaviour) else reply(default)
        self.delay = delay
        #: seconds between the events of a streamed reply
        self.token_delay = 0.0
        self.embedding_dim = embedding_dim
        self.requests: list[Request] = []
        self._queue: deque[Behaviour] = deque()
        self._lock = threading.Lock()
        self._stopping = threading.Event()
        self._sockets: set[socket.socket] = set()
        self._httpd = _Server(("127.0.0.1", port), _handler_for(self))
        self._thread: threading.Thread | None = None

    @property
    def url(self) -> str:
        """Base URL to give as ``OPENAI_BASE_URL`` (ends in ``/v1``)."""
        return f"http://127.0.0.1:{self._httpd.server_address[1]}/v1"

    def env(self, api_key: str = "sk-test-secret") -> dict[str, str]:
        """The environment mapping for ``get_chat_model(..., env=...)``."""
        return {"OPENAI_API_KEY": api_key, "OPENAI_BASE_URL": self.url}

    def script(self, *behaviours: Behaviour | Content) -> FakeOpenAIServer:
        """Queue behaviours for the next chat requests, in order; then the default applies."""
        with self._lock:
            for b in behaviours:
                self._queue.append(b if isinstance(b, Behaviour) else reply(b))
        return self

    def count(self, path: str = CHAT_PATH) -> int:
        """How many requests reached ``path``."""
        with self._lock:
            return sum(1 for r in self.requests if r.path == path)

    def chat_requests(self) -> list[Request]:
        with self._lock:
            return [r for r in self.requests if r.path == CHAT_PATH]

    def reset(self) -> None:
        """Forget logged requests and queued behaviours."""
        with self._lock:
            self.requests.clear()
            self._queue.clear()

    def start(self) -> FakeOpenAIServer:
        self._thread = threading.Thread(
            target=self._httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
        )
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stopping.set()
        self._httpd.shutdown()
        with self._lock:
            for sock in list(self._sockets):
                with contextlib.suppress(OSError):
                    sock.shutdown(socket.SHUT_RDWR)
        self._httpd.server_close()

    def __enter__(self) -> FakeOpenAIServer:
        return self.start()

    def __exit__(self, *exc: Any) -> None:
        self.stop()

    # -- used by the handler -------------------------------------------------------------
    def _next(self, path: str, body: Any, headers: dict[str, str]) -> Behaviour:
        with self._lock:
            self.requests.append(Request(path, body, headers, time.monotonic()))
            if path == CHAT_PATH and self._queue:
                return self._queue.popleft()
            return self.default

    def _wait(self, seconds: float) -> bool:
        """Sleep; False when the server is stopping."""
        return not self._stopping.wait(seconds) if seconds > 0 else True


def _token_event(body: dict) -> bytes:
    """One server-sent event of a streamed chat completion carrying a word."""
    event = {
        "id": "chatcmpl-flood",
        "object": "chat.completion.chunk",
        "created": 0,
        "model": body.get("model", "fake"),
        "choices": [{"index": 0, "delta": {"content": "word "}, "finish_reason": None}],
    }
    return b"data: " + json.dumps(event).encode() + b"\n\n"


def stream_pieces(content: str) -> list[str]:
    """How a streamed reply is split into token events: a word with the spaces after it."""
    return re.findall(r"\s*\S+\s*", content) or [content]


def _stream_event(body: dict, delta: dict, finish: str | None = None, usage: Any = None) -> bytes:
    event: dict[str, Any] = {
        "id": "chatcmpl-fake",
        "object": "chat.completion.chunk",
        "created": 0,
        "model": body.get("model", "fake"),
        "choices": [{"index": 0, "delta": delta, "finish_reason": finish}] if delta else [],
    }
    if usage is not None:
        event["usage"] = usage
    return b"data: " + json.dumps(event).encode() + b"\n\n"


def _handler_for(server: FakeOpenAIServer) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"
        disable_nagle_algorithm = True  # headers and body go out in two writes: no 40 ms stall

        def setup(self) -> None:
            super().setup()
            with server._lock:
                server._sockets.add(self.connection)

        def finish(self) -> None:
            with server._lock:
                server._sockets.discard(self.connection)
            with contextlib.suppress(OSError):
                super().finish()

        def log_message(self, *args: Any) -> None:  # keep test output clean
            pass

        def _send(self, status: int, payload: bytes, headers: dict[str, str] | None = None) -> None:
            try:
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(payload)))
                for key, value in (headers or {}).items():
                    self.send_header(key, value)
                self.end_headers()
                self.wfile.write(payload)
            except OSError:  # the client gave up (timeout): nothing to do
                self.close_connection = True

        def do_GET(self) -> None:  # noqa: N802 - http.server naming
            if self.path.split("?")[0] == STATS_PATH:  # request counts, for out-of-process use
                stats = {
                    "chat": server.count(CHAT_PATH),
                    "embeddings": server.count(EMBEDDINGS_PATH),
                }
                self._send(200, json.dumps(stats).encode())
            else:
                self._send(404, b'{"error": {"message": "unknown path", "type": "fake"}}')

        def do_POST(self) -> None:  # noqa: N802 - http.server naming
            length = int(self.headers.get("Content-Length") or 0)
            raw = self.rfile.read(length) if length else b""
            try:
                body = json.loads(raw or b"{}")
            except json.JSONDecodeError:
                body = None
            headers = {k.lower(): v for k, v in self.headers.items()}
            path = self.path.split("?")[0]
            behaviour = server._next(path, body, headers)
            if not server._wait(server.delay):
                return
            if path == EMBEDDINGS_PATH and isinstance(body, dict):
                self._send(
                    200, json.dumps(embeddings_response(body, server.embedding_dim)).encode()
                )
                return
            if path != CHAT_PATH or not isinstance(body, dict):
                self._send(404, b'{"error": {"message": "unknown path or body", "type": "x"}}')
                return
            if not server._wait(behaviour.delay):
                self.close_connection = True
                return
            kind = (body.get("response_format") or {}).get("type")
            if kind and server.response_formats is not None and kind not in server.response_formats:
                behaviour = error(server.unsupported_status, f"response_format {kind} unsupported")
            if behaviour.endless:
                self._flood(body)
                return
            self._respond(behaviour, body, headers)

        def _flood(self, body: dict) -> None:
            """Headers, then body chunk after chunk until the client hangs up: one JSON that
            never ends, or (``stream``) token events that never stop."""
            self.close_connection = True
            streamed = bool(body.get("stream"))
            try:
                self.send_response(200)
                kind = "text/event-stream" if streamed else "application/json"
                self.send_header("Content-Type", kind)
                self.send_header("Transfer-Encoding", "chunked")
                self.end_headers()
                chunk = b'{"id": "flood", "choices": [{"message": {"content": "' + b"x" * 65536
                while not server._stopping.is_set():
                    if streamed:
                        chunk = _token_event(body)
                    self.wfile.write(b"%x\r\n%s\r\n" % (len(chunk), chunk))
                    self.wfile.flush()
                    server.flood_sent += 1
                    chunk = b"x" * 65536
            except OSError:  # the client hung up: what a capped client does
                server.hung_up.set()

        def _stream(self, content: str, body: dict, break_after: int | None) -> None:
            """The reply as server-sent events, a word each (chunked), as OpenAI streams."""
            events = [_stream_event(body, {"role": "assistant", "content": ""})]
            pieces = stream_pieces(content)
            events += [_stream_event(body, {"content": piece}) for piece in pieces]
            events.append(_stream_event(body, {"content": ""}, "stop"))
            if (body.get("stream_options") or {}).get("include_usage"):
                usage = chat_completion(content, body)["usage"]
                events.append(_stream_event(body, {}, usage=usage))
            events.append(b"data: [DONE]\n\n")
            if break_after is not None:
                events = events[: 1 + break_after]
                self.close_connection = True
            try:
                self.send_response(200)
                self.send_header("Content-Type", "text/event-stream")
                self.send_header("Transfer-Encoding", "chunked")
                self.end_headers()
                for event in events:
                    self.wfile.write(b"%x\r\n%s\r\n" % (len(event), event))
                    self.wfile.flush()
                    if not server._wait(server.token_delay):
                        return
                if break_after is None:
                    self.wfile.write(b"0\r\n\r\n")
                    self.wfile.flush()
                else:  # mid-reply: the connection goes without the closing chunk
                    self.connection.shutdown(socket.SHUT_RDWR)
            except OSError:  # the client hung up
                self.close_connection = True

        def _respond(self, behaviour: Behaviour, body: dict, headers: dict[str, str]) -> None:
            if behaviour.status >= 400:
                msg = behaviour.message
                text = msg(body, headers) if callable(msg) else msg
                err = {"error": {"message": text, "type": "fake_error", "code": behaviour.status}}
                self._send(behaviour.status, json.dumps(err).encode(), behaviour.headers)
                return
            if behaviour.raw is not None:
                self._send(behaviour.status, behaviour.raw, behaviour.headers)
                return
            try:
                content = behaviour.reply(body) if callable(behaviour.reply) else behaviour.reply
            except Exception as exc:  # noqa: BLE001 - a broken script answers 500, visibly
                err = {"error": {"message": f"reply callable failed: {exc!r}", "type": "fake"}}
                self._send(500, json.dumps(err).encode())
                return
            if not isinstance(content, str):
                content = json.dumps(content)
            if body.get("stream"):
                self._stream(content, body, behaviour.break_after)
                return
            payload = json.dumps(chat_completion(content, body)).encode()
            self._send(behaviour.status, payload, behaviour.headers)

    return Handler
