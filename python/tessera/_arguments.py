"""Checks of the arguments of every public entry point, at the call that receives them.

Each check returns the value converted (an ``int``, ``float``, ``bool``, ``str`` or ``list``) or
raises one one-line error in the CLI's form, ``name: problem (allowed: ...)``, naming the argument
as the caller wrote it:

* ``ArgumentTypeError`` (a ``TesseraError`` and a ``TypeError``) for a value of the wrong kind;
* ``TesseraError`` (a ``ValueError``) for a value out of range.

Integers are Python or numpy integers; ``bool`` is not an integer (``True`` for a count is an
error, not 1), and a float is not one either, even ``4.0``. Nothing is clamped or rounded.
"""

from __future__ import annotations

import math
import operator
from typing import Any, Iterable, Optional, Sequence

from ._tessera import TesseraError

# Seeds and epochs are added into the uint64 seed of tessera.permutation (seed + epoch); each below
# 2^63 keeps that sum exact whatever the other is.
MAX_SEED = 2**63 - 1
MAX_EPOCH = 2**63 - 1
# Slots of one step, as the balancer bounds them (src/balance/stream_balancer.h, kMaxSlots).
MAX_SLOTS = 1_000_000
# Steps of one balancer stream (src/balance/stream_balancer.h, kMaxSteps).
MAX_STREAM_STEPS = 1_000_000
# GPUs of one per-batch cp planner (src/balance/per_batch_parallelism.h, kMaxPerBatchGpus).
MAX_PER_BATCH_GPUS = 4096
# Any count Tessera accepts (src/core/checks.h, kMaxCount).
MAX_COUNT = 1_000_000_000_000
# Samples of a synthetic mix or a permutation (src/balance/synthetic_mix.h, kMaxSyntheticSamples).
MAX_SYNTHETIC_SAMPLES = 20_000_000
# The seed of tessera.permutation / synthetic_samples is a uint64.
MAX_UINT64 = 2**64 - 1
# Tokens of one sample (src/balance/sample_tokens.h, kMaxSampleTokens).
MAX_SAMPLE_TOKENS = 1 << 30


class ArgumentTypeError(TesseraError, TypeError):
    """An argument of the wrong kind: a TesseraError (ValueError) and a TypeError."""


def _fail(name: str, problem: str, allowed: str, kind=TesseraError):
    raise kind(f"{name}: {problem} (allowed: {allowed})")


def _shown(value: Any) -> str:
    try:
        text = repr(value)
    except Exception:  # noqa: BLE001  (a 10^5-deep dict's repr recurses too deep; any repr may raise)
        return f"a {type(value).__name__}"
    return text if len(text) <= 40 else text[:37] + "..."


def _is_bool(value: Any) -> bool:
    # numpy's bool is not a subclass of bool; it is named bool_ (numpy 1) or bool (numpy 2).
    return isinstance(value, bool) or type(value).__name__ in ("bool_", "bool")


def _range_text(low: Optional[int], high: Optional[int]) -> str:
    if low is not None and high is not None:
        return f"an integer from {low} to {high}"
    if low is not None:
        return f"an integer >= {low}"
    return "an integer"


def integer(name: str, value: Any, low: Optional[int] = None, high: Optional[int] = None) -> int:
    """A Python or numpy integer (not bool, not float) in [low, high]."""
    allowed = _range_text(low, high)
    if _is_bool(value):
        _fail(name, f"got {value!r}, a bool", allowed, ArgumentTypeError)
    try:
        number = operator.index(value)
    except TypeError:
        _fail(name, f"got {_shown(value)} ({type(value).__name__})", allowed, ArgumentTypeError)
    if (low is not None and number < low) or (high is not None and number > high):
        _fail(name, f"got {number}", allowed)
    return number


def optional_integer(name: str, value: Any, low: Optional[int] = None, high: Optional[int] = None) -> Optional[int]:
    return None if value is None else integer(name, value, low, high)


def real(name: str, value: Any, low: float, high: float, *, low_open: bool = False, high_open: bool = False) -> float:
    """A finite number (int, float or numpy number; not bool) in the interval given."""
    left, right = "(" if low_open else "[", ")" if high_open else "]"
    allowed = f"a finite number in {left}{low:g}, {high:g}{right}"
    if _is_bool(value) or isinstance(value, (str, bytes)):
        _fail(name, f"got {_shown(value)} ({type(value).__name__})", allowed, ArgumentTypeError)
    try:
        number = float(value)
    except (TypeError, ValueError):
        _fail(name, f"got {_shown(value)} ({type(value).__name__})", allowed, ArgumentTypeError)
    too_low = number <= low if low_open else number < low
    too_high = number >= high if high_open else number > high
    if not math.isfinite(number) or too_low or too_high:
        _fail(name, f"got {number:g}", allowed)
    return number


def boolean(name: str, value: Any) -> bool:
    """True or False (or a numpy bool); not 0 / 1, not None."""
    if not _is_bool(value):
        _fail(name, f"got {_shown(value)} ({type(value).__name__})", "True or False", ArgumentTypeError)
    return bool(value)


def optional_boolean(name: str, value: Any) -> Optional[bool]:
    return None if value is None else boolean(name, value)


def text(name: str, value: Any, allowed: str = "a string") -> str:
    if not isinstance(value, str):
        _fail(name, f"got {_shown(value)} ({type(value).__name__})", allowed, ArgumentTypeError)
    return value


def choice(name: str, value: Any, options: Sequence[str]) -> str:
    allowed = ", ".join(options)
    text(name, value, allowed)
    if value not in options:
        _fail(name, f"got {value!r}", allowed)
    return value


def sequence(name: str, value: Any, length: Optional[int] = None, what: str = "one entry per sample") -> list:
    """A list (or tuple, numpy array, any sized iterable but a string) as a list, of `length` entries."""
    if isinstance(value, (str, bytes, dict)) or not hasattr(value, "__len__") or not hasattr(value, "__iter__"):
        _fail(name, f"got {_shown(value)} ({type(value).__name__})", f"a list, {what}", ArgumentTypeError)
    items = value.tolist() if hasattr(value, "tolist") else list(value)
    if length is not None and len(items) != length:
        _fail(name, f"has {len(items)} entries for {length} samples", what)
    return items


def optional_sequence(name: str, value: Any, length: Optional[int] = None, what: str = "one entry per sample"):
    return None if value is None else sequence(name, value, length, what)


def integers(name: str, values: Iterable, low: Optional[int] = None, high: Optional[int] = None) -> list:
    """Each entry an integer in [low, high], named name[i]."""
    return [integer(f"{name}[{i}]", v, low, high) for i, v in enumerate(sequence(name, values, what="integers"))]


def reals(name: str, values: Iterable, low: float, high: float, **interval) -> list:
    """Each entry a finite number in the interval, named name[i]."""
    return [real(f"{name}[{i}]", v, low, high, **interval) for i, v in enumerate(sequence(name, values, what="numbers"))]


def number(name: str, value: Any) -> float:
    """Any finite number (int, float or numpy number; not bool); ranges are the callee's to check."""
    if _is_bool(value) or isinstance(value, (str, bytes)):
        _fail(name, f"got {_shown(value)} ({type(value).__name__})", "a finite number", ArgumentTypeError)
    try:
        result = float(value)
    except (TypeError, ValueError):
        _fail(name, f"got {_shown(value)} ({type(value).__name__})", "a finite number", ArgumentTypeError)
    if not math.isfinite(result):
        _fail(name, f"got {result:g}", "a finite number")
    return result
