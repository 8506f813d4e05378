"""What each generated client must hold, read from its sources (Kotlin,
Dart and Swift cannot be compiled here: no toolchain, no Maven or pub).
Run by scripts/codegen:

    codegen_check.py OUT DOCUMENT WARNINGS

OUT holds one folder per generator (kotlin, dart-dio, swift6,
typescript-fetch) and its log (<generator>.log). Every union of the
document must come out as one in each language:
- a union with a `discriminator` and its `mapping` (`Move`, `StoredEvent`,
  `Pending`, `Correction`) chosen by its tag;
- a union without one (the rules' knobs, tagged outside by their one key or
  a word, and an event's data, whole or a part) a type whose decoder tries
  each member, which the document makes exact: every member requires a key
  no other member requires, but for an event's whole data, which a part
  may hold every required key of and tells itself apart from by `part`:
  the languages that judge by the keys present (Swift, TypeScript) must
  try the part first;
every string enum must have the generators' fallback case; `GET …/log` must
be read as text, its lines' schema named (`x-itemSchema`); no generator may
print a warning WARNINGS does not list. Then each of these is broken once in
memory, and the check must notice.
"""

import json
import re
import sys
from pathlib import Path

OUT, DOCUMENT, WARNINGS = (Path(a) for a in sys.argv[1:4])
GENERATORS = ["kotlin", "dart-dio", "swift6", "typescript-fetch"]


def snake(name):
    return re.sub(r"(?<!^)(?=[A-Z])", "_", name).lower()


def member_name(schema):
    return schema["$ref"].rsplit("/", 1)[-1] if "$ref" in schema else None


def tagged_unions(document):
    """Each union with a discriminator: {name: (property, {tag: member})}."""
    out = {}
    for name, schema in document["components"]["schemas"].items():
        discriminator = schema.get("discriminator", {})
        if "oneOf" in schema and discriminator.get("mapping"):
            members = {tag: ref.rsplit("/", 1)[-1] for tag, ref in discriminator["mapping"].items()}
            out[name] = (discriminator["propertyName"], members)
    return out


def untagged_unions(document):
    """Each union without a discriminator, named as the generators name it
    (an event's inline data `{Event}Data`): {name: [member schemas]}.
    A nullable value (`oneOf` of `null` and one schema) is not a union."""
    out = {}
    for name, schema in document["components"]["schemas"].items():
        if "oneOf" in schema and "discriminator" not in schema:
            out[name] = schema["oneOf"]
        data = schema.get("properties", {}).get("data", {})
        if "oneOf" in data:
            out[f"{name}Data"] = data["oneOf"]
    return out


def schema_of(document, member):
    name = member_name(member)
    return document["components"]["schemas"][name] if name else member


def is_part(name):
    return name is not None and name.endswith("Seen")


def presence_problems(document, unions):
    """Every member of an untagged union requires a key no other member
    requires (a whole's data excepted, see above); at most one is a word."""
    problems = []
    for union, members in unions.items():
        words = [m for m in members if m.get("type") == "string"]
        if len(words) > 1 or any("enum" in w for w in words):
            problems.append(f"{union}: its words must be one string member with a pattern, not an enum")
        objects = [m for m in members if m.get("type") != "string"]
        for member in objects:
            name = member_name(member) or "an inline member"
            own = set(schema_of(document, member).get("required", []))
            others = [
                set(schema_of(document, o).get("required", []))
                for o in objects
                if o is not member and not is_part(member_name(o))
            ]
            if others and not any(own - other for other in others):
                problems.append(f"{union}: {name} requires no key of its own")
    return problems


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


# Where each language's model sources and operations are, under OUT.
SOURCES = {
    "kotlin": ("kotlin/src/main/kotlin/org/openapitools/client/models", "kotlin/src/main/kotlin/org/openapitools/client/apis"),
    "dart": ("dart-dio/lib/src/model", "dart-dio/lib/src/api"),
    "swift": ("swift6/**/Models", "swift6/**/APIs"),
    "typescript": ("typescript-fetch/models", "typescript-fetch/apis"),
}


def models(language):
    return next(OUT.glob(SOURCES[language][0]), OUT / "missing")


def apis(language):
    return next(OUT.glob(SOURCES[language][1]), OUT / "missing")


FILES = {
    "kotlin": lambda name: f"{name}.kt",
    "dart": lambda name: f"{snake(name)}.dart",
    "swift": lambda name: f"{name}.swift",
    "typescript": lambda name: f"{name}.ts",
}

