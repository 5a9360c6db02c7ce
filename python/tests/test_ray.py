"""tribunal_engine.ray with real Ray: the Scorer on Ray Data on a local instance, and
the example script examples/ray_eval.py end to end."""

import json
import os
import subprocess
import sys

import pytest

np = pytest.importorskip("numpy", reason="numpy comes with the optional extra `ray`")
ray = pytest.importorskip("ray", reason="the optional extra `ray` is not installed")
pytest.importorskip("ray.data", reason="the optional extra `ray` is not installed")

import tribunal_engine as tribunal  # noqa: E402
import tribunal_engine.ray  # noqa: E402

EMITTED = '{"event": "agent:status", "data": {"ok": true}}'
DESCRIBED = "I would emit an agent:status event."


def without_line(record):
    return {k: v for k, v in record.items() if k != "line"}


def test_scorer_on_numpy_and_pandas_batches(root):
    scorer = tribunal_engine.ray.Scorer(root / "rules/ksi-emission")
    batch = {"id": np.array(["a", "b", "c"]), "output": np.array([EMITTED, DESCRIBED, None], dtype=object)}
    out = scorer(batch)
    assert list(out["id"]) == ["a", "b", "c"]
    assert list(out["status"]) == ["PASS", "FAIL", "ERROR"]
    assert list(out["passed"]) == [True, False, False]
    assert out["score"][:2].tolist() == [1.0, 0.0] and np.isnan(out["score"][2])
    record = json.loads(out["result"][0])
    assert record["id"] == "a" and "line" not in record
    assert record == without_line(scorer.pack.evaluate(EMITTED, id="a").to_dict())

    pandas = pytest.importorskip("pandas")
    frame = scorer(pandas.DataFrame({"id": [1, 2], "output": [EMITTED, DESCRIBED]}))
    assert frame["status"].tolist() == ["PASS", "FAIL"]
    assert frame.columns.tolist() == ["id", "output", "status", "passed", "score", "result"]

    lines = tribunal_engine.ray.Scorer(root / "rules/ksi-emission", json_column="text")
    out = lines({"text": np.array(['{"id": 7, "output": "x"}', "{broken"], dtype=object)})
    assert list(out["status"]) == ["FAIL", "ERROR"]
    assert json.loads(out["result"][1])["error"].startswith("line 2: not valid JSON")


@pytest.fixture(scope="module")
def local_ray():
    ray.init(num_cpus=3, include_dashboard=False, log_to_driver=False)
    ray.data.DataContext.get_current().execution_options.preserve_order = True
    yield
    ray.shutdown()


def test_map_batches_on_a_local_instance(root, local_ray, cli):
    data = "examples/data/ksi-emission.jsonl"
    records = [json.loads(line) for line in (root / data).read_text().splitlines()]
    ds = ray.data.from_items(records).map_batches(
        tribunal_engine.ray.Scorer,
        fn_constructor_args=(str(root / "rules/ksi-emission"),),
        fn_constructor_kwargs={"overrides": {"validate_json_emission.threshold": 0.7}},
        batch_size=7,
        concurrency=2,
    )
    rows = ds.take_all()
    expected = cli("eval", "rules/ksi-emission", "--input", data,
                   "--set", "validate_json_emission.threshold=0.7")
    assert [r["id"] for r in rows] == [r["id"] for r in records]
    assert [json.loads(r["result"]) for r in rows] == [without_line(r) for r in expected]
    assert [r["status"] for r in rows] == [r["status"] for r in expected]


def test_the_example_script(root, tmp_path, cli):
    data = "examples/data/context-agent.jsonl"
    out = tmp_path / "results.jsonl"
    env = {**os.environ, "RAY_ADDRESS": ""}
    done = subprocess.run(
        [sys.executable, "examples/ray_eval.py", "rules/context-agent", data, str(out),
         "--workers", "2", "--batch-size", "5"],
        cwd=root, capture_output=True, text=True, env=env, timeout=600,
    )
    assert done.returncode in (0, 1), done.stderr
    expected = cli("eval", "rules/context-agent", "--input", data)
    assert f"{len(expected)} records:" in done.stderr
    results = [json.loads(line) for line in out.read_text().splitlines()]
    assert results == [without_line(r) for r in expected]


def test_missing_values_in_columns_are_absent_fields(root):
    pandas = pytest.importorskip("pandas")
    scorer = tribunal_engine.ray.Scorer(root / "rules/ksi-emission")
    frame = pandas.DataFrame({"id": ["a", None], "output": [EMITTED, EMITTED], "meta": [None, float("nan")]})
    out = scorer(frame)
    assert out["status"].tolist() == ["PASS", "PASS"]
    assert json.loads(out["result"][1])["id"] is None
    with pytest.raises(TypeError, match="give the pack's path"):
        tribunal_engine.ray.Scorer(scorer.pack, overrides={"a.b": 1})
