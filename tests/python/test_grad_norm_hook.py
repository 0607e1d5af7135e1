"""GradNormHook under torch.distributed: two CPU ranks on gloo, float64 models; the norms the hook
reports (per micro-batch before accumulation, per rank before the all-reduce, after it) equal the
norms of gradients computed directly, for data parallelism, a parameter declared replicated over
model-parallel ranks (counted once), and model-parallel shards (summed). Ranks run in their own
sessions under an overall timeout and are killed on failure."""

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

WORLD = 2
TIMEOUT_S = 90


@pytest.mark.skipif(not torch.distributed.is_available(), reason="torch built without distributed")
def test_hook_norms_equal_direct_gradients(tmp_path: Path):
    worker = Path(__file__).with_name("grad_norm_worker.py")
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
    errors = json.loads(result.read_text())
    assert set(errors) == {"data_parallel", "replicated_parameter", "model_parallel"}
    for case, err in errors.items():
        assert err < 1e-9, f"{case}: relative error {err}"
