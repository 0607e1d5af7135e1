"""`python -m tessera.probe` (issue 33) on two gloo ranks on CPU, and the folder it writes checked
against README "tessera probe": every listed file exists, each rank is in ranks.csv once, each
collective's bandwidths are bytes / time and that times nccl-tests' bus factor, each GEMM's
TFLOP/s is 2mnk / time, the memory-bound kernels' byte counts follow their formulas, and the
training-step row has the validation schema's header and its global batch. The ranks are started
here with torchrun's environment variables (Debian's torch 1.13 cannot run torch.distributed.run
under Python 3.11), each in a session of its own, under one deadline; on failure or timeout every
rank's process group is killed (a gloo teardown can hang)."""

import csv
import json
import os
import socket
import subprocess
import sys
from pathlib import Path

import pytest
from gloo_ranks import wait_for_ranks

pytest.importorskip("torch")
import torch  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
WORLD = 2
TIMEOUT_S = 60
STEP_ARGS = ["--steps", "--seq", "32", "--micro-batch", "2", "--grad-accum", "2"]


def probe_env(**more) -> dict:
    env = dict(os.environ, OMP_NUM_THREADS="1", **more)
    env.setdefault("PYTHONPATH", str(ROOT / "build" / "python"))  # ctest sets it; by hand, the build's
    return env


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def run_probe_ranks(out: Path, world: int, args) -> None:
    port = str(free_port())
    procs = []
    for rank in range(world):
        env = probe_env(RANK=str(rank), LOCAL_RANK=str(rank), WORLD_SIZE=str(world), LOCAL_WORLD_SIZE=str(world),
                        MASTER_ADDR="127.0.0.1", MASTER_PORT=port)
        command = [sys.executable, "-m", "tessera.probe", "--device", "cpu", "--quick", "--out", str(out), *args]
        procs.append(subprocess.Popen(command, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                      start_new_session=True))
    wait_for_ranks(procs, TIMEOUT_S)


