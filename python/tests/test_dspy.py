"""tribunal_engine.dspy with the real DSPy: dspy.Evaluate over a small dev set, with
DSPy's DummyLM (no network), and the feedback and reward forms."""

import pickle

import pytest

dspy = pytest.importorskip("dspy", reason="the optional extra `dspy` is not installed")

import tribunal_engine as tribunal  # noqa: E402
import tribunal_engine.dspy  # noqa: E402

EMITTED = '{"event": "agent:status", "data": {"ok": true}}'
UNKNOWN = '{"event": "x:y", "data": {}}'
DESCRIBED = "I would emit an agent:status event."


@pytest.fixture
def program():
    # DummyLM answers in order; Evaluate runs on one thread so the order holds.
    dspy.configure(lm=dspy.utils.DummyLM([{"answer": a} for a in (EMITTED, UNKNOWN, DESCRIBED)]))
    yield dspy.Predict("question -> answer")
    dspy.configure(lm=None)


def devset():
    return [
        dspy.Example(question=f"step {i}: report status as a KSI event").with_inputs("question")
        for i in range(3)
    ]


def test_evaluate_with_a_tribunal_metric(root, program):
    metric = tribunal_engine.dspy.metric(root / "rules/ksi-emission", output_field="answer")
    result = dspy.Evaluate(devset=devset(), metric=metric, num_threads=1)(program)
    # Scores 1.0, 0.7 and 0.0: DSPy reports their mean as a percentage.
    assert result.score == pytest.approx(100 * 1.7 / 3, abs=0.01)
    assert [score for _, _, score in result.results] == [1.0, 0.7, 0.0]


def test_metric_convention(root):
    pack = tribunal.Pack.load(root / "rules/ksi-emission")
    metric = tribunal_engine.dspy.metric(pack)
    example = dspy.Example(question="q")
    for answer, score, passed in ((EMITTED, 1.0, True), (UNKNOWN, 0.7, True), (DESCRIBED, 0.0, False)):
        pred = dspy.Prediction(answer=answer)
        assert metric(example, pred) == score           # evaluation: the score
        assert metric(example, pred, trace=[]) is passed  # bootstrapping: passed
    assert pickle.loads(pickle.dumps(metric))(example, dspy.Prediction(answer=EMITTED)) == 1.0
    with pytest.raises(KeyError, match="no field `answer`"):
        metric(example, dspy.Prediction(text=EMITTED))


def test_expected_field_reads_the_examples_json(root):
    metric = tribunal_engine.dspy.metric(root / "rules/json-eval", output_field="json", expected_field="gold")
    gold = {"name": "Ada Lovelace", "city": "London"}
    same = dspy.Example(gold=gold)
    as_text = dspy.Example(gold='{"name": "Ada Lovelace", "city": "London"}')
    pred = dspy.Prediction(json='{"name": "Ada Lovelace", "city": "London"}')
    direct = metric.pack.evaluate(pred.json, expected=gold).score
    assert metric(same, pred) == metric(as_text, pred) == direct
    wrong = dspy.Prediction(json='{"name": "Charles Babbage", "city": "Paris"}')
    assert metric(same, wrong) < direct


def test_feedback_metric_and_reward(root):
    feedback = tribunal_engine.dspy.feedback(root / "rules/ksi-emission")
    out = feedback(dspy.Example(question="q"), dspy.Prediction(answer=DESCRIBED))
    assert isinstance(out, dspy.Prediction)
    assert out.score == 0.0
    assert out.feedback == "Previous issues: ['describes JSON instead of emitting it']"
    assert "passed" in feedback(dspy.Example(), dspy.Prediction(answer=EMITTED)).feedback

    reward = tribunal_engine.dspy.reward(root / "rules/ksi-emission")
    assert reward({"question": "q"}, dspy.Prediction(answer=EMITTED)) == 1.0
    assert reward({"question": "q"}, dspy.Prediction(answer=DESCRIBED)) == 0.0
    assert reward.last_feedback.startswith("Previous issues")


def test_refine_retries_until_the_pack_passes(root):
    # dspy.Refine with the pack's reward: the first answer fails, the retry passes.
    dspy.configure(lm=dspy.utils.DummyLM([{"answer": DESCRIBED}, {"answer": EMITTED}] * 3))
    try:
        refine = dspy.Refine(
            dspy.Predict("question -> answer"),
            N=3,
            reward_fn=tribunal_engine.dspy.reward(root / "rules/ksi-emission"),
            threshold=1.0,
        )
        assert refine(question="report status").answer == EMITTED
    finally:
        dspy.configure(lm=None)


