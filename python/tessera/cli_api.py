"""``tessera.plan``, ``tessera.estimate``, ``tessera.validate``, ``tessera.calibrate``: the tessera command line, run
in-process (``_tessera._run``, the same ``run_tessera`` the binary's ``main`` calls), returning the
document that ``--json`` prints as a dict. The documents are the CLI's by construction: both run
the same command on the same argument list.

Inputs are the CLI's: zoo names and file paths as strings, plus Python values where a file would
be needed -- a Hugging Face ``config.json`` or a Tessera model JSON as a dict (``model=``), a
cluster JSON as a dict (``cluster=``), a plan JSON as a dict (``plan=``), ``fix={"tp": 8}``, a data
mix as a dict or a list of sample dicts (``data=``). Those are written to a temporary folder for
the call and removed afterwards. Any other CLI option is a keyword: ``allow_cross_node_tp=True`` is
``--allow-cross-node-tp``, ``max_memory_gib=60`` is ``--max-memory-gib 60``; ``None`` / ``False``
leave it out. ``profile=`` (plan / estimate / validate) is the global ``--profile FILE``: a
calibration profile from ``tessera.calibrate(..., output=FILE)``, a path, or the dict it returned.

Bad input raises ``TesseraError`` (a ``ValueError``) with the CLI's one line, which names the field.
"""

import json
import numbers
import os
import re
import tempfile

from . import _arguments as _checks
from ._arguments import ArgumentTypeError
from ._tessera import TesseraError, _run

_EXIT_USAGE = 2  # the CLI's exit status for bad input (src/cli/subcommands.h, kExitUsage)
_ERROR_PREFIX = "error: "
# The CLI names an HF model by its _name_or_path, else by the folder of its config.json
# (src/formats/hf_config.h, hf_model_name); the folder written here follows the same rule.
_DEFAULT_HF_NAME = "hf-model"
# Options of plan / estimate / validate that take a value: True would become a bare flag there.
_VALUED_OPTIONS = {"profile": "'profile.json'", "model": "'llama3-8b'", "cluster": "'h100-sxm-80gb:64'", "gbs": 512, "seq": 4096, "top": 5,
                   "fix": "'tp=8'", "max_memory_gib": 60, "plan": "'tp=8,pp=1'", "pipeline": "'simulated'",
                   "html": "'report.html'", "trace": "'step.json'", "emit": "'megatron'", "data": "'caption-like'",
                   "gpu_file": "'gpus.json'", "framework": "'megatron'", "compare_profile": "'old.json'", "seed": 1}


def run_cli(args):
    """Run ``tessera ARGS...`` in-process and return its standard output as text.

    Raises ``TesseraError`` (``ValueError``) with the error line when the command rejects its input.
    """
    if isinstance(args, (str, bytes)) or not isinstance(args, (list, tuple)):
        raise ArgumentTypeError(
            f"args: got {type(args).__name__} (allowed: a list of arguments, e.g. ['plan', '--model', 'llama3-8b'])"
        )
    code, out, err = _run([_argument_text(i, a) for i, a in enumerate(args)])
    out_text = out.decode("utf-8", errors="replace")
    err_text = err.decode("utf-8", errors="replace").strip()
    if code == _EXIT_USAGE:
        line = err_text.splitlines()[-1] if err_text else "tessera: bad input"
        raise TesseraError(line[len(_ERROR_PREFIX):] if line.startswith(_ERROR_PREFIX) else line)
    if code != 0:
        raise RuntimeError(f"tessera {' '.join(map(str, args))} exited with {code}: {err_text}")
    return out_text


def _argument_text(index, value):
    """One command-line word: a string, a path or a number (a bool or a container is no word)."""
    if isinstance(value, os.PathLike):
        return os.fspath(value) if isinstance(os.fspath(value), str) else os.fsdecode(os.fspath(value))
    if isinstance(value, str) or (isinstance(value, numbers.Real) and not _checks._is_bool(value)):
        return str(value)
    raise ArgumentTypeError(
        f"args[{index}]: got {_checks._shown(value)} ({type(value).__name__}) (allowed: a string, a path or a number)")


