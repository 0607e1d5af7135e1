"""The data service end to end (issue 35), as separate processes on loopback: a coordinator
(`tessera data-serve coordinator`), workers (`tessera data-serve worker`) and trainer ranks
(tessera.data.ServiceDataset; in the loopback trials, torch.distributed gloo ranks in a DataLoader).

- 20 seeded trials kill a worker mid-epoch (SIGKILL): every sample is delivered exactly once, to
  the rank the epoch plan chose (`tessera data-serve plan --json`), in its order;
- 10 trials crash a trainer rank after its checkpoint and restart it from the checkpoint: its
  micro-batches after the restart are the plan's from the checkpoint on;
- a coordinator killed mid-epoch and restarted with --resume finishes the epoch exactly once;
- a slow consumer: the coordinator never holds more than ranks x prefetch micro-batches, and a
  worker's peak memory stays under a stated bound;
- bad input (a truncated image, counts that disagree with the files, a missing tokenizer, a peer
  of another protocol version) is an error naming the sample or field; a bad sample is skipped
  only with --skip-bad-samples, and then reported.
Every process runs in its own session and is killed at the end of its test, whatever happens."""

import json
import os
import random
import re
import signal
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

import tessera.data as td

ROOT = Path(__file__).resolve().parents[2]
BINARY = os.environ.get("TESSERA_BINARY", str(ROOT / "build" / "bin" / "tessera"))
HERE = Path(__file__).resolve().parent
RANKS, MICROBATCHES, MAX_TOKENS = 2, 2, 2048
SAMPLES = 48
# A worker's peak resident memory, stated: the process (about 30 MiB with gRPC and libjpeg) plus
# one micro-batch: at most 3 synthetic images of 960 x 960 decoded (2.8 MB each) with their
# resized copies and patches, far under this.
WORKER_PEAK_BOUND_MB = 200
# A trainer rank's (ServiceReader without torch): Python with grpcio and protobuf (about 40 MB) and
# the one micro-batch it holds (at most about 4 MB of patches here).
CLIENT_PEAK_BOUND_MB = 120


class Processes:
    """Every process a test starts, each in its own session, killed at the end."""

    def __init__(self):
        self.procs = []

    def start(self, args, **kwargs):
        p = subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, start_new_session=True,
                             env=dict(os.environ, OMP_NUM_THREADS="1"), **kwargs)
        self.procs.append(p)
        return p

    def kill_all(self):
        for p in self.procs:
            if p.poll() is None:
                os.killpg(p.pid, signal.SIGKILL)
            p.wait()


@pytest.fixture
def procs():
    p = Processes()
    yield p
    p.kill_all()


def run(*args, timeout=60):
    return subprocess.run([BINARY, *args], capture_output=True, text=True, timeout=timeout)


@pytest.fixture(scope="module")
def dataset(tmp_path_factory):
    folder = tmp_path_factory.mktemp("synthetic")
    r = run("data-serve", "synth", "--out", str(folder), "--samples", str(SAMPLES), "--seed", "3", "--vocab", "300")
    assert r.returncode == 0, r.stderr
    return folder


def plan_args(index, seed):
    return ["--index", str(index), "--ranks", str(RANKS), "--microbatches", str(MICROBATCHES),
            "--max-tokens", str(MAX_TOKENS), "--seed", str(seed)]


def epoch_plan(index, seed):
    r = run("data-serve", "plan", *plan_args(index, seed), "--json")
    assert r.returncode == 0, r.stderr
    return json.loads(r.stdout)["samples_per_microbatch"]


def start_coordinator(procs, folder, seed, *extra, listen="127.0.0.1:0"):
    p = procs.start([BINARY, "data-serve", "coordinator", *plan_args(folder / "index.jsonl", seed), "--tokenizer",
                     str(folder / "tokenizer.model"), "--listen", listen, *extra])
    line = p.stdout.readline().decode()
    match = re.match(r"listening on (\S+)", line)
    assert match, f"coordinator said: {line}{p.stdout.read().decode() if p.poll() is not None else ''}"
    return p, match.group(1)


def start_workers(procs, address, n, *extra):
    return [procs.start([BINARY, "data-serve", "worker", "--coordinator", address, "--name", f"w{i}", *extra])
            for i in range(n)]


