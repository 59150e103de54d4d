"""A fake Tavily ``/search`` server on 127.0.0.1 that records requests and serves set pages."""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


class FakeTavily:
    """Serve ``pages`` (dicts with url/title/content) for every search; log each request."""

    def __init__(self, pages: list[dict[str, Any]]):
        self.pages = pages
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
                self.send_response(200 if self.path == "/search" else 404)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

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
