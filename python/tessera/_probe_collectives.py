"""Collectives over torch.distributed for `tessera probe` (collectives.csv): all-reduce,
all-gather, reduce-scatter, all-to-all and a send/recv ring, at sizes from 8 bytes up, over all
ranks and, on several nodes, within each node. Sizes and bus bandwidths follow nccl-tests
(its doc/PERFORMANCE.md): `bytes` is the buffer reduced, the full gathered buffer, the full input
of reduce-scatter, what one rank sends in all in all-to-all, one message of send/recv."""

from __future__ import annotations

from dataclasses import dataclass

import torch
import torch.distributed as dist

from ._probe_context import Run, mean_time_s
from ._probe_csv import Table

ELEMENT_BYTES = 4  # float32 buffers, as nccl-tests' default
KINDS = ("all_reduce", "all_gather", "reduce_scatter", "all_to_all", "send_recv")
GIB = 1 << 30
MIB = 1 << 20


def bus_factor(kind: str, n: int) -> float:
    """busbw / algbw (nccl-tests PERFORMANCE.md): the share of the data each rank's link carries."""
    if kind == "all_reduce":
        return 2.0 * (n - 1) / n
    if kind == "send_recv":
        return 1.0
    return (n - 1) / n


@dataclass
class Group:
    """A process group and what the rows say of it."""

    handle: object  # None: the default (world) group
    ranks: list  # global ranks, in group order
    nodes: int
    gpus_per_node: int


def groups(run: Run) -> list:
    """The world, and when there are several nodes each node on its own (every rank creates every
    group, as torch.distributed requires, and measures in its own node's)."""
    world = Group(None, list(range(run.world_size)), run.nodes, run.local_world_size)
    if run.nodes == 1 or run.local_world_size < 2:
        return [world]
    mine = None
    for node in range(run.nodes):
        ranks = list(range(node * run.local_world_size, (node + 1) * run.local_world_size))
        handle = dist.new_group(ranks)
        if run.rank in ranks:
            mine = Group(handle, ranks, 1, run.local_world_size)
    return [world, mine]