def _option(key):
    return "--" + key.replace("_", "-")


def _hf_folder_name(config):
    # "meta-llama/Llama-2-7b-hf" -> "Llama-2-7b-hf": the model's name, as the CLI takes it from
    # the folder of a config.json.
    source = str(config.get("_name_or_path") or _DEFAULT_HF_NAME).rstrip("/")
    name = re.sub(r"[^A-Za-z0-9._-]", "_", source.split("/")[-1])
    return name if name not in ("", ".", "..") else _DEFAULT_HF_NAME


def _is_hf_config(value):
    return "architectures" in value or "model_type" in value


def _json_text(name, value):
    """value as JSON text, or ArgumentTypeError naming the argument: a set, an object or a
    nesting deeper than Python's recursion limit is no JSON document (the CLI refuses more than 64
    levels itself, with the field named)."""
    try:
        return json.dumps(value, allow_nan=False)
    except (TypeError, ValueError, RecursionError) as e:
        problem = "nested too deeply" if isinstance(e, RecursionError) else str(e).splitlines()[0][:120]
        raise ArgumentTypeError(
            f"{name}: not a JSON value: {problem} (allowed: dicts, lists, strings, finite numbers, bools and None)"
        ) from None


def _write_json(folder, relative, value, name):
    text = _json_text(name, value)
    path = os.path.join(folder, relative)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w", encoding="utf-8") as f:
        f.write(text)
    return path


def _file_for(folder, key, value):
    """A dict (or, for data, a list of samples) as the file the CLI option reads."""
    if key == "model" and isinstance(value, dict) and _is_hf_config(value):
        return _write_json(folder, os.path.join("hf", _hf_folder_name(value), "config.json"), value, key)
    if key == "data" and isinstance(value, list):
        lines = [_json_text(f"data[{i}]", sample) for i, sample in enumerate(value)]
        path = os.path.join(folder, "data.jsonl")
        with open(path, "w", encoding="utf-8") as f:
            f.write("".join(line + "\n" for line in lines))
        return path
    return _write_json(folder, key + ".json", value, key)


def _fix_value(key, value):
    """A fix={...} value as the plan text takes it: an integer or a name; a bool is neither
    (fix={'tp': True} is not tp=1)."""
    if _checks._is_bool(value) or not isinstance(value, (numbers.Integral, str)):
        raise ArgumentTypeError(
            f"fix.{key}: got {_checks._shown(value)} ({type(value).__name__}) (allowed: an integer or a name, e.g. fix={{'tp': 8}})"
        )
    return str(value)


def _fix_text(fix):
    if isinstance(fix, dict):
        return ",".join(f"{_checks.text('fix key', k)}={_fix_value(k, v)}" for k, v in fix.items())
    return _checks.text("fix", fix, "a plan text such as 'tp=8,pp=2' or a dict such as {'tp': 8}")


def _arguments(folder, options):
    """CLI arguments for keyword options, writing dict / list values to files under folder."""
    args = []
    for key, value in options.items():
        if not isinstance(key, str) or not key.isidentifier():
            raise ArgumentTypeError(f"{key}: not an option name (allowed: keywords such as max_memory_gib=60)")
        if _checks._is_bool(value) and key in _VALUED_OPTIONS:
            raise ArgumentTypeError(f"{key}: got {value} (allowed: a value, e.g. {key}={_VALUED_OPTIONS[key]})")
        if value is None or value is False:
            continue
        if value is True:
            args.append(_option(key))
            continue
        if key == "fix":
            value = _fix_text(value)
        elif isinstance(value, (dict, list)):
            value = _file_for(folder, key, value)
        elif isinstance(value, os.PathLike):
            value = os.fspath(value)
        elif not isinstance(value, (str, numbers.Real)):
            raise ArgumentTypeError(
                f"{key}: got {_checks._shown(value)} ({type(value).__name__}) (allowed: a string, a number, a path, or a dict / list where a file is read)"
            )
        args += [_option(key), str(value)]
    return args


