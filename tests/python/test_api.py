"""tessera.plan / estimate / validate from Python against the tessera binary's --json: the same
documents (apart from the wall-clock search time), for zoo names, an HF config given as a dict, a
cluster dict and a multimodal model; bad input raises TesseraError (a ValueError) whose one line
names the field, as the CLI's does; --version and tessera.__version__ agree."""

import json
import os
import pathlib
import re
import subprocess
import threading

import pytest

import tessera

SOURCE = pathlib.Path(__file__).resolve().parents[2]
HF_FIXTURES = SOURCE / "tests" / "fixtures" / "hf"
CLI_TIMEOUT_S = 120
# Search statistics that depend on the clock or on thread timing (the planner's parallel pruning
# costs a different number of candidates from run to run), so they differ between two runs of the
# same search, CLI against CLI too. Everything else -- the plans, "why", the memory limit -- is equal.
WALL_CLOCK_KEYS = {"search_time_s", "plans_per_s", "evaluated", "feasible", "aliases", "simulated"}


def binary():
    # ctest sets TESSERA_BINARY; by hand, the build folder's bin/ next to python/tessera.
    path = os.environ.get("TESSERA_BINARY") or str(pathlib.Path(tessera.__file__).resolve().parents[2] / "bin" / "tessera")
    if not os.path.exists(path):
        pytest.skip(f"no tessera binary at {path}")
    return path


def cli(*args):
    return subprocess.run([binary(), *map(str, args)], capture_output=True, text=True, timeout=CLI_TIMEOUT_S,
                          stdin=subprocess.DEVNULL)


def cli_json(*args):
    r = cli(*args)
    assert r.returncode == 0, r.stderr
    return json.loads(r.stdout)


def without_wall_clock(doc):
    if isinstance(doc, dict):
        return {k: without_wall_clock(v) for k, v in doc.items() if k not in WALL_CLOCK_KEYS}
    if isinstance(doc, list):
        return [without_wall_clock(v) for v in doc]
    return doc


def assert_same_document(api_doc, cli_doc):
    assert without_wall_clock(api_doc) == without_wall_clock(cli_doc)


PLAN_CASES = [
    dict(model="llama3-8b", cluster="h100-sxm-80gb:16", gbs=64, seq=4096),
    dict(model="mixtral-8x7b", cluster="h100-sxm-80gb:32", gbs=128, seq=4096, top=3, fix="tp=2"),
    dict(model="gpt3-175b", cluster="a100-sxm-80gb:64", gbs=256, seq=2048, top=2, max_memory_gib=60),
]


def plan_cli_args(case):
    args = ["plan", "--json", "--quiet"]
    for key, value in case.items():
        args += ["--" + key.replace("_", "-"), value]
    return args


@pytest.mark.parametrize("case", PLAN_CASES, ids=lambda c: c["model"])
def test_plan_returns_the_cli_json(case):
    api = tessera.plan(**case)
    expected = cli_json(*plan_cli_args(case))
    assert api["plans"], "a plan fits"
    assert api["plans"][0] == expected["plans"][0]  # the same best plan
    assert_same_document(api, expected)
    assert len(api["plans"]) <= case.get("top", 5)  # the CLI's default top


def test_plan_with_an_hf_config_dict_names_the_model_after_it(tmp_path):
    config = json.loads((HF_FIXTURES / "llama-3-8b.json").read_text())
    config["_name_or_path"] = "meta-llama/Meta-Llama-3-8B"
    api = tessera.plan(model=config, cluster="h100-sxm-80gb:8", gbs=32, seq=2048, top=2)
    # The CLI names an HF model after the folder of its config.json.
    folder = tmp_path / "Meta-Llama-3-8B"
    folder.mkdir()
    (folder / "config.json").write_text(json.dumps(config))
    expected = cli_json("plan", "--model", folder / "config.json", "--cluster", "h100-sxm-80gb:8", "--gbs", 32, "--seq",
                        2048, "--top", 2, "--json", "--quiet")
    assert_same_document(api, expected)
    plan = "tp=1,pp=1,mb=1,gbs=32,seq=2048"
    named = tessera.estimate(model=config, cluster="h100-sxm-80gb:8", plan=plan)
    assert named == cli_json("estimate", "--model", folder / "config.json", "--cluster", "h100-sxm-80gb:8", "--plan", plan,
                             "--json")
    assert named["model"] == "Meta-Llama-3-8B"


