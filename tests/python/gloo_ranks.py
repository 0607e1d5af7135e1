"""Starting torch.distributed ranks for a test: each rank is `python worker RANK WORLD STORE RESULT`
in a session of its own, all under one deadline; on failure or timeout every rank's process group
is killed (a gloo teardown can hang), and a rank that fails fails the test with its output."""

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest


def run_ranks(worker: Path, world: int, store: Path, result: Path, timeout_s: float) -> None:
    env = dict(os.environ, OMP_NUM_THREADS="1")
    procs = [
        subprocess.Popen(
            [sys.executable, str(worker), str(rank), str(world), str(store), str(result)],
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
        for rank in range(world)
    ]
    wait_for_ranks(procs, timeout_s)


def wait_for_ranks(procs, timeout_s: float) -> None:
    """Every rank's process to exit 0 within one deadline; on failure or timeout every rank's
    process group is killed, and a rank that failed fails the test with its output."""
    deadline = time.monotonic() + timeout_s
    outputs = []
    try:
        for p in procs:
            out, _ = p.communicate(timeout=max(1.0, deadline - time.monotonic()))
            outputs.append(out.decode(errors="replace"))
    except subprocess.TimeoutExpired:
        pytest.fail(f"ranks did not finish within {timeout_s} s")
    finally:
        for p in procs:
            if p.poll() is None:
                os.killpg(p.pid, signal.SIGKILL)
                p.wait()
    for rank, (p, out) in enumerate(zip(procs, outputs)):
        assert p.returncode == 0, f"rank {rank} exited {p.returncode}:\n{out[-3000:]}"
