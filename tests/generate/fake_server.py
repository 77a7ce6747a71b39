"""A real threaded HTTP server on 127.0.0.1 speaking the OpenAI (chat/completions) and Anthropic (messages)
protocols, with injectable faults (429, 500, timeout, malformed body; and the dialect faults of real endpoints:
`empty` answers, `thought_out` replies whose thinking spent the whole budget, `500-final` / `400-retry` carrying
`x-should-retry: false` / `true`), fixed latency, a settable number of completion tokens per OpenAI reply
(`completion_tokens`) and request counting; `received` keeps every live request (path, body). `rejects_seed` makes
it answer as Gemini's OpenAI-compatible endpoint does to a `seed` (HTTP 400), and its Messages endpoint refuses an
empty message as Anthropic's does.
Requests with `"stream": true` are answered in server-sent events (chunked), as OpenAI and vLLM do; a `timeout`
fault then stalls after the first chunk, i.e. mid-generation. `stream_usage = False` and `cut_streams = True` make it
stream as llama-cpp-python's server does: no usage chunk, and a stream in flight cut short when the next request
arrives.

It also serves the batch endpoints the official SDKs call: OpenAI `POST /v1/files` (multipart,
purpose=batch), `POST /v1/batches`, `GET /v1/batches/{id}`, `GET /v1/files/{id}/content`, and Anthropic
`POST /v1/messages/batches`, `GET /v1/messages/batches/{id}` and its `results_url` (JSONL). A batch
finishes after `batch_polls` status reads (never while `hold_batches` is set); its requests are then
executed once each, counted in `bodies` like live requests and in `executed` by custom_id.
`batch_errors` makes the next N executed batch requests come back as per-request errors (of `batch_error_status`).

Responses are deterministic functions of the request body (less the stream switches), so reruns can be compared
exactly, streamed or not.
"""

from __future__ import annotations

import hashlib
import json
import re
import threading
import time
from collections import Counter
from email.parser import BytesParser
from email.policy import HTTP
from pathlib import Path

from tests.local_http import LocalServer, QuietHandler

FIXTURES = Path(__file__).parent / "fixtures"
CREATED = "2025-01-01T00:00:00Z"
ANTHROPIC_ID = re.compile(r"^[a-zA-Z0-9_-]{1,64}$")


def digest_of(body: dict) -> str:
    body = {k: v for k, v in body.items() if k not in ("stream", "stream_options")}
    return hashlib.sha256(json.dumps(body, sort_keys=True).encode()).hexdigest()[:12]


def enqueued_tokens(body: dict) -> int:
    """What the fake OpenAI Batch counts a request as: its input's UTF-8 bytes + its output budget."""
    text = "".join(m.get("content") or "" for m in body.get("messages") or []) or body.get("prompt") or ""
    return len(text.encode()) + int(body.get("max_tokens") or body.get("max_completion_tokens") or 0)


def sse_chunks(data: dict) -> list[dict]:
    """A completion as the stream of chunks an OpenAI-compatible server sends for it (usage last)."""
    base = {k: data[k] for k in ("id", "created", "model", "system_fingerprint")}
    choice = data["choices"][0]
    text = choice["message"]["content"] if "message" in choice else choice["text"]
    pieces = [text[i:i + 5] for i in range(0, len(text), 5)]
    if "message" in choice:
        obj = "chat.completion.chunk"
        deltas = [{"role": "assistant", "content": ""}, *({"content": p} for p in pieces)]
        choices = [{"index": 0, "delta": d, "finish_reason": None} for d in deltas]
        choices.append({"index": 0, "delta": {}, "finish_reason": choice["finish_reason"]})
    else:
        obj = "text_completion"
        choices = [{"index": 0, "text": p, "finish_reason": None} for p in pieces]
        choices.append({"index": 0, "text": "", "finish_reason": choice["finish_reason"]})
    return [*({**base, "object": obj, "choices": [c]} for c in choices),
            {**base, "object": obj, "choices": [], "usage": data["usage"]}]


#: Gemini's OpenAI-compatible endpoint's answer to a `seed` (a JSON array, as quoted in the public issue threads).
GEMINI_SEED_400 = [{"error": {"code": 400, "message": "Invalid JSON payload received. Unknown name \"seed\": Cannot find "
                              "field.", "status": "INVALID_ARGUMENT"}}]