def test_plan_with_a_cluster_dict_and_fix_dict(tmp_path):
    cluster = {"gpu": "h100-sxm-80gb", "nodes": 2, "gpus_per_node": 8, "network_gbps_per_gpu": 200}
    api = tessera.plan(model="llama3-8b", cluster=cluster, gbs=64, seq=4096, top=2, fix={"tp": 2})
    path = tmp_path / "cluster.json"
    path.write_text(json.dumps(cluster))
    expected = cli_json("plan", "--model", "llama3-8b", "--cluster", path, "--gbs", 64, "--seq", 4096, "--top", 2,
                        "--fix", "tp=2", "--json", "--quiet")
    assert_same_document(api, expected)
    assert all(p["plan"]["tp"] == 2 for p in api["plans"])


def test_estimate_returns_the_cli_json():
    args = dict(model="llama3-8b", cluster="h100-sxm-80gb:16", plan="tp=2,pp=2,mb=1,gbs=64,seq=4096")
    api = tessera.estimate(**args)
    expected = cli_json("estimate", "--model", args["model"], "--cluster", args["cluster"], "--plan", args["plan"],
                        "--json")
    assert api == expected
    assert api["iteration_time_s"] > 0


def test_validate_returns_the_cli_json(tmp_path):
    runs = SOURCE / "data" / "validation" / "public_runs.csv"
    lines = runs.read_text().splitlines()
    small = tmp_path / "runs.csv"
    small.write_text("\n".join(lines[:6]) + "\n")  # the header and five runs keep it quick
    api = tessera.validate(small)
    assert api == cli_json("validate", small, "--json")
    assert api["summary"]["n"] + len(api["skipped"]) == 5
    assert tessera.validate(small, pipeline="closed-form") == cli_json("validate", small, "--pipeline", "closed-form",
                                                                        "--json")


def test_multimodal_plan_returns_the_cli_json():
    case = dict(model="llava-1.5-7b", cluster="h100-sxm-80gb:16", gbs=32)
    api = tessera.plan(**case)  # top=None: the CLI's default, 3 for a multimodal model
    expected = cli_json("plan", "--model", case["model"], "--cluster", case["cluster"], "--gbs", 32, "--json",
                        "--quiet")
    assert_same_document(api, expected)
    assert api["recommended"] in {"disaggregated", "monolithic"} or api["recommended"].startswith("monolithic on")


@pytest.mark.parametrize(
    "call, field",
    [
        (lambda: tessera.plan(model="no-such-model", cluster="h100-sxm-80gb:8", gbs=8), "model"),
        (lambda: tessera.plan(model="llama3-8b", cluster="h100-sxm-80gb:8", gbs=0), "gbs"),
        (lambda: tessera.plan(model="llama3-8b", cluster="no-such-gpu:8", gbs=8), "gpu"),
        (lambda: tessera.plan(model="llama3-8b", cluster="h100-sxm-80gb:8", gbs=8, fix={"tp": 3}), "fix"),
        (lambda: tessera.plan(model="llama3-8b", cluster="h100-sxm-80gb:8", gbs=8, top=0), "--top"),
        (lambda: tessera.plan(model="llama3-8b", cluster="h100-sxm-80gb:8", gbs=8, no_such_option=1), "no_such_option"),
        (lambda: tessera.estimate(model="llama3-8b", cluster="h100-sxm-80gb:8", plan="tp=7,gbs=8,seq=2048"), "tp"),
        (lambda: tessera.validate("/no/such/runs.csv"), "file"),
        (lambda: tessera.plan(model={"architectures": ["NoSuchForCausalLM"]}, cluster="h100-sxm-80gb:8", gbs=8),
         "architectures"),
    ],
)
def test_bad_input_raises_a_value_error_naming_the_field(call, field):
    with pytest.raises(ValueError) as raised:
        call()
    message = str(raised.value)
    assert isinstance(raised.value, tessera.TesseraError)
    assert field in message
    assert "\n" not in message and not message.startswith("error:")