def sizes_bytes(run: Run) -> list:
    """Powers of two from 8 bytes: to 1 GiB on a GPU (or an eighth of the free memory of the
    fullest GPU: all-to-all holds two such buffers), to 1 MiB on a CPU; --quick takes every
    32nd power and the largest."""
    if run.is_cuda and not run.quick:
        free_bytes = run.min_over_ranks(torch.cuda.mem_get_info(run.device)[0])
        largest = min(GIB, int(free_bytes) // 8)
    else:
        largest = MIB
    sizes, size = [], 8
    while size <= largest:
        sizes.append(size)
        size *= 32 if run.quick else 2
    if sizes[-1] != largest and run.quick:
        sizes.append(largest)
    return sizes


def _buffer(elements: int, run: Run):
    return torch.ones(elements, dtype=torch.float32, device=run.device)


def all_reduce_call(nbytes, group: Group, run: Run):
    x = _buffer(max(1, nbytes // ELEMENT_BYTES), run)
    return x.numel() * ELEMENT_BYTES, lambda: dist.all_reduce(x, group=group.handle)


def all_gather_call(nbytes, group: Group, run: Run, tensor_form: bool):
    n = len(group.ranks)
    piece = _buffer(max(1, nbytes // (ELEMENT_BYTES * n)), run)
    if tensor_form:
        out = _buffer(piece.numel() * n, run)
        call = lambda: dist.all_gather_into_tensor(out, piece, group=group.handle)  # noqa: E731
    else:
        outs = [torch.empty_like(piece) for _ in range(n)]
        call = lambda: dist.all_gather(outs, piece, group=group.handle)  # noqa: E731
    return piece.numel() * n * ELEMENT_BYTES, call


def reduce_scatter_call(nbytes, group: Group, run: Run, tensor_form: bool):
    n = len(group.ranks)
    out = _buffer(max(1, nbytes // (ELEMENT_BYTES * n)), run)
    if tensor_form:
        full = _buffer(out.numel() * n, run)
        call = lambda: dist.reduce_scatter_tensor(out, full, group=group.handle)  # noqa: E731
    else:
        pieces = [torch.ones_like(out) for _ in range(n)]
        call = lambda: dist.reduce_scatter(out, pieces, group=group.handle)  # noqa: E731
    return out.numel() * n * ELEMENT_BYTES, call


def all_to_all_call(nbytes, group: Group, run: Run):
    n = len(group.ranks)
    elements = max(1, nbytes // (ELEMENT_BYTES * n)) * n
    src, dst = _buffer(elements, run), _buffer(elements, run)
    return elements * ELEMENT_BYTES, lambda: dist.all_to_all_single(dst, src, group=group.handle)


def send_recv_call(nbytes, group: Group, run: Run):
    """A ring: every rank sends one message to the next rank of the group and receives one from
    the previous, all at once (nccl-tests' sendrecv)."""
    position = group.ranks.index(run.rank)
    n = len(group.ranks)
    after, before = group.ranks[(position + 1) % n], group.ranks[(position - 1) % n]
    send, receive = _buffer(max(1, nbytes // ELEMENT_BYTES), run), _buffer(max(1, nbytes // ELEMENT_BYTES), run)

    def call():
        ops = [dist.P2POp(dist.isend, send, after, group.handle),
               dist.P2POp(dist.irecv, receive, before, group.handle)]
        for request in dist.batch_isend_irecv(ops):
            request.wait()

    return send.numel() * ELEMENT_BYTES, call


def works(call, run: Run) -> bool:
    """Whether every rank runs the call (a backend refuses an operation it lacks before any
    traffic, on every rank alike; gloo has no reduce-scatter)."""
    try:
        call()
        ok = True
    except (RuntimeError, NotImplementedError, ValueError, AttributeError):
        ok = False
    return run.all_ranks_agree(ok)


@dataclass
class Forms:
    """Which form of each collective this backend runs (None: the kind is skipped)."""

    all_gather_tensor: object
    reduce_scatter_tensor: object


def find_forms(group: Group, run: Run) -> Forms:
    def first_working(make_call):
        for tensor_form in (True, False):
            if works(make_call(8 * len(group.ranks), group, run, tensor_form)[1], run):
                return tensor_form
        return None

    return Forms(first_working(all_gather_call), first_working(reduce_scatter_call))


def call_for(kind, nbytes, group, run, forms: Forms):
    if kind == "all_reduce":
        return all_reduce_call(nbytes, group, run)
    if kind == "all_gather":
        return all_gather_call(nbytes, group, run, forms.all_gather_tensor)
    if kind == "reduce_scatter":
        return reduce_scatter_call(nbytes, group, run, forms.reduce_scatter_tensor)
    if kind == "all_to_all":
        return all_to_all_call(nbytes, group, run)
    return send_recv_call(nbytes, group, run)


def row(kind, nbytes, group: Group, time_s) -> dict:
    n = len(group.ranks)
    algbw_gbps = nbytes / time_s / 1e9
    return {"kind": kind, "bytes": nbytes, "ranks": n, "nodes": group.nodes, "gpus_per_node": group.gpus_per_node,
            "time_us": time_s * 1e6, "algbw_gbps": algbw_gbps, "busbw_gbps": algbw_gbps * bus_factor(kind, n)}


def kinds_run(group: Group, run: Run, forms: Forms, table: Table) -> list:
    """The kinds measured here, with a comment line for each one skipped."""
    skipped = []
    if forms.all_gather_tensor is None:
        skipped.append("all_gather")
    if forms.reduce_scatter_tensor is None:
        skipped.append("reduce_scatter")
    if not works(all_to_all_call(8 * len(group.ranks), group, run)[1], run):
        skipped.append("all_to_all")
    for kind in skipped:
        table.comments.append(f"{kind}: skipped, the {run.backend} backend of torch {torch.__version__} "
                              "does not run it")
    list_forms = (("all_gather", forms.all_gather_tensor), ("reduce_scatter", forms.reduce_scatter_tensor))
    for kind, tensor_form in list_forms:
        if tensor_form is False:
            table.comments.append(f"{kind}: the list form (dist.{kind}); the {run.backend} backend does not run "
                                  f"dist.{kind}_{'into_tensor' if kind == 'all_gather' else 'tensor'}")
    return [kind for kind in KINDS if kind not in skipped]


def measure_group(group: Group, run: Run, table: Table, sizes) -> None:
    forms = find_forms(group, run)
    for kind in kinds_run(group, run, forms, table):
        for size in sizes:
            nbytes, call = call_for(kind, size, group, run, forms)
            time_s = run.max_over_ranks(mean_time_s(call, run, agree=True))
            table.rows.append(row(kind, nbytes, group, time_s))
            del call
        if run.is_cuda:
            torch.cuda.empty_cache()


def collectives_table(run: Run) -> Table:
    header = ["kind", "bytes", "ranks", "nodes", "gpus_per_node", "time_us", "algbw_gbps", "busbw_gbps"]
    table = Table(header)
    table.comments.append(f"float32 buffers over {run.backend}; time_us = the slowest rank's mean time per call; "
                          "bytes as nccl-tests counts them")
    sizes = sizes_bytes(run)
    for group in groups(run):
        # every rank measures its own node's group at once; the row is written once (rank 0's node)
        before = len(table.comments)
        measure_group(group, run, table, sizes)
        if group.handle is not None:
            del table.comments[before:]  # the world group already said what was skipped
    return table
