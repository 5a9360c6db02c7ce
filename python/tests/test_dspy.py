"""tribunal.dspy with the real DSPy: dspy.Evaluate over a small dev set, with
DSPy's DummyLM (no network), and the feedback and reward forms."""

import pickle

import pytest

dspy = pytest.importorskip("dspy", reason="the optional extra `dspy` is not installed")

import tribunal  # noqa: E402
import tribunal.dspy  # noqa: E402

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
    metric = tribunal.dspy.metric(root / "rules/ksi-emission", output_field="answer")
    result = dspy.Evaluate(devset=devset(), metric=metric, num_threads=1)(program)
    # Scores 1.0, 0.7 and 0.0: DSPy reports their mean as a percentage.
    assert result.score == pytest.approx(100 * 1.7 / 3, abs=0.01)
    assert [score for _, _, score in result.results] == [1.0, 0.7, 0.0]


def test_metric_convention(root):
    pack = tribunal.Pack.load(root / "rules/ksi-emission")
    metric = tribunal.dspy.metric(pack)
    example = dspy.Example(question="q")
    for answer, score, passed in ((EMITTED, 1.0, True), (UNKNOWN, 0.7, True), (DESCRIBED, 0.0, False)):
        pred = dspy.Prediction(answer=answer)
        assert metric(example, pred) == score           # evaluation: the score
        assert metric(example, pred, trace=[]) is passed  # bootstrapping: passed
    assert pickle.loads(pickle.dumps(metric))(example, dspy.Prediction(answer=EMITTED)) == 1.0
    with pytest.raises(KeyError, match="no field `answer`"):
        metric(example, dspy.Prediction(text=EMITTED))


def test_expected_field_reads_the_examples_json(root):
    metric = tribunal.dspy.metric(root / "rules/json-eval", output_field="json", expected_field="gold")
    gold = {"name": "Ada Lovelace", "city": "London"}
    same = dspy.Example(gold=gold)
    as_text = dspy.Example(gold='{"name": "Ada Lovelace", "city": "London"}')
    pred = dspy.Prediction(json='{"name": "Ada Lovelace", "city": "London"}')
    direct = metric.pack.evaluate(pred.json, expected=gold).score
    assert metric(same, pred) == metric(as_text, pred) == direct
    wrong = dspy.Prediction(json='{"name": "Charles Babbage", "city": "Paris"}')
    assert metric(same, wrong) < direct


def test_feedback_metric_and_reward(root):
    feedback = tribunal.dspy.feedback(root / "rules/ksi-emission")
    out = feedback(dspy.Example(question="q"), dspy.Prediction(answer=DESCRIBED))
    assert isinstance(out, dspy.Prediction)
    assert out.score == 0.0
    assert out.feedback == "Previous issues: ['describes JSON instead of emitting it']"
    assert "passed" in feedback(dspy.Example(), dspy.Prediction(answer=EMITTED)).feedback

    reward = tribunal.dspy.reward(root / "rules/ksi-emission")
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
            reward_fn=tribunal.dspy.reward(root / "rules/ksi-emission"),
            threshold=1.0,
        )
        assert refine(question="report status").answer == EMITTED
    finally:
        dspy.configure(lm=None)
