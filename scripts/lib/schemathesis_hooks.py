"""Schemathesis hooks for scripts/fuzz (loaded through SCHEMATHESIS_HOOKS).

The log export (`GET /v1/tables/{id}/log`) answers NDJSON: one public event
per line; the document types the body as a string and names the lines'
schema in the media type's `x-itemSchema` (OpenAPI 3.2's `itemSchema`).
Schemathesis has no reader for NDJSON; this one checks every line against
that schema (with jsonschema-rs, schemathesis's own validator), seqs 1, 2,
3, ... in order, and hands the text to schemathesis, which checks it is the
string the document says.
"""

import json
from pathlib import Path

import jsonschema_rs
import schemathesis


def _line_validator():
    document = json.loads(Path("openapi/openapi.json").read_text())
    content = document["paths"]["/v1/tables/{id}/log"]["get"]["responses"]["200"]["content"]
    root = dict(document)
    root["$ref"] = content["application/x-ndjson"]["x-itemSchema"]["$ref"]
    return jsonschema_rs.Draft202012Validator(root)


LINE = _line_validator()


@schemathesis.deserializer("application/x-ndjson")
def ndjson(ctx, response):
    text = response.content.decode(response.encoding or "utf-8")
    lines = text.splitlines()
    for number, line in enumerate(lines, start=1):
        try:
            event = json.loads(line)
        except ValueError as exc:
            raise ValueError(f"line {number} is not JSON: {exc}") from exc
        error = next(iter(LINE.iter_errors(event)), None)
        if error is not None:
            raise ValueError(f"line {number} does not match the x-itemSchema: {error.message[:300]}")
        if event.get("seq") != number:
            raise ValueError(f"line {number} has seq {event.get('seq')!r}")
    if not lines:
        raise ValueError("no event in the log")
    return text
