"""What `tessera probe` says of the machine: environment.json and ranks.csv
(README "tessera probe"). Versions, driver and clocks are None (null) where unknown."""

from __future__ import annotations

import shutil
import socket
import subprocess
from datetime import datetime, timezone

import torch
import torch.distributed as dist

from ._probe_context import Run
from ._probe_csv import Table

PROBE_FORMAT = 1
RANKS_HEADER = ["rank", "world_size", "local_rank", "node", "hostname", "device_name"]


def utc_now() -> str:
    return datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def device_name(run: Run) -> str:
    return torch.cuda.get_device_name(run.device) if run.is_cuda else "cpu"


def nccl_version(run: Run):
    """"2.27.3"; torch.cuda.nccl.version() is a tuple in torch 2.x, an int such as 2708 or 21903
    in older versions (NCCL_VERSION_CODE: 1000 x major before 2.9, 10000 x major since)."""
    if not run.is_cuda:
        return None
    try:
        version = torch.cuda.nccl.version()
    except (AttributeError, RuntimeError):
        return None
    if isinstance(version, tuple):
        return ".".join(str(part) for part in version)
    major_unit = 10000 if version >= 10000 else 1000
    return f"{version // major_unit}.{version % major_unit // 100}.{version % 100}"


def driver_and_clocks(run: Run):
    """(driver, max SM clock MHz, max memory clock MHz) of the first GPU the driver lists (the
    GPUs of a node are alike): from pynvml where installed, else from nvidia-smi, else None."""
    if not run.is_cuda:
        return None, None, None
    try:
        return _from_pynvml()
    except Exception:  # pynvml missing, or no NVML: try the command line
        pass
    return _from_nvidia_smi()


def _from_pynvml():
    import pynvml

    pynvml.nvmlInit()
    try:
        handle = pynvml.nvmlDeviceGetHandleByIndex(0)
        driver = pynvml.nvmlSystemGetDriverVersion()
        sm = pynvml.nvmlDeviceGetMaxClockInfo(handle, pynvml.NVML_CLOCK_SM)
        memory = pynvml.nvmlDeviceGetMaxClockInfo(handle, pynvml.NVML_CLOCK_MEM)
    finally:
        pynvml.nvmlShutdown()
    driver = driver.decode() if isinstance(driver, bytes) else driver
    return driver, int(sm), int(memory)


def _from_nvidia_smi():
    if shutil.which("nvidia-smi") is None:
        return None, None, None
    query = ["nvidia-smi", "--query-gpu=driver_version,clocks.max.sm,clocks.max.memory",
             "--format=csv,noheader,nounits"]
    try:
        first = subprocess.run(query, capture_output=True, text=True, timeout=20, check=True).stdout.splitlines()[0]
        driver, sm, memory = (part.strip() for part in first.split(","))
        return driver, _int_or_none(sm), _int_or_none(memory)
    except (OSError, subprocess.SubprocessError, IndexError, ValueError):
        return None, None, None


def _int_or_none(text: str):
    try:
        return int(float(text))
    except ValueError:
        return None


def environment(run: Run, started_utc: str, files: list) -> dict:
    driver, sm_clock_mhz, memory_clock_mhz = driver_and_clocks(run)
    return {
        "probe_format": PROBE_FORMAT, "device": run.device.type, "backend": run.backend,
        "device_name": device_name(run), "world_size": run.world_size, "nodes": run.nodes,
        "gpus_per_node": run.local_world_size, "torch": torch.__version__,
        "cuda": torch.version.cuda if run.is_cuda else None, "nccl": nccl_version(run), "driver": driver,
        "sm_clock_mhz": sm_clock_mhz, "memory_clock_mhz": memory_clock_mhz, "hostname": socket.gethostname(),
        "started_utc": started_utc, "files": list(files),
    }


def ranks_table(run: Run) -> Table:
    """Every rank's row, gathered on all ranks (all_gather_object: every rank takes part)."""
    mine = {"rank": run.rank, "world_size": run.world_size, "local_rank": run.local_rank, "node": run.node,
            "hostname": socket.gethostname(), "device_name": device_name(run)}
    rows = [mine]
    if run.distributed:
        rows = [None] * run.world_size
        dist.all_gather_object(rows, mine)
    return Table(list(RANKS_HEADER), sorted(rows, key=lambda row: row["rank"]))