@pytest.fixture
def cites_pack(tmp_path):
    """A pack whose Rhai metric reads the retrieved ids from the record's meta:
    without meta every record is ERROR."""
    (tmp_path / "components").mkdir()
    (tmp_path / "pack.yaml").write_text(
        "name: cites\nversion: 1.0.0\ncomponents: [components/*.yaml]\n"
        "pipeline:\n  metrics:\n    - use: known_ids\n"
    )
    (tmp_path / "components/known_ids.yaml").write_text(
        "kind: metric\nname: known_ids\nversion: 1.0.0\nimplementation:\n  script: known_ids.rhai\n"
    )
    (tmp_path / "components/known_ids.rhai").write_text(
        """fn evaluate(ctx) {
    let known = ctx.meta.retrieved;
    let cited = ctx.json.cites;
    let good = cited.filter(|id| known.contains(id)).len();
    #{ score: if cited.is_empty() { 0.0 } else { good.to_float() / cited.len().to_float() } }
}
"""
    )
    return tribunal.Pack.load(tmp_path)


CITES = '{"cites": ["d1", "d7"]}'


def test_meta_field_from_the_example_or_the_prediction(cites_pack):
    metric = tribunal_engine.dspy.metric(cites_pack, output_field="answer", meta_field="meta")
    pred = dspy.Prediction(answer=CITES)
    # From the example: a dict, or JSON text.
    assert metric(dspy.Example(meta={"retrieved": ["d1", "d2"]}), pred) == 0.5
    assert metric(dspy.Example(meta='{"retrieved": ["d1", "d7"]}'), pred) == 1.0
    # From the prediction, when the program retrieved the documents.
    assert metric(dspy.Example(q="?"), dspy.Prediction(answer=CITES, meta={"retrieved": ["d7"]})) == 0.5
    with pytest.raises(KeyError, match="neither the example nor the prediction has a field `meta`"):
        metric(dspy.Example(q="?"), pred)
    assert metric.errors == 0
    assert "meta_field='meta'" in repr(metric)


def test_record_hook_builds_the_record(root, cites_pack):
    def record(example, pred):
        return {"output": pred.answer, "meta": {"retrieved": example.docs}, "id": example.qid}

    metric = tribunal_engine.dspy.metric(cites_pack, record=record)
    assert metric(dspy.Example(docs=["d1"], qid=7), dspy.Prediction(answer=CITES)) == 0.5
    result = metric.result(dspy.Example(docs=["d1"], qid=7), dspy.Prediction(answer=CITES))
    assert result.id == 7
    # The hook may return the output alone.
    plain = tribunal_engine.dspy.metric(tribunal.Pack.load(root / "rules/ksi-emission"), record=lambda e, p: p.text)
    assert plain(dspy.Example(), dspy.Prediction(text=EMITTED)) == 1.0
    with pytest.raises(ValueError, match="unknown keys \\['metadata'\\]"):
        tribunal_engine.dspy.metric(cites_pack, record=lambda e, p: {"output": CITES, "metadata": {}})(
            dspy.Example(), dspy.Prediction()
        )
    with pytest.raises(TypeError, match="returned int"):
        tribunal_engine.dspy.metric(cites_pack, record=lambda e, p: 3)(dspy.Example(), dspy.Prediction())
    with pytest.raises(ValueError, match="either record= or expected_field/meta_field"):
        tribunal_engine.dspy.metric(cites_pack, meta_field="meta", record=record)


def test_error_records_are_never_a_silent_zero(cites_pack):
    # Without meta, the pack's script fails on every record: scored 0.0, warned once.
    metric = tribunal_engine.dspy.metric(cites_pack)
    example, pred = dspy.Example(q="?"), dspy.Prediction(answer=CITES)
    with pytest.warns(tribunal_engine.dspy.MetricErrorWarning, match="Unknown property 'retrieved'") as caught:
        assert metric(example, pred) == 0.0
        assert metric(example, pred, trace=[]) is False
        assert metric(example, pred) == 0.0
    assert len(caught) == 1
    assert metric.errors == 3
    strict = tribunal_engine.dspy.metric(cites_pack, on_error="raise")
    with pytest.raises(tribunal_engine.dspy.TribunalMetricError, match="could not evaluate") as raised:
        strict(example, pred)
    assert raised.value.result.status == "ERROR"
    # The reward and feedback forms too.
    reward = tribunal_engine.dspy.reward(cites_pack, meta_field="meta")
    with pytest.warns(tribunal_engine.dspy.MetricErrorWarning):
        assert reward({"meta": {"retrieved": ["d1"]}}, dspy.Prediction(answer="no json")) == 0.0
    assert reward({"meta": {"retrieved": ["d1"]}}, pred) == 0.5
    with pytest.warns(tribunal_engine.dspy.MetricErrorWarning):
        out = tribunal_engine.dspy.feedback(cites_pack)(example, pred)
    assert out.feedback.startswith("The output could not be evaluated")
    with pytest.raises(ValueError, match="on_error must be"):
        tribunal_engine.dspy.metric(cites_pack, on_error="ignore")