# What each language's source of a tagged union must say: patterns for the
# union as a whole, and for each member (regular expressions, with
# {union}, {property}, {tag} and {member} filled in).
TAGGED = {
    "kotlin": (
        [r"sealed interface {union}\b"],
        [r"\(val value: {member}\) : {union}\b", r'"{tag}" ->'],
    ),
    "dart": (
        [],
        [
            r"r'{tag}': {member}\b",
            r"case r'{tag}':\s*oneOfResult = serializers\.deserialize\(\s*oneOfDataSrc,"
            r"\s*specifiedType: FullType\({member}\)",
        ],
    ),
    "swift": (
        [r"public enum {union}\b", r"case unknownDefaultOpenApi\b"],
        [r"case type{member}\({member}\)", r'case "{tag}":'],
    ),
    "typescript": (
        [],
        [r"\{{ {property}: '{tag}' \}} & {member}\b", r"case '{tag}':"],
    ),
}

# What each language's source of an untagged union must say: patterns for
# the union, for each object member, and for its word member.
UNTAGGED = {
    "kotlin": (
        [r"sealed interface {union}\b"],
        [
            r"value class {member}Value\(val value: {member}\) : {union}\b",
            r"if \(jsonElement !is JsonPrimitive\) \{{\s*try \{{\s*"
            r"val instance = jsonDecoder\.json\.decodeFromJsonElement<{member}>",
        ],
        [
            r"value class StringValue\(val value: kotlin\.String\) : {union}\b",
            r"if \(jsonElement is JsonPrimitive && jsonElement\.isString\)",
        ],
    ),
    "dart": (
        [r"FullType\(OneOf, \["],
        [r"FullType\(OneOf, \[[^\]]*FullType\({member}\)"],
        [r"FullType\(OneOf, \[[^\]]*FullType\(String\)"],
    ),
    "swift": (
        [r"public enum {union}\b", r"case unknownDefaultOpenApi\b"],
        [r"case type{member}\({member}\)", r"try\? container\.decode\({member}\.self\)"],
        [r"case typeString\(String\)", r"try\? container\.decode\(String\.self\)"],
    ),
    "typescript": (
        [r"export type {union} = "],
        [r"if \(instanceOf{member}\(json\)\) \{{\s*return {member}FromJSONTyped"],
        [r"if \(typeof json !== 'object'\) \{{\s*return json;"],
    ),
}

# The languages whose decoder judges a member by the keys present, which
# must try a part before its whole: the part's decoding before the whole's.
PART_FIRST = {
    "swift": r"container\.decode\({part}\.self\)[\s\S]*container\.decode\({whole}\.self\)",
    "typescript": r"instanceOf{part}\(json\)[\s\S]*instanceOf{whole}\(json\)",
}


def wanted(patterns, **names):
    escaped = {k: re.escape(v) if k == "tag" else v for k, v in names.items()}
    return [p.format(**escaped) for p in patterns]


def missing(language, union, patterns, problems):
    src = read(models(language) / FILES[language](union))
    for pattern in patterns:
        if not re.search(pattern, src):
            problems.append(f"{language}: {union} does not say /{pattern}/")


def tagged_checks(union, property, members, problems):
    """Each language chooses the member of `union` by its tag."""
    for language, (whole, each) in TAGGED.items():
        patterns = wanted(whole, union=union)
        for tag, member in members.items():
            patterns += wanted(each, union=union, property=property, tag=tag, member=member)
        missing(language, union, patterns, problems)


def untagged_checks(union, members, problems):
    """Each language's `union` holds every member and tries each."""
    names = [member_name(m) for m in members if member_name(m)]
    has_word = any(m.get("type") == "string" for m in members)
    for language, (whole, each, word) in UNTAGGED.items():
        patterns = wanted(whole, union=union)
        for member in names:
            patterns += wanted(each, union=union, member=member)
        if has_word:
            patterns += wanted(word, union=union)
        missing(language, union, patterns, problems)
    parts = [n for n in names if is_part(n)]
    for part in parts:
        whole = part[: -len("Seen")] + "Whole"
        for language, pattern in PART_FIRST.items():
            missing(language, union, [pattern.format(part=part, whole=whole)], problems)


# The fallback case each language's enum must have.
FALLBACKS = {
    "kotlin": "unknown_default_open_api",
    "dart": "fallback: true",
    "swift": "case unknownDefaultOpenApi",
    "typescript": "UnknownDefaultOpenApi",
}


def enum_fallbacks(enum, problems):
    for language, fallback in FALLBACKS.items():
        if fallback not in read(models(language) / FILES[language](enum)):
            problems.append(f"{language}: the enum {enum} has no fallback for a value it does not know")


