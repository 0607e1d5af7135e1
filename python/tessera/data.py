"""A trainer rank's side of Tessera's data service (issue 35; `tessera data-serve`).

The coordinator plans the epoch (which samples each rank gets, in which micro-batch and order)
and workers build the micro-batches; `ServiceDataset` is the iterable a rank trains from:

    dataset = tessera.data.ServiceDataset("127.0.0.1:50051", rank=dist.get_rank())
    for batch in torch.utils.data.DataLoader(dataset, batch_size=None):
        ...  # batch["token_ids"], batch["images"], ...

Each element is one micro-batch of this rank, in the plan's order. `state_dict()` is the rank's
cursor: save it with the model, and a restarted rank given it (`load_state_dict`) continues with
exactly the micro-batches after it, none twice and none lost. The dataset holds one micro-batch at
a time (the coordinator prefetches a bounded number per rank), so use `num_workers=0`: the
preprocessing already runs in the service's workers.
"""

import time

import grpc

from . import data_service_pb2 as pb

PROTOCOL_VERSION = pb.PROTOCOL_VERSION
_SERVICE = "/tessera.data.v1.DataService/"
# A micro-batch of patches can exceed gRPC's default 4 MiB message limit (the coordinator allows 1 GiB).
_MAX_MESSAGE_BYTES = 1 << 30


class DataServiceError(RuntimeError):
    """The coordinator refused this rank or the epoch failed (the message names the sample)."""


def _channel(address):
    options = [("grpc.max_receive_message_length", _MAX_MESSAGE_BYTES),
               ("grpc.max_send_message_length", _MAX_MESSAGE_BYTES)]
    return grpc.insecure_channel(address, options=options)


def _method(channel, name, request_type, reply_type):
    return channel.unary_unary(_SERVICE + name, request_serializer=request_type.SerializeToString,
                               response_deserializer=reply_type.FromString)


# Pause between calls while the coordinator is unreachable (killed, or restarting with --resume).
_RESTART_POLL_S = 0.1


def _call_through_restart(call, request, give_up, per_call_s=None):
    """call(request), called again while the coordinator is unreachable (UNAVAILABLE: a coordinator
    killed mid-answer resets the connection; its restart answers again) until the monotonic time
    give_up; any other error, or UNAVAILABLE after give_up, raises grpc.RpcError. Each call may
    take per_call_s, or what is left until give_up when None."""
    while True:
        timeout = per_call_s if per_call_s is not None else max(_RESTART_POLL_S, give_up - time.monotonic())
        try:
            return call(request, timeout=timeout, wait_for_ready=True)
        except grpc.RpcError as error:
            if error.code() != grpc.StatusCode.UNAVAILABLE or time.monotonic() > give_up:
                raise
            time.sleep(_RESTART_POLL_S)


def greet(address, role="trainer", name="", protocol_version=PROTOCOL_VERSION, timeout_s=30.0):
    """The coordinator's Welcome (ranks, per-rank micro-batches, epoch, ...); DataServiceError
    naming protocol_version when the versions differ."""
    give_up = time.monotonic() + timeout_s
    with _channel(address) as channel:
        call = _method(channel, "Greet", pb.Hello, pb.Welcome)
        hello = pb.Hello(protocol_version=protocol_version, role=role, name=name)
        try:
            return _call_through_restart(call, hello, give_up)
        except grpc.RpcError as error:
            raise DataServiceError(error.details()) from None


def status(address, timeout_s=10.0):
    """The coordinator's StatusReply: cursors, results held and their bytes, expired leases."""
    with _channel(address) as channel:
        return _method(channel, "Status", pb.StatusRequest, pb.StatusReply)(pb.StatusRequest(), timeout=timeout_s)


def _shard(reply):
    """A context-parallel trainer's part of the micro-batch: (cp_rank, sharding, [(begin, end), ...])
    over the packed sequence (each sample's image tokens, then its text tokens); None without cp."""
    if not reply.cp_sharding:
        return None
    return reply.cp_rank, reply.cp_sharding, list(zip(reply.cp_range_begin, reply.cp_range_end))


def _to_tensors(batch, shard):
    import torch

    rows, cols, patch = list(batch.image_rows), list(batch.image_cols), batch.patch
    flat = torch.frombuffer(bytearray(batch.patches), dtype=torch.uint8) if batch.patches else torch.empty(0, dtype=torch.uint8)
    images, offset = [], 0
    for r, c in zip(rows, cols):
        n = r * c * patch * patch * 3
        images.append(flat[offset:offset + n].view(r * c, patch * patch * 3))
        offset += n
    return {
        "position": batch.position, "step": batch.step, "microbatch": batch.microbatch,
        "sample_ids": torch.tensor(list(batch.sample_ids), dtype=torch.int64),
        "token_ids": torch.tensor(list(batch.token_ids), dtype=torch.int64),
        "text_lengths": torch.tensor(list(batch.text_lengths), dtype=torch.int64),
        "images": images, "image_sample": torch.tensor(list(batch.image_sample), dtype=torch.int64),
        "image_grid": [(r, c) for r, c in zip(rows, cols)], "patch": patch,
        "skipped_sample_ids": list(batch.skipped_sample_ids), "skipped_reasons": list(batch.skipped_reasons),
        "cp_shard": shard,
    }