def test_the_rag_citations_pack_through_dspy_with_meta(root):
    # The shipped pack, written the natural way (items with fields, a Rhai metric
    # with SEMANTIC reading meta), as a DSPy metric over a dev set.
    documents = {
        "documents": [
            {"id": "d1", "text": "Returns are accepted within 30 days of delivery."},
            {"id": "d2", "text": "All appliances are covered for two years from purchase."},
        ]
    }
    grounded = '{"answer": "Returns are accepted for 30 days.", "citations": [{"doc_id": "d1", "quote": "accepted within 30 days"}], "confidence": 0.9}'
    invented = '{"answer": "Returns are free.", "citations": [{"doc_id": "d7", "quote": "returns are always free"}], "confidence": 0.9}'
    dspy.configure(lm=dspy.utils.DummyLM([{"output": grounded}, {"output": invented}]))
    try:
        devset = [
            dspy.Example(question=q, answer="You can return items within 30 days of delivery.", meta=documents)
            .with_inputs("question")
            for q in ("How long do I have to return an item?", "Are returns free?")
        ]
        metric = tribunal_engine.dspy.metric(
            root / "examples/packs/rag-citations", output_field="output", expected_field="answer", meta_field="meta"
        )
        result = dspy.Evaluate(devset=devset, metric=metric, num_threads=1)(dspy.Predict("question -> output"))
    finally:
        dspy.configure(lm=None)
    scores = [score for _, _, score in result.results]
    # Grounded, and close to the reference; then nothing grounded at all.
    assert scores[0] > 0.8 and scores[1] < 0.5, scores
    assert metric.errors == 0


def search_flights(to: str, date: str) -> str:
    """Find flights to an airport on a date."""
    return "SK1 09:40"


def book_flight(flight: str) -> str:
    """Book a flight."""
    if flight != "SK1":
        raise ValueError(f"no flight {flight}")
    return "booked: QX7P2K"


def react(steps):
    """A real dspy.ReAct run over the two tools, DummyLM answering `steps`
    (each a thought, a tool and its arguments) then the answer."""
    answers = [
        {"next_thought": thought, "next_tool_name": tool, "next_tool_args": args}
        for thought, tool, args in steps
    ]
    answers.append({"reasoning": "Done.", "answer": "Booked SK1; your reference is QX7P2K."})
    dspy.configure(lm=dspy.utils.DummyLM(answers))
    try:
        agent = dspy.ReAct("question -> answer", tools=[search_flights, book_flight])
        return agent(question="Book me a flight to Oslo on 5 December.")
    finally:
        dspy.configure(lm=None)


def test_a_react_trajectory_is_judged_step_by_step(root):
    pack = root / "examples/packs/travel-agent"
    pred = react([
        ("Search first.", "search_flights", {"to": "OSL", "date": "2026-12-05"}),
        ("Book it.", "book_flight", {"flight": "SK1"}),
        ("Done.", "finish", {}),
    ])
    result = tribunal_engine.dspy.evaluate(pack, dspy.Example(), pred, trajectory_field="trajectory")
    # The agent booked without asking the user: the booking's turn says so.
    assert [i["code"] for i in result.issues] == ["confirmed_first"]
    roles = [t["role"] for t in result.turns]
    assert roles == ["assistant", "tool", "assistant", "tool", "assistant", "assistant"]
    assert result.turns[2]["status"] == "NEEDS_IMPROVEMENT"
    # The last turn, the answer, gives the reference the booking's result confirmed.
    assert result.metrics["claims_confirmed"]["score"] == 1.0
    assert result.turns[5]["score"] == 1.0
    metric = tribunal_engine.dspy.metric(pack, trajectory_field="trajectory")
    assert metric(dspy.Example(), pred) == result.score
    assert "trajectory_field='trajectory'" in repr(metric)
    # A step whose tool raised is an error result; a wrong booking claim fails its turn.
    failed = react([
        ("Book SK2.", "book_flight", {"flight": "SK2"}),
        ("Done.", "finish", {}),
    ])
    messages = tribunal_engine.dspy.messages_from_trajectory(failed.trajectory, failed.answer)
    assert messages[1]["content"][0]["is_error"] is True
    result = tribunal_engine.dspy.evaluate(pack, dspy.Example(), failed, trajectory_field="trajectory")
    codes = [i["code"] for i in result.issues]
    assert "claims_confirmed" in codes and "tool.order" in codes, codes
    assert result.turns[-1]["status"] != "PASS"
    with pytest.raises(ValueError, match="trajectory_field"):
        tribunal_engine.dspy.metric(pack, record=lambda e, p: "x", trajectory_field="trajectory")
