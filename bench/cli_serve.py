"""Benchmark: ``graphsvc search``, ``read`` and ``inspect`` with a running serve and no setting.

    flock -x /tmp/graphsvc-cpu.lock .venv/bin/python bench/cli_serve.py [--runs 5] [--json OUT]

A managed Neo4j is started for the run (its own state folder), then ``graphsvc serve
--seed`` on it: the demo corpus is loaded and the server records itself in the state
folder. Each command then runs ``--runs`` times in turn two ways, in fresh processes
with nothing but the database's connection settings and the state folder in the
environment (no ``GRAPHSVC_SERVER_URL``):

- **found**: as a user types it; the command finds the running serve through the state
  folder (``graphsvc/cli/discovery.py``) and asks it over HTTP;
- **direct**: the same command with ``--server ''`` (the baseline: it opens the
  database, loads the tokenizer and the query encoder itself).

Prints the median wall time and peak resident memory of each, and the ratio;
writes ``bench/results/cli_serve.json``.
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import socket
import statistics
import subprocess
import sys
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import httpx  # noqa: E402

from bench.harness import BenchNeo4j, child_env  # noqa: E402

QUERY = "retry storm"


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def start_serve(env: dict[str, str]) -> subprocess.Popen[bytes]:
    """``graphsvc serve --seed`` on a free port, once it answers ``/readyz``."""
    port = _free_port()
    proc = subprocess.Popen(
        [sys.executable, "-m", "graphsvc", "serve", "--seed", "--port", str(port)],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    deadline = time.monotonic() + 900
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise SystemExit(f"graphsvc serve exited with {proc.returncode}")
        try:
            if httpx.get(f"http://127.0.0.1:{port}/readyz", timeout=2).status_code == 200:
                return proc
        except httpx.HTTPError:
            pass
        time.sleep(0.2)
    proc.kill()
    raise SystemExit("graphsvc serve was not ready in 15 minutes")


def run_cli(argv: list[str], env: dict[str, str]) -> tuple[float, float, str]:
    """Wall seconds, peak RSS (MiB) and stdout of one ``graphsvc`` process."""
    started = time.monotonic()
    proc = subprocess.Popen(
        [sys.executable, "-m", "graphsvc", *argv],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
    )
    assert proc.stdout is not None
    out = proc.stdout.read()
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.monotonic() - started
    proc.returncode = os.waitstatus_to_exitcode(status)
    if proc.returncode != 0:
        raise SystemExit(f"graphsvc {' '.join(argv)} exited with {proc.returncode}")
    return wall, usage.ru_maxrss / 1024, out.decode()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--json", type=Path, default=ROOT / "bench/results/cli_serve.json")
    args = parser.parse_args()

    neo = BenchNeo4j("cli-serve")
    env = child_env(neo)
    serve = start_serve(env)
    try:
        _, _, hits = run_cli(["search", QUERY, "--subject", "demo", "--json"], env)
        atom = json.loads(hits)["hits"][0]["atom"]["atomId"]
        commands = {
            "search": ["search", QUERY, "--subject", "demo"],
            "read": ["read", QUERY, "--subject", "demo"],
            "inspect": ["inspect", atom, "--subject", "demo"],
        }
        results: dict[str, Any] = {}
        for name, argv in commands.items():
            found: list[tuple[float, float]] = []
            direct: list[tuple[float, float]] = []
            for _ in range(args.runs):  # alternating, so drift hits both alike
                found.append(run_cli(argv, env)[:2])
                direct.append(run_cli([*argv, "--server", ""], env)[:2])
            med = {
                way: {
                    "wallS": round(statistics.median(w for w, _ in runs), 3),
                    "peakRssMiB": round(statistics.median(m for _, m in runs), 1),
                }
                for way, runs in (("found", found), ("direct", direct))
            }
            med["ratio"] = round(med["found"]["wallS"] / med["direct"]["wallS"], 3)
            results[name] = med
            print(
                f"{name:8s} found serve {med['found']['wallS']:.3f} s "
                f"({med['found']['peakRssMiB']:.0f} MiB) · direct "
                f"{med['direct']['wallS']:.3f} s ({med['direct']['peakRssMiB']:.0f} MiB) · "
                f"ratio {med['ratio']}",
                flush=True,
            )
    finally:
        serve.send_signal(signal.SIGINT)
        serve.wait(timeout=120)
        neo.close()
    out = {
        "benchmark": "cli_serve",
        "date": datetime.now(UTC).isoformat(timespec="seconds"),
        "cpus": os.cpu_count(),
        "loadAverage": list(os.getloadavg()),
        "runs": args.runs,
        "query": QUERY,
        "commands": results,
    }
    args.json.parent.mkdir(parents=True, exist_ok=True)
    args.json.write_text(json.dumps(out, indent=1))


if __name__ == "__main__":
    main()
