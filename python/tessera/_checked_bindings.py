"""Argument checks at the boundary of the compiled bindings (``tessera._tessera``).

pybind11 converts arguments itself: it takes ``True`` for an integer and ``4.0``'s type mismatch
comes out as a multi-line "incompatible function arguments" TypeError that names no argument. Each
public binding is therefore replaced, on its class or module, by a wrapper that checks its
arguments with ``_arguments`` first (one line naming the argument, TesseraError / ArgumentTypeError)
and then calls the compiled function; lists are converted by the binding itself and, only when that
conversion fails, checked entry by entry to name the bad one (``costs[3]``). Applied once, when the
package is imported; methods of objects the bindings return (a Controller from
``Controller.from_step_times``) are checked too, since the class itself is patched.
"""

from __future__ import annotations

import functools
from typing import Callable, Dict, Sequence

from . import _arguments as a
from . import _tessera

_INCOMPATIBLE = "incompatible function arguments"
# Fields the C++ layers name in CLI spelling, as the Python argument is spelled.
_PYTHON_NAMES = {"max-tokens": "max_tokens", "synthetic": "mix"}


def _int(low=None, high=None) -> Callable:
    return lambda name, value: a.integer(name, value, low, high)


def _real(low, high, **interval) -> Callable:
    return lambda name, value: a.real(name, value, low, high, **interval)


def _num(name, value):
    return a.number(name, value)


def _str(name, value):
    return a.text(name, value)


def _bool(name, value):
    return a.boolean(name, value)


def _reals(name, value):
    return [a.number(f"{name}[{i}]", v) for i, v in enumerate(a.sequence(name, value, what="numbers"))]


def _ints(name, value):
    return a.integers(name, value)


def _python_named(error: Exception) -> Exception:
    text = str(error)
    for cli_name, python_name in _PYTHON_NAMES.items():
        if text.startswith(cli_name + ":"):
            return a.TesseraError(python_name + text[len(cli_name) :])
    return error


def _checked(function: Callable, names: Sequence[str], scalars: Dict[str, Callable], lists: Dict[str, Callable] = None,
             method: bool = True) -> Callable:
    """function with its scalar arguments checked up front and its list arguments checked when the
    binding cannot convert them; every argument is passed on by keyword."""
    lists = lists or {}

    @functools.wraps(function)
    def wrapper(*args, **kwargs):
        head, rest = (args[:1], args[1:]) if method else ((), args)
        if len(rest) > len(names):
            return function(*args, **kwargs)  # the binding's own error for too many arguments
        given = dict(zip(names, rest))
        for key, value in kwargs.items():
            if key in given:
                raise TypeError(f"{function.__name__}: got two values for {key}")
            given[key] = value
        for key, check in scalars.items():
            if key in given:
                given[key] = check(key, given[key])
        try:
            return function(*head, **given)
        except a.TesseraError as error:
            raise _python_named(error) from None
        except TypeError as raw:
            if _INCOMPATIBLE not in str(raw):
                raise
            for key, check in lists.items():
                if key in given:
                    check(key, given[key])
            first = str(raw).splitlines()[0]
            raise a.ArgumentTypeError(f"{function.__name__}: {first} (allowed: see help(tessera.{function.__name__}))") from None

    return wrapper


def _patch_method(cls, name: str, names, scalars, lists=None) -> None:
    setattr(cls, name, _checked(getattr(cls, name), names, scalars, lists))


def _patch_function(module, name: str, names, scalars, lists=None) -> None:
    setattr(module, name, _checked(getattr(module, name), names, scalars, lists, method=False))


def _patch_balancer() -> None:
    b = _tessera.Balancer
    samples = ["text_tokens", "image_tokens", "generated_tokens"]
    slots = _int(1, a.MAX_SLOTS)
    _patch_method(b, "__init__", ["dp", "microbatches", "max_tokens", "method", "model", "gpu", "equal_count"],
                  {"dp": slots, "microbatches": slots, "max_tokens": _int(0, a.MAX_COUNT), "method": _str,
                   "model": _str, "gpu": _str, "equal_count": _bool})
    for name in ("sample_costs", "balance", "costs_and_tokens"):
        _patch_method(b, name, samples, {})
    steps = _int(1, a.MAX_STREAM_STEPS)
    _patch_method(b, "stream", samples + ["steps"], {"steps": steps})
    _patch_method(b, "stream_costs", ["costs", "tokens", "steps"], {"steps": steps}, {"costs": _reals, "tokens": _ints})
    _patch_method(b, "balance_costs", ["costs", "tokens"], {}, {"costs": _reals, "tokens": _ints})
    _patch_method(_tessera.StepPlan, "rank_microbatches", ["rank"], {"rank": _int(0)})


def _patch_per_batch_cp() -> None:
    p = _tessera.PerBatchCp
    _patch_method(p, "__init__", ["gpus", "model", "gpu", "recompute"],
                  {"gpus": _int(1, a.MAX_PER_BATCH_GPUS), "model": _str, "gpu": _str, "recompute": _str})
    _patch_method(p, "decide", ["microbatches"], {})


