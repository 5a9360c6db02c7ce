"""DSPy metrics from a Tribunal pack.

``metric`` follows DSPy's metric convention, ``metric(example, pred, trace=None)``:
the record's score (a float) when evaluating, whether it passed (a bool) when
``trace`` is given (bootstrapping demos)::

    import dspy, tribunal_engine.dspy

    metric = tribunal_engine.dspy.metric("rules/ksi-emission", output_field="answer")
    dspy.Evaluate(devset=devset, metric=metric)(program)

An agent's run is judged with its trajectory: ``trajectory_field="trajectory"``
reads ``dspy.ReAct``'s (thoughts, tool calls, observations) into the record's
``messages``, with the output as the last assistant turn, so the pack's transcript
rules (``tool_calls``, steps per turn) judge every step of it
(``messages_from_trajectory`` does the conversion; a field that already holds a
list of messages is taken as it is).

``feedback`` gives the same score with the pack's re-ask feedback, as the
``dspy.Prediction(score=..., feedback=...)`` that feedback-driven optimizers such
as GEPA take; ``reward`` is a ``reward_fn(args, pred)`` for ``dspy.Refine`` and
``dspy.BestOfN``. ``pack`` is a ``tribunal.Pack`` or a path to load one from.
``meta_field`` names the field holding the record's ``meta`` (the example's, else
the prediction's); ``record=`` builds the whole record from ``(example, pred)``.
A record the pack cannot evaluate scores 0.0 and warns once
(``MetricErrorWarning``), or raises with ``on_error="raise"``: never silently.
DSPy itself is imported only by ``feedback`` (it builds a ``dspy.Prediction``).
"""

from __future__ import annotations

import json
import warnings
from collections.abc import Mapping
from os import PathLike
from typing import Any, Callable, Optional, Union

from ._native import Pack, Result

PackLike = Union[Pack, str, "PathLike[str]"]

__all__ = [
    "Metric",
    "FeedbackMetric",
    "Reward",
    "MetricErrorWarning",
    "TribunalMetricError",
    "metric",
    "feedback",
    "reward",
    "evaluate",
    "messages_from_trajectory",
]


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


def _json_field(obj: Any, name: str, what: str) -> Any:
    """A field holding JSON, as a value or as JSON text (as DSPy examples
    usually hold it): a text that does not parse is kept as the text."""
    value = _field(obj, name, what)
    if isinstance(value, str):
        try:
            return json.loads(value)
        except ValueError:
            return value
    return value


def _expected(example: Any, name: Optional[str]) -> Any:
    return None if name is None else _json_field(example, name, "example")


def _meta(example: Any, pred: Any, name: Optional[str]) -> Any:
    """The record's ``meta``: the example's field ``name``, else the
    prediction's (retrieved documents are an input in some programs and an
    output in others)."""
    if name is None:
        return None
    try:
        return _json_field(example, name, "example")
    except KeyError:
        pass
    try:
        return _json_field(pred, name, "prediction")
    except KeyError:
        raise KeyError(f"neither the example nor the prediction has a field `{name}`") from None


#: What a ``record=`` hook returns: a record (``{"output": ..., "expected": ...,
#: "meta": ..., "id": ..., "messages": ...}``, ``output`` or ``messages``
#: required) or the output alone.
RecordHook = Callable[[Any, Any], Union[Mapping[str, Any], str]]

_RECORD_KEYS = frozenset(("output", "expected", "meta", "id", "messages"))

#: The tool ``dspy.ReAct`` calls to end its loop: not a call of the agent's.
_FINISH = "finish"


def _text(value: Any) -> str:
    return value if isinstance(value, str) else json.dumps(value, default=str, ensure_ascii=False)


def messages_from_trajectory(trajectory: Any, answer: Any = None) -> list[dict[str, Any]]:
    """A ``dspy.ReAct`` trajectory (``thought_N``, ``tool_name_N``, ``tool_args_N``,
    ``observation_N``) as a transcript in the Anthropic Messages format: each
    step an assistant turn (its thought, and its call) followed by the call's
    result (``is_error`` when the tool raised, "Execution error in ..."), then
    ``answer``, when given, as the last assistant turn. ReAct's closing
    ``finish`` call is left out (its thought stays). A list (messages already)
    is returned as it is."""
    if isinstance(trajectory, list):
        return list(trajectory)
    if not isinstance(trajectory, Mapping):
        raise TypeError(
            f"a trajectory is dspy.ReAct's dict (thought_0, tool_name_0, ...) or a list of "
            f"messages, not {type(trajectory).__name__}"
        )
    messages: list[dict[str, Any]] = []
    step = 0
    while any(f"{key}_{step}" in trajectory for key in ("thought", "tool_name")):
        blocks: list[dict[str, Any]] = []
        thought = trajectory.get(f"thought_{step}")
        if thought:
            blocks.append({"type": "text", "text": _text(thought)})
        name = trajectory.get(f"tool_name_{step}")
        called = bool(name) and name != _FINISH
        if called:
            args = trajectory.get(f"tool_args_{step}") or {}
            blocks.append({"type": "tool_use", "id": f"step_{step}", "name": _text(name),
                           "input": args if isinstance(args, Mapping) else {"args": args}})
        if blocks:
            messages.append({"role": "assistant", "content": blocks})
        if called:
            observation = _text(trajectory.get(f"observation_{step}", ""))
            result = {"type": "tool_result", "tool_use_id": f"step_{step}", "content": observation}
            if observation.startswith(f"Execution error in {name}"):
                result["is_error"] = True
            messages.append({"role": "user", "content": [result]})
        step += 1
    if answer is not None:
        messages.append({"role": "assistant", "content": [{"type": "text", "text": _text(answer)}]})
    return messages


