"""Tribunal: validate and score what language models emit, with YAML rule packs.

Load a pack once, then evaluate any number of outputs with it::

    import tribunal_engine as tribunal

    pack = tribunal.Pack.load("rules/ksi-emission")
    result = pack.evaluate('{"event": "agent:status", "data": {"ok": true}}')
    result.status, result.score          # ('PASS', 1.0)
    results = pack.evaluate_many([{"id": 1, "output": "..."}], jobs=2)

``pack.stream()`` judges an output while it streams (``tribunal.watch`` wraps an
SDK's stream). ``tribunal_engine.dspy`` holds DSPy metrics and ``tribunal_engine.ray`` a Ray Data scorer;
both import their framework only when used. See docs/python.md.
"""

from ._native import Pack, PackError, Result, Stream, TribunalError, __version__
from .streaming import watch

__all__ = ["Pack", "PackError", "Result", "Stream", "TribunalError", "watch", "__version__"]