def finish(p, timeout=60):
    out, _ = p.communicate(timeout=timeout)
    return p.returncode, out.decode()


def exactly_the_plan(ranks, plan):
    """Each rank received its plan's micro-batches in order, and every sample came once."""
    assert ranks == plan
    every = sorted(s for rank in ranks for batch in rank for s in batch)
    assert every == list(range(SAMPLES))


def test_killing_a_worker_mid_epoch_loses_and_repeats_nothing(dataset, procs, tmp_path):
    store = tmp_path / "store"
    ranks = [procs.start([sys.executable, str(HERE / "data_service_rank.py"), str(r), str(RANKS), str(store)],
                         stdin=subprocess.PIPE, cwd=HERE) for r in range(RANKS)]
    expired = 0
    for seed in range(20):
        rng = random.Random(seed)
        coordinator, address = start_coordinator(procs, dataset, seed, "--lease-s", "0.5", "--prefetch", "2")
        workers = start_workers(procs, address, 3)
        out = tmp_path / f"trial{seed}.json"
        for rank in ranks:
            rank.stdin.write((json.dumps({"coordinator": address, "out": str(out)}) + "\n").encode())
            rank.stdin.flush()
        time.sleep(rng.uniform(0.02, 0.15))
        assert not td.status(address).finished, "the epoch ended before the kill: make it longer"
        victim = rng.choice(workers)
        os.killpg(victim.pid, signal.SIGKILL)
        for rank in ranks:
            line = rank.stdout.readline().decode()
            assert line.startswith("trial done"), line + rank.stdout.read().decode()
        code, text = finish(coordinator)
        assert code == 0, text
        expired += int(re.search(r"(\d+) leases expired", text).group(1))
        exactly_the_plan(json.loads(out.read_text())["ranks"], epoch_plan(dataset / "index.jsonl", seed))
        for w in workers:
            if w is not victim:
                assert finish(w)[0] == 0
    assert expired > 0, "no killed worker held a lease: the trials did not test reassignment"
    for rank in ranks:
        rank.stdin.write(b"quit\n")
        rank.stdin.flush()
    for rank in ranks:
        assert rank.wait(timeout=30) == 0


def restarted_rank(procs, address, rank, folder, checkpoint_at, crash_at):
    state, log = folder / f"state{rank}.json", folder / f"log{rank}.jsonl"
    script = [sys.executable, str(HERE / "data_service_restart.py"), address, str(rank), str(state), str(log)]
    first = procs.start(script + [str(checkpoint_at), str(crash_at)], cwd=HERE)
    return first, script, log


def test_a_trainer_restarted_from_its_checkpoint_continues_the_plan(dataset, procs, tmp_path):
    for trial in range(10):
        rng = random.Random(100 + trial)
        folder = tmp_path / f"t{trial}"
        folder.mkdir()
        coordinator, address = start_coordinator(procs, dataset, trial, "--prefetch", "3")
        start_workers(procs, address, 2)
        plan = epoch_plan(dataset / "index.jsonl", trial)
        checkpoint_at = rng.randint(1, len(plan[0]) - 3)
        crash_at = checkpoint_at + rng.randint(1, 2)
        first, script, log0 = restarted_rank(procs, address, 0, folder, checkpoint_at, crash_at)
        other, _, log1 = restarted_rank(procs, address, 1, folder, -1, -1)
        assert first.wait(timeout=60) == 3  # crashed
        resumed = procs.start(script + ["-1", "-1"], cwd=HERE)
        assert resumed.wait(timeout=60) == 0, resumed.stdout.read().decode()
        assert other.wait(timeout=60) == 0
        assert finish(coordinator)[0] == 0
        entries = [json.loads(line) for line in log0.read_text().splitlines()]
        # What rank 0 kept: the micro-batches up to its checkpoint, then the restarted run's.
        kept = entries[:checkpoint_at] + entries[crash_at:]
        assert [e["position"] for e in kept] == list(range(len(plan[0])))
        ranks = [[e["samples"] for e in kept], [json.loads(l)["samples"] for l in log1.read_text().splitlines()]]
        exactly_the_plan(ranks, plan)
        # The lost micro-batches (after the checkpoint, before the crash) came again, unchanged.
        assert entries[checkpoint_at:crash_at] == kept[checkpoint_at:crash_at]