def test_an_unknown_keyword_is_named_as_python_spells_it():
    # issue 32: the CLI's "The following arguments were not expected: 1 --bogus" reached Python.
    with pytest.raises(TypeError) as raised:
        tessera.plan(model="llama3-8b", cluster="h100-sxm-80gb:8", gbs=8, bogus=1)
    message = str(raised.value)
    assert message.startswith("bogus: not a keyword of tessera.plan (allowed: ")
    assert "max_memory_gib" in message and "--" not in message and "json" not in message.split("allowed: ")[1].split(", ")
    r = cli("plan", "--model", "llama3-8b", "--cluster", "h100-sxm-80gb:8", "--gbs", 8, "--bogus", 1)
    assert r.returncode == 2
    assert r.stderr.startswith("error: --bogus: not an option of tessera plan (allowed: --")


def test_errors_match_the_cli_line():
    with pytest.raises(ValueError) as raised:
        tessera.plan(model="no-such-model", cluster="h100-sxm-80gb:8", gbs=8)
    r = cli("plan", "--model", "no-such-model", "--cluster", "h100-sxm-80gb:8", "--gbs", 8, "--json", "--quiet")
    assert r.returncode == 2
    assert r.stderr == "error: " + str(raised.value) + "\n"


def test_concurrent_calls_return_their_own_documents():
    cases = [dict(model="llama3-8b", cluster="h100-sxm-80gb:16", gbs=64, seq=4096, top=2),
             dict(model="llama2-7b", cluster="h100-sxm-80gb:8", gbs=32, seq=2048, top=2)]
    sequential = [without_wall_clock(tessera.plan(**c)) for c in cases]
    results = [None] * len(cases)

    def work(i):
        results[i] = without_wall_clock(tessera.plan(**cases[i]))

    threads = [threading.Thread(target=work, args=(i,)) for i in range(len(cases))]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert results == sequential
    assert results[0]["plans"] != results[1]["plans"]


def test_version_matches_the_binary():
    assert re.fullmatch(r"\d+\.\d+\.\d+", tessera.__version__)
    r = cli("--version")
    assert r.returncode == 0
    assert r.stdout.strip() == "tessera " + tessera.version_text()
    assert tessera.version_text().startswith(tessera.__version__)
    assert tessera.run_cli(["--version"]) == r.stdout


def user_gpu_file(tmp_path):
    """A GPU file with one GPU: the catalog's first entry under a new key, at half its bandwidth."""
    gpu = dict(cli_json("gpus", "--json")["gpus"][0])
    gpu.update(key="test-api-gpu", name="test_api.py GPU", aliases=[], hbm_tbps=gpu["hbm_tbps"] / 2)
    path = tmp_path / "gpus.json"
    path.write_text(json.dumps({"gpus": [gpu]}))
    return path


def test_gpu_file_before_or_after_the_subcommand_and_from_python(tmp_path):
    path = user_gpu_file(tmp_path)
    request = ["--model", "llama3-8b", "--cluster", "test-api-gpu:16", "--gbs", 64, "--seq", 4096, "--top", 2, "--json",
               "--quiet"]
    before = cli_json("--gpu-file", path, "plan", *request)
    after = cli_json("plan", *request, "--gpu-file", path)
    api = tessera.plan(model="llama3-8b", cluster="test-api-gpu:16", gbs=64, seq=4096, top=2, gpu_file=path)
    assert_same_document(before, after)
    assert_same_document(api, before)
    builtin = cli_json("plan", *[str(a).replace("test-api-gpu", cli_json("gpus", "--json")["gpus"][0]["key"])
                                 for a in request])
    assert api["plans"][0]["estimate"]["iteration_time_s"] >= builtin["plans"][0]["estimate"]["iteration_time_s"]


def test_gpu_file_errors_name_the_option(tmp_path):
    missing = tmp_path / "no-such-gpus.json"
    for args in (["--gpu-file", missing, "gpus"], ["gpus", "--gpu-file", missing]):
        r = cli(*args)
        assert r.returncode == 2, r.stdout
        assert r.stderr.count("\n") == 1 and "gpu" in r.stderr, r.stderr


def test_emit_text_and_temporary_files_are_removed(tmp_path, monkeypatch):
    monkeypatch.setattr("tempfile.tempdir", str(tmp_path))
    config = json.loads((HF_FIXTURES / "llama-3-8b.json").read_text())
    text = tessera.plan(model=config, cluster="h100-sxm-80gb:8", gbs=32, seq=2048, emit="megatron")
    assert "--tensor-model-parallel-size" in text
    assert list(tmp_path.iterdir()) == [], "the temporary config.json is gone"