def _patch_algorithms() -> None:
    m = _tessera
    slots = _int(1, a.MAX_SLOTS)
    _patch_function(m, "lpt", ["costs", "slots", "equal_count"], {"slots": slots, "equal_count": _bool}, {"costs": _reals})
    _patch_function(m, "karmarkar_karp", ["costs", "slots"], {"slots": slots}, {"costs": _reals})
    _patch_function(m, "order_microbatches", ["time_s", "stages"], {"stages": slots}, {"time_s": _reals})
    _patch_function(m, "cp_sharding", ["documents", "cp", "model", "gpu"], {"cp": slots, "model": _str, "gpu": _str},
                    {"documents": _ints})
    samples = _int(0, a.MAX_SYNTHETIC_SAMPLES)
    seed = _int(0, a.MAX_UINT64)
    _patch_function(m, "synthetic_samples", ["mix", "n", "seed"], {"mix": _str, "n": samples, "seed": seed})
    _patch_function(m, "permutation", ["n", "seed"], {"n": samples, "seed": seed})


def _patch_noise_scale() -> None:
    m = _tessera
    norms = ["small_sq_norm", "small_batch", "big_sq_norm", "big_batch"]
    numbers = {k: _num for k in norms}
    _patch_function(m, "unbiased_noise_estimate", norms, numbers)
    _patch_method(m.GnsEstimator, "__init__", ["ema_decay"], {"ema_decay": _num})
    _patch_method(m.GnsEstimator, "update", norms + ["steps"], dict(numbers, steps=_int(1)))
    _patch_method(m.SquaredNormShare, "add", ["squared_norm", "replicas"], {"squared_norm": _num, "replicas": _int(1)})
    _patch_function(m, "model_squared_norm", ["rank_shares"], {}, {"rank_shares": _reals})
    _patch_function(m, "statistical_efficiency", ["batch", "noise_scale", "reference_batch"],
                    {k: _num for k in ("batch", "noise_scale", "reference_batch")})
    _patch_function(m, "goodput", ["throughput", "batch", "noise_scale", "reference_batch"],
                    {k: _num for k in ("throughput", "batch", "noise_scale", "reference_batch")})
    _patch_function(m, "batch_grid", ["min_batch", "max_batch", "ratio"],
                    {"min_batch": _int(1), "max_batch": _int(1), "ratio": _num})
    _patch_function(m, "format_count", ["count"], {"count": _num})
    _patch_function(m, "parse_count", ["text"], {"text": _str})
    _patch_function(m, "parse_megatron_batch_schedule", ["text"], {"text": _str})
    _patch_function(m, "megatron_batch_schedule", ["entries"], {})


_CONTROLLER_OPTIONS = {
    "reference_batch": _num, "initial_noise_scale": _num, "batch_hysteresis": _num, "plan_hysteresis": _num,
    "horizon_per_progress": _num, "min_noise_scale_steps": _int(0), "gns_ema_decay": _num,
    "refit_ema_decay": _num, "batch_ratio": _num, "families_per_batch": _int(1), "threads": _int(0),
    "fix": _str, "token_budget": _num,
}


def _patch_controller() -> None:
    c = _tessera.Controller
    _patch_method(c, "__init__", ["model", "cluster", "seq_len", "min_batch", "max_batch", "token_budget"],
                  dict(_CONTROLLER_OPTIONS, cluster=_str, seq_len=_int(1), min_batch=_int(1), max_batch=_int(1)),
                  {"allowed": _ints})
    from_step_times = _checked(c.from_step_times, ["seq_len", "batches", "step_time_s", "token_budget"],
                               dict(_CONTROLLER_OPTIONS, seq_len=_int(1), dp=_int(1)),
                               {"batches": _ints, "step_time_s": _reals}, method=False)
    c.from_step_times = staticmethod(from_step_times)
    _patch_method(c, "observe_step", ["measured_step_time_s", "steps"], {"measured_step_time_s": _num, "steps": _int(1)})
    norms = ["small_sq_norm", "small_batch", "big_sq_norm", "big_batch"]
    _patch_method(c, "observe_gradients", norms + ["steps"], dict({k: _num for k in norms}, steps=_int(1)))
    candidate = _int(0)
    _patch_method(c, "switch_to", ["candidate"], {"candidate": candidate})
    _patch_method(c, "predicted_goodput", ["candidate", "noise_scale"], {"candidate": candidate, "noise_scale": _num})
    _patch_method(c, "candidate", ["index"], {"index": candidate})
    for name in ("batch_schedule", "megatron_schedule"):
        _patch_method(c, name, ["unit"], {"unit": _str})


def install() -> None:
    """Wraps every public binding once (idempotent: a second import does not wrap twice)."""
    if getattr(_tessera, "_arguments_checked", False):
        return
    _patch_balancer()
    _patch_per_batch_cp()
    _patch_algorithms()
    _patch_noise_scale()
    _patch_controller()
    _tessera._arguments_checked = True


install()
