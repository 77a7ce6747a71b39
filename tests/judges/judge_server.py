"""A real threaded HTTP server on 127.0.0.1 that answers OpenAI chat-completion requests as a violence judge would.

`answer(model_id, messages) -> str` decides each reply (tests write judges that reply in the formats real models
use); every request body is kept in `bodies` so tests can read exactly what the judge was sent.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

Answer = Callable[[str, list[dict]], str]


class JudgeServer:
    def __init__(self, answer: Answer) -> None:
        self.answer = answer
        self.bodies: list[dict] = []
        self.lock = threading.Lock()
        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self.httpd.daemon_threads = True
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.httpd.server_address[1]}"

    def __enter__(self) -> JudgeServer:
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

            def do_POST(self) -> None:
                body = json.loads(self.rfile.read(int(self.headers.get("Content-Length", 0))))
                with server.lock:
                    server.bodies.append(body)
                if not self.path.endswith("/chat/completions"):
                    return self._send(404, {"error": {"message": f"no such endpoint {self.path}", "type": "not_found"}})
                text = server.answer(body["model"], body["messages"])
                self._send(200, {
                    "id": f"chatcmpl-{len(server.bodies)}", "object": "chat.completion", "created": 0, "model": body["model"],
                    "choices": [{"index": 0, "finish_reason": "stop", "message": {"role": "assistant", "content": text}}],
                    "usage": {"prompt_tokens": 100, "completion_tokens": 5, "total_tokens": 105}})

            def _send(self, status: int, data: dict) -> None:
                payload = json.dumps(data).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(payload)))
                self.end_headers()
                self.wfile.write(payload)

        return Handler
