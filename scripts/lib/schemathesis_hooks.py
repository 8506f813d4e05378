"""Schemathesis hooks for scripts/fuzz (loaded through SCHEMATHESIS_HOOKS).

The log export (`GET /v1/tables/{id}/log`) answers NDJSON: one public event
per line, and its documented schema is that of one event. Schemathesis has no
reader for NDJSON; this one reads every line (each must be a JSON object,
seqs 1, 2, 3, ... in order, every line with the keys and JSON types of the
first) and hands the first event to schemathesis, which checks it against the
schema. So the first line is checked in full and every other line in shape.
"""

import json

import schemathesis


def _shape(event):
    return {key: type(value).__name__ for key, value in event.items()}


@schemathesis.deserializer("application/x-ndjson")
def ndjson(ctx, response):
    text = response.content.decode(response.encoding or "utf-8")
    events = []
    for number, line in enumerate(text.splitlines(), start=1):
        try:
            event = json.loads(line)
        except ValueError as exc:
            raise ValueError(f"line {number} is not JSON: {exc}") from exc
        if not isinstance(event, dict):
            raise ValueError(f"line {number} is not a JSON object")
        if event.get("seq") != number:
            raise ValueError(f"line {number} has seq {event.get('seq')!r}")
        if events and _shape(event) != _shape(events[0]):
            raise ValueError(f"line {number} is shaped {_shape(event)}, line 1 {_shape(events[0])}")
        events.append(event)
    if not events:
        raise ValueError("no event in the log")
    return events[0]
