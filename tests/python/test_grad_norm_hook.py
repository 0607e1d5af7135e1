"""GradNormHook under torch.distributed: two CPU ranks on gloo, float64 models; the norms the hook
reports (per micro-batch before accumulation, per rank before the all-reduce, after it) equal the
norms of gradients computed directly, for data parallelism, a parameter declared replicated over
model-parallel ranks (counted once), and model-parallel shards (summed). Ranks run in their own
sessions under an overall timeout and are killed on failure."""

import json
from pathlib import Path

import pytest
from gloo_ranks import run_ranks

pytest.importorskip("torch")
import torch.distributed  # noqa: E402

WORLD = 2
TIMEOUT_S = 90


@pytest.mark.skipif(not torch.distributed.is_available(), reason="torch built without distributed")
def test_hook_norms_equal_direct_gradients(tmp_path: Path):
    worker = Path(__file__).with_name("grad_norm_worker.py")
    store, result = tmp_path / "store", tmp_path / "result.json"
    run_ranks(worker, WORLD, store, result, TIMEOUT_S)
    errors = json.loads(result.read_text())
    assert set(errors) == {"data_parallel", "replicated_parameter", "model_parallel"}
    for case, err in errors.items():
        assert err < 1e-9, f"{case}: relative error {err}"
