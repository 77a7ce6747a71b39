"""A real threaded HTTP server on 127.0.0.1 speaking the OpenAI (chat/completions) and Anthropic (messages)
protocols, with injectable faults (429, 500, timeout, malformed body), fixed latency and request counting.

Responses are deterministic functions of the request body, so reruns can be compared exactly.
"""

from __future__ import annotations

import hashlib
import json
import threading
import time
from collections import Counter
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

FIXTURES = Path(__file__).parent / "fixtures"


class FakeServer:
    def __init__(self, latency_s: float = 0.0, count_file: str | None = None) -> None:
        self.latency_s = latency_s
        self.faults: list[str] = []  # consumed one per request: "429", "500", "timeout", "malformed"
        self.bodies: Counter[str] = Counter()
        self.count_file = count_file
        self.lock = threading.Lock()
        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self.httpd.daemon_threads = True
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.httpd.server_address[1]}"

    @property
    def total(self) -> int:
        return sum(self.bodies.values())

    def __enter__(self) -> "FakeServer":
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: object) -> None:
                pass

            def _send(self, status: int, payload: bytes, headers: dict[str, str] | None = None) -> None:
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(payload)))
                for k, v in (headers or {}).items():
                    self.send_header(k, v)
                self.end_headers()
                self.wfile.write(payload)

            def do_POST(self) -> None:
                raw = self.rfile.read(int(self.headers.get("Content-Length", 0)))
                body = json.loads(raw)
                digest = hashlib.sha256(json.dumps(body, sort_keys=True).encode()).hexdigest()[:12]
                with server.lock:
                    server.bodies[digest] += 1
                    fault = server.faults.pop(0) if server.faults else None
                    if server.count_file:
                        with open(server.count_file, "a") as fh:
                            fh.write(digest + "\n")
                if server.latency_s:
                    time.sleep(server.latency_s)
                if fault == "429":
                    return self._send(429, b'{"error":{"message":"rate limited","type":"rate_limit"}}', {"retry-after-ms": "10"})
                if fault == "500":
                    return self._send(500, b'{"error":{"message":"boom","type":"server_error"}}', {"retry-after-ms": "10"})
                if fault == "timeout":
                    time.sleep(2.0)
                if fault == "malformed":
                    return self._send(200, b'{"id": "x", "choices": [], "usage": {}}', {"x-request-id": "req_bad"})
                if self.path.endswith("/messages"):
                    data = json.loads((FIXTURES / "anthropic_message.json").read_text())
                    return self._send(200, json.dumps(data).encode(), {"request-id": "req_anthropic_1"})
                text = f"reply-{digest} seed={body.get('seed')}"
                usage = {"prompt_tokens": 7, "completion_tokens": 3, "total_tokens": 10}
                if self.path.endswith("/chat/completions"):
                    choice = {"index": 0, "finish_reason": "stop", "message": {"role": "assistant", "content": text}}
                    obj = "chat.completion"
                else:
                    choice = {"index": 0, "finish_reason": "length", "text": text, "logprobs": None}
                    obj = "text_completion"
                data = {"id": f"cmpl-{digest}", "object": obj, "created": 0, "model": body["model"], "choices": [choice],
                        "usage": usage, "system_fingerprint": "fp_test"}
                self._send(200, json.dumps(data).encode(), {"x-request-id": f"req_{digest}"})

        return Handler


if __name__ == "__main__":  # used by the kill/resume test as a separate process
    import sys

    with FakeServer(latency_s=float(sys.argv[1]), count_file=sys.argv[2]) as srv:
        Path(sys.argv[3]).write_text(srv.url)
        while True:
            time.sleep(1)
