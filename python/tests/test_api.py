"""The Python API over the library: loading, evaluating, results, errors."""

import json
import os
import pickle
import select
import shutil
import signal
import subprocess
import sys
import threading
from pathlib import Path

import pytest

import tribunal_engine as tribunal

EMITTED = '{"event": "agent:status", "data": {"ok": true}}'
DESCRIBED = "I would emit an agent:status event once step 1 finishes."


@pytest.fixture(scope="module")
def ksi(root):
    return tribunal.Pack.load(root / "rules/ksi-emission")


def test_pack_attributes(ksi, root):
    assert ksi.name == "ksi-emission"
    assert ksi.version == "1.0.0"
    assert ksi.label == "ksi-emission@1.0.0"
    assert len(ksi.revision) == 16
    assert ksi.metrics == ["validate_json_emission"]
    assert ksi.path == str(root / "rules/ksi-emission")
    assert "ksi-emission@1.0.0" in repr(ksi)


def test_evaluate_pass_and_fail(ksi):
    good = ksi.evaluate(EMITTED, id="a")
    assert (good.status, good.passed, good.score) == ("PASS", True, 1.0)
    assert good.id == "a"
    assert good.line is None
    assert good.json == {"event": "agent:status", "data": {"ok": True}}
    assert good.extraction == {"tier": "strict", "repairs": [], "raw_fallback": False}
    assert good.issues == []
    assert good.feedback is None and good.error is None and good.error_kind is None
    assert good.metrics["validate_json_emission"]["score"] == 1.0
    assert good.pack == "ksi-emission@1.0.0" and good.revision == ksi.revision

    bad = ksi.evaluate(DESCRIBED)
    assert (bad.status, bad.passed, bad.score) == ("FAIL", False, 0.0)
    assert bad.issues == [
        {
            "rule": "validate_json_emission",
            "code": "emission.described-not-emitted",
            "severity": "error",
            "message": "describes JSON instead of emitting it",
            "path": None,
        }
    ]
    assert bad.feedback == "Previous issues: ['describes JSON instead of emitting it']"
    assert bad.to_dict()["issues"] == bad.issues
    assert json.loads(bad.to_json()) == bad.to_dict()


def test_overrides_change_the_revision_and_the_config(root, ksi):
    strict = tribunal.Pack.load(
        root / "rules/ksi-emission", overrides={"validate_json_emission.threshold": 0.8}
    )
    assert strict.revision != ksi.revision
    # An unknown event scores 0.7: the seed's verdict at the default threshold
    # (0.7), not at 0.8.
    unknown = '{"event": "x:y", "data": {}}'
    verdict = lambda pack: pack.evaluate(unknown).metrics["validate_json_emission"]["details"]["verdict"]
    assert (verdict(ksi), verdict(strict)) == (True, False)


def test_load_errors_name_file_line_and_column(tmp_path):
    pack = tmp_path / "pack.yaml"
    pack.write_text("name: bad\nversion: 1.0.0\nmetrics:\n  - use: x\n")
    with pytest.raises(tribunal.PackError) as caught:
        tribunal.Pack.load(tmp_path)
    assert isinstance(caught.value, tribunal.TribunalError)
    assert f"{pack}:3:1: unknown field `metrics`" in str(caught.value)
    (error,) = caught.value.errors
    assert (error["file"], error["line"], error["column"]) == (str(pack), 3, 1)


def test_missing_pack_and_bad_overrides(root, tmp_path):
    with pytest.raises(tribunal.PackError, match="no such file or folder"):
        tribunal.Pack.load(tmp_path / "nothing")
    with pytest.raises(tribunal.PackError, match="the pack has no component or step `nope`"):
        tribunal.Pack.load(root / "rules/ksi-emission", overrides={"nope.threshold": 1})
    with pytest.raises(tribunal.PackError, match="must be component.key"):
        tribunal.Pack.load(root / "rules/ksi-emission", overrides={"threshold": 1})
    with pytest.raises(TypeError, match="overrides must be a dict"):
        tribunal.Pack.load(root / "rules/ksi-emission", overrides=["a.b=1"])
    with pytest.raises(TypeError, match="not a number JSON can hold"):
        tribunal.Pack.load(
            root / "rules/ksi-emission",
            overrides={"validate_json_emission.threshold": float("nan")},
        )