ANTHROPIC_EMPTY_400 = {"type": "error", "error": {"type": "invalid_request_error", "message": "messages.1: all messages "
                       "must have non-empty content except for the optional final assistant message"}}


def unanswered(path: str, body: dict, digest: str, fault: str) -> dict:
    """A chat completion without an answer: `empty` (content "", finish stop) or `thought_out` (thinking spent the
    whole budget: content null, finish length, every completion token a reasoning token)."""
    budget = body.get("max_completion_tokens") or body.get("max_tokens") or 16
    data = openai_reply(path, body, digest)
    if fault == "empty":
        data["choices"][0]["message"]["content"] = ""
    else:
        data["choices"][0].update(finish_reason="length", message={"role": "assistant", "content": None})
        data["usage"] = {"prompt_tokens": 7, "completion_tokens": budget, "total_tokens": 7 + budget,
                         "completion_tokens_details": {"reasoning_tokens": budget}}
    return data


def openai_reply(path: str, body: dict, digest: str, completion_tokens: int = 3) -> dict:
    """The deterministic chat or text completion for a request body."""
    text = f"reply-{digest} seed={body.get('seed')}"
    usage = {"prompt_tokens": 7, "completion_tokens": completion_tokens, "total_tokens": 7 + completion_tokens}
    if path.endswith("/chat/completions"):
        choice = {"index": 0, "finish_reason": "stop", "message": {"role": "assistant", "content": text}}
        obj = "chat.completion"
    else:
        choice = {"index": 0, "finish_reason": "length", "text": text, "logprobs": None}
        obj = "text_completion"
    return {"id": f"cmpl-{digest}", "object": obj, "created": 0, "model": body["model"], "choices": [choice],
            "usage": usage, "system_fingerprint": "fp_test"}


def anthropic_batch_message(digest: str) -> dict:
    """The recorded message with a per-request id and text, so batch results can be matched to requests."""
    data = json.loads((FIXTURES / "anthropic_message.json").read_text())
    data["id"] = f"msg_{digest}"
    data["content"][-1]["text"] = f"reply-{digest}"
    return data


