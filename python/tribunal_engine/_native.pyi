"""Type stubs of the compiled module (re-exported by ``tribunal``)."""

from collections.abc import Iterable, Mapping, Sequence
from os import PathLike
from typing import Any, Literal, Optional, Union

__version__: str

Status = Literal["PASS", "NEEDS_IMPROVEMENT", "FAIL", "ERROR"]
StrPath = Union[str, PathLike[str]]

class TribunalError(Exception):
    """The base of every error Tribunal raises."""

class PackError(TribunalError):
    """A pack did not load; the message lists every error as ``file:line:column: message``."""

    errors: list[dict[str, Any]]
    """Each error: ``file``, ``line``, ``column`` (``None`` for a whole-file error), ``message``, ``help``."""

class Result:
    """The result of evaluating one record: the CLI's result record as attributes."""

    @property
    def id(self) -> Any: ...
    @property
    def line(self) -> Optional[int]:
        """The record's position in ``evaluate_many``'s records, from ``first_line`` (``None`` from ``evaluate``)."""
    @property
    def status(self) -> Status: ...
    @property
    def passed(self) -> bool: ...
    @property
    def score(self) -> Optional[float]: ...
    @property
    def metrics(self) -> dict[str, dict[str, Any]]:
        """Each metric's ``score``, ``weight`` and ``details``, by name (``score`` ``None``
        and ``skipped`` its reason for a metric that did not apply)."""
    @property
    def issues(self) -> list[dict[str, Any]]:
        """Each issue's ``rule``, ``code``, ``severity``, ``message`` and ``path`` (and
        ``turn``, the index in ``turns`` of the turn it is about, when it has one)."""
    @property
    def turns(self) -> Optional[list[dict[str, Any]]]:
        """A transcript record's turns, in order: each one's ``role``, ``path``,
        ``status``, ``score`` and ``issues`` (``None`` for a record without ``messages``)."""
    @property
    def json(self) -> Any:
        """The extracted JSON value (``None`` when there is none)."""
    @property
    def extraction(self) -> Optional[dict[str, Any]]:
        """``tier``, ``repairs`` and ``raw_fallback`` (``None`` for ``ERROR``)."""
    @property
    def feedback(self) -> Optional[str]:
        """The re-ask feedback for the model, when there are error issues."""
    @property
    def error(self) -> Optional[str]:
        """Why the record could not be evaluated (``ERROR`` only)."""
    @property
    def error_kind(self) -> Optional[str]:
        """What kind of failure that was: ``timeout``, ``memory``, ``script``,
        ``plugin-crash``, ``plugin-reply``, ``input``, ``model`` or ``internal``."""
    @property
    def pack(self) -> str: ...
    @property
    def revision(self) -> str: ...
    @property
    def bundle_revision(self) -> Optional[str]:
        """The revision of the bundle the pack was loaded from (None: a folder)."""
    def to_dict(self) -> dict[str, Any]:
        """The CLI's result record for the same input, as a dict."""
    def to_json(self) -> str:
        """The CLI's result record for the same input, as one line of JSON."""

class Pack:
    """A compiled rule pack: thread-safe and picklable."""

    @staticmethod
    def load(
        path: StrPath,
        overrides: Optional[Mapping[str, Any]] = None,
        plugin_dirs: Optional[Sequence[StrPath]] = None,
        *,
        allow_plugins: bool = False,
        trust: Optional[Sequence[StrPath]] = None,
    ) -> Pack:
        """Loads and compiles the pack at `path`: a folder, or a bundle
        (`tribunal bundle build`: `FILE`, or `FILE#NAME` for one of its packs).
        `allow_plugins=True` is the consent to opening the pack's plugin
        libraries (native code that runs with your privileges; only from the
        pack or `plugin_dirs`): without it, a pack with a plugin component
        raises PackError. `trust` lists verifying keys' files (`NAME.pub`): a
        bundle must be signed by one of them."""
    @property
    def name(self) -> str: ...
    @property
    def version(self) -> str: ...
    @property
    def label(self) -> str: ...
    @property
    def revision(self) -> str: ...
    @property
    def description(self) -> Optional[str]: ...
    @property
    def path(self) -> str: ...
    @property
    def metrics(self) -> list[str]: ...
    @property
    def warnings(self) -> list[str]: ...
    def prompt(self) -> Optional[str]: ...
    def stream(
        self,
        expected: Any = None,
        meta: Any = None,
        id: Any = None,
        *,
        release: bool = False,
    ) -> Stream:
        """A streaming session for one output (``push`` chunks, then ``finish``)."""
    def json_schema(self, *, strict: bool = False) -> Optional[dict[str, Any]]:
        """The contract as a JSON Schema; ``strict=True``: OpenAI's strict-mode subset
        (``ValueError`` for what it cannot express)."""
    def evaluate(
        self,
        output: Any = None,
        expected: Any = None,
        meta: Any = None,
        id: Any = None,
        *,
        messages: Optional[list[Any]] = None,
    ) -> Result:
        """One record; `messages` is an agent's transcript (OpenAI Chat,
        Anthropic Messages or OpenAI Responses), judged on its last assistant
        turn when there is no `output`, read by components as `ctx.turns`."""
    def decide(
        self,
        messages: list[Any],
        *,
        meta: Any = None,
        expected: Any = None,
        id: Any = None,
    ) -> dict[str, Any]:
        """Allow or deny, before they run, the tool calls the last assistant
        message of `messages` proposes: ``{"decisions": [{"call", "id",
        "name", "path", "decision", "issues"}], "history", "other_issues",
        "error", "error_kind", "pack", "revision", "id"}``, as ``tribunal
        check --proposed --json`` prints it (every call denied when the
        proposal cannot be judged; ``history``: the earlier turns' issues,
        which deny nothing)."""
    def evaluate_many(
        self,
        records: Iterable[Union[Mapping[str, Any], str]],
        jobs: Optional[int] = None,
        *,
        first_line: Optional[int] = 1,
    ) -> list[Result]:
        """Results in input order; dicts are records, strings are JSONL lines."""

class Stream:
    """A streaming session: ``push`` each chunk, then ``finish``. A context manager."""

    def push(self, chunk: str) -> list[dict[str, Any]]:
        """The events the chunk made certain: ``{"event": "violation", "rule", "code",
        "severity", "message", "path", "start", "offset"}`` or ``{"event": "release",
        "up_to"}``."""
    def finish(self) -> Result:
        """The Result of the whole text: exactly ``Pack.evaluate`` of it."""
    @property
    def text(self) -> str: ...
    @property
    def result(self) -> Optional[Result]: ...
    def __enter__(self) -> Stream: ...
    def __exit__(self, *exc: Any) -> bool: ...