def test_bad_records_are_error_results_not_exceptions(ksi):
    records = [
        {"id": 1, "output": EMITTED},
        5,
        None,
        {"id": "no-output"},
        {"id": "none", "output": None},
        {"id": "object", "output": {"event": "a:b", "data": {}}},
        {"id": "date", "output": "x", "meta": {"when": object()}},
        {"id": "nan", "output": "x", "expected": [1.0, float("inf")]},
        '{"id": "line", "output": "' + DESCRIBED + '"}',
        '{"id": "broken", "output": ',
        {"id": "after", "output": EMITTED},
    ]
    results = ksi.evaluate_many(records)
    assert [r.line for r in results] == list(range(1, len(records) + 1))
    assert [r.status for r in results] == [
        "PASS", "ERROR", "ERROR", "ERROR", "ERROR", "PASS",
        "ERROR", "ERROR", "FAIL", "ERROR", "PASS",
    ]
    errors = {r.line: r.error for r in results if r.status == "ERROR"}
    # Every one is the input's fault, whatever the wording.
    assert {r.error_kind for r in results if r.status == "ERROR"} == {"input"}
    assert errors[2].startswith("record 2: a record must be a dict") and "`int`" in errors[2]
    assert errors[4] == "record 4: record has no `output` (or it is None), nor `messages`"
    assert "`meta/when`: `object` is not a JSON type" in errors[7]
    assert "`expected/1`: inf is not a number JSON can hold" in errors[8]
    assert errors[10].startswith("line 10: not valid JSON")
    assert results[3].id == "no-output" and results[9].id == "broken"
    # A structured output is evaluated as its JSON text, as in the CLI.
    assert results[5].json == {"event": "a:b", "data": {}}


def test_evaluate_never_raises_for_its_values(ksi):
    assert ksi.evaluate(None).status == "ERROR"
    assert ksi.evaluate("x", meta={1.5: {None: [True]}}).status != "ERROR"
    assert "is not a JSON type" in ksi.evaluate("x", expected={"a": {1, 2}}).error
    deep = []
    for _ in range(20_000):
        deep = [deep]
    assert "nested more than" in ksi.evaluate("x", meta=deep).error
    loop = []
    loop.append(loop)
    assert "contains itself" in ksi.evaluate("x", meta=loop).error
    huge = "word " * 2_000_000
    assert ksi.evaluate(huge).status in ("FAIL", "NEEDS_IMPROVEMENT")
    assert ksi.evaluate("emoji \U0001F600 and \ud800 lone").issues[0]["rule"] == "input"
    assert ksi.evaluate(2**80).status != "ERROR"


def test_results_in_input_order_and_equal_to_one_by_one(ksi):
    outputs = [EMITTED if i % 3 else DESCRIBED + str(i) for i in range(2_000)]
    many = ksi.evaluate_many(({"id": i, "output": o} for i, o in enumerate(outputs)), jobs=2)
    assert [r.id for r in many] == list(range(2_000))
    for i in (0, 1, 2, 1_999):
        alone = ksi.evaluate(outputs[i], id=i).to_dict()
        alone["line"] = i + 1
        assert many[i].to_dict() == alone
    assert ksi.evaluate_many([]) == []


def test_an_iterable_that_raises_stops_evaluate_many_with_its_exception(ksi):
    """The records' own iterator fails part way (after chunks were handed to
    the threads, or before any was, or in a short list): its exception comes
    out of the call, nothing hangs, and the pack goes on evaluating."""

    class Broken(Exception):
        pass

    def records(count):
        for i in range(count):
            yield {"id": i, "output": EMITTED}
        raise Broken(f"after {count}")

    for count, jobs in [(1_500, 1), (1_500, 2), (0, 2), (3, 1)]:
        with pytest.raises(Broken, match=f"after {count}"):
            ksi.evaluate_many(records(count), jobs=jobs)
    short = [{"id": 1, "output": EMITTED}, 5]

    class Failing(list):
        def __iter__(self):
            yield from super().__iter__()
            raise Broken("short")

    with pytest.raises(Broken, match="short"):
        ksi.evaluate_many(Failing(short))
    assert [r.status for r in ksi.evaluate_many(short)] == ["PASS", "ERROR"]


