"""A hostile OpenAI-compatible server on 127.0.0.1: a real threaded HTTP server whose reply to every chat or text
completion request is decided by a settable `behaviour`, a function of the request number and body that writes
the whole response itself (status line, headers, body, drips and cut connections included). With no behaviour it
answers correctly (tests/generate/fake_server.py's deterministic replies). Requests are counted per body digest,
so a test can tell exactly which samples were paid for, and how often.
"""

from __future__ import annotations

import json
import threading
from collections import Counter
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler
from typing import Any

from tests.generate.fake_server import digest_of, openai_reply
from tests.local_http import LocalServer

Behaviour = Callable[["Handler", int, dict], None]


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    owner: "HostileServer"  # bound by HostileServer, one handler class per server

    def log_message(self, *args: object) -> None:
        pass

    def send(self, status: int, payload: bytes, headers: dict[str, str] | None = None) -> None:
        """One complete response with a Content-Length."""
        self.send_response(status)
        headers = {"Content-Type": "application/json", **(headers or {})}
        for k, v in headers.items():
            self.send_header(k, v)
        self.send_header("Content-Length", str(len(payload)))
        self.end_headers()
        try:
            self.wfile.write(payload)
        except OSError:  # the client stopped reading (a capped body): fine
            self.close_connection = True

    def good(self, body: dict) -> dict[str, Any]:
        """The correct reply to `body`."""
        return openai_reply(self.path, body, digest_of(body), completion_tokens=3)

    def do_POST(self) -> None:
        body = json.loads(self.rfile.read(int(self.headers.get("Content-Length", 0))))
        owner = self.owner
        with owner.lock:
            owner.bodies[digest_of(body)] += 1
            n = owner.requests
            owner.requests += 1
            behaviour = owner.behaviour
        if behaviour is None:
            return self.send(200, json.dumps(self.good(body)).encode())
        behaviour(self, n, body)


class HostileServer(LocalServer):
    def __init__(self) -> None:
        self.behaviour: Behaviour | None = None
        self.bodies: Counter[str] = Counter()
        self.requests = 0
        self.lock = threading.Lock()
        super().__init__(type("BoundHandler", (Handler,), {"owner": self}))

    @property
    def url(self) -> str:
        return f"{super().url}/v1"

    @property
    def paid_twice(self) -> int:
        """Request bodies answered more than once."""
        return sum(1 for n in self.bodies.values() if n > 1)

    def reset(self, behaviour: Behaviour | None = None) -> None:
        with self.lock:
            self.behaviour, self.requests = behaviour, 0
            self.bodies.clear()