def test_context_parallel_trainers_get_the_same_micro_batches_and_split_them(dataset, procs):
    coordinator, address = start_coordinator(procs, dataset, 4, "--cp", "2")
    start_workers(procs, address, 2)
    plan = json.loads(run("data-serve", "plan", *plan_args(dataset / "index.jsonl", 4), "--cp", "2", "--json").stdout)
    index = [json.loads(l) for l in (dataset / "index.jsonl").read_text().splitlines()]
    tokens = [l["text_tokens"] + sum(l["image_tokens"]) for l in index]
    received = {}

    def read(trainer):  # siblings read together: neither runs more than --prefetch ahead of the other
        reader = td.ServiceReader(address, rank=trainer, timeout_s=60.0)
        received[trainer] = []
        for batch in reader:
            cp_rank, sharding, ranges = reader.shard
            assert cp_rank == trainer % 2 and sharding in ("per-sequence", "per-document")
            received[trainer].append((list(batch.sample_ids), sharding, ranges))

    threads = [threading.Thread(target=read, args=(t,)) for t in range(RANKS * 2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=90)
    assert finish(coordinator)[0] == 0 and len(received) == RANKS * 2
    for rank in range(RANKS):
        first, second = received[2 * rank], received[2 * rank + 1]
        assert [b for b, _, _ in first] == [b for b, _, _ in second] == plan["samples_per_microbatch"][rank]
        assert [s for _, s, _ in first] == plan["cp_sharding"][rank]
        for (ids, _, a), (_, _, b) in zip(first, second):  # the two shards cover the packed sequence once
            covered = sorted(t for begin, end in a + b for t in range(begin, end))
            assert covered == list(range(sum(tokens[i] for i in ids)))
    every = sorted(s for rank in range(RANKS) for ids, _, _ in received[2 * rank] for s in ids)
    assert every == list(range(SAMPLES))


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_a_restarted_coordinator_resumes_the_epoch(dataset, procs, tmp_path):
    listen = f"127.0.0.1:{free_port()}"
    checkpoint = tmp_path / "coordinator.json"
    coordinator, address = start_coordinator(procs, dataset, 7, "--checkpoint", str(checkpoint), "--prefetch", "2",
                                             listen=listen)
    start_workers(procs, address, 2, "--reconnect-s", "30")
    folder = tmp_path / "ranks"
    folder.mkdir()
    ranks = [restarted_rank(procs, address, r, folder, -1, -1) for r in range(RANKS)]
    while not checkpoint.exists() or max(json.loads(checkpoint.read_text())["cursors"]) < 3:
        time.sleep(0.01)
    os.killpg(coordinator.pid, signal.SIGKILL)
    coordinator.wait()
    resumed = procs.start([BINARY, "data-serve", "coordinator", "--checkpoint", str(checkpoint), "--resume",
                           "--tokenizer", str(dataset / "tokenizer.model"), "--listen", listen, "--prefetch", "2"])
    for p, _, _ in ranks:
        assert p.wait(timeout=60) == 0, p.stdout.read().decode()
    assert finish(resumed)[0] == 0
    received = [[json.loads(l)["samples"] for l in log.read_text().splitlines()] for _, _, log in ranks]
    exactly_the_plan(received, epoch_plan(dataset / "index.jsonl", 7))


def peak_rss_mb(pid):
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    return 0.0


def test_a_slow_consumer_bounds_what_the_service_holds(dataset, procs):
    prefetch = 2
    coordinator, address = start_coordinator(procs, dataset, 1, "--prefetch", str(prefetch))
    workers = start_workers(procs, address, 2)
    ranks = [procs.start([sys.executable, str(HERE / "data_service_slow_rank.py"), address, str(r), "0.03"], cwd=HERE)
             for r in range(RANKS)]
    most_held, worker_peak = 0, 0.0
    while any(r.poll() is None for r in ranks):
        most_held = max(most_held, td.status(address).stored_results)
        worker_peak = max([worker_peak] + [peak_rss_mb(w.pid) for w in workers if w.poll() is None])
        time.sleep(0.01)
    clients = [json.loads(r.stdout.read().decode().splitlines()[-1]) for r in ranks]
    assert finish(coordinator)[0] == 0
    assert most_held <= RANKS * prefetch
    assert worker_peak < WORKER_PEAK_BOUND_MB, f"a worker peaked at {worker_peak:.0f} MB"
    for c in clients:
        assert c["peak_rss_mb"] < CLIENT_PEAK_BOUND_MB, c


def broken_copy(dataset, tmp_path, edit):
    """The synthetic set with its index and files copied, then `edit(folder, lines)` applied."""
    folder = tmp_path / "broken"
    subprocess.run(["cp", "-r", str(dataset), str(folder)], check=True)
    lines = [json.loads(l) for l in (folder / "index.jsonl").read_text().splitlines()]
    edit(folder, lines)
    (folder / "index.jsonl").write_text("".join(json.dumps(l) + "\n" for l in lines))
    return folder


def truncate_image(folder, lines, sample=5):
    path = folder / lines[sample]["image"]
    path.write_bytes(path.read_bytes()[:2000])


def test_a_truncated_image_fails_the_epoch_naming_the_sample(dataset, procs, tmp_path):
    folder = broken_copy(dataset, tmp_path, truncate_image)
    coordinator, address = start_coordinator(procs, folder, 0)
    start_workers(procs, address, 1)
    with pytest.raises(td.DataServiceError, match=r"sample 5 \(.*img/000005"):
        for _ in td.ServiceReader(address, rank=0):
            pass
    code, text = finish(coordinator)
    assert code == 2 and "sample 5" in text and text.count("\n") == 1 and text.count("(allowed:") == 1, text


def test_skip_bad_samples_reports_the_sample_it_skipped(dataset, procs, tmp_path):
    folder = broken_copy(dataset, tmp_path, truncate_image)
    coordinator, address = start_coordinator(procs, folder, 0, "--skip-bad-samples")
    start_workers(procs, address, 2)
    got, skipped = [], []
    for rank in range(RANKS):
        for batch in td.ServiceReader(address, rank=rank):
            got += list(batch.sample_ids)
            skipped += list(zip(batch.skipped_sample_ids, batch.skipped_reasons))
    assert finish(coordinator)[0] == 0
    assert [s for s, _ in skipped] == [5] and "img/000005" in skipped[0][1]
    assert sorted(got) == [s for s in range(SAMPLES) if s != 5]


def test_counts_that_disagree_with_the_files_are_named(dataset, procs, tmp_path):
    def wrong_count(folder, lines):
        lines[9]["text_tokens"] += 1
    folder = broken_copy(dataset, tmp_path, wrong_count)
    coordinator, address = start_coordinator(procs, folder, 0)
    start_workers(procs, address, 1)
    with pytest.raises(td.DataServiceError, match=r"sample 9 \(.*txt/000009.*text tokens"):
        for rank in range(RANKS):
            for _ in td.ServiceReader(address, rank=rank):
                pass


def test_a_missing_tokenizer_and_bad_flags_name_the_field(dataset, tmp_path):
    base = ["data-serve", "coordinator", *plan_args(dataset / "index.jsonl", 0)]
    for extra, field in [(["--tokenizer", str(tmp_path / "none.model")], "tokenizer"),
                         (["--resize", "square"], "--resize"), (["--prefetch", "0"], "--prefetch"),
                         (["--lease-s", "-1"], "--lease-s")]:
        r = run(*base, *extra)
        assert r.returncode == 2 and r.stderr.startswith(f"error: {field}:") and r.stderr.count("\n") == 1, r.stderr
    r = run("data-serve", "coordinator", "--index", str(dataset / "index.jsonl"), "--ranks", "2")
    assert r.returncode == 2 and r.stderr.startswith("error: --microbatches:")


def test_a_peer_of_another_protocol_version_is_refused(dataset, procs):
    coordinator, address = start_coordinator(procs, dataset, 0)
    r = run("data-serve", "worker", "--coordinator", address, "--protocol-version", "2", timeout=30)
    assert r.returncode == 2 and r.stderr.startswith("error: protocol_version:") and "version 2" in r.stderr
    with pytest.raises(td.DataServiceError, match="protocol_version: .* version 9"):
        td.greet(address, protocol_version=9)
