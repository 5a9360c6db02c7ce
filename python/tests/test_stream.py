"""Streaming sessions from Python: events as chunks arrive, finish() equal to
evaluate() on the whole text, the context manager, and tribunal.watch over a
fake SDK stream (no network)."""

import random
from types import SimpleNamespace

import pytest

import tribunal_engine as tribunal

CALL = (
    '{"tool": "cancel_booking", "args": {"booking_id": "QX7P2K"}, '
    '"reason": "The traveller asked to cancel QX7P2K."}'
)
WRONG = '{"tool": "delete_booking", "args": {"booking_id": "QX7P2K"}, "reason": "Gone."}'


@pytest.fixture(scope="module")
def tools(root):
    return tribunal.Pack.load(root / "examples/packs/tool-calls", overrides={"tool_args.today": "2026-11-24"})


def chunks_of(text, rng):
    out, at = [], 0
    while at < len(text):
        n = rng.randint(1, 9)
        out.append(text[at : at + n])
        at += n
    return out


def test_events_come_as_the_chunks_do_and_finish_is_evaluate(tools):
    rng = random.Random(7)
    for text in (CALL, WRONG, "Sure:\n```json\n" + WRONG + "\n```"):
        session = tools.stream()
        events = []
        for chunk in chunks_of(text, rng):
            events += [(e, len(session.text)) for e in session.push(chunk)]
        assert session.text == text
        result = session.finish()
        assert result.to_json() == tools.evaluate(text).to_json()
        violations = [e for e, _ in events if e["event"] == "violation"]
        if text == CALL:
            assert violations == []
        else:
            (first, pushed), = [(e, n) for e, n in events if e["event"] == "violation"][:1]
            assert first["code"] == "contract.kind-not-allowed" and first["path"] == "/tool"
            # Reported with the chunk that closed the tool's string, long before the end.
            assert first["offset"] <= pushed < len(text)
            assert text.encode()[first["start"] : first["offset"]] == b'"delete_booking"'
            assert any(i["code"] == first["code"] for i in result.issues)
    with pytest.raises(RuntimeError, match="the stream is finished"):
        session.push("more")


def test_a_document_nested_too_deep_stops_the_early_checks_once(tools):
    text = "[" * 300 + "]" * 300
    session = tools.stream()
    events = []
    for at in range(0, len(text), 10):
        events += session.push(text[at : at + 10])
    stops = [e for e in events if e["event"] == "stopped"]
    # The 128th container, past the JSON reader's 127 levels, said once.
    assert [e["at"] for e in stops] == [127]
    assert "127 levels" in stops[0]["reason"]
    assert session.finish().to_json() == tools.evaluate(text).to_json()


def test_a_context_manager_finishes_and_release_holds_the_value_being_written(tools):
    with tools.stream(expected={"tool": "cancel_booking"}, release=True) as session:
        releases = session.push('{"tool": "cancel_boo')
        # The tool's name is being written: it may still be flagged.
        assert all(e["up_to"] <= len('{"tool": ') for e in releases if e["event"] == "release")
        session.push('king", "args": {"booking_id": "QX7P2K"}, "reason": "Cancel it."}')
    assert session.result is not None
    assert session.result.status == "PASS"
    assert session.result.to_dict()["metrics"]["arg_completeness"]["score"] == 1.0
    assert "finished" in repr(session)


def test_watch_reads_an_sdk_stream_and_yields_events_as_they_come(tools):
    # The shapes the OpenAI Chat Completions and Anthropic SDKs stream, and a
    # chunk without text (a role) that is skipped.
    def openai(text):
        yield SimpleNamespace(choices=[SimpleNamespace(delta=SimpleNamespace(content=None, role="assistant"))])
        for at in range(0, len(text), 5):
            yield SimpleNamespace(choices=[SimpleNamespace(delta=SimpleNamespace(content=text[at : at + 5]))])

    def anthropic(text):
        for at in range(0, len(text), 7):
            yield {"type": "content_block_delta", "delta": {"type": "text_delta", "text": text[at : at + 7]}}

    for stream in (openai(WRONG), anthropic(WRONG)):
        pulled = []

        def counting(source):
            for item in source:
                pulled.append(item)
                yield item

        watched = tribunal.watch(tools, counting(stream))
        for event in watched:
            if event["event"] == "violation":
                break  # stop paying for tokens
        # The violation came before the stream ended.
        assert len(pulled) < len(WRONG) // 5
        text = watched.session.text
        partial = watched.finish()
        assert partial.to_json() == tools.evaluate(text).to_json()
    watched = tribunal.watch(tools, anthropic(CALL))
    assert list(watched) == []
    assert watched.result.status == "PASS"