def _from_hook(pack: Pack, hook: RecordHook, example: Any, pred: Any) -> Result:
    record = hook(example, pred)
    if isinstance(record, str):
        return pack.evaluate(record)
    if not isinstance(record, Mapping):
        raise TypeError(
            f"the record= hook returned {type(record).__name__}: it must return a dict "
            "with `output` (and `expected`, `meta`, `id` if wanted) or the output as a str"
        )
    unknown = sorted(set(record) - _RECORD_KEYS)
    if unknown or ("output" not in record and "messages" not in record):
        problem = f"unknown keys {unknown}" if unknown else "no `output` (nor `messages`)"
        raise ValueError(
            f"the record= hook returned a dict with {problem}; a record has "
            "`output` or `messages` (or both), and optionally `expected`, `meta` and `id`"
        )
    return pack.evaluate(
        record.get("output"),
        expected=record.get("expected"),
        meta=record.get("meta"),
        id=record.get("id"),
        messages=record.get("messages"),
    )


def evaluate(
    pack: PackLike,
    example: Any,
    pred: Any,
    output_field: str = "answer",
    expected_field: Optional[str] = None,
    meta_field: Optional[str] = None,
    *,
    record: Optional[RecordHook] = None,
    trajectory_field: Optional[str] = None,
) -> Result:
    """The full ``tribunal.Result`` of the prediction's ``output_field`` (its raw
    output), against the example's ``expected_field`` (the expected JSON, as a
    value or as JSON text) when given, with ``meta_field`` (the example's, else
    the prediction's; an object or JSON text) as the record's ``meta``, and the
    prediction's ``trajectory_field`` (``dspy.ReAct``'s ``trajectory``, or a list
    of messages) as its ``messages`` (see ``messages_from_trajectory``).
    ``record(example, pred)``, when given, builds the record instead."""
    pack = _pack(pack)
    if record is not None:
        return _from_hook(pack, record, example, pred)
    output = _field(pred, output_field, "prediction")
    messages = None
    if trajectory_field is not None:
        trajectory = _field(pred, trajectory_field, "prediction")
        messages = messages_from_trajectory(trajectory, answer=output)
    return pack.evaluate(
        output,
        expected=_expected(example, expected_field),
        meta=_meta(example, pred, meta_field),
        messages=messages,
    )


class MetricErrorWarning(UserWarning):
    """A DSPy metric met a record the pack could not evaluate (an ERROR result,
    scored 0.0): warned once per metric, with the error."""


_ON_ERROR = ("warn", "raise")


class _Records:
    """How a metric turns ``(example, pred)`` into a result, and what it does
    with an ERROR result (shared by the metric and reward forms)."""

    def __init__(
        self,
        pack: PackLike,
        output_field: str,
        expected_field: Optional[str],
        meta_field: Optional[str],
        record: Optional[RecordHook],
        on_error: str,
        trajectory_field: Optional[str] = None,
    ) -> None:
        if on_error not in _ON_ERROR:
            raise ValueError(f"on_error must be 'warn' or 'raise', not {on_error!r}")
        if record is not None and (
            expected_field is not None or meta_field is not None or trajectory_field is not None
        ):
            raise ValueError(
                "give either record= or expected_field/meta_field/trajectory_field: "
                "the hook builds the whole record"
            )
        self.pack = _pack(pack)
        self.output_field = output_field
        self.expected_field = expected_field
        self.meta_field = meta_field
        self.record = record
        self.trajectory_field = trajectory_field
        self.on_error = on_error
        #: ERROR results met so far (each scored 0.0).
        self.errors = 0

    def result(self, example: Any, pred: Any) -> Result:
        """The full ``tribunal.Result`` for this prediction."""
        result = evaluate(
            self.pack,
            example,
            pred,
            self.output_field,
            self.expected_field,
            self.meta_field,
            record=self.record,
            trajectory_field=self.trajectory_field,
        )
        if result.error is not None:
            self._errored(result)
        return result

    def _errored(self, result: Result) -> None:
        self.errors += 1
        message = (
            f"tribunal: the pack {self.pack.label} could not evaluate a prediction, "
            f"so it scores 0.0: {result.error}"
        )
        if self.on_error == "raise":
            raise TribunalMetricError(message, result)
        if self.errors == 1:
            warnings.warn(
                message + " (warned once; `.errors` counts them, on_error='raise' stops at the first)",
                MetricErrorWarning,
                stacklevel=4,
            )

    def _fields(self) -> str:
        if self.record is not None:
            return f"record={self.record!r}"
        fields = (
            f"output_field={self.output_field!r}, expected_field={self.expected_field!r}, "
            f"meta_field={self.meta_field!r}"
        )
        if self.trajectory_field is not None:
            fields += f", trajectory_field={self.trajectory_field!r}"
        return fields


