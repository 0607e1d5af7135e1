"""`tessera probe`: measure this machine for `tessera calibrate --probe DIR` (issue 33).

    python -m tessera.probe --out DIR [--device cuda|cpu] [--quick] [--steps] [--model-config FILE]
        [--seq N] [--micro-batch N] [--grad-accum N] [--recompute none|full]
    torchrun --nproc_per_node 8 -m tessera.probe --out DIR ...      (one process per GPU, any nodes)

Writes the folder README "tessera probe" describes: environment.json, ranks.csv, gemm.csv,
grouped_gemm.csv, attention.csv, kernels.csv, collectives.csv (two ranks or more) and, with
--steps, steps.csv and (on GPUs) steps_memory.csv. Every rank runs every measurement on its own
device at the same time (as in training, where all GPUs are busy); rank 0's numbers are written,
except for collectives and steps, which take the slowest rank. Only rank 0 writes.

Needs torch only (not the compiled tessera core): torch 1.13 to 2.x, CUDA (nccl) or CPU (gloo).
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import torch

from ._probe_collectives import collectives_table
from ._probe_compute import attention_table, gemm_table, grouped_gemm_table
from ._probe_context import Run, finish_run, start_run
from ._probe_csv import write_table
from ._probe_environment import device_name, environment, ranks_table, utc_now
from ._probe_kernels import kernels_table
from ._probe_steps import LLAMA_3_2_1B, TINY, StepOptions, read_model_config, steps_tables

# The sweeps every run makes, in order, each writing one file.
SWEEPS = (("gemm.csv", gemm_table), ("grouped_gemm.csv", grouped_gemm_table),
          ("attention.csv", attention_table), ("kernels.csv", kernels_table))
STEP_OPTIONS = ("model_config", "seq", "micro_batch", "grad_accum", "recompute")


class OneLineParser(argparse.ArgumentParser):
    """Bad input: one line naming the option and what it allows, exit status 2."""

    def error(self, message):
        sys.stderr.write(f"{self.prog}: error: {message}\n")
        sys.exit(2)


def positive_int(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        value = 0
    if value < 1:
        raise argparse.ArgumentTypeError(f"got {text!r}; allowed: a whole number >= 1")
    return value


def build_parser() -> OneLineParser:
    parser = OneLineParser(prog="tessera probe", description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", required=True, help="folder to write (created if missing)")
    parser.add_argument("--device", choices=["cuda", "cpu"],
                        help="cuda (nccl) or cpu (gloo); default cuda where available")
    parser.add_argument("--quick", action="store_true", help="smallest sizes, few iterations (for tests)")
    parser.add_argument("--steps", action="store_true", help="also time training steps of a Llama-style model")
    parser.add_argument("--model-config", metavar="FILE", help="Hugging Face Llama config.json for --steps "
                        "(default: a tiny model on a CPU or with --quick, Llama 3.2 1B on a GPU)")
    parser.add_argument("--seq", type=positive_int, help="tokens per sequence (default 4096 on a GPU, 64 otherwise)")
    parser.add_argument("--micro-batch", type=positive_int, help="sequences per micro-batch and rank (default 1)")
    parser.add_argument("--grad-accum", type=positive_int, help="micro-batches per step (default 1)")
    parser.add_argument("--recompute", choices=["none", "full"], help="full: recompute every layer in backward")
    return parser


def parse_args(argv=None) -> argparse.Namespace:
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.device is None:
        args.device = "cuda" if torch.cuda.is_available() else "cpu"
    if args.device == "cuda" and not torch.cuda.is_available():
        parser.error("argument --device: cuda is not available here (torch.cuda.is_available() is False); "
                     "allowed: cpu")
    if Path(args.out).exists() and not Path(args.out).is_dir():
        parser.error(f"argument --out: {args.out} exists and is not a folder")
    given = [name for name in STEP_OPTIONS if getattr(args, name) is not None]
    if given and not args.steps:
        parser.error(f"argument --{given[0].replace('_', '-')}: only used with --steps")
    args.model_shape = None
    if args.model_config is not None:
        try:
            args.model_shape = read_model_config(args.model_config)
        except ValueError as error:
            parser.error(f"argument --model-config: {error}")
    return args


def step_setup(args, run: Run):
    """(model shape, step options) from the options and this run's defaults."""
    shape = args.model_shape or (TINY if run.small else LLAMA_3_2_1B)
    seq = args.seq or (64 if run.small else 4096)
    return shape, StepOptions(seq, args.micro_batch or 1, args.grad_accum or 1, args.recompute or "none")


def say(run: Run, text: str) -> None:
    if run.rank == 0:
        print(f"tessera probe: {text}", file=sys.stderr, flush=True)


def measure(run: Run, args) -> dict:
    """{file name: Table} of every measurement, in order; every rank runs all of them."""
    sweeps = list(SWEEPS) + ([("collectives.csv", collectives_table)] if run.distributed else [])
    tables = {}
    for name, sweep in sweeps:
        start = time.perf_counter()
        tables[name] = sweep(run)
        say(run, f"{name}: {len(tables[name].rows)} rows in {time.perf_counter() - start:.1f} s")
    if args.steps:
        start = time.perf_counter()
        tables.update(steps_tables(*step_setup(args, run), run, device_name(run)))
        say(run, f"steps.csv: {time.perf_counter() - start:.1f} s")
    return tables


def write_folder(out: Path, run: Run, started_utc: str, tables: dict) -> None:
    out.mkdir(parents=True, exist_ok=True)
    for name, table in tables.items():
        write_table(out / name, table)
    document = environment(run, started_utc, list(tables))
    (out / "environment.json").write_text(json.dumps(document, indent=1) + "\n")


def main(argv=None) -> int:
    args = parse_args(argv)
    run = start_run(args.device, args.quick)
    started_utc = utc_now()
    say(run, f"{run.world_size} rank(s) on {run.nodes} node(s), {device_name(run)}, torch {torch.__version__}")
    tables = {"ranks.csv": ranks_table(run)}
    tables.update(measure(run, args))
    if run.rank == 0:
        write_folder(Path(args.out), run, started_utc, tables)
        say(run, f"wrote {args.out}")
    finish_run(run)  # not on an error: the other ranks may be inside a collective that never ends
    return 0


if __name__ == "__main__":
    sys.exit(main())
