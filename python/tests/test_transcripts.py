"""Agent transcripts from Python: `evaluate(messages=...)` and records with a
`messages` key give the CLI's records, in every format."""

import json

import tribunal_engine as tribunal


def test_a_transcript_is_judged_as_the_cli_judges_it(root, cli):
    pack = tribunal.Pack.load(root / "examples/packs/travel-agent")
    data = root / "examples/data/travel-agent.jsonl"
    records = [json.loads(line) for line in data.read_text().splitlines()]
    expected = cli("eval", "examples/packs/travel-agent", "--input", str(data), raw=True)
    # Dicts with `messages`, as evaluate_many reads them: the CLI's lines.
    assert [r.to_json() for r in pack.evaluate_many(records)] == expected
    # One at a time, the keyword: the same record without its line.
    for record, line in zip(records, expected):
        result = pack.evaluate(messages=record["messages"], id=record["id"])
        cli_record = json.loads(line)
        del cli_record["line"]
        assert result.to_dict() == cli_record
    by_id = {r["id"]: json.loads(line) for r, line in zip(records, expected)}
    # The same run in the three formats: the same verdict, paths aside.
    for run in ("good", "unconfirmed", "reckless", "loop"):
        verdicts = {(by_id[f"{run}-{f}"]["status"], by_id[f"{run}-{f}"]["score"],
                     tuple(i["code"] for i in by_id[f"{run}-{f}"]["issues"]))
                    for f in ("chat", "anthropic", "responses")}
        assert len(verdicts) == 1, (run, verdicts)


def test_a_transcript_result_has_its_turns(root):
    pack = tribunal.Pack.load(root / "examples/packs/travel-agent")
    messages = [
        {"role": "user", "content": "Book SK1."},
        {"role": "assistant", "content": "Shall I book SK1?"},
        {"role": "user", "content": "Yes."},
        {"role": "assistant", "content": None, "tool_calls": [
            {"id": "c1", "type": "function", "function": {"name": "book_flight", "arguments": "{}"}}]},
        {"role": "tool", "tool_call_id": "c1", "content": "error: SK1 is full"},
        {"role": "assistant", "content": "Booked SK1; your reference is QX7P2K."},
    ]
    result = pack.evaluate(messages=messages)
    assert [t["role"] for t in result.turns] == [
        "user", "assistant", "user", "assistant", "tool", "assistant"]
    last = result.turns[5]
    assert (last["status"], last["score"], last["path"]) == ("NEEDS_IMPROVEMENT", 0.0, "/messages/5")
    assert [i["code"] for i in last["issues"]] == ["claims_confirmed"]
    # The record's issues say which turn each is about.
    turns = {i["code"]: i.get("turn") for i in result.issues}
    assert turns["claims_confirmed"] == 5
    assert turns["tool.order"] == 3
    assert pack.evaluate("plain text").turns is None


def test_without_output_or_messages_a_record_is_an_error_result(root):
    pack = tribunal.Pack.load(root / "examples/packs/travel-agent")
    result = pack.evaluate()
    assert result.status == "ERROR"
    assert "no `output`" in result.error
    broken = pack.evaluate(messages="not a list")
    assert [i["code"] for i in broken.issues][:1] == ["transcript.invalid"]


def test_decide_gives_the_decisions_the_cli_prints(root, cli):
    """`pack.decide(messages)` on generated proposals: the CLI's `check
    --proposed --json`, call by call (tests/fixtures/proposals.jsonl)."""
    pack = tribunal.Pack.load(root / "examples/packs/support-agent")
    lines = (root / "tests/fixtures/proposals.jsonl").read_text().splitlines()
    verdicts = set()
    for line in lines[:40]:
        record = json.loads(line)
        decisions = pack.decide(record["messages"], id=record["id"])
        path = root / "target" / "proposal.json"
        path.write_text(line)
        [printed] = [json.loads("\n".join(cli("check", "examples/packs/support-agent", str(path),
                                              "--proposed", "--json", raw=True)))]
        assert decisions == printed, line
        verdicts.update(d["decision"] for d in decisions["decisions"])
    assert verdicts == {"allow", "deny"}


def test_decide_denies_a_forbidden_call_and_needs_messages(root):
    pack = tribunal.Pack.load(root / "examples/packs/support-agent")
    messages = json.loads((root / "examples/data/support-proposal.json").read_text())["messages"]
    decisions = pack.decide(messages)
    assert [(d["name"], d["decision"]) for d in decisions["decisions"]] == [
        ("refund", "allow"), ("delete_account", "deny")]
    assert decisions["decisions"][1]["issues"][0]["code"] == "tool.forbidden"
    nothing = pack.decide([{"role": "user", "content": "Hi"}])
    assert nothing["decisions"] == [] and nothing["error_kind"] == "input"
