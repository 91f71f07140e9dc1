"""What one streamed model call costs a process, through OpenAIClient (vance/llm_http.py)
against a running scripted model (vance/testing/scripted_llm.py), under uvloop:

  memory: N calls held at the model's time to first token (run the model with
          MODEL_TTFT_MS=3000 MODEL_STREAM_MS=100 MODEL_CHUNKS=8): RSS and pymalloc blocks
          added per call in flight, after warm-up rounds of the same calls.
  cpu:    CALLS calls, N at once, each streamed into a synchronous sink as the worker's
          EventPublisher.chunk is (run the model with MODEL_TTFT_MS=100 MODEL_STREAM_MS=300
          MODEL_ANSWER_TOOL=respond MODEL_CHUNKS=8): process CPU per call; `--worker-sink`
          adds the worker's EventPublisher and Flusher behind the sink.

Run as a file (bench/__init__.py imports vance), `--repo` putting another checkout's `vance`
first on the path (main's client, for A/B):
  PYTHONPATH=$PWD python bench/model_calls.py memory --port P --n 300 [--repo /work/main]
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import sys
import time
from typing import Any


def _rss() -> int:
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * 4096


async def _memory(client: Any, n: int, warm: int) -> str:
    messages = [{"role": "user", "content": "hello there"}]

    async def one() -> object:
        return await client.complete(tier="default", messages=messages)

    for _ in range(2):
        await asyncio.gather(*(one() for _ in range(warm)))
    gc.collect()
    rss0, blocks0 = _rss(), sys.getallocatedblocks()
    tasks = [asyncio.create_task(one()) for _ in range(n)]
    await asyncio.sleep(1.5)  # every call sent, none answered (the model's TTFT is longer)
    gc.collect()
    rss1, blocks1 = _rss(), sys.getallocatedblocks()
    await asyncio.gather(*tasks)
    return (
        f"n={n} idle {rss0 / 2**20:.1f} MiB busy {rss1 / 2**20:.1f} MiB -> "
        f"{(rss1 - rss0) / n / 1024:.1f} KiB per call; blocks {(blocks1 - blocks0) / n:.0f}/call"
    )


async def _cpu(client: Any, n: int, calls: int, worker_sink: bool) -> str:
    pieces = 0

    def count(text: str) -> None:
        nonlocal pieces
        pieces += 1

    flusher: Any = None
    if worker_sink:
        # The worker's own sink: a turn's EventPublisher, its reports held and sent by the
        # worker's one Flusher (here to nowhere).
        from engine_worker.reports import EventPublisher, Flusher

        flusher = Flusher(lambda message: None)

    async def one(i: int) -> None:
        sink = count
        if flusher is not None:
            publisher = EventPublisher(f"t-{i}", flusher)

            def sink(text: str) -> None:
                count(text)
                publisher.chunk(text)

        await client.complete(
            tier="default",
            messages=[{"role": "user", "content": f"hello there {i}"}],
            on_chunk=sink,
            stream_args={"respond": "message"},
        )

    await asyncio.gather(*(one(i) for i in range(n)))  # warm-up: connections, imports
    pieces = 0
    queue = iter(range(calls))

    async def lane() -> None:
        for i in queue:
            await one(i)

    cpu0, wall0 = time.process_time(), time.perf_counter()
    await asyncio.gather(*(lane() for _ in range(n)))
    cpu, wall = time.process_time() - cpu0, time.perf_counter() - wall0
    return (
        f"calls={calls} at once={n} wall {wall:.1f} s cpu {cpu:.2f} s -> "
        f"{cpu / calls * 1e3:.3f} ms per call, {pieces / calls:.1f} pieces per call"
    )


async def _main(ns: argparse.Namespace) -> None:
    from vance import llm_http
    from vance.config import LlmConfig
    from vance.llm_http import OpenAIClient

    print(f"client: {llm_http.__file__}")

    config = LlmConfig(api_base=f"http://127.0.0.1:{ns.port}/v1", model="openai/x")
    client = OpenAIClient(config)
    try:
        if ns.what == "memory":
            print(await _memory(client, ns.n, ns.warm))
        else:
            print(await _cpu(client, ns.n, ns.calls, ns.worker_sink))
    finally:
        await client.aclose()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("what", choices=("memory", "cpu"))
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--n", type=int, default=100, help="calls at once")
    parser.add_argument("--warm", type=int, default=10, help="calls per warm-up round")
    parser.add_argument("--calls", type=int, default=2000, help="cpu: calls in all")
    parser.add_argument(
        "--worker-sink", action="store_true", help="cpu: the worker's EventPublisher as sink"
    )
    parser.add_argument("--repo", default="", help="another checkout's vance (A/B)")
    ns = parser.parse_args()
    if ns.repo:
        sys.path.insert(0, ns.repo)
    import uvloop

    uvloop.run(_main(ns))


if __name__ == "__main__":
    main()
