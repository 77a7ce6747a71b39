"""A real threaded HTTP server on 127.0.0.1 that answers OpenAI chat-completion requests as a violence judge would.

`answer(model_id, messages) -> str` decides each reply (tests write judges that reply in the formats real models
use); every request body is kept in `bodies` so tests can read exactly what the judge was sent.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable

from tests.local_http import LocalServer, QuietHandler

Answer = Callable[[str, list[dict]], str]


class JudgeServer(LocalServer):
    def __init__(self, answer: Answer) -> None:
        self.answer = answer
        self.bodies: list[dict] = []
        self.lock = threading.Lock()
        super().__init__(self._handler())

    def _handler(self) -> type[QuietHandler]:
        server = self

        class Handler(QuietHandler):
            def do_POST(self) -> None:
                body = json.loads(self.rfile.read(int(self.headers.get("Content-Length", 0))))
                with server.lock:
                    server.bodies.append(body)
                if not self.path.endswith("/chat/completions"):
                    return self._json(404, {"error": {"message": f"no such endpoint {self.path}", "type": "not_found"}})
                text = server.answer(body["model"], body["messages"])
                self._json(200, {
                    "id": f"chatcmpl-{len(server.bodies)}", "object": "chat.completion", "created": 0, "model": body["model"],
                    "choices": [{"index": 0, "finish_reason": "stop", "message": {"role": "assistant", "content": text}}],
                    "usage": {"prompt_tokens": 100, "completion_tokens": 5, "total_tokens": 105}})

            def _json(self, status: int, data: dict) -> None:
                self._send(status, json.dumps(data).encode())

        return Handler
