"""A one-slot OpenAI-protocol chat server (asyncio, in a thread), as llama.cpp with one slot or a saturated vLLM
behave: requests queue (FIFO) and are served one at a time, each decoding `max_tokens` tokens at `token_s` a token.

Like those servers, a plain (non-streamed) request is decoded to the end even when its client has gone (it finds
out only when it writes the answer), while a streamed request stops at the first token it cannot write.
`decoded` counts every token decoded, `requests` every request received; `wait_idle` waits for the queue to drain.
"""

from __future__ import annotations

import asyncio
import json
import threading
import time

USAGE_IN = 5


def _chunk(payload: dict | str) -> bytes:
    event = f"data: {payload if isinstance(payload, str) else json.dumps(payload)}\n\n".encode()
    return b"%x\r\n%s\r\n" % (len(event), event)


class OneSlotServer:
    def __init__(self, token_s: float = 0.005) -> None:
        self.token_s = token_s
        self.decoded = self.requests = self.busy = 0
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._loop.run_forever, daemon=True)
        self._server: asyncio.AbstractServer | None = None
        self._slot: asyncio.Lock | None = None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self._server.sockets[0].getsockname()[1]}"

    def __enter__(self) -> "OneSlotServer":
        self._thread.start()
        asyncio.run_coroutine_threadsafe(self._start(), self._loop).result()
        return self

    def __exit__(self, *exc: object) -> None:
        self._loop.call_soon_threadsafe(self._server.close)
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join()

    async def _start(self) -> None:
        self._slot = asyncio.Lock()
        self._server = await asyncio.start_server(self._handle, "127.0.0.1", 0)

    def wait_idle(self, timeout_s: float = 30.0) -> None:
        """Until no request is queued or decoding (abandoned plain requests keep the slot busy)."""
        end = time.monotonic() + timeout_s
        while self.busy and time.monotonic() < end:
            time.sleep(0.01)

    async def _handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            while True:
                head = await reader.readuntil(b"\r\n\r\n")
                length = next(int(line.split(b":")[1]) for line in head.split(b"\r\n")
                              if line.lower().startswith(b"content-length:"))
                body = json.loads(await reader.readexactly(length))
                self.requests += 1
                self.busy += 1
                try:
                    async with self._slot:
                        await (self._stream(body, writer) if body.get("stream") else self._plain(body, writer))
                finally:
                    self.busy -= 1
        except (asyncio.IncompleteReadError, ConnectionError):
            pass
        finally:
            writer.close()

    async def _decode_one(self) -> str:
        await asyncio.sleep(self.token_s)
        self.decoded += 1
        return f"t{self.decoded % 10} "

    async def _plain(self, body: dict, writer: asyncio.StreamWriter) -> None:
        text = "".join([await self._decode_one() for _ in range(body["max_tokens"])])
        data = json.dumps({"id": "cmpl-1", "object": "chat.completion", "model": body["model"], "system_fingerprint": "fp",
                           "choices": [{"index": 0, "finish_reason": "length",
                                        "message": {"role": "assistant", "content": text}}],
                           "usage": {"prompt_tokens": USAGE_IN, "completion_tokens": body["max_tokens"]}}).encode()
        writer.write(b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n%s" % (len(data), data))
        await writer.drain()  # a client that has gone makes this raise: the tokens were decoded in vain

    async def _stream(self, body: dict, writer: asyncio.StreamWriter) -> None:
        base = {"id": "cmpl-1", "object": "chat.completion.chunk", "model": body["model"], "system_fingerprint": "fp"}
        writer.write(b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nTransfer-Encoding: chunked\r\n\r\n")
        for _ in range(body["max_tokens"]):
            token = await self._decode_one()
            if writer.is_closing():
                raise ConnectionResetError("client gone")  # stop decoding, like vLLM's abort on disconnect
            writer.write(_chunk({**base, "choices": [{"index": 0, "delta": {"content": token}, "finish_reason": None}]}))
            await writer.drain()
        writer.write(_chunk({**base, "choices": [{"index": 0, "delta": {}, "finish_reason": "length"}]})
                     + _chunk({**base, "choices": [], "usage": {"prompt_tokens": USAGE_IN,
                                                                 "completion_tokens": body["max_tokens"]}})
                     + _chunk("[DONE]") + b"0\r\n\r\n")
        await writer.drain()
