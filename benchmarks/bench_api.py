"""API client throughput: the real provider + runner + store against a keep-alive asyncio server with fixed latency.

    python -m benchmarks.bench_api [--provider openai|anthropic] [--latency 0.05] [--n 4000]
                                   [--concurrency 1,4,16,64,256] [--stream] [--uvloop]

The server (a raw asyncio HTTP/1.1 server with keep-alive, in its own process so it neither shares the
client's interpreter nor counts in its CPU time) answers OpenAI chat completions and Anthropic messages after
`--latency` seconds. For each concurrency limit the client sends `--n` distinct samples through
`GenerationRun.run` (the provider's live transport, bounded concurrency, every result appended to a real store) and
prints requests/s and the ratio to the ideal concurrency / latency over the sending phase (first request's start to
last answer), the same ratio over the whole run (planning the n keys and opening the client included), and the
client process's CPU milliseconds per request (whole run).
`--stream` streams the openai requests (the server then answers in server-sent events: a role chunk, one chunk
per word, a finish chunk and a usage chunk); `--uvloop` runs the client on uvloop's event loop (if installed).
The server's own capacity is printed first (raw asyncio client, no SDK), so it is seen not to be the bottleneck.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import socket
import subprocess
import sys
import tempfile
import time

REPLY_OPENAI = {"id": "cmpl-bench", "object": "chat.completion", "created": 0, "model": "bench",
                "choices": [{"index": 0, "finish_reason": "stop",
                             "message": {"role": "assistant", "content": "A short reply of about twenty tokens " * 3}}],
                "usage": {"prompt_tokens": 30, "completion_tokens": 20, "total_tokens": 50},
                "system_fingerprint": "fp_bench"}
REPLY_ANTHROPIC = {"id": "msg_bench", "type": "message", "role": "assistant", "model": "bench",
                   "content": [{"type": "text", "text": "A short reply of about twenty tokens " * 3}],
                   "stop_reason": "end_turn", "stop_sequence": None, "usage": {"input_tokens": 30, "output_tokens": 20}}


def sse_openai() -> bytes:
    """REPLY_OPENAI as a chunked server-sent event stream."""
    base = {k: REPLY_OPENAI[k] for k in ("id", "created", "model", "system_fingerprint")}
    words = REPLY_OPENAI["choices"][0]["message"]["content"].split(" ")
    deltas = [{"role": "assistant", "content": ""}, *({"content": w + " "} for w in words[:-1]), {"content": words[-1]}]
    chunks = [{**base, "object": "chat.completion.chunk", "choices": [{"index": 0, "delta": d, "finish_reason": None}]}
              for d in deltas]
    chunks.append({**base, "object": "chat.completion.chunk", "choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]})
    chunks.append({**base, "object": "chat.completion.chunk", "choices": [], "usage": REPLY_OPENAI["usage"]})
    events = [b"data: " + json.dumps(c).encode() + b"\n\n" for c in chunks] + [b"data: [DONE]\n\n"]
    return b"".join(b"%x\r\n%s\r\n" % (len(e), e) for e in events) + b"0\r\n\r\n"


async def serve(port: int, latency: float) -> None:
    bodies = {"openai": json.dumps(REPLY_OPENAI).encode(), "anthropic": json.dumps(REPLY_ANTHROPIC).encode()}
    stream = sse_openai()

    async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        sock = writer.get_extra_info("socket")
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        try:
            while True:
                head = await reader.readuntil(b"\r\n\r\n")
                length = 0
                for line in head.split(b"\r\n"):
                    if line[:15].lower() == b"content-length:":
                        length = int(line[15:])
                request = await reader.readexactly(length) if length else b""
                await asyncio.sleep(latency)
                if b'"stream": true' in request:
                    writer.write(b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nx-request-id: req-bench\r\n"
                                 b"Transfer-Encoding: chunked\r\n\r\n" + stream)
                    await writer.drain()
                    continue
                body = bodies["anthropic" if b"/messages" in head.split(b"\r\n", 1)[0] else "openai"]
                writer.write(b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nx-request-id: req-bench\r\n"
                             b"Content-Length: " + str(len(body)).encode() + b"\r\n\r\n" + body)
                await writer.drain()
        except (asyncio.IncompleteReadError, ConnectionError):
            pass
        finally:
            writer.close()

    server = await asyncio.start_server(handle, "127.0.0.1", port, backlog=1024)
    print("ready", flush=True)
    async with server:
        await server.serve_forever()


async def raw_capacity(port: int, n: int, concurrency: int) -> float:
    """Requests/s the server sustains for a minimal keep-alive client (no SDK)."""
    body = json.dumps({"model": "bench", "messages": [{"role": "user", "content": "x"}]}).encode()
    req = (b"POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: "
           + str(len(body)).encode() + b"\r\n\r\n" + body)
    left = n

    async def worker() -> None:
        nonlocal left
        reader, writer = await asyncio.open_connection("127.0.0.1", port)
        while left > 0:
            left -= 1
            writer.write(req)
            head = await reader.readuntil(b"\r\n\r\n")
            length = int(head.lower().split(b"content-length: ")[1].split(b"\r\n")[0])
            await reader.readexactly(length)
        writer.close()

    start = time.perf_counter()
    await asyncio.gather(*(worker() for _ in range(concurrency)))
    return n / (time.perf_counter() - start)


def cpu_s() -> float:
    t = os.times()
    return t.user + t.system


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--provider", choices=("openai", "anthropic"), default="openai")
    ap.add_argument("--latency", type=float, default=0.05)
    ap.add_argument("--n", type=int, default=4000, help="requests per concurrency limit (the ramp-down of the "
                    "last `concurrency` requests costs about concurrency / n of the ideal)")
    ap.add_argument("--concurrency", default="1,4,16,64,256")
    ap.add_argument("--stream", action="store_true", help="stream the openai requests (server-sent events)")
    ap.add_argument("--uvloop", action="store_true", help="run the client on uvloop")
    ap.add_argument("--serve", type=int, help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.serve is not None:
        asyncio.run(serve(args.serve, args.latency))
        return
    if args.uvloop:
        import uvloop

        asyncio.set_event_loop_policy(uvloop.EventLoopPolicy())

    from mirage.config.generate import ModelSpec
    from mirage.generate.runner import GenerationRun, Settings
    from mirage.generate.store import Store

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    server = subprocess.Popen([sys.executable, "-m", "benchmarks.bench_api", "--serve", str(port),
                               "--latency", str(args.latency)], stdout=subprocess.PIPE, text=True)
    try:
        assert server.stdout.readline().strip() == "ready"
        cap = asyncio.run(raw_capacity(port, 4000, 256))
        print(f"server capacity (raw keep-alive client, concurrency 256): {cap:.0f} req/s "
              f"(ideal {256 / args.latency:.0f}); provider {args.provider}, latency {args.latency * 1000:.0f} ms, "
              f"n = {args.n} per row, stream {args.stream}, uvloop {args.uvloop}, load average {os.getloadavg()[0]:.2f}")
        print("req/s and ratio: the sending phase (first request's start to last answer); ratio e2e: the whole "
              "GenerationRun.run, planning n keys, opening the client and re-checking the store included; "
              "setup s: that difference")
        print(f"{'concurrency':>11} {'req/s':>8} {'ideal':>8} {'ratio':>6} {'ratio e2e':>9} {'setup s':>7} "
              f"{'CPU ms/req':>10} {'errors':>6}")
        with tempfile.TemporaryDirectory() as tmp:
            for conc in (int(c) for c in args.concurrency.split(",")):
                spec = ModelSpec(provider=args.provider, model_id="bench", base_url=f"http://127.0.0.1:{port}" +
                                 ("/v1" if args.provider == "openai" else ""), max_concurrency=conc, max_retries=0,
                                 stream=args.stream if args.provider == "openai" else None)
                rows = [{"row_id": f"q{i}", "request_id": f"r{conc}-{i}", "condition": "C1",
                         "messages": [{"role": "user", "content": f"bench prompt {i} " * 10}]} for i in range(args.n)]
                st = Settings(n_samples=1, max_tokens=64, temperature=0.7, top_p=1.0, root_seed=1)
                starts, ends = [], []

                def seen(_s: object, r: object) -> None:  # the sending phase: first request's start to last answer
                    ends.append(time.perf_counter())
                    starts.append(ends[-1] - r.latency_s)

                with Store.open(f"{tmp}/{conc}") as store:
                    runner = GenerationRun("bench", spec, st, rows, store, progress=seen)
                    c0, t0 = cpu_s(), time.perf_counter()
                    runner.run()
                    wall, cpu = time.perf_counter() - t0, cpu_s() - c0
                    runner.close()
                    errors = len(store.failed)
                    assert len(store.done) + errors == args.n
                rate, ideal = args.n / (max(ends) - min(starts)), conc / args.latency
                print(f"{conc:>11} {rate:>8.1f} {ideal:>8.0f} {rate / ideal:>6.2f} {args.n / wall / ideal:>9.2f} "
                      f"{wall - (max(ends) - min(starts)):>7.2f} {1000 * cpu / args.n:>10.2f} {errors:>6}", flush=True)
        print(f"load average after: {os.getloadavg()[0]:.2f}")
    finally:
        server.terminate()
        server.wait()


if __name__ == "__main__":
    main()
