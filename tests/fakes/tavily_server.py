"""A fake Tavily ``/search`` server on 127.0.0.1 that records requests and serves set pages."""

from __future__ import annotations

import contextlib
import json
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


class FakeTavily:
    """Serve ``pages`` (dicts with url/title/content) for every search; log each request.

    ``status`` other than 200 answers every search with that error; ``delay`` seconds of
    silence first play a hanging server.
    """

    def __init__(self, pages: list[dict[str, Any]], status: int = 200, delay: float = 0.0):
        self.pages = pages
        self.status = status
        self.delay = delay
        self.requests: list[dict[str, Any]] = []
        fake = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:  # noqa: N802 - http.server's naming
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])) or b"{}")
                fake.requests.append(
                    {"path": self.path, "body": body, "auth": self.headers.get("Authorization")}
                )
                n = int(body.get("max_results") or 5)
                results = [dict(p, score=0.9 - i / 10) for i, p in enumerate(fake.pages[:n])]
                data = json.dumps({"query": body.get("query"), "results": results}).encode()
                time.sleep(fake.delay)
                if fake.status != 200:
                    data = json.dumps({"detail": {"error": "server error"}}).encode()
                self.send_response(fake.status if self.path == "/search" else 404)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                with contextlib.suppress(BrokenPipeError, ConnectionResetError):
                    self.wfile.write(data)  # fails when the client gave up waiting

            def log_message(self, *args: Any) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    def __enter__(self) -> FakeTavily:
        self.thread.start()
        return self

    def __exit__(self, *exc: Any) -> None:
        self.server.shutdown()
        self.server.server_close()