@pytest.fixture(scope="module")
def probe_dir(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("probe") / "out"
    run_probe_ranks(out, WORLD, STEP_ARGS)
    return out


def read_rows(path: Path) -> list:
    lines = [line for line in path.read_text().splitlines() if not line.startswith("#")]
    return list(csv.DictReader(lines))


def comments(path: Path) -> list:
    return [line for line in path.read_text().splitlines() if line.startswith("#")]


def close(a: float, b: float, rel: float = 0.01) -> bool:
    return abs(a - b) <= rel * max(abs(a), abs(b))


def test_environment_lists_files_that_exist(probe_dir):
    env = json.loads((probe_dir / "environment.json").read_text())
    keys = {"probe_format", "device", "backend", "device_name", "world_size", "nodes", "gpus_per_node", "torch",
            "cuda", "nccl", "driver", "sm_clock_mhz", "memory_clock_mhz", "hostname", "started_utc", "files"}
    assert keys <= set(env)
    assert (env["probe_format"], env["device"], env["backend"], env["device_name"]) == (1, "cpu", "gloo", "cpu")
    assert env["world_size"] == WORLD == env["nodes"] * env["gpus_per_node"]
    assert env["nccl"] is None and env["cuda"] is None
    expected = {"ranks.csv", "gemm.csv", "grouped_gemm.csv", "attention.csv", "kernels.csv", "collectives.csv",
                "steps.csv"}
    assert set(env["files"]) == expected  # no steps_memory.csv on a CPU
    for name in env["files"]:
        assert (probe_dir / name).is_file(), name
    assert not (probe_dir / "steps_memory.csv").exists()


def test_every_rank_once(probe_dir):
    rows = read_rows(probe_dir / "ranks.csv")
    assert sorted(int(r["rank"]) for r in rows) == list(range(WORLD))
    assert {int(r["world_size"]) for r in rows} == {WORLD}
    assert {r["node"] for r in rows} == {"0"} and {r["device_name"] for r in rows} == {"cpu"}


def bus_factor(kind: str, n: int) -> float:
    return {"all_reduce": 2 * (n - 1) / n, "send_recv": 1.0}.get(kind, (n - 1) / n)


def test_collective_bandwidths_are_bytes_over_time(probe_dir):
    path = probe_dir / "collectives.csv"
    rows = read_rows(path)
    kinds = {r["kind"] for r in rows}
    assert {"all_reduce", "all_gather", "all_to_all", "send_recv"} <= kinds
    # gloo may lack reduce-scatter: then a comment says it was skipped
    assert "reduce_scatter" in kinds or any("reduce_scatter: skipped" in line for line in comments(path))
    for r in rows:
        n, time_s, nbytes = int(r["ranks"]), float(r["time_us"]) * 1e-6, int(r["bytes"])
        assert n == WORLD == int(r["nodes"]) * int(r["gpus_per_node"])
        assert time_s > 0 and nbytes >= 8
        assert close(float(r["algbw_gbps"]), nbytes / time_s / 1e9), r
        assert close(float(r["busbw_gbps"]), float(r["algbw_gbps"]) * bus_factor(r["kind"], n)), r
    sizes = sorted({int(r["bytes"]) for r in rows if r["kind"] == "all_reduce"})
    assert sizes[0] == 8 and sizes[-1] == 1 << 20


def test_gemm_tflops_is_2mnk_over_time(probe_dir):
    rows = read_rows(probe_dir / "gemm.csv")
    assert rows and all(r["dtype"] in ("bf16", "fp16", "fp8") for r in rows)
    for r in rows:
        m, n, k, time_s = int(r["m"]), int(r["n"]), int(r["k"]), float(r["time_ms"]) * 1e-3
        assert time_s > 0 and close(float(r["tflops"]), 2 * m * n * k / time_s / 1e12), r
    for r in read_rows(probe_dir / "grouped_gemm.csv"):
        g, m, n, k, time_s = int(r["groups"]), int(r["m"]), int(r["n"]), int(r["k"]), float(r["time_ms"]) * 1e-3
        assert r["impl"] in ("grouped", "loop")
        assert time_s > 0 and close(float(r["tflops"]), 2 * g * m * n * k / time_s / 1e12), r


def test_attention_rows(probe_dir):
    rows = read_rows(probe_dir / "attention.csv")
    expected_impl = "sdpa" if hasattr(torch.nn.functional, "scaled_dot_product_attention") else "math"
    assert rows and {r["impl"] for r in rows} == {expected_impl}
    for r in rows:
        assert r["causal"] in ("0", "1") and int(r["heads"]) % int(r["kv_heads"]) == 0
        assert 0 < float(r["fwd_ms"]) and 0 < float(r["fwd_bwd_ms"])


# Bytes read + written, per element of tokens x width, restated from the kernels: a copy reads and
# writes bf16; silu(g) * u reads g, writes s (2+2), reads s, u, writes bf16 (2+2+2); its backward
# multiplies twice (6 each) and runs silu_backward (6). residual + x reads fp32 and bf16 and writes
# fp32 (4+2+4); its backward casts the fp32 gradient to bf16 (4+2).
BYTES_PER_ELEMENT = {("copy", "fwd"): 4, ("swiglu", "fwd"): 10, ("swiglu", "fwd_bwd"): 28,
                     ("residual_add", "fwd"): 10, ("residual_add", "fwd_bwd"): 16}


def test_kernel_rows_time_and_bytes(probe_dir):
    rows = read_rows(probe_dir / "kernels.csv")
    ops = {"copy", "rmsnorm", "rope", "swiglu", "residual_add", "cross_entropy", "dispatch"}
    assert ops <= {r["op"] for r in rows}
    by_key = {}
    for r in rows:
        assert float(r["time_ms"]) > 0 and int(r["kernels"]) >= 1, r
        assert r["pass"] in ("fwd", "fwd_bwd") and r["impl"] in ("eager", "fused")
        tokens, width, nbytes = int(r["tokens"]), int(r["width"]), int(r["bytes"])
        if r["op"] == "dispatch":
            assert (tokens, width, nbytes) == (1, 1, 0)
            continue
        assert nbytes >= 4 * tokens * width  # every op reads and writes at least its bf16 input once
        if (r["op"], r["pass"]) in BYTES_PER_ELEMENT:
            assert nbytes == BYTES_PER_ELEMENT[(r["op"], r["pass"])] * tokens * width, r
        by_key[(r["op"], r["impl"], tokens, width, r["pass"])] = (nbytes, int(r["kernels"]))
    assert any(key[0] == "copy" for key in by_key)
    for (op, impl, tokens, width, pass_name), (nbytes, kernels) in by_key.items():
        if pass_name == "fwd_bwd":  # forward + backward does more than the forward
            fwd_bytes, fwd_kernels = by_key[(op, impl, tokens, width, "fwd")]
            assert nbytes > fwd_bytes and kernels > fwd_kernels


def test_step_row_in_the_validation_schema(probe_dir):
    with open(ROOT / "data" / "validation" / "h200" / "runs.csv", newline="") as f:
        schema = next(csv.reader(f))
    lines = [line for line in (probe_dir / "steps.csv").read_text().splitlines() if not line.startswith("#")]
    assert next(csv.reader(lines[:1])) == schema
    rows = read_rows(probe_dir / "steps.csv")
    assert len(rows) == 1
    r = rows[0]
    assert int(r["global_batch"]) == int(r["micro_batch"]) * 2 * int(r["dp"]) == 2 * 2 * WORLD
    assert int(r["n_gpus"]) == WORLD == int(r["tp"]) * int(r["pp"]) * int(r["dp"]) * int(r["cp"])
    assert (r["framework"], r["measured_metric"], r["mlp"], r["gpu"], r["seq_len"]) == (
        "pytorch", "iter_time_s", "swiglu", "cpu", "32")
    assert r["attention"] in ("gqa", "mha") and float(r["measured_value"]) > 0


def row_count(path: Path) -> int:
    return len(read_rows(path))


def test_calibrate_reads_the_folder_whole(probe_dir):
    """The round trip: `tessera calibrate --probe` reads every file the probe wrote, each row one
    measurement (an attention row two: forward, forward + backward), each with a prediction before
    and after. A CPU run stands for no GPU by itself: --gpu names the catalog GPU it is fitted as."""
    import tessera

    profile = tessera.calibrate(probe=str(probe_dir), gpu="h100-sxm-80gb")
    counts = profile["fitted_on"]
    assert counts["gemms"] == row_count(probe_dir / "gemm.csv") + row_count(probe_dir / "grouped_gemm.csv")
    assert counts["attention"] == 2 * row_count(probe_dir / "attention.csv")
    assert counts["kernels"] == row_count(probe_dir / "kernels.csv")
    assert counts["collectives"] == row_count(probe_dir / "collectives.csv")
    assert counts["runs"] == row_count(probe_dir / "steps.csv") == 1
    assert counts["inputs"] == [str(probe_dir)]
    kinds = {m["kind"] for m in profile["measurements"]}
    assert kinds == {"gemm_tflops", "attention_time_s", "kernel_time_s", "collective_time_s", "iteration_time_s"}
    assert len(profile["measurements"]) == sum(counts[k] for k in ("gemms", "attention", "kernels", "collectives", "runs"))
    with pytest.raises(tessera.TesseraError, match="^--gpu"):
        tessera.calibrate(probe=str(probe_dir))


def test_bad_probe_output_names_file_line_and_field(probe_dir, tmp_path):
    """A collective row whose bus bandwidth breaks its own arithmetic, a GEMM of zero time, a missing
    listed file, ranks that disagree on the world size: one line naming the file, line and column."""
    import shutil

    import tessera

    def broken(name: str, edit) -> Path:
        copy = tmp_path / name.replace(".", "_")
        shutil.copytree(probe_dir, copy)
        edit(copy)
        return copy

    def rewrite_cell(folder: Path, file: str, column: str, value: str) -> str:
        lines = (folder / file).read_text().splitlines()
        header_at = next(i for i, line in enumerate(lines) if not line.startswith("#"))
        cells = lines[header_at + 1].split(",")
        cells[lines[header_at].split(",").index(column)] = value
        lines[header_at + 1] = ",".join(cells)
        (folder / file).write_text("\n".join(lines) + "\n")
        return f"{folder / file}:{header_at + 2}.{lines[header_at].split(',').index(column) + 1}"

    where = {}
    cases = {
        "busbw": broken("busbw", lambda d: where.setdefault("busbw", rewrite_cell(d, "collectives.csv", "busbw_gbps", "1e9"))),
        "gemm": broken("gemm", lambda d: where.setdefault("gemm", rewrite_cell(d, "gemm.csv", "time_ms", "0"))),
        "world": broken("world", lambda d: where.setdefault("world", rewrite_cell(d, "ranks.csv", "world_size", "3"))),
        "missing": broken("missing", lambda d: (d / "kernels.csv").unlink()),
    }
    expected = {"busbw": "collectives:" + where["busbw"], "gemm": "gemm:" + where["gemm"],
                "world": "ranks:" + where["world"], "missing": "probe:" + str(cases["missing"] / "kernels.csv")}
    for case, folder in cases.items():
        with pytest.raises(tessera.TesseraError) as error:
            tessera.calibrate(probe=str(folder), gpu="h100-sxm-80gb")
        message = str(error.value)
        assert message.startswith(expected[case] + ":") and "\n" not in message, (case, message)


def test_one_process_writes_no_collectives(tmp_path):
    out = tmp_path / "single"
    done = subprocess.run([sys.executable, "-m", "tessera.probe", "--device", "cpu", "--quick", "--out", str(out)],
                          env=probe_env(), capture_output=True, text=True, timeout=TIMEOUT_S)
    assert done.returncode == 0, done.stderr[-3000:]
    env = json.loads((out / "environment.json").read_text())
    assert env["world_size"] == 1 and "collectives.csv" not in env["files"] and "steps.csv" not in env["files"]
    assert not (out / "collectives.csv").exists()


@pytest.mark.parametrize("args, option", [
    (["--device", "tpu"], "--device"),
    (["--steps", "--seq", "0"], "--seq"),
    (["--recompute", "full"], "--recompute"),  # without --steps
])
def test_a_bad_option_is_one_line_and_exit_2(tmp_path, args, option):
    done = subprocess.run([sys.executable, "-m", "tessera.probe", "--out", str(tmp_path / "x"), *args],
                          env=probe_env(), capture_output=True, text=True, timeout=TIMEOUT_S)
    assert done.returncode == 2
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and option in lines[0], done.stderr
    if option == "--device":
        assert "cuda" in lines[0] and "cpu" in lines[0]
    assert not (tmp_path / "x").exists()
