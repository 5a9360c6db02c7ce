"""DSPy metrics from a Tribunal pack.

``metric`` follows DSPy's metric convention, ``metric(example, pred, trace=None)``:
the record's score (a float) when evaluating, whether it passed (a bool) when
``trace`` is given (bootstrapping demos)::

    import dspy, tribunal.dspy

    metric = tribunal.dspy.metric("rules/ksi-emission", output_field="answer")
    dspy.Evaluate(devset=devset, metric=metric)(program)

``feedback`` gives the same score with the pack's re-ask feedback, as the
``dspy.Prediction(score=..., feedback=...)`` that feedback-driven optimizers such
as GEPA take; ``reward`` is a ``reward_fn(args, pred)`` for ``dspy.Refine`` and
``dspy.BestOfN``. ``pack`` is a ``tribunal.Pack`` or a path to load one from.
DSPy itself is imported only by ``feedback`` (it builds a ``dspy.Prediction``).
"""

from __future__ import annotations

import json
from os import PathLike
from typing import Any, Optional, Union

from ._native import Pack, Result

PackLike = Union[Pack, str, "PathLike[str]"]

__all__ = ["Metric", "metric", "feedback", "reward", "evaluate"]


def _pack(pack: PackLike) -> Pack:
    return pack if isinstance(pack, Pack) else Pack.load(pack)


def _field(obj: Any, name: str, what: str) -> Any:
    """``obj[name]`` (DSPy's Example and Prediction, dicts), else the attribute
    ``obj.name`` when it is not a method (a field named ``items`` or ``inputs``
    is not Example's method of that name)."""
    if isinstance(obj, str) and what == "prediction":
        return obj
    try:
        return obj[name]
    except (KeyError, TypeError, IndexError, AttributeError):
        pass
    value = getattr(obj, name, _MISSING)
    if value is _MISSING or callable(value):
        raise KeyError(f"the {what} has no field `{name}`")
    return value


_MISSING = object()


def _expected(example: Any, name: Optional[str]) -> Any:
    if name is None:
        return None
    value = _field(example, name, "example")
    if isinstance(value, str):
        # The expected JSON, as text (as DSPy examples usually hold it).
        try:
            return json.loads(value)
        except ValueError:
            return value
    return value


def evaluate(
    pack: PackLike,
    example: Any,
    pred: Any,
    output_field: str = "answer",
    expected_field: Optional[str] = None,
) -> Result:
    """The full ``tribunal.Result`` of the prediction's ``output_field`` (its raw
    output), against the example's ``expected_field`` (the expected JSON, as a
    value or as JSON text) when given."""
    output = _field(pred, output_field, "prediction")
    return _pack(pack).evaluate(output, expected=_expected(example, expected_field))


class Metric:
    """A DSPy metric: ``metric(example, pred, trace=None)`` is the score (a float,
    0.0 for a record that could not be scored) when ``trace`` is ``None``, and
    whether the record passed (a bool) otherwise. Picklable."""

    def __init__(
        self,
        pack: PackLike,
        output_field: str = "answer",
        expected_field: Optional[str] = None,
    ) -> None:
        self.pack = _pack(pack)
        self.output_field = output_field
        self.expected_field = expected_field

    def result(self, example: Any, pred: Any) -> Result:
        """The full ``tribunal.Result`` for this prediction."""
        return evaluate(self.pack, example, pred, self.output_field, self.expected_field)

    def __call__(self, example: Any, pred: Any, trace: Any = None) -> Union[float, bool]:
        result = self.result(example, pred)
        if trace is None:
            return result.score or 0.0
        return result.passed

    def __repr__(self) -> str:
        return (
            f"tribunal.dspy.Metric({self.pack.label}, output_field={self.output_field!r}, "
            f"expected_field={self.expected_field!r})"
        )


def metric(
    pack: PackLike, output_field: str = "answer", expected_field: Optional[str] = None
) -> Metric:
    """A DSPy metric scoring the prediction's ``output_field`` with ``pack``."""
    return Metric(pack, output_field, expected_field)


class FeedbackMetric(Metric):
    """``metric(gold, pred, trace=None, pred_name=None, pred_trace=None)`` →
    ``dspy.Prediction(score=..., feedback=...)``: the score, and the pack's
    re-ask feedback (or, for a record that could not be evaluated, the reason;
    for one without issues, a line saying it passed)."""

    def __call__(  # type: ignore[override]
        self,
        example: Any,
        pred: Any,
        trace: Any = None,
        pred_name: Optional[str] = None,
        pred_trace: Any = None,
    ) -> Any:
        import dspy

        result = self.result(example, pred)
        if result.error is not None:
            text = f"The output could not be evaluated: {result.error}"
        elif result.feedback is not None:
            text = result.feedback
        else:
            text = f"The output passed the {result.pack} checks ({result.status})."
        return dspy.Prediction(score=result.score or 0.0, feedback=text)


def feedback(
    pack: PackLike, output_field: str = "answer", expected_field: Optional[str] = None
) -> FeedbackMetric:
    """A feedback metric (score and re-ask feedback) for feedback-driven
    optimizers such as ``dspy.GEPA``."""
    return FeedbackMetric(pack, output_field, expected_field)


class Reward:
    """``reward_fn(args, pred)`` for ``dspy.Refine`` / ``dspy.BestOfN``: the score
    of the prediction's ``output_field`` (0.0 when it could not be scored).
    ``last_feedback`` holds the re-ask feedback of the last call."""

    def __init__(self, pack: PackLike, output_field: str = "answer") -> None:
        self.pack = _pack(pack)
        self.output_field = output_field
        self.last_feedback: Optional[str] = None

    def __call__(self, args: Any, pred: Any) -> float:
        result = self.pack.evaluate(_field(pred, self.output_field, "prediction"))
        self.last_feedback = result.feedback or result.error
        return result.score or 0.0


def reward(pack: PackLike, output_field: str = "answer") -> Reward:
    """A ``reward_fn`` for ``dspy.Refine`` and ``dspy.BestOfN``."""
    return Reward(pack, output_field)