class FakeServer(LocalServer):
    def __init__(self, latency_s: float = 0.0, count_file: str | None = None, batch_polls: int = 2) -> None:
        self.latency_s = latency_s
        self.completion_tokens = 3  # usage.completion_tokens of every live OpenAI reply
        self.stream_usage = True  # False: streams carry no usage chunk even when asked (llama-cpp-python's server)
        self.cut_streams = False  # True: a stream in flight is cut (chunked body left unfinished) when another request arrives
        self.arrivals = 0  # requests received so far
        self.faults: list[str] = []  # consumed one per request: "429", "500", "timeout", "malformed", and DIALECT_FAULTS
        self.rejects_seed = False  # answer a body with `seed` as Gemini's OpenAI-compatible endpoint does (400)
        self.received: list[tuple[str, dict]] = []  # every live request: (path, body)
        self.bodies: Counter[str] = Counter()
        self.count_file = count_file
        self.lock = threading.RLock()
        self.batch_polls = batch_polls  # status reads a batch answers unfinished before it completes
        self.hold_batches = False  # keep every batch unfinished (to interrupt a run while it polls)
        self.batch_errors = 0  # the next N executed batch requests come back as per-request errors
        self.batch_error_status = 500  # ... of this status (500: the provider's failure; 400: this request's)
        self.enqueued_limit: int | None = None  # OpenAI Batch: a batch past this many enqueued tokens fails whole
        self.peak_enqueued = 0  # most tokens ever enqueued at once (unfinished OpenAI batches)
        self.files: dict[str, bytes] = {}
        self.batches: dict[str, dict] = {}  # id -> OpenAI or Anthropic batch object
        self.batch_inputs: dict[str, list[dict]] = {}  # id -> submitted requests (custom_id, url, body)
        self.polls: Counter[str] = Counter()  # status reads per batch id
        self.executed: Counter[str] = Counter()  # batch requests run per custom_id
        super().__init__(self._handler())

    @property
    def total(self) -> int:
        return sum(self.bodies.values())

    def count(self, body: dict) -> str:
        """Record one executed request; returns its body digest."""
        digest = digest_of(body)
        with self.lock:
            self.bodies[digest] += 1
            if self.count_file:
                with open(self.count_file, "a") as fh:
                    fh.write(digest + "\n")
        return digest

    def _take_error(self) -> bool:
        with self.lock:
            if self.batch_errors > 0:
                self.batch_errors -= 1
                return True
            return False

    def _add_file(self, content: bytes, filename: str, purpose: str) -> dict:
        with self.lock:
            file_id = f"file-{len(self.files) + 1}"
            self.files[file_id] = content
        return {"id": file_id, "object": "file", "bytes": len(content), "created_at": 0, "filename": filename,
                "purpose": purpose, "status": "processed"}

    def _advance(self, batch_id: str) -> dict:
        """One status read: unfinished for `batch_polls` reads (or while held), then run every request once."""
        with self.lock:
            self.polls[batch_id] += 1
            batch = self.batches[batch_id]
            finished = batch.get("status") in ("completed", "failed") or batch.get("processing_status") == "ended"
            due = not finished and not self.hold_batches and self.polls[batch_id] > self.batch_polls
            if due:
                (self._finish_openai if "status" in batch else self._finish_anthropic)(batch)
            elif not finished and "status" in batch:
                batch["status"] = "validating" if self.polls[batch_id] == 1 else "in_progress"
            return dict(batch)

    def _finish_openai(self, batch: dict) -> None:
        out, err = [], []
        for i, line in enumerate(self.batch_inputs[batch["id"]]):
            digest = self.count(line["body"])
            self.executed[line["custom_id"]] += 1
            if self._take_error():
                kind = "server_error" if self.batch_error_status >= 500 else "invalid_request_error"
                resp = {"status_code": self.batch_error_status, "request_id": f"req_{digest}",
                        "body": {"error": {"message": "injected batch error", "type": kind}}}
                err.append({"id": f"batch_req_{i}", "custom_id": line["custom_id"], "response": resp, "error": None})
            else:
                resp = {"status_code": 200, "request_id": f"req_{digest}", "body": openai_reply(line["url"], line["body"], digest)}
                out.append({"id": f"batch_req_{i}", "custom_id": line["custom_id"], "response": resp, "error": None})
        for rows, field in ((out, "output_file_id"), (err, "error_file_id")):
            if rows:
                content = "".join(json.dumps(r) + "\n" for r in rows).encode()
                batch[field] = self._add_file(content, f"{batch['id']}_{field}.jsonl", "batch_output")["id"]
        batch.update(status="completed", completed_at=1,
                     request_counts={"total": len(out) + len(err), "completed": len(out), "failed": len(err)})

    def _finish_anthropic(self, batch: dict) -> None:
        rows, counts = [], Counter()
        for req in self.batch_inputs[batch["id"]]:
            digest = self.count(req["params"])
            self.executed[req["custom_id"]] += 1
            if self._take_error():
                kind = "overloaded_error" if self.batch_error_status >= 500 else "invalid_request_error"
                result = {"type": "errored", "error": {"type": "error", "error": {"type": kind,
                                                                                   "message": "injected batch error"}}}
            else:
                result = {"type": "succeeded", "message": anthropic_batch_message(digest)}
            counts[result["type"]] += 1
            rows.append({"custom_id": req["custom_id"], "result": result})
        self.files[batch["id"]] = "".join(json.dumps(r) + "\n" for r in rows).encode()
        batch.update(processing_status="ended", ended_at=CREATED, results_url=f"{self.url}/v1/messages/batches/{batch['id']}/results",
                     request_counts={"processing": 0, "succeeded": counts["succeeded"], "errored": counts["errored"],
                                     "canceled": 0, "expired": 0})

    def create_openai_batch(self, body: dict) -> tuple[int, dict]:
        """POST /v1/batches: validate the uploaded JSONL as the API does, then queue it."""
        content = self.files.get(body.get("input_file_id", ""))
        if content is None or body.get("completion_window") != "24h":
            return 400, {"error": {"message": "unknown input_file_id or bad completion_window", "type": "invalid_request_error"}}
        lines = [json.loads(x) for x in content.decode().splitlines() if x.strip()]
        ids = [x.get("custom_id") for x in lines]
        if not lines or len(set(ids)) != len(ids) or any(x.get("method") != "POST" or x.get("url") != body.get("endpoint") for x in lines):
            return 400, {"error": {"message": "batch lines need unique custom_id, POST and the batch endpoint", "type": "invalid_request_error"}}
        with self.lock:
            batch_id = f"batch_{len(self.batches) + 1}"
            tokens = sum(enqueued_tokens(x["body"]) for x in lines)
            queued = sum(sum(enqueued_tokens(x["body"]) for x in self.batch_inputs[b]) for b, v in self.batches.items()
                         if v.get("status") in ("validating", "in_progress"))
            if self.enqueued_limit is not None and queued + tokens > self.enqueued_limit:  # fails whole, as the API does
                self.batches[batch_id] = {"id": batch_id, "object": "batch", "endpoint": body["endpoint"], "status": "failed",
                                          "input_file_id": body["input_file_id"], "completion_window": "24h",
                                          "output_file_id": None, "error_file_id": None, "created_at": 0,
                                          "errors": {"object": "list", "data": [{"code": "token_limit_exceeded", "message":
                                                     f"Enqueued token limit reached. Limit: {self.enqueued_limit:,} enqueued tokens."}]}}
                self.batch_inputs[batch_id] = lines
                return 200, self.batches[batch_id]
            self.peak_enqueued = max(self.peak_enqueued, queued + tokens)
            self.batches[batch_id] = {"id": batch_id, "object": "batch", "endpoint": body["endpoint"], "errors": None,
                                      "input_file_id": body["input_file_id"], "completion_window": "24h", "status": "validating",
                                      "output_file_id": None, "error_file_id": None, "created_at": 0,
                                      "request_counts": {"total": len(lines), "completed": 0, "failed": 0}}
            self.batch_inputs[batch_id] = lines
        return 200, self.batches[batch_id]

    def create_anthropic_batch(self, body: dict) -> tuple[int, dict]:
        """POST /v1/messages/batches: validate the requests as the API does, then queue them."""
        reqs = body.get("requests") or []
        ids = [r.get("custom_id", "") for r in reqs]
        if not reqs or len(set(ids)) != len(ids) or not all(ANTHROPIC_ID.match(i) for i in ids) or any(
                not {"model", "max_tokens", "messages"} <= set(r.get("params") or {}) for r in reqs):
            return 400, {"type": "error", "error": {"type": "invalid_request_error", "message": "bad batch requests"}}
        with self.lock:
            batch_id = f"msgbatch_{len(self.batches) + 1:02d}"
            self.batches[batch_id] = {"id": batch_id, "type": "message_batch", "processing_status": "in_progress",
                                      "created_at": CREATED, "expires_at": "2025-01-02T00:00:00Z", "ended_at": None,
                                      "archived_at": None, "cancel_initiated_at": None, "results_url": None,
                                      "request_counts": {"processing": len(reqs), "succeeded": 0, "errored": 0,
                                                         "canceled": 0, "expired": 0}}
            self.batch_inputs[batch_id] = reqs
        return 200, self.batches[batch_id]

    def _handler(self) -> type[QuietHandler]:
        server = self

        class Handler(QuietHandler):
            def _json(self, status: int, data: dict) -> None:
                self._send(status, json.dumps(data).encode(), {"x-request-id": "req_batch", "request-id": "req_batch"})

            def do_GET(self) -> None:
                path = self.path.split("?")[0]
                parts = path.strip("/").split("/")
                if path.startswith("/v1/files/") and path.endswith("/content") and parts[2] in server.files:
                    return self._send(200, server.files[parts[2]], {"Content-Type": "application/octet-stream"})
                if path.startswith("/v1/messages/batches/") and path.endswith("/results") and parts[3] in server.files:
                    return self._send(200, server.files[parts[3]], {"Content-Type": "application/binary"})
                batch_id = parts[-1]
                if path in (f"/v1/batches/{batch_id}", f"/v1/messages/batches/{batch_id}") and batch_id in server.batches:
                    return self._json(200, server._advance(batch_id))
                self._json(404, {"error": {"message": f"no such resource {path}", "type": "not_found_error"}})

            def do_POST(self) -> None:
                raw = self.rfile.read(int(self.headers.get("Content-Length", 0)))
                if self.path == "/v1/files":
                    form = BytesParser(policy=HTTP).parsebytes(
                        b"Content-Type: " + self.headers["Content-Type"].encode() + b"\r\n\r\n" + raw)
                    fields = {p.get_param("name", header="content-disposition"): p for p in form.iter_parts()}
                    if "file" not in fields or fields.get("purpose") is None or fields["purpose"].get_content().strip() != "batch":
                        return self._json(400, {"error": {"message": "need a file and purpose=batch", "type": "invalid_request_error"}})
                    upload = fields["file"]
                    return self._json(200, server._add_file(upload.get_payload(decode=True), upload.get_filename(), "batch"))
                body = json.loads(raw)
                if self.path == "/v1/batches":
                    return self._json(*server.create_openai_batch(body))
                if self.path == "/v1/messages/batches":
                    return self._json(*server.create_anthropic_batch(body))
                digest = server.count(body)
                with server.lock:
                    server.received.append((self.path, body))
                    server.arrivals += 1
                    self.arrival = server.arrivals
                    fault = server.faults.pop(0) if server.faults else None
                if server.latency_s:
                    time.sleep(server.latency_s)
                if server.rejects_seed and "seed" in body:
                    return self._send(400, json.dumps(GEMINI_SEED_400).encode())
                if self.path.endswith("/messages") and any(not m.get("content") for m in body.get("messages", [])):
                    return self._send(400, json.dumps(ANTHROPIC_EMPTY_400).encode(), {"request-id": "req_empty"})
                if fault == "500-final":
                    return self._send(500, b'{"error":{"message":"do not retry","type":"server_error"}}',
                                      {"x-should-retry": "false"})
                if fault == "400-retry":
                    return self._send(400, b'{"error":{"message":"try again","type":"invalid_request_error"}}',
                                      {"x-should-retry": "true", "retry-after-ms": "10"})
                if fault in ("empty", "thought_out") and self.path.endswith("/messages"):
                    data = {**json.loads((FIXTURES / "anthropic_message.json").read_text()),
                            "content": [{"type": "text", "text": ""}]}
                    return self._send(200, json.dumps(data).encode(), {"request-id": "req_anthropic_empty"})
                if fault in ("empty", "thought_out"):
                    return self._send(200, json.dumps(unanswered(self.path, body, digest, fault)).encode(),
                                      {"x-request-id": f"req_{digest}"})
                if fault == "429":
                    return self._send(429, b'{"error":{"message":"rate limited","type":"rate_limit"}}', {"retry-after-ms": "10"})
                if fault == "500":
                    return self._send(500, b'{"error":{"message":"boom","type":"server_error"}}', {"retry-after-ms": "10"})
                if body.get("stream"):
                    return self._stream(body, digest, fault)
                if fault == "timeout":
                    time.sleep(2.0)
                if fault == "malformed":
                    return self._send(200, b'{"id": "x", "choices": [], "usage": {}}', {"x-request-id": "req_bad"})
                if self.path.endswith("/messages"):
                    data = json.loads((FIXTURES / "anthropic_message.json").read_text())
                    return self._send(200, json.dumps(data).encode(), {"request-id": "req_anthropic_1"})
                data = openai_reply(self.path, body, digest, server.completion_tokens)
                self._send(200, json.dumps(data).encode(), {"x-request-id": f"req_{digest}"})

            def _stream(self, body: dict, digest: str, fault: str | None) -> None:
                """Server-sent events, chunked; a `timeout` fault stalls after the first chunk."""
                self.send_response(200)
                self.send_header("Content-Type", "text/event-stream")
                self.send_header("Transfer-Encoding", "chunked")
                self.send_header("x-request-id", "req_bad" if fault == "malformed" else f"req_{digest}")
                self.end_headers()
                if fault == "malformed":
                    chunks = [{"id": "x", "choices": []}]
                else:
                    chunks = sse_chunks(openai_reply(self.path, body, digest, server.completion_tokens))
                    if not ((body.get("stream_options") or {}).get("include_usage") and server.stream_usage):
                        chunks.pop()
                try:
                    for i, chunk in enumerate([*(json.dumps(c) for c in chunks), "[DONE]"]):
                        if server.cut_streams and i and server.arrivals != self.arrival:  # llama-cpp-python's server
                            self.close_connection = True
                            return
                        if server.cut_streams:
                            time.sleep(0.005)  # decoding: long enough for the next request to arrive
                        event = f"data: {chunk}\n\n".encode()
                        self.wfile.write(b"%x\r\n%s\r\n" % (len(event), event))
                        self.wfile.flush()
                        if fault == "timeout" and i == 0:
                            time.sleep(2.0)
                    self.wfile.write(b"0\r\n\r\n")
                except OSError:  # the client gave up on the stream
                    self.close_connection = True

        return Handler


if __name__ == "__main__":  # used by the kill/resume test as a separate process
    import sys

    with FakeServer(latency_s=float(sys.argv[1]), count_file=sys.argv[2]) as srv:
        Path(sys.argv[3]).write_text(srv.url)
        while True:
            time.sleep(1)