class TribunalMetricError(RuntimeError):
    """Raised by a metric with ``on_error='raise'`` for an ERROR result; the
    result is ``.result``."""

    def __init__(self, message: str, result: Result) -> None:
        super().__init__(message)
        self.result = result


class Metric(_Records):
    """A DSPy metric: ``metric(example, pred, trace=None)`` is the score (a float)
    when ``trace`` is ``None``, and whether the record passed (a bool) otherwise.
    A record the pack cannot evaluate (ERROR) scores 0.0 and fails, and is not
    silent: the first one warns (``MetricErrorWarning``) with its error, or, with
    ``on_error="raise"``, raises ``TribunalMetricError``. Picklable."""

    def __init__(
        self,
        pack: PackLike,
        output_field: str = "answer",
        expected_field: Optional[str] = None,
        meta_field: Optional[str] = None,
        *,
        record: Optional[RecordHook] = None,
        on_error: str = "warn",
        trajectory_field: Optional[str] = None,
    ) -> None:
        super().__init__(
            pack, output_field, expected_field, meta_field, record, on_error, trajectory_field
        )

    def __call__(self, example: Any, pred: Any, trace: Any = None) -> Union[float, bool]:
        result = self.result(example, pred)
        if trace is None:
            return result.score or 0.0
        return result.passed

    def __repr__(self) -> str:
        return f"tribunal_engine.dspy.Metric({self.pack.label}, {self._fields()})"


def metric(
    pack: PackLike,
    output_field: str = "answer",
    expected_field: Optional[str] = None,
    meta_field: Optional[str] = None,
    *,
    record: Optional[RecordHook] = None,
    on_error: str = "warn",
    trajectory_field: Optional[str] = None,
) -> Metric:
    """A DSPy metric scoring the prediction's ``output_field`` with ``pack``
    (see ``evaluate`` for the fields, ``trajectory_field`` and ``record=``)."""
    return Metric(
        pack,
        output_field,
        expected_field,
        meta_field,
        record=record,
        on_error=on_error,
        trajectory_field=trajectory_field,
    )


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
    pack: PackLike,
    output_field: str = "answer",
    expected_field: Optional[str] = None,
    meta_field: Optional[str] = None,
    *,
    record: Optional[RecordHook] = None,
    on_error: str = "warn",
    trajectory_field: Optional[str] = None,
) -> FeedbackMetric:
    """A feedback metric (score and re-ask feedback) for feedback-driven
    optimizers such as ``dspy.GEPA``."""
    return FeedbackMetric(
        pack,
        output_field,
        expected_field,
        meta_field,
        record=record,
        on_error=on_error,
        trajectory_field=trajectory_field,
    )


class Reward(_Records):
    """``reward_fn(args, pred)`` for ``dspy.Refine`` / ``dspy.BestOfN``: the score
    of the prediction's ``output_field`` (0.0, warned once, when it could not be
    scored), with ``meta_field`` read from ``args`` (the program's inputs) or the
    prediction, or the record built by ``record(args, pred)``.
    ``last_feedback`` holds the re-ask feedback (or error) of the last call."""

    def __init__(
        self,
        pack: PackLike,
        output_field: str = "answer",
        meta_field: Optional[str] = None,
        *,
        record: Optional[RecordHook] = None,
        on_error: str = "warn",
        trajectory_field: Optional[str] = None,
    ) -> None:
        super().__init__(pack, output_field, None, meta_field, record, on_error, trajectory_field)
        self.last_feedback: Optional[str] = None

    def __call__(self, args: Any, pred: Any) -> float:
        result = self.result(args, pred)
        self.last_feedback = result.feedback or result.error
        return result.score or 0.0

    def __repr__(self) -> str:
        return f"tribunal_engine.dspy.Reward({self.pack.label}, {self._fields()})"


def reward(
    pack: PackLike,
    output_field: str = "answer",
    meta_field: Optional[str] = None,
    *,
    record: Optional[RecordHook] = None,
    on_error: str = "warn",
    trajectory_field: Optional[str] = None,
) -> Reward:
    """A ``reward_fn`` for ``dspy.Refine`` and ``dspy.BestOfN``."""
    return Reward(
        pack,
        output_field,
        meta_field,
        record=record,
        on_error=on_error,
        trajectory_field=trajectory_field,
    )
