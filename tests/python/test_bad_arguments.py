"""Issue 30's Python findings: tessera.plan / estimate / validate / calibrate / run_cli raise only
TesseraError (or its subclass ArgumentTypeError) for bad input -- never TypeError from os.fspath,
JSONDecodeError, RecursionError or a JSON serialisation error -- and a call leaves nothing behind
for the next one (a GPU registered by gpu_file= is that call's only).

The property test draws random argument values of every Python kind for every parameter of the
entry points and asserts the only exception is a one-line TesseraError naming something.
"""

import json
import random

import pytest

import tessera

# Values of every kind a caller might pass by mistake (and a few valid ones, so that some calls
# get far enough to reach the CLI's own checks).
_DEEP = {}
_node = _DEEP
for _ in range(100_000):
    _node["a"] = {}
    _node = _node["a"]

ODD_VALUES = [
    None, True, False, 0, -1, 1, 2**70, 2.5, float("nan"), float("inf"), -0.0, "", "--json", "x" * 300,
    "llama3-8b", "h100:8", "tp=2,gbs=64,seq=2048", "\x00", "\u00e9", b"bytes", [], [1, "a"], (1, 2), {}, {"tp": True},
    {"layers": {1}}, {1, 2}, object(), 3 + 4j, _DEEP, [[[[]]]], {"a": float("nan")},
]


def _safe_repr(value):
    try:
        return repr(value)[:200]
    except RecursionError:
        return f"a deep {type(value).__name__}"


def _one_line_tessera_error(call):
    try:
        call()
    except tessera.TesseraError as e:
        text = str(e)
        assert text and "\n" not in text, repr(text)
        return text
    return None


def test_model_none_is_refused_not_the_cli_default():
    # model=None left the option out, and the CLI's default model (gpt3-175b) was estimated.
    with pytest.raises(tessera.ArgumentTypeError, match="^model: got None"):
        tessera.estimate(model=None, cluster="h100:8", plan="tp=2,gbs=64,seq=2048")
    with pytest.raises(tessera.ArgumentTypeError, match="^gbs: got None"):
        tessera.plan(model="llama3-8b", cluster="h100:8", gbs=None)


def test_a_bool_is_not_a_plan_degree():
    with pytest.raises(tessera.ArgumentTypeError, match=r"^fix\.tp: got True"):
        tessera.plan(model="llama3-8b", cluster="h100:8", gbs=64, fix={"tp": True})
    with pytest.raises(tessera.ArgumentTypeError, match="^seq: got False"):
        tessera.plan(model="llama3-8b", cluster="h100:8", gbs=64, seq=False)
    # An integer is still a degree.
    plans = tessera.plan(model="llama3-8b", cluster="h100:8", gbs=64, seq=2048, top=1, fix={"tp": 2})
    assert plans["plans"][0]["plan"]["tp"] == 2


def test_values_that_are_no_json_name_the_argument():
    with pytest.raises(tessera.ArgumentTypeError, match="^file: got 5"):
        tessera.validate(5)
    with pytest.raises(tessera.ArgumentTypeError, match="^model: not a JSON value"):
        tessera.estimate(model={"layers": {1}}, cluster="h100:8", plan="tp=2,gbs=64")
    with pytest.raises(tessera.ArgumentTypeError, match="^profile: not a JSON value: nested too deeply"):
        tessera.estimate(model="llama3-8b", cluster="h100:8", plan="tp=2,gbs=64", profile=_DEEP)
    # Deep, but within Python's recursion: the CLI's nesting limit names the file's field.
    shallow = {}
    node = shallow
    for _ in range(200):
        node["a"] = {}
        node = node["a"]
    with pytest.raises(tessera.TesseraError, match="nested deeper than"):
        tessera.estimate(model="llama3-8b", cluster="h100:8", plan="tp=2,gbs=64", profile=shallow)


def test_html_true_is_an_argument_error_not_a_json_decode_error():
    with pytest.raises(tessera.ArgumentTypeError, match="^html: got True"):
        tessera.plan(model="llama3-8b", cluster="h100:8", gbs=64, html=True)


def test_a_gpu_file_lasts_one_call(tmp_path):
    catalog = json.loads(tessera.run_cli(["gpus", "--json"]))
    h100 = [g for g in catalog["gpus"] if g["key"] == "h100-sxm-80gb"][0]
    gpu = dict(h100, key="leak-gpu", aliases=[], family="custom")
    first, corrected = tmp_path / "g.json", tmp_path / "g2.json"
    first.write_text(json.dumps(gpu))
    corrected.write_text(json.dumps(dict(gpu, bf16_tflops=h100["bf16_tflops"] / 2)))
    args = dict(model="llama3-8b", cluster="leak-gpu:8", plan="tp=2,gbs=64,seq=4096")
    fast = tessera.estimate(**args, gpu_file=str(first))
    # The next call without gpu_file= does not know the GPU.
    with pytest.raises(tessera.TesseraError, match="leak-gpu"):
        tessera.estimate(**args)
    # A corrected file under the same key is a new call's GPU, not a clash with the first.
    slow = tessera.estimate(**args, gpu_file=str(corrected))
    assert slow["iteration_time_s"] > fast["iteration_time_s"]


ENTRY_POINTS = {
    "plan": (tessera.plan, dict(model="llama3-8b", cluster="h100:8", gbs=64, seq=2048, top=1),
             ["model", "cluster", "gbs", "seq", "top", "fix", "max_memory_gib", "profile", "framework", "gpu_file"]),
    "estimate": (tessera.estimate, dict(model="llama3-8b", cluster="h100:8", plan="tp=2,gbs=64,seq=2048"),
                 ["model", "cluster", "plan", "profile", "gpu_file", "pipeline"]),
    "validate": (tessera.validate, dict(file="no-such.csv"), ["file", "pipeline", "leave_one_source_out", "profile"]),
    "calibrate": (tessera.calibrate, dict(runs="no-such.csv"),
                  ["runs", "logs", "nccl", "gemm", "gpu", "model", "cluster", "plan", "output", "report"]),
}


@pytest.mark.parametrize("name", sorted(ENTRY_POINTS))
def test_random_arguments_raise_only_tessera_errors(name, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # a call that writes (output=, html=) writes here
    function, base, parameters = ENTRY_POINTS[name]
    rng = random.Random(30 + len(name))
    for _ in range(60):
        kwargs = dict(base)
        for parameter in rng.sample(parameters, rng.randint(1, 3)):
            kwargs[parameter] = rng.choice(ODD_VALUES)
        try:
            _one_line_tessera_error(lambda: function(**kwargs))
        except Exception as e:  # noqa: BLE001  (the property: nothing but TesseraError)
            pytest.fail(f"tessera.{name}({_safe_repr(kwargs)}) raised {type(e).__name__}: {e}")
    for value in ODD_VALUES:
        try:
            _one_line_tessera_error(lambda: tessera.run_cli(value))
            _one_line_tessera_error(lambda: tessera.run_cli(["estimate", "--model", value]))
        except Exception as e:  # noqa: BLE001
            pytest.fail(f"tessera.run_cli({_safe_repr(value)}) raised {type(e).__name__}: {e}")
