"""What each generated client must hold, read from its sources (Kotlin,
Dart and Swift cannot be compiled here: no toolchain, no Maven or pub).
Run by scripts/codegen:

    codegen_check.py OUT DOCUMENT WARNINGS

OUT holds one folder per generator (kotlin, dart-dio, swift6,
typescript-fetch) and its log (<generator>.log). For every union the
document tags (a `oneOf` with a `discriminator` and its `mapping`: `Move`,
`StoredEvent`), each client must choose the member by the tag, in its own
language's way; every string enum must have the generators' fallback
case; no generator may print a warning WARNINGS does not list. Then each
of these is broken once in memory, and the check must notice.
"""

import json
import re
import sys
from pathlib import Path

OUT, DOCUMENT, WARNINGS = (Path(a) for a in sys.argv[1:4])
GENERATORS = ["kotlin", "dart-dio", "swift6", "typescript-fetch"]


def snake(name):
    return re.sub(r"(?<!^)(?=[A-Z])", "_", name).lower()


def tagged_unions(document):
    """Each union with a discriminator: {name: {tag: member}}."""
    out = {}
    for name, schema in document["components"]["schemas"].items():
        mapping = schema.get("discriminator", {}).get("mapping")
        if "oneOf" in schema and mapping:
            out[name] = {tag: ref.rsplit("/", 1)[-1] for tag, ref in mapping.items()}
    return out


def string_enums(document):
    return [
        name
        for name, schema in document["components"]["schemas"].items()
        if schema.get("type") == "string" and "enum" in schema
    ]


# Sources replaced in memory by the self-check: {path: text}.
BROKEN = {}


def read(path):
    if path in BROKEN:
        return BROKEN[path]
    try:
        return path.read_text()
    except FileNotFoundError:
        return ""


def models(generator):
    """The folder of a generator's model sources."""
    return {
        "kotlin": OUT / "kotlin/src/main/kotlin/org/openapitools/client/models",
        "dart": OUT / "dart-dio/lib/src/model",
        "swift": next(OUT.glob("swift6/**/Models"), OUT / "swift6"),
        "typescript": OUT / "typescript-fetch/models",
    }[generator]


# What each language's source of a tagged union must say: its file, the
# patterns for the union as a whole, and those for each member (regular
# expressions, with {union}, {tag} and {member} filled in).
UNIONS = {
    "kotlin": (
        lambda union: f"{union}.kt",
        [r"sealed interface {union}\b"],
        [r"\(val value: {member}\) : {union}\b", r'"{tag}" ->'],
    ),
    "dart": (
        lambda union: f"{snake(union)}.dart",
        [],
        [
            r"r'{tag}': {member}\b",
            r"case r'{tag}':\s*oneOfResult = serializers\.deserialize\(\s*oneOfDataSrc,"
            r"\s*specifiedType: FullType\({member}\)",
        ],
    ),
    "swift": (
        lambda union: f"{union}.swift",
        [r"public enum {union}\b", r"case unknownDefaultOpenApi\b"],
        [r"case type{member}\({member}\)", r'case "{tag}":'],
    ),
    "typescript": (
        lambda union: f"{union}.ts",
        [],
        [r"\{{ type: '{tag}' \}} & {member}\b", r"case '{tag}':"],
    ),
}


def union_checks(union, members, problems):
    """Each language chooses the member of `union` by its tag."""
    for language, (file, whole, each) in UNIONS.items():
        src = read(models(language) / file(union))
        wanted = [p.format(union=union, tag="", member="") for p in whole] + [
            p.format(union=union, tag=re.escape(tag), member=member)
            for tag, member in members.items()
            for p in each
        ]
        for pattern in wanted:
            if not re.search(pattern, src):
                problems.append(f"{language}: {union} does not say /{pattern}/")


# The fallback case each language's enum must have.
FALLBACKS = {
    "kotlin": (lambda enum: f"{enum}.kt", "unknown_default_open_api"),
    "dart": (lambda enum: f"{snake(enum)}.dart", "fallback: true"),
    "swift": (lambda enum: f"{enum}.swift", "case unknownDefaultOpenApi"),
    "typescript": (lambda enum: f"{enum}.ts", "UnknownDefaultOpenApi"),
}


def enum_fallbacks(enum, problems):
    for language, (file, fallback) in FALLBACKS.items():
        if fallback not in read(models(language) / file(enum)):
            problems.append(f"{language}: the enum {enum} has no fallback for a value it does not know")


def warnings(problems):
    known = {
        line.strip()
        for line in WARNINGS.read_text().splitlines()
        if line.strip() and not line.startswith("#")
    }
    for generator in GENERATORS:
        for line in read(OUT / f"{generator}.log").splitlines():
            if "WARN " not in line:
                continue
            said = line.split("WARN ", 1)[1].strip()
            if said not in known:
                problems.append(f"{generator} warns: {said}")


def check(document):
    unions = tagged_unions(document)
    problems = []
    for needed in ["Move", "StoredEvent"]:
        if needed not in unions:
            problems.append(f"the document does not tag {needed} (discriminator and mapping)")
    for union, members in unions.items():
        union_checks(union, members, problems)
    enums = string_enums(document)
    for enum in enums:
        enum_fallbacks(enum, problems)
    warnings(problems)
    return problems, len(unions), len(enums)


# Each rule broken once in memory (a language's model file, a text in it,
# its replacement): the check must notice every one.
BREAKS = [
    ("kotlin", "Move.kt", '"play" ->', '"plaay" ->'),
    ("kotlin", "ProblemCode.kt", "unknown_default_open_api", "unknown"),
    ("dart", "move.dart", "case r'draw':", "case r'drw':"),
    ("dart", "suit.dart", "fallback: true", "fallback: false"),
    ("swift", "StoredEvent.swift", "case unknownDefaultOpenApi", "case unknown"),
    ("swift", "Move.swift", "case typePlayMove(PlayMove)", "case play(PlayMove)"),
    ("typescript", "Move.ts", "{ type: 'draw' } & DrawMove", "DrawMove"),
    ("typescript", "StoredEvent.ts", "case 'round_started':", "case 'round':"),
]


def self_check(document):
    missed = []
    for language, file, old, new in BREAKS:
        path = models(language) / file
        text = read(path)
        assert old in text, f"the self-check's {old!r} is not in {path}"
        BROKEN[path] = text.replace(old, new)
        if not check(document)[0]:
            missed.append(f"{language} {file}: {old!r}")
        del BROKEN[path]
    return missed


def main():
    document = json.loads(DOCUMENT.read_text())
    problems, unions, enums = check(document)
    problems += [f"the check passes a break: {m}" for m in self_check(document)]
    for p in problems:
        print(f"codegen: {p}", file=sys.stderr)
    if problems:
        sys.exit(1)
    print(
        f"codegen: {unions} tagged unions chosen by their tag and {enums} enums with a "
        f"fallback, in {', '.join(GENERATORS)} ({len(BREAKS)} breaks noticed)"
    )


if __name__ == "__main__":
    main()
