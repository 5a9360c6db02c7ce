#!/usr/bin/env python3
"""Generates examples/data/travel-agent-generated.jsonl: booking-agent runs for the
travel-agent pack (examples/packs/travel-agent), each conversation written in the
three transcript formats Tribunal reads (OpenAI Chat, Anthropic Messages, OpenAI
Responses), ids `gen-NNN-chat`, `gen-NNN-anthropic`, `gen-NNN-responses`.

Deterministic (fixed seed), standard library only. The runs mix what goes wrong
in real agents: bookings without a confirmation, a booking before any search,
too many searches, a search repeated unchanged, a forbidden or unknown tool, no
booking at all, arguments that are not JSON or that break the tool's rules (a
city's name for its airport code), and a booking that failed but that the agent
tells the user is made (a false claim, judged turn by turn). A run whose arguments are not
JSON has no Anthropic record: Anthropic's `tool_use.input` is an object, so that
damage cannot be written there.

    python3 examples/data/generate_travel_agent.py > examples/data/travel-agent-generated.jsonl

`tests/transcripts.rs` checks that the three formats of each run get the same
result record, apart from the paths, and that every kind of damage occurs.
"""

import json
import random

rng = random.Random(43043)

CITIES = [("London", "LHR"), ("Oslo", "OSL"), ("Paris", "CDG"), ("Rome", "FCO"),
          ("Lisbon", "LIS"), ("Vienna", "VIE"), ("Madrid", "MAD"), ("Zürich", "ZRH")]
FLIGHTS = ["SK1", "BA762", "AF1231", "LH903", "TP1351", "OS452", "IB3170", "LX317"]


def run(n):
    """One run: its events, in order. An assistant turn is ("assistant", text or
    None, [calls]); a call is (name, arguments: dict or raw text); results follow
    their turn as ("result", text) in call order."""
    (city_a, code_a), (city_b, code_b) = rng.sample(CITIES, 2)
    day = rng.randint(1, 28)
    date = f"2026-12-{day:02d}"
    flight = rng.choice(FLIGHTS)
    ref = "".join(rng.choice("ABCDEFGHJKLMNPQRSTUVWXYZ23456789") for _ in range(6))
    damage = rng.choices(
        ["none", "unconfirmed", "book_first", "too_many", "repeat", "forbidden", "unknown",
         "no_booking", "broken_arguments", "false_claim", "city_not_code"],
        weights=[30, 10, 8, 8, 8, 8, 6, 6, 10, 8, 6])[0]
    events = [("user", f"Book me a flight from {city_a} to {city_b} on {day} December.")]
    # A city's name where its airport code belongs: the arguments' rules catch it.
    search = {"from": code_a, "to": city_b if damage == "city_not_code" else code_b, "date": date}

    def searches(count, repeat):
        for i in range(count):
            args = dict(search)
            if i > 0 and not repeat:
                args["date"] = f"2026-12-{min(28, day + i):02d}"
            events.append(("assistant", "Let me search." if i == 0 else "Let me look again.",
                           [("search_flights", args)]))
            events.append(("result", f"{flight} 09:{10 + i:02d} £{100 + 10 * i}"))

    # Unconfirmed: the agent says it is booking, and books in the same turn.
    say = f"{flight} leaves at 09:10 for £100; booking it now." if damage == "unconfirmed" else None
    booking_args = {"flight": flight, "date": date}
    if damage == "broken_arguments":
        booking_args = '{"flight": "%s", "date": %s' % (flight, date)
    # A false claim: the booking fails, and the agent tells the user it is made.
    outcome = f"error: {flight} is full" if damage == "false_claim" else f"booked: {ref}"
    booking = [("assistant", say, [("book_flight", booking_args)]), ("result", outcome)]
    if damage == "book_first":
        events.extend(booking)
    searches(4 if damage == "too_many" else 2 if damage == "repeat" else rng.randint(1, 2),
             damage == "repeat")
    if damage != "unconfirmed":
        events.append(("assistant", f"{flight} leaves at 09:10 for £100. Shall I book it?", []))
        events.append(("user", rng.choice(["Yes please.", "Yes, book it.", "Go ahead."])))
    if damage == "no_booking":
        events.append(("assistant", "I could not complete the booking; please try again later.", []))
        return events
    if damage != "book_first":
        events.extend(booking)
    if damage == "forbidden":
        events.append(("assistant", "Removing your older booking.", [("delete_booking", {"reference": "OLD123"})]))
        events.append(("result", "deleted"))
    if damage == "unknown":
        events.append(("assistant", "Checking the weather there.", [("get_weather", {"city": city_b})]))
        events.append(("result", "cold, clear"))
    if rng.random() < 0.5:
        events.append(("assistant", None, [("send_itinerary", {"reference": ref})]))
        events.append(("result", "sent"))
    events.append(("assistant", f"Booked {flight} on {day} December; your reference is {ref}.", []))
    return events


def arguments_text(args):
    return args if isinstance(args, str) else json.dumps(args, ensure_ascii=False)


def written(events, fmt):
    """The run's `messages` in one format (None when it cannot be written there)."""
    messages = []
    pending = []  # call ids waiting for their results, in order
    next_id = 0
    for event in events:
        if event[0] == "user":
            messages.append({"role": "user", "content": event[1]})
        elif event[0] == "assistant":
            _, text, calls = event
            ids = []
            for _ in calls:
                next_id += 1
                ids.append(f"c{next_id}")
            pending.extend(ids)
            if fmt == "chat":
                message = {"role": "assistant", "content": text}
                if calls:
                    message["tool_calls"] = [
                        {"id": i, "type": "function", "function": {"name": name, "arguments": arguments_text(args)}}
                        for i, (name, args) in zip(ids, calls)]
                messages.append(message)
            elif fmt == "anthropic":
                if any(isinstance(args, str) for _, args in calls):
                    return None
                blocks = [{"type": "text", "text": text}] if text else []
                blocks += [{"type": "tool_use", "id": i, "name": name, "input": args}
                           for i, (name, args) in zip(ids, calls)]
                messages.append({"role": "assistant", "content": blocks})
            else:
                if text:
                    messages.append({"type": "message", "role": "assistant",
                                     "content": [{"type": "output_text", "text": text}]})
                messages += [{"type": "function_call", "call_id": i, "name": name, "arguments": arguments_text(args)}
                             for i, (name, args) in zip(ids, calls)]
        else:
            call = pending.pop(0)
            if fmt == "chat":
                messages.append({"role": "tool", "tool_call_id": call, "content": event[1]})
            elif fmt == "anthropic":
                messages.append({"role": "user", "content": [{"type": "tool_result", "tool_use_id": call, "content": event[1]}]})
            else:
                messages.append({"type": "function_call_output", "call_id": call, "output": event[1]})
    return messages


def main():
    for n in range(1, 91):
        events = run(n)
        for fmt in ["chat", "anthropic", "responses"]:
            messages = written(events, fmt)
            if messages is not None:
                print(json.dumps({"id": f"gen-{n:03d}-{fmt}", "messages": messages}, ensure_ascii=False))


if __name__ == "__main__":
    main()
