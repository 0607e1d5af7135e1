"""``tessera.plan``, ``tessera.estimate``, ``tessera.validate``: the tessera command line, run
in-process (``_tessera._run``, the same ``run_tessera`` the binary's ``main`` calls), returning the
document that ``--json`` prints as a dict. The documents are the CLI's by construction: both run
the same command on the same argument list.

Inputs are the CLI's: zoo names and file paths as strings, plus Python values where a file would
be needed -- a Hugging Face ``config.json`` or a Tessera model JSON as a dict (``model=``), a
cluster JSON as a dict (``cluster=``), a plan JSON as a dict (``plan=``), ``fix={"tp": 8}``, a data
mix as a dict or a list of sample dicts (``data=``). Those are written to a temporary folder for
the call and removed afterwards. Any other CLI option is a keyword: ``allow_cross_node_tp=True`` is
``--allow-cross-node-tp``, ``max_memory_gib=60`` is ``--max-memory-gib 60``; ``None`` / ``False``
leave it out.

Bad input raises ``TesseraError`` (a ``ValueError``) with the CLI's one line, which names the field.
"""

import json
import os
import re
import tempfile

from ._arguments import ArgumentTypeError
from ._tessera import TesseraError, _run

_EXIT_USAGE = 2  # the CLI's exit status for bad input (src/cli/subcommands.h, kExitUsage)
_ERROR_PREFIX = "error: "
# The folder an HF config.json sits in names the model (src/io/model_source.cpp, load_model).
_DEFAULT_HF_NAME = "hf-model"
# Options of plan / estimate / validate that take a value: True would become a bare flag there.
_VALUED_OPTIONS = {"model": "'llama3-8b'", "cluster": "'h100-sxm-80gb:64'", "gbs": 512, "seq": 4096, "top": 5,
                   "fix": "'tp=8'", "max_memory_gib": 60, "plan": "'tp=8,pp=1'", "pipeline": "'simulated'"}


def run_cli(args):
    """Run ``tessera ARGS...`` in-process and return its standard output as text.

    Raises ``TesseraError`` (``ValueError``) with the error line when the command rejects its input.
    """
    if isinstance(args, (str, bytes)) or not isinstance(args, (list, tuple)):
        raise ArgumentTypeError(
            f"args: got {type(args).__name__} (allowed: a list of arguments, e.g. ['plan', '--model', 'llama3-8b'])"
        )
    code, out, err = _run([os.fspath(a) if isinstance(a, os.PathLike) else str(a) for a in args])
    out_text = out.decode("utf-8", errors="replace")
    err_text = err.decode("utf-8", errors="replace").strip()
    if code == _EXIT_USAGE:
        line = err_text.splitlines()[-1] if err_text else "tessera: bad input"
        raise TesseraError(line[len(_ERROR_PREFIX):] if line.startswith(_ERROR_PREFIX) else line)
    if code != 0:
        raise RuntimeError(f"tessera {' '.join(map(str, args))} exited with {code}: {err_text}")
    return out_text


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


def _write_json(folder, relative, value):
    path = os.path.join(folder, relative)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w", encoding="utf-8") as f:
        json.dump(value, f)
    return path


def _file_for(folder, key, value):
    """A dict (or, for data, a list of samples) as the file the CLI option reads."""
    if key == "model" and isinstance(value, dict) and _is_hf_config(value):
        return _write_json(folder, os.path.join("hf", _hf_folder_name(value), "config.json"), value)
    if key == "data" and isinstance(value, list):
        path = os.path.join(folder, "data.jsonl")
        with open(path, "w", encoding="utf-8") as f:
            for sample in value:
                f.write(json.dumps(sample) + "\n")
        return path
    return _write_json(folder, key + ".json", value)


def _fix_text(fix):
    if isinstance(fix, dict):
        return ",".join(f"{k}={int(v) if isinstance(v, bool) else v}" for k, v in fix.items())
    return str(fix)


def _arguments(folder, options):
    """CLI arguments for keyword options, writing dict / list values to files under folder."""
    args = []
    for key, value in options.items():
        if not isinstance(key, str) or not key.isidentifier():
            raise ArgumentTypeError(f"{key}: not an option name (allowed: keywords such as max_memory_gib=60)")
        if value is True and key in _VALUED_OPTIONS:
            raise ArgumentTypeError(f"{key}: got True (allowed: a value, e.g. {key}={_VALUED_OPTIONS[key]})")
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
        args += [_option(key), str(value)]
    return args


def _run_command(command, positional, options):
    with tempfile.TemporaryDirectory(prefix="tessera_") as folder:
        args = list(command) + [str(os.fspath(p)) for p in positional] + _arguments(folder, options)
        text = run_cli(args)
    return text


def plan(model, cluster, gbs, seq=None, top=None, fix=None, max_memory_gib=None, **more):
    """``tessera plan ... --json --quiet`` as a dict: ``plans`` best first, each with its ``plan``,
    ``estimate`` and Megatron arguments (multimodal models: the strategies and ``recommended``).

    ``seq=None``: the model's context; ``top=None``: the CLI's default (5; 3 for a multimodal model).
    ``more``: any other plan option (``allow_cross_node_tp=True``, ``data=``, ``seed=``,
    ``trace="step.json"``, ``gpu_file=``). ``emit="megatron" | "torchtitan"`` returns that text
    instead of a dict; ``emit="json"`` the best plan's document.
    """
    options = dict(model=model, cluster=cluster, gbs=gbs, seq=seq, top=top, fix=fix, max_memory_gib=max_memory_gib)
    options.update(more)
    options.update(json=True, quiet=True)
    text = _run_command(["plan"], [], options)
    emit = more.get("emit")
    return text if emit not in (None, "json") else json.loads(text)


def estimate(model, cluster, plan, **more):
    """``tessera estimate ... --json`` as a dict: one iteration's time, memory and breakdown.

    ``plan``: the shorthand ``"tp=8,pp=4,mb=1,gbs=512,seq=4096"`` or a plan JSON (path or dict).
    ``more``: ``trace="iteration.json"``, ``gpu_file=``.
    """
    options = dict(model=model, cluster=cluster, plan=plan)
    options.update(more)
    options.update(json=True)
    return json.loads(_run_command(["estimate"], [], options))


def validate(file, pipeline=None, leave_one_source_out=False, **more):
    """``tessera validate FILE ... --json`` as a dict: predicted vs measured rows and the summary.

    ``pipeline``: ``"simulated"`` (the CLI's default) or ``"closed-form"``.
    """
    options = dict(pipeline=pipeline, leave_one_source_out=leave_one_source_out)
    options.update(more)
    options.update(json=True)
    return json.loads(_run_command(["validate"], [file], options))