def _required(name, value, example):
    """The arguments every call needs: None would leave the option out and run on the CLI's
    default (model=None estimated gpt3-175b)."""
    if value is None:
        raise ArgumentTypeError(f"{name}: got None (allowed: a value, e.g. {name}={example})")
    return value


# The CLI's line for an option it does not have: "--bogus: not an option of tessera plan (allowed: --model, ...)".
_UNKNOWN_OPTION = re.compile(r"^--([\w-]+): not an option of tessera (\w+) \(allowed: (.*)\)$")
# Options the API sets itself: not keywords a caller passes.
_API_OPTIONS = {"json", "quiet", "help"}


def _keyword_error(error):
    """The CLI's unknown-option error as the Python keyword's (issue 32: tessera.plan(bogus=1)
    answered "The following arguments were not expected: 1 --bogus"); None for any other error."""
    match = _UNKNOWN_OPTION.match(str(error))
    if match is None:
        return None
    keyword, command = match.group(1).replace("-", "_"), match.group(2)
    allowed = [o[2:].replace("-", "_") for o in match.group(3).split(", ") if o.startswith("--")]
    allowed = ", ".join(a for a in allowed if a not in _API_OPTIONS)
    return ArgumentTypeError(f"{keyword}: not a keyword of tessera.{command} (allowed: {allowed})")


def _run_command(command, positional, options):
    with tempfile.TemporaryDirectory(prefix="tessera_") as folder:
        args = list(command) + [_path_text(name, p) for name, p in positional] + _arguments(folder, options)
        try:
            text = run_cli(args)
        except TesseraError as e:
            keyword_error = _keyword_error(e)
            if keyword_error is None:
                raise
            raise keyword_error from None
    return text


def _profile(profile):
    """profile=: None, a path, or a profile dict (written to a file for --profile)."""
    if profile is None or isinstance(profile, dict):
        return profile
    return _path_text("profile", profile)


def plan(model, cluster, gbs, seq=None, top=None, fix=None, max_memory_gib=None, profile=None, **more):
    """``tessera plan ... --json --quiet`` as a dict: ``plans`` best first, each with its ``plan``,
    ``estimate`` and Megatron arguments (multimodal models: the strategies and ``recommended``).

    ``seq=None``: the model's context; ``top=None``: the CLI's default (5; 3 for a multimodal model).
    ``more``: any other plan option (``allow_cross_node_tp=True``, ``data=``, ``seed=``,
    ``trace="step.json"``, ``gpu_file=``). ``emit="megatron" | "torchtitan"`` returns that text
    instead of a dict; ``emit="json"`` the best plan's document. ``profile``: a calibration profile
    (path, or the dict ``calibrate`` returns) applied to its GPUs.
    """
    options = dict(model=_required("model", model, _VALUED_OPTIONS["model"]),
                   cluster=_required("cluster", cluster, _VALUED_OPTIONS["cluster"]),
                   gbs=_required("gbs", gbs, _VALUED_OPTIONS["gbs"]), seq=seq, top=top, fix=fix,
                   max_memory_gib=max_memory_gib, profile=_profile(profile))
    options.update(more)
    options.update(json=True, quiet=True)
    text = _run_command(["plan"], [], options)
    emit = more.get("emit")
    return text if emit not in (None, "json") else json.loads(text)


def estimate(model, cluster, plan, profile=None, **more):
    """``tessera estimate ... --json`` as a dict: one iteration's time, memory and breakdown.

    ``plan``: the shorthand ``"tp=8,pp=4,mb=1,gbs=512,seq=4096"`` or a plan JSON (path or dict).
    ``profile``: a calibration profile (path or dict). ``more``: ``trace="iteration.json"``, ``gpu_file=``.
    """
    options = dict(model=_required("model", model, _VALUED_OPTIONS["model"]),
                   cluster=_required("cluster", cluster, _VALUED_OPTIONS["cluster"]),
                   plan=_required("plan", plan, _VALUED_OPTIONS["plan"]), profile=_profile(profile))
    options.update(more)
    options.update(json=True)
    return json.loads(_run_command(["estimate"], [], options))