def test_evaluate_many_calls_at_once_share_the_packs_threads(ksi):
    # Lists short enough to be evaluated on the calling thread and long enough
    # to go to the pack's helper threads, with 1 to 3 jobs, from four Python
    # threads at once, again and again: every call gets its own results.
    outputs = [EMITTED if i % 4 else DESCRIBED + str(i) for i in range(1_500)]
    records = [{"id": i, "output": o} for i, o in enumerate(outputs)]
    expected = [r.to_json() for r in ksi.evaluate_many(records, jobs=1)]
    failures = []

    def work(seed):
        for round_ in range(6):
            size = (0, 5, 127, 128, 700, 1_500)[(seed + round_) % 6]
            jobs = 1 + (seed + round_) % 3
            got = [r.to_json() for r in ksi.evaluate_many(records[:size], jobs=jobs)]
            if got != expected[:size]:
                failures.append((seed, size, jobs))

    threads = [threading.Thread(target=work, args=(seed,)) for seed in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert failures == []


def in_forked_child(work):
    """What `work()` (a str) answers in a forked child, or a note that it did
    not answer within 60 s (the child is then killed)."""
    read, write = os.pipe()
    child = os.fork()
    if child == 0:
        try:
            os.close(read)
            os.write(write, work().encode())
        finally:
            os._exit(0)
    os.close(write)
    ready, _, _ = select.select([read], [], [], 60)
    if not ready:
        os.kill(child, signal.SIGKILL)
    answer = os.read(read, 100).decode() if ready else "(no answer in 60 s)"
    os.close(read)
    os.waitpid(child, 0)
    return answer


@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs os.fork")
def test_evaluate_many_works_in_a_forked_child(ksi):
    # The pack's threads stay with the parent (multiprocessing's "fork"): a
    # child that inherits the pack starts its own instead of waiting for them.
    records = [{"id": i, "output": EMITTED} for i in range(300)]
    assert len(ksi.evaluate_many(records, jobs=2)) == 300
    def statuses():
        return ",".join(sorted({r.status for r in ksi.evaluate_many(records, jobs=2)}))

    assert in_forked_child(statuses) == "PASS"


@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs os.fork")
def test_a_semantic_pack_embeds_in_a_forked_child(root):
    # The embedding's threads stay with the parent too: a child forked after
    # the parent embedded computes on its own thread instead of waiting for them.
    pack = tribunal.Pack.load(root / "rules/json-eval")

    def check(i):
        expected = {"description": f"Customer {i} asked for a refund for the damaged kitchen equipment.",
                    "address_line_1": f"{i} Elm Avenue"}
        output = {"description": f"Customer {i} wants a refund for broken kitchen gear.",
                  "address_line_1": f"{i} Elm Av."}
        return pack.evaluate(json.dumps(output), expected=expected).status

    assert check(1) != "ERROR"
    assert in_forked_child(lambda: check(2)) == check(2)


def test_a_pack_is_picklable_and_shared_between_threads(ksi, root, tmp_path):
    again = pickle.loads(pickle.dumps(ksi))
    assert (again.label, again.revision) == (ksi.label, ksi.revision)
    overridden = tribunal.Pack.load(
        root / "rules/ksi-emission", overrides={"validate_json_emission.threshold": 0.8}
    )
    assert pickle.loads(pickle.dumps(overridden)).revision == overridden.revision

    statuses = []

    def work():
        statuses.append([ksi.evaluate(EMITTED).status for _ in range(200)])

    threads = [threading.Thread(target=work) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert statuses == [["PASS"] * 200] * 4


def test_unpickling_a_changed_pack_warns(tmp_path, root):
    pack_dir = tmp_path / "pack"
    shutil.copytree(root / "rules/ksi-emission", pack_dir)
    source = (pack_dir / "pack.yaml").read_text()
    pack = tribunal.Pack.load(pack_dir)
    data = pickle.dumps(pack)
    (pack_dir / "pack.yaml").write_text(source + "\n# changed\n")
    with pytest.warns(UserWarning, match="not the revision"):
        pickle.loads(data)


def test_prompt_and_json_schema(root):
    pack = tribunal.Pack.load(root / "rules/structured-output")
    assert "OUTPUT FORMAT" in pack.prompt()
    schema = pack.json_schema()
    assert schema["type"] == "object" and "properties" in schema
    assert tribunal.Pack.load(root / "rules/ksi-emission").json_schema() is None
    # OpenAI's strict subset: every object closed, every property required.
    cited = tribunal.Pack.load(root / "examples/packs/rag-citations").json_schema(strict=True)
    item = cited["properties"]["citations"]["items"]
    assert item["additionalProperties"] is False and item["required"] == ["doc_id", "quote"]
    assert "uniqueItems" not in cited["properties"]["citations"]
    with pytest.raises(ValueError, match="variants of the whole output"):
        tribunal.Pack.load(root / "examples/packs/tool-calls").json_schema(strict=True)


def test_script_failure_loses_no_other_record(tmp_path):
    (tmp_path / "pack.yaml").write_text(
        "name: flaky\nversion: 1.0.0\n"
        "components: [flaky.yaml]\n"
        "pipeline:\n  metrics:\n    - use: flaky\n"
    )
    (tmp_path / "flaky.yaml").write_text(
        "kind: metric\nname: flaky\n"
        "implementation:\n  inline: |\n"
        "    fn evaluate(ctx) {\n"
        "        if ctx.output.contains(\"boom\") { throw \"asked to fail\"; }\n"
        "        1.0\n"
        "    }\n"
    )
    pack = tribunal.Pack.load(tmp_path)
    results = pack.evaluate_many(
        [{"output": "a"}, {"output": "boom"}, {"output": "b"}], jobs=2
    )
    assert [r.status for r in results] == ["PASS", "ERROR", "PASS"]
    assert "asked to fail" in results[1].error
    assert results[1].error_kind == "script"


def test_nesting_is_read_as_deep_as_the_cli_reads_it(ksi, cli, tmp_path):
    def nested(levels):
        value = []
        for _ in range(levels - 1):
            value = [value]
        return value

    lines = [json.dumps({"output": "x", "meta": nested(n)}) for n in range(120, 132)]
    data = tmp_path / "deep.jsonl"
    data.write_text("\n".join(lines) + "\n")
    expected = [r["status"] == "ERROR" for r in cli("eval", "rules/ksi-emission", "--input", str(data))]
    assert True in expected and False in expected
    records = [json.loads(line) for line in lines]
    assert [r.status == "ERROR" for r in ksi.evaluate_many(records)] == expected


def test_messages_and_lines_count_from_first_line(ksi):
    results = ksi.evaluate_many(["{}", '{"output": "x"}', "{broken"], first_line=101)
    assert [r.line for r in results] == [101, 102, 103]
    assert results[0].error == "line 101: record has no `output` field (nor `messages`, an agent's transcript judged on its last assistant turn)"
    assert results[2].error.startswith("line 103: not valid JSON")
    batch = ksi.evaluate_many([{"output": "x"}, 5], first_line=None)
    assert [r.line for r in batch] == [None, None]
    assert batch[1].error.startswith("record 2: a record must be a dict")
    assert "line" not in batch[0].to_dict()


def test_a_panicking_plugin_loses_no_other_record(panicky_pack, plugin_dir):
    pack = tribunal.Pack.load(panicky_pack, plugin_dirs=[plugin_dir], allow_plugins=True)
    outputs = ["fine", "please panic", "fine too", "panic again", "ok"] * 60
    results = pack.evaluate_many([{"id": i, "output": o} for i, o in enumerate(outputs)], jobs=2)
    assert [r.status == "ERROR" for r in results] == ["panic" in o for o in outputs]
    assert [r.id for r in results] == list(range(len(outputs)))
    assert pack.evaluate("please panic").status == "ERROR"
    assert pack.evaluate("fine").status == "PASS"


def test_a_plugin_is_opened_only_with_consent(panicky_pack, plugin_dir):
    with pytest.raises(tribunal.PackError) as caught:
        tribunal.Pack.load(panicky_pack, plugin_dirs=[plugin_dir])
    (error,) = caught.value.errors
    assert error["line"] == 3 and "pass --allow-plugins" in error["message"]
    with pytest.raises(TypeError):
        tribunal.Pack.load(panicky_pack, None, [plugin_dir], True)  # keyword only
    pack = tribunal.Pack.load(panicky_pack, plugin_dirs=[plugin_dir], allow_plugins=True)
    # A pickled pack keeps its consent.
    assert pickle.loads(pickle.dumps(pack)).evaluate("fine").status == "PASS"


def test_an_override_error_has_its_errors_too(root):
    with pytest.raises(tribunal.PackError) as caught:
        tribunal.Pack.load(root / "rules/ksi-emission", overrides={"threshold": 1})
    (error,) = caught.value.errors
    assert error["line"] is None and "must be component.key" in error["message"]


def test_a_script_comparing_semantically_loads_the_model_outside_its_limits(tmp_path, root):
    # In a fresh interpreter, so that this is the call that loads the model: the
    # load (about 90 MB) is the engine's, not the script's 8 MiB.
    (tmp_path / "pack.yaml").write_text(
        "name: close\nversion: 1.0.0\ncomponents: [close.yaml]\n"
        "pipeline:\n  metrics:\n    - use: close\n"
        "limits:\n  max_memory: 8388608\n"
    )
    (tmp_path / "close.yaml").write_text(
        "kind: metric\nname: close\n"
        "implementation:\n  inline: |\n"
        "    fn evaluate(ctx) { compare(\"semantic\", ctx.expected, ctx.json.answer) }\n"
    )
    code = (
        "import sys\nimport tribunal_engine as tribunal\n"
        "pack = tribunal.Pack.load(sys.argv[1])\n"
        "r = pack.evaluate('{\"answer\": \"the cat sat on the mat\"}', expected='a cat sat on a mat')\n"
        "print(r.status, r.error)\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code, str(tmp_path)], capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "PASS None", done.stdout


def test_a_bundle_loads_as_a_pack_and_is_verified_when_keys_are_trusted(tmp_path, root):
    cli = str(Path(os.environ.get("TRIBUNAL_BIN", root / "target" / "debug" / "tribunal")).resolve())

    def run(*args):
        done = subprocess.run([cli, *args], cwd=tmp_path, capture_output=True, text=True)
        assert done.returncode == 0, done.stderr
        return done

    run("bundle", "keygen", "-o", "team")
    run("bundle", "keygen", "-o", "stranger")
    bundle = tmp_path / "rules.tar.gz"
    run("bundle", "build", str(root / "rules/ksi-emission"), str(root / "rules/json-eval"), "-o", str(bundle))
    folder = tribunal.Pack.load(root / "rules/ksi-emission")
    assert folder.bundle_revision is None
    # Two packs: one is named, as FILE#NAME.
    with pytest.raises(tribunal.PackError) as caught:
        tribunal.Pack.load(bundle)
    assert "name one" in str(caught.value)
    pack = tribunal.Pack.load(f"{bundle}#ksi-emission")
    assert pack.revision == folder.revision and pack.bundle_revision
    output = '{"event": "agent:status", "data": {}}'
    assert pack.evaluate(output).to_json() == folder.evaluate(output).to_json()
    # Trusted keys: unsigned and strangers' bundles are refused; pickling keeps the trust.
    with pytest.raises(tribunal.PackError) as caught:
        tribunal.Pack.load(f"{bundle}#ksi-emission", trust=[tmp_path / "team.pub"])
    assert "not signed" in str(caught.value)
    run("bundle", "sign", str(bundle), "--key", "stranger.key")
    with pytest.raises(tribunal.PackError) as caught:
        tribunal.Pack.load(f"{bundle}#ksi-emission", trust=[tmp_path / "team.pub"])
    assert "not signed by a trusted key" in str(caught.value)
    run("bundle", "sign", str(bundle), "--key", "team.key")
    trusted = tribunal.Pack.load(f"{bundle}#ksi-emission", trust=[tmp_path / "team.pub"])
    assert pickle.loads(pickle.dumps(trusted)).bundle_revision == trusted.bundle_revision
    with pytest.raises(ValueError):
        tribunal.Pack.load(bundle, trust=[tmp_path / "team.key"])