class ServiceReader:
    """One trainer rank's micro-batches from a coordinator, in the epoch plan's order, as the
    protocol's MicroBatch messages (or, with tensors=True, dicts of torch tensors). Needs no torch
    for messages; ServiceDataset is the same reader as a torch IterableDataset."""

    def __init__(self, coordinator, rank, wait_s=1.0, timeout_s=600.0, tensors=False):
        if not isinstance(rank, int) or isinstance(rank, bool) or rank < 0:
            raise ValueError(f"rank: got {rank!r} (allowed: this trainer's rank, an integer >= 0)")
        self.coordinator = coordinator
        self.rank = rank
        self.wait_s = wait_s
        self.timeout_s = timeout_s
        self.tensors = tensors
        welcome = greet(coordinator, name=f"rank {rank}", timeout_s=timeout_s)
        if rank >= welcome.ranks:
            raise ValueError(f"rank: got {rank} (allowed: 0 .. {welcome.ranks - 1}, the coordinator's ranks)")
        self.epoch = welcome.epoch
        self.per_rank = welcome.per_rank
        self.context_parallel = max(1, welcome.context_parallel)
        self.shard = None  # the last micro-batch's context-parallel shard (see _shard)
        self._position = 0
        self.stall_s = 0.0  # time this rank spent waiting for its micro-batches (fetch calls)

    def state_dict(self):
        """The rank's cursor: the next micro-batch to train on."""
        return {"epoch": self.epoch, "position": self._position}

    def load_state_dict(self, state):
        if state.get("epoch") != self.epoch:
            raise ValueError(f"epoch: the state is of epoch {state.get('epoch')!r} (allowed: {self.epoch}, the coordinator's)")
        position = state.get("position")
        if not isinstance(position, int) or not 0 <= position <= self.per_rank:
            raise ValueError(f"position: got {position!r} (allowed: 0 .. {self.per_rank})")
        self._position = position

    def __len__(self):
        return self.per_rank

    def _fetch(self, fetch):
        request = pb.FetchRequest(protocol_version=PROTOCOL_VERSION, rank=self.rank, position=self._position,
                                  wait_s=self.wait_s)
        give_up = time.monotonic() + self.timeout_s
        while True:
            try:
                reply = _call_through_restart(fetch, request, give_up, self.wait_s + 30.0)
            except grpc.RpcError as error:
                raise DataServiceError(f"rank {self.rank}: {error.details()}") from None
            if reply.ready or reply.end_of_epoch:
                return reply
            if reply.error:
                raise DataServiceError(reply.error)
            if time.monotonic() > give_up:
                raise DataServiceError(f"rank {self.rank}: micro-batch {self._position} not ready after {self.timeout_s} s")

    def __iter__(self):
        with _channel(self.coordinator) as channel:
            fetch = _method(channel, "Fetch", pb.FetchRequest, pb.FetchReply)
            while self._position < self.per_rank:
                started = time.monotonic()
                reply = self._fetch(fetch)
                self.stall_s += time.monotonic() - started
                if reply.end_of_epoch:
                    return
                self._position += 1
                self.shard = _shard(reply)
                yield _to_tensors(reply.batch, self.shard) if self.tensors else reply.batch
            # Tell the coordinator this rank is done (it ends the epoch when every rank is).
            self._fetch(fetch)


def __getattr__(name):
    # ServiceDataset subclasses torch's IterableDataset, so torch is imported only when it is used.
    if name != "ServiceDataset":
        raise AttributeError(f"module 'tessera.data' has no attribute {name!r}")
    import torch.utils.data

    class ServiceDataset(ServiceReader, torch.utils.data.IterableDataset):
        """ServiceReader as a torch IterableDataset yielding dicts of tensors: use it in a
        DataLoader with batch_size=None and num_workers=0."""

        def __init__(self, coordinator, rank, wait_s=1.0, timeout_s=600.0, tensors=True):
            ServiceReader.__init__(self, coordinator, rank, wait_s=wait_s, timeout_s=timeout_s, tensors=tensors)

    globals()["ServiceDataset"] = ServiceDataset
    return ServiceDataset