def validate(file, pipeline=None, leave_one_source_out=False, profile=None, **more):
    """``tessera validate FILE ... --json`` as a dict: predicted vs measured rows and the summary.

    ``pipeline``: ``"simulated"`` (the CLI's default) or ``"closed-form"``. ``profile``: a
    calibration profile (path or dict) applied before predicting.
    """
    options = dict(pipeline=pipeline, leave_one_source_out=leave_one_source_out, profile=_profile(profile))
    options.update(more)
    options.update(json=True)
    return json.loads(_run_command(["validate"], [("file", file)], options))


# tessera.calibrate's list arguments and the repeatable CLI option each becomes.
_CALIBRATE_LISTS = {"runs": "--runs", "logs": "--log", "nccl": "--nccl"}
# Its single-valued ones (gemm, a file; gpu / model / cluster / plan, as the CLI takes them).
_CALIBRATE_VALUES = {"gemm": "--gemm", "attention": "--attention", "kernels": "--kernels", "probe": "--probe",
                     "gpu": "--gpu", "model": "--model", "cluster": "--cluster", "plan": "--plan"}


def _path_text(name, value):
    if isinstance(value, os.PathLike):
        return os.fspath(value)
    return _checks.text(name, value, "a file path")


def _path_list(name, value):
    """None, one path, or a list of paths, as a list of path strings (named name[i])."""
    if value is None:
        return []
    if isinstance(value, (str, os.PathLike)):
        return [_path_text(name, value)]
    if not isinstance(value, (list, tuple)):
        raise ArgumentTypeError(
            f"{name}: got {type(value).__name__} (allowed: a file path or a list of file paths)")
    return [_path_text(f"{name}[{i}]", v) for i, v in enumerate(value)]


def calibrate(runs=None, logs=None, nccl=None, gemm=None, gpu=None, model=None, cluster=None, plan=None,
              output=None, report=False, attention=None, kernels=None, probe=None):
    """``tessera calibrate ... --json`` as a dict: the calibration profile fitted to measurements of
    your own cluster -- ``gpus`` (the calibrated parameters per GPU), ``parameters`` (each fitted
    parameter: catalog and fitted value, bounds, uncertainty, status), ``measurements`` (each
    measurement's prediction before and after), ``summary`` (median absolute error before / after,
    in percent) and ``fitted_on``. The same fit refits the goodput Controller online.

    ``runs``: CSV file(s) in the validation schema; ``logs``: Megatron-LM / torchtitan training
    logs; ``nccl``: nccl-tests outputs (``"FILE"`` or ``"FILE@NODESxGPUS"``); each a path or a list
    of paths. ``gemm``, ``attention``, ``kernels``: GEMM, fused-attention and memory-bound kernel
    sweep CSVs; ``probe``: a ``tessera probe`` output folder, read whole. ``gpu``, ``model``, ``cluster``, ``plan``: what the logs,
    nccl-tests outputs and GEMM sweep ran on, where they do not say (``model`` may be a dict).
    ``output``: also write the profile JSON there; pass it (or the dict returned) as ``profile=``
    to plan / estimate / validate. ``report=True`` returns the text report instead (the summary and
    every measurement's prediction before and after), as ``tessera calibrate --report`` prints it.
    """
    report = _checks.boolean("report", report)
    lists = {"runs": runs, "logs": logs, "nccl": nccl}
    values = {"gemm": gemm, "attention": attention, "kernels": kernels, "probe": probe, "gpu": gpu, "model": model,
              "cluster": cluster, "plan": plan}
    args = ["calibrate"]
    for key, value in lists.items():
        for path in _path_list(key, value):
            args += [_CALIBRATE_LISTS[key], path]
    with tempfile.TemporaryDirectory(prefix="tessera_") as folder:
        for key, value in values.items():
            if value is None:
                continue
            if key == "model" and isinstance(value, dict):
                value = _file_for(folder, key, value)
            else:
                value = _path_text(key, value)
            args += [_CALIBRATE_VALUES[key], value]
        if output is not None:
            args += ["--output", _path_text("output", output)]
        text = run_cli(args + (["--report"] if report else ["--json"]))
    return text if report else json.loads(text)
