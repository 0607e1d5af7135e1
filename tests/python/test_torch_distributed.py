"""BalancedDistributedSampler under torch.distributed: four CPU processes on gloo each iterate an
epoch; the union across ranks is exactly the dataset, with no sample twice, and every rank runs
the same number of micro-batches. The ranks are separate processes in their own session, under an
overall timeout; on failure or timeout the whole group is killed (a gloo teardown can hang)."""

import json
from pathlib import Path

import pytest
from gloo_ranks import run_ranks

pytest.importorskip("torch")
import torch.distributed  # noqa: E402

WORLD = 4
TIMEOUT_S = 120


@pytest.mark.skipif(not torch.distributed.is_available(), reason="torch built without distributed")
def test_union_across_four_gloo_ranks_is_the_dataset(tmp_path: Path):
    worker = Path(__file__).with_name("distributed_worker.py")
    store, result = tmp_path / "store", tmp_path / "result.json"
    run_ranks(worker, WORLD, store, result, TIMEOUT_S)
    report = json.loads(result.read_text())
    for mode, r in report.items():
        assert r["union_is_dataset"], mode
        assert r["no_duplicates"], mode
        assert r["same_microbatch_count"], mode
        assert all(n > 0 for n in r["per_rank"]), mode
