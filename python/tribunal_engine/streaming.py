"""Judging a model's output while it streams.

``Pack.stream()`` opens a session: ``push(chunk)`` returns the events the chunk
made certain, ``finish()`` the ``Result``. ``watch`` wraps an iterator of chunks,
such as the OpenAI or Anthropic SDKs' streamed events, and yields the events as
they come::

    import tribunal_engine as tribunal

    pack = tribunal.Pack.load("examples/packs/tool-calls")
    watched = tribunal.watch(pack, client.chat.completions.create(..., stream=True))
    for event in watched:
        if event["event"] == "violation":
            print("the call is already wrong:", event["message"])
            break                      # stop paying for tokens
    result = watched.finish()          # the Result of the text so far
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import Any, Callable, Optional

from ._native import Pack, Result, Stream

__all__ = ["watch", "Watched", "chunk_text"]


def chunk_text(chunk: Any) -> Optional[str]:
    """The text of one streamed chunk: a ``str``; an OpenAI Chat Completions
    chunk (``choices[0].delta.content``, as an object or a dict); an OpenAI
    Responses event (``delta`` of a ``response.output_text.delta``); an Anthropic
    ``content_block_delta`` (``delta.text``). ``None`` for chunks that carry no
    text (a role, a tool call, the end)."""
    if isinstance(chunk, str):
        return chunk
    get = (lambda o, k: o.get(k)) if isinstance(chunk, dict) else getattr
    choices = _read(get, chunk, "choices")
    if choices:
        delta = _read(get, choices[0], "delta")
        return _read(get, delta, "content") if delta is not None else None
    kind = _read(get, chunk, "type")
    delta = _read(get, chunk, "delta")
    if kind == "response.output_text.delta" and isinstance(delta, str):
        return delta
    if delta is not None and not isinstance(delta, str):
        text = _read(get, delta, "text")
        return text if isinstance(text, str) else None
    return None


def _read(get: Callable[[Any, str], Any], obj: Any, key: str) -> Any:
    if obj is None:
        return None
    if isinstance(obj, dict):
        return obj.get(key)
    return getattr(obj, key, None)


class Watched:
    """The events of a streamed output, as an iterator; ``finish()`` (or the
    end of the iteration) gives the ``Result``, also in ``result``."""

    def __init__(
        self,
        session: Stream,
        chunks: Iterable[Any],
        text: Callable[[Any], Optional[str]] = chunk_text,
    ) -> None:
        self.session = session
        self._chunks = iter(chunks)
        self._text = text

    def __iter__(self) -> Iterator[dict]:
        for chunk in self._chunks:
            piece = self._text(chunk)
            if piece:
                yield from self.session.push(piece)
        self.finish()

    @property
    def result(self) -> Optional[Result]:
        return self.session.result

    def finish(self) -> Result:
        """The ``Result`` of the text pushed so far (the whole output once the
        iteration ended)."""
        return self.session.result or self.session.finish()


def watch(
    pack: Pack,
    chunks: Iterable[Any],
    *,
    text: Callable[[Any], Optional[str]] = chunk_text,
    release: bool = False,
    expected: Any = None,
    meta: Any = None,
    id: Any = None,
) -> Watched:
    """Streams ``chunks`` (strings, or SDK stream events read with ``text``)
    through a session of ``pack``; iterate over it for the events."""
    return Watched(pack.stream(expected, meta, id, release=release), chunks, text)
