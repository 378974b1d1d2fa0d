"""Benchmark: ``evalkit judge run`` over the 199 gold items x 3 repeats at concurrency 8, and
``evalkit score --all --journal --judge`` over a 500-session ledger at concurrency 8, against a
loopback server (:mod:`evalkit.judge.scripted_server`, OpenAI wire protocol) that answers
every call after 50 ms.

The ideal wall time is ``calls x 50 ms / 8`` (8 calls always in flight, no overhead); the
figure is the measured wall time as a ratio of it (issue 11 target: <= 1.5x). The command runs
as a separate process, as a user runs it; two ratios are printed: the whole process (start-up,
imports, reading the gold set included) and the run itself (the summary line's own time, from
the first call to the last line written). Each is the median of ``REPEATS`` runs, and the
server runs in this process, in threads of its own. For ``score --judge`` (issue 19 target:
<= 1.5x) the ideal is ``sessions x 50 ms / 8``; the figures are the whole process (scoring and
journaling included) and the judge's own call time. Its baseline in the same run is the bare
``openai`` SDK making as many calls (a prompt of the same size, concurrency 8, in a process of
its own): on a shared machine the ideal is out of reach of the SDK too, and the ratio to the
SDK is evalkit's own overhead.
"""

from __future__ import annotations

import os
import re
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
N_ITEMS, N_REPEATS, CONCURRENCY, DELAY_S = 199, 3, 8, 0.05
REPEATS = 3
TARGET_RATIO = 1.5
_RUN_TIME = re.compile(r"(\d+) call\(s\) in ([0-9.]+) s")


def _one_run(url: str, out: Path) -> tuple[float, float, int]:
    """(process wall seconds, in-run seconds, calls) of one ``evalkit judge run``."""
    command = (
        "-m evalkit judge run --gold gold/instruction-adherence/v2 --judge openai:bench "
        f"--base-url {url} --repeats {N_REPEATS} --concurrency {CONCURRENCY} --out {out} --quiet"
    )
    args = [sys.executable, *command.split()]
    env = {k: v for k, v in os.environ.items() if k not in ("OPENAI_API_KEY", "OPENAI_BASE_URL")}
    started = time.perf_counter()
    done = subprocess.run(args, cwd=ROOT, env=env, capture_output=True, text=True, check=False)
    wall = time.perf_counter() - started
    match = _RUN_TIME.search(done.stderr)
    if done.returncode != 0 or match is None:
        raise RuntimeError(f"evalkit judge run failed ({done.returncode}): {done.stderr[-2000:]}")
    return wall, float(match.group(2)), int(match.group(1))


_JUDGE_TIME = re.compile(r"judge openai:bench: (\d+) call\(s\) in ([0-9.]+) s")
N_SESSIONS = 500
#: events per session of the benchmark's ledger (a realistic orchestrator session, not the
#: scoring benchmark's stress ledger, whose scoring would be the figure instead of the judge)
EVENTS_PER_SESSION = 50


def _one_scoring(url: str, metrics: Path) -> tuple[float, float, int]:
    """(process wall seconds, judge call seconds, calls) of one ``score --all --journal --judge``."""
    command = (
        f"-m evalkit score --metrics-dir {metrics} --all --journal --judge openai:bench "
        f"--base-url {url} --concurrency {CONCURRENCY} --no-progress --out {metrics}/table.csv"
    )
    env = {k: v for k, v in os.environ.items() if k not in ("OPENAI_API_KEY", "OPENAI_BASE_URL")}
    started = time.perf_counter()
    done = subprocess.run(
        [sys.executable, *command.split()], cwd=ROOT, env=env, capture_output=True, text=True,
        check=False,
    )  # fmt: skip
    wall = time.perf_counter() - started
    match = _JUDGE_TIME.search(done.stderr)
    if done.returncode != 0 or match is None:
        raise RuntimeError(
            f"evalkit score --judge failed ({done.returncode}): {done.stderr[-2000:]}"
        )
    return wall, float(match.group(2)), int(match.group(1))


#: The bare SDK: ``n`` chat completions at concurrency ``c``; prints the seconds they took.
_SDK_FLOOR = """
import asyncio, sys, time
from openai import AsyncOpenAI
url, n, c, size = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
prompt = "x" * size
async def main():
    client = AsyncOpenAI(base_url=url, api_key="bench", max_retries=0)
    gate = asyncio.Semaphore(c)
    async def one():
        async with gate:
            await client.chat.completions.create(
                model="bench", messages=[{"role": "user", "content": prompt}],
                max_tokens=1024, temperature=0.0)
    started = time.perf_counter()
    await asyncio.gather(*(one() for _ in range(n)))
    print(time.perf_counter() - started)
    await client.close()
asyncio.run(main())
"""
#: characters of a benchmark session's prompt (about 1,700 tokens)
PROMPT_CHARS = 6_800


