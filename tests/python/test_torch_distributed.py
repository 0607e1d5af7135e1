"""BalancedDistributedSampler under torch.distributed: four CPU processes on gloo each iterate an
epoch; the union across ranks is exactly the dataset, with no sample twice, and every rank runs
the same number of micro-batches. The ranks are separate processes in their own session, under an
overall timeout; on failure or timeout the whole group is killed (a gloo teardown can hang)."""

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

pytest.importorskip("torch")
import torch.distributed  # noqa: E402

WORLD = 4
TIMEOUT_S = 120


@pytest.mark.skipif(not torch.distributed.is_available(), reason="torch built without distributed")
def test_union_across_four_gloo_ranks_is_the_dataset(tmp_path: Path):
    worker = Path(__file__).with_name("distributed_worker.py")
    store, result = tmp_path / "store", tmp_path / "result.json"
    env = dict(os.environ, OMP_NUM_THREADS="1")
    procs = [
        subprocess.Popen(
            [sys.executable, str(worker), str(rank), str(WORLD), str(store), str(result)],
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
        for rank in range(WORLD)
    ]
    deadline = time.monotonic() + TIMEOUT_S
    outputs = []
    try:
        for p in procs:
            out, _ = p.communicate(timeout=max(1.0, deadline - time.monotonic()))
            outputs.append(out.decode(errors="replace"))
    except subprocess.TimeoutExpired:
        pytest.fail(f"ranks did not finish within {TIMEOUT_S} s")
    finally:
        for p in procs:
            if p.poll() is None:
                os.killpg(p.pid, signal.SIGKILL)
                p.wait()
    for rank, (p, out) in enumerate(zip(procs, outputs)):
        assert p.returncode == 0, f"rank {rank} exited {p.returncode}:\n{out[-3000:]}"
    report = json.loads(result.read_text())
    for mode, r in report.items():
        assert r["union_is_dataset"], mode
        assert r["no_duplicates"], mode
        assert r["same_microbatch_count"], mode
        assert all(n > 0 for n in r["per_rank"]), mode