# How each language's `GET …/log` must read its answer: as text.
LOG_AS_TEXT = {
    "kotlin": ("HistoryApi.kt", r"fun exportLog\(.*\): Call<kotlin\.String>"),
    "dart": ("history_api.dart", r"Future<Response<String>> exportLog\("),
    "swift": ("HistoryAPI.swift", r"func exportLog\([^)]*\) async throws\(ErrorResponse\) -> String "),
    "typescript": ("HistoryApi.ts", r"async exportLog\([^)]*\): Promise<string>"),
}


def log_checks(document, problems):
    answer = document["paths"]["/v1/tables/{id}/log"]["get"]["responses"]["200"]["content"]
    for media_type, content in answer.items():
        if content.get("schema", {}).get("type") != "string":
            problems.append(f"GET …/log: {media_type} is not typed as text")
        if content.get("x-itemSchema", {}).get("$ref") != "#/components/schemas/StoredEvent":
            problems.append(f"GET …/log: {media_type} names no StoredEvent as its x-itemSchema")
    for language, (file, pattern) in LOG_AS_TEXT.items():
        if not re.search(pattern, read(apis(language) / file)):
            problems.append(f"{language}: GET …/log is not read as text (/{pattern}/)")


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
    tagged = tagged_unions(document)
    untagged = untagged_unions(document)
    problems = []
    for needed in ["Move", "StoredEvent", "Pending", "Correction"]:
        if needed not in tagged:
            problems.append(f"the document does not tag {needed} (discriminator and mapping)")
    for union, (property, members) in tagged.items():
        tagged_checks(union, property, members, problems)
    problems += presence_problems(document, untagged)
    for union, members in untagged.items():
        untagged_checks(union, members, problems)
    enums = string_enums(document)
    for enum in enums:
        enum_fallbacks(enum, problems)
    log_checks(document, problems)
    warnings(problems)
    return problems, (len(tagged), len(untagged), len(enums))


# Each rule broken once in memory (a language's model or operation file, a
# text in it, its replacement): the check must notice every one.
BREAKS = [
    ("kotlin", "Move.kt", '"play" ->', '"plaay" ->'),
    ("kotlin", "ProblemCode.kt", "unknown_default_open_api", "unknown"),
    ("kotlin", "Effect.kt", "jsonElement is JsonPrimitive && jsonElement.isString", "jsonElement !is JsonPrimitive"),
    ("dart", "move.dart", "case r'draw':", "case r'drw':"),
    ("dart", "suit.dart", "fallback: true", "fallback: false"),
    ("dart", "deal.dart", "FullType(ByPlayersDeal)", "FullType(OneOf1)"),
    ("swift", "StoredEvent.swift", "case unknownDefaultOpenApi", "case unknown"),
    ("swift", "Move.swift", "case typePlayMove(PlayMove)", "case play(PlayMove)"),
    ("swift", "Pending.swift", 'case "drawn":', 'case "drwn":'),
    ("typescript", "Move.ts", "{ type: 'draw' } & DrawMove", "DrawMove"),
    ("typescript", "StoredEvent.ts", "case 'round_started':", "case 'round':"),
    ("typescript", "BotMovedEventData.ts", "instanceOfBotMovedSeen(json)", "instanceOfBotMovedSeenX(json)"),
    ("api:typescript", "HistoryApi.ts", "Promise<string>", "Promise<StoredEvent>"),
]


def self_check(document):
    missed = []
    for where, file, old, new in BREAKS:
        folder = apis(where[4:]) if where.startswith("api:") else models(where)
        path = folder / file
        text = read(path)
        assert old in text, f"the self-check's {old!r} is not in {path}"
        BROKEN[path] = text.replace(old, new)
        if not check(document)[0]:
            missed.append(f"{where} {file}: {old!r}")
        del BROKEN[path]
    return missed


def main():
    document = json.loads(DOCUMENT.read_text())
    problems, (tagged, untagged, enums) = check(document)
    problems += [f"the check passes a break: {m}" for m in self_check(document)]
    for p in problems:
        print(f"codegen: {p}", file=sys.stderr)
    if problems:
        sys.exit(1)
    print(
        f"codegen: {tagged} tagged unions chosen by their tag, {untagged} untagged unions "
        f"whose members are told apart, {enums} enums with a fallback and GET …/log as "
        f"text, in {', '.join(GENERATORS)} ({len(BREAKS)} breaks noticed)"
    )


if __name__ == "__main__":
    main()