def _sdk_floor(url: str, calls: int) -> tuple[float, float]:
    """(process wall seconds, call seconds) of the bare ``openai`` SDK making ``calls`` calls."""
    args = [sys.executable, "-c", _SDK_FLOOR, url, str(calls), str(CONCURRENCY), str(PROMPT_CHARS)]
    started = time.perf_counter()
    done = subprocess.run(args, capture_output=True, text=True, check=False)
    wall = time.perf_counter() - started
    if done.returncode != 0:
        raise RuntimeError(f"the bare SDK run failed: {done.stderr[-2000:]}")
    return wall, float(done.stdout.strip())


def bench_scoring(server: object, tmp: Path) -> None:
    """``score --all --journal --judge`` over 500 sessions: wall time against the ideal."""
    from evalkit.simulate.hostile_ledgers import generate_ledger

    walls, runs, floors, floor_walls = [], [], [], []
    url = server.base_url("openai")  # type: ignore[attr-defined]
    for index in range(REPEATS):
        metrics = tmp / f"ledger{index}"
        sessions = generate_ledger(
            metrics, n_sessions=N_SESSIONS, n_events=EVENTS_PER_SESSION * N_SESSIONS
        )
        wall, run, calls = _one_scoring(url, metrics)
        walls.append(wall)
        runs.append(run)
        floor_wall, floor = _sdk_floor(url, calls)  # interleaved: the same load as the run
        floor_walls.append(floor_wall)
        floors.append(floor)
    ideal = calls * DELAY_S / CONCURRENCY
    wall, run, floor, floor_wall = (
        statistics.median(x) for x in (walls, runs, floors, floor_walls)
    )
    print(
        f"score --all --journal --judge: {len(sessions)} sessions ({calls} records judged), "
        f"concurrency {CONCURRENCY}, server answers after {DELAY_S * 1000:.0f} ms"
    )
    print(f"  ideal (records x {DELAY_S * 1000:.0f} ms / {CONCURRENCY}): {ideal:.2f} s")
    print(
        f"  whole process: median {wall:.2f} s = {wall / ideal:.2f}x ideal; "
        f"the judge's calls: median {run:.2f} s = {run / ideal:.2f}x ideal "
        f"(target <= {TARGET_RATIO}x; {REPEATS} runs: "
        + ", ".join(f"{w:.2f}/{r:.2f} s" for w, r in zip(walls, runs, strict=True))
        + ")"
    )
    print(
        f"  the bare openai SDK, {calls} calls of {PROMPT_CHARS:,} characters at concurrency "
        f"{CONCURRENCY} in this run: median {floor:.2f} s = {floor / ideal:.2f}x ideal; "
        f"the judge's calls are {run / floor:.2f}x the SDK's time ("
        + ", ".join(f"{f:.2f} s" for f in floors)
        + ")"
    )
    print(
        f"  the bare SDK as a whole process (python start-up and `import openai` included): "
        f"median {floor_wall:.2f} s = {floor_wall / ideal:.2f}x ideal; evalkit's whole process "
        f"is {wall / floor_wall:.2f}x it"
    )


def main() -> None:
    from evalkit.judge.scripted_server import ScriptedServer

    ideal = N_ITEMS * N_REPEATS * DELAY_S / CONCURRENCY
    walls, runs = [], []
    with ScriptedServer(delay=DELAY_S) as server, tempfile.TemporaryDirectory() as tmp:
        for index in range(REPEATS):
            wall, run, calls = _one_run(server.base_url("openai"), Path(tmp) / f"run{index}.jsonl")
            if calls != N_ITEMS * N_REPEATS:
                raise RuntimeError(f"expected {N_ITEMS * N_REPEATS} calls, the run made {calls}")
            walls.append(wall)
            runs.append(run)
        _print_run(ideal, walls, runs)
        bench_scoring(server, Path(tmp))


def _print_run(ideal: float, walls: list[float], runs: list[float]) -> None:
    wall, run = statistics.median(walls), statistics.median(runs)
    print(
        f"judge run: {N_ITEMS} items x {N_REPEATS} repeats = {N_ITEMS * N_REPEATS} calls, "
        f"concurrency {CONCURRENCY}, server answers after {DELAY_S * 1000:.0f} ms"
    )
    print(f"  ideal (calls x {DELAY_S * 1000:.0f} ms / {CONCURRENCY}): {ideal:.2f} s")
    print(
        f"  whole process: median {wall:.2f} s = {wall / ideal:.2f}x ideal; "
        f"the run itself: median {run:.2f} s = {run / ideal:.2f}x ideal "
        f"(target <= {TARGET_RATIO}x; {REPEATS} runs: "
        + ", ".join(f"{w:.2f}/{r:.2f} s" for w, r in zip(walls, runs, strict=True))
        + ")"
    )


if __name__ == "__main__":
    main()
