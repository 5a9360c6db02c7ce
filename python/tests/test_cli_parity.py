"""Results from Python equal the CLI's result records, byte for byte, for every
shipped example data set (and for its lines given as strings)."""

import json

import pytest

import tribunal_engine as tribunal

DATA_SETS = [
    ("rules/ksi-emission", "examples/data/ksi-emission.jsonl"),
    ("rules/json-eval", "examples/data/json-eval.jsonl"),
    ("rules/context-agent", "examples/data/context-agent.jsonl"),
    ("rules/agent-response", "examples/data/agent-response.jsonl"),
    ("rules/scripted-fields", "examples/data/scripted-fields.jsonl"),
    ("rules/structured-output", "examples/data/structured-output.jsonl"),
    ("examples/packs/invoice-summary", "examples/data/invoice-summary.jsonl"),
    ("examples/packs/tool-calls", "examples/data/tool-calls.jsonl"),
    ("examples/packs/rag-citations", "examples/data/rag-citations.jsonl"),
    ("examples/packs/travel-agent", "examples/data/travel-agent.jsonl"),
    ("examples/packs/travel-agent", "examples/data/travel-agent-generated.jsonl"),
]


def test_every_example_data_set_is_covered(root):
    shipped = {p.relative_to(root).as_posix() for p in (root / "examples/data").glob("*.jsonl")}
    assert shipped == {data for _, data in DATA_SETS}


@pytest.mark.parametrize("pack_path,data", DATA_SETS, ids=[d for _, d in DATA_SETS])
def test_python_results_equal_the_cli_records(root, cli, plugin_dir, pack_path, data):
    cli_lines = cli("eval", pack_path, "--input", data, "--plugin-dir", str(plugin_dir), "--allow-plugins", raw=True)
    expected = [json.loads(line) for line in cli_lines]
    lines = (root / data).read_text().splitlines()
    assert len(lines) == len(expected) and all(line.strip() for line in lines)
    pack = tribunal.Pack.load(root / pack_path, plugin_dirs=[plugin_dir], allow_plugins=True)

    records = [json.loads(line) for line in lines]
    results = pack.evaluate_many(records, jobs=2)
    # Byte for byte the lines `tribunal eval` writes.
    assert [r.to_json() for r in results] == cli_lines
    assert [r.to_dict() for r in results] == expected
    # The record's fields as attributes.
    for result, record in zip(results, expected):
        assert (result.status, result.passed, result.score) == (
            record["status"], record["passed"], record["score"],
        )
        assert (result.metrics, result.issues, result.json, result.extraction) == (
            record["metrics"], record["issues"], record["json"], record["extraction"],
        )
        assert (result.feedback, result.error, result.id) == (
            record["feedback"], record["error"], record["id"],
        )

    # The lines themselves, read as the CLI reads them: the same bytes.
    assert [r.to_json() for r in pack.evaluate_many(lines, jobs=1)] == cli_lines

    # One at a time: the same records, without the line.
    for record, result in zip(records, expected):
        alone = pack.evaluate(
            record.get("output"),
            expected=record.get("expected"),
            meta=record.get("meta"),
            id=record.get("id"),
            messages=record.get("messages"),
        ).to_dict()
        assert alone == {k: v for k, v in result.items() if k != "line"}


def test_a_panicking_component_is_the_same_error_record_in_python_and_the_cli(tmp_path, panicky_pack, cli, plugin_dir):
    """One panic policy in every front end: the record of a component that
    panics is ERROR, naming it, byte for byte the same from Python and the CLI,
    and the records around it are judged."""
    outputs = ["fine", "please panic", "fine too", "panic again", "ok"] * 20
    data = tmp_path / "data.jsonl"
    data.write_text("".join(json.dumps({"id": i, "output": o}) + "\n" for i, o in enumerate(outputs)))
    cli_lines = cli("eval", str(panicky_pack), "--input", str(data), "--plugin-dir", str(plugin_dir),
                    "--allow-plugins", "--jobs", "2", raw=True)
    pack = tribunal.Pack.load(panicky_pack, plugin_dirs=[plugin_dir], allow_plugins=True)
    for jobs in (1, 2):
        results = pack.evaluate_many(data.read_text().splitlines(), jobs=jobs)
        assert [r.to_json() for r in results] == cli_lines
    errors = [json.loads(line) for line in cli_lines if '"ERROR"' in line]
    assert len(errors) == 40
    # The SDK catches the plugin's panic and replies with it: named, with where it was.
    assert all(
        e["error_kind"] == "plugin-reply" and e["error"].startswith("metric `p`: plugin `p`")
        and "panicked at" in e["error"]
        for e in errors
    ), errors[0]
