"""What each generated client must hold, read from its sources (Kotlin,
Dart and Swift cannot be compiled here: no toolchain, no Maven or pub).
Run by scripts/codegen:

    codegen_check.py OUT DOCUMENT WARNINGS

OUT holds one folder per generator (kotlin, dart-dio, swift6,
typescript-fetch) and its log (<generator>.log). For every union the
document tags (a `oneOf` with a `discriminator` and its `mapping`: `Move`,
`StoredEvent`), each client must choose the member by the tag, in its own
language's way; every string enum must have the generators' fallback
case; no generator may print a warning WARNINGS does not list.
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


def read(path):
    try:
        return path.read_text()
    except FileNotFoundError:
        return ""


def kotlin(union, members, problems):
    src = read(OUT / "kotlin/src/main/kotlin/org/openapitools/client/models" / f"{union}.kt")
    if f"sealed interface {union}" not in src:
        problems.append(f"kotlin: {union} is no sealed interface")
    for tag, member in members.items():
        if not re.search(rf"\(val value: {member}\) : {union}\b", src):
            problems.append(f"kotlin: {member} is no variant of {union}")
        if f'"{tag}" ->' not in src:
            problems.append(f"kotlin: {union}'s serializer does not choose {member} by {tag!r}")


def dart(union, members, problems):
    src = read(OUT / "dart-dio/lib/src/model" / f"{snake(union)}.dart")
    for tag, member in members.items():
        if f"r'{tag}': {member}" not in src:
            problems.append(f"dart: {union}'s discriminatorMapping lacks {tag!r}")
        if not re.search(rf"case r'{tag}':\s*oneOfResult = serializers\.deserialize\(\s*oneOfDataSrc,\s*specifiedType: FullType\({member}\)", src):
            problems.append(f"dart: {union} does not decode {member} on {tag!r}")


def swift(union, members, problems):
    models = next(OUT.glob("swift6/**/Models"), OUT)
    src = read(models / f"{union}.swift")
    if f"public enum {union}" not in src:
        problems.append(f"swift: {union} is no enum")
    for tag, member in members.items():
        if f"case type{member}({member})" not in src:
            problems.append(f"swift: {union} has no case for {member}")
        if f'case "{tag}":' not in src:
            problems.append(f"swift: {union} does not decode on {tag!r}")
    if "case unknownDefaultOpenApi" not in src:
        problems.append(f"swift: {union} has no case for a type it does not know")


def typescript(union, members, problems):
    src = read(OUT / "typescript-fetch/models" / f"{union}.ts")
    for tag, member in members.items():
        if f"{{ type: '{tag}' }} & {member}" not in src:
            problems.append(f"typescript: {union} lacks the member {{type: {tag!r}}} & {member}")
        if f"case '{tag}':" not in src:
            problems.append(f"typescript: {union} does not decode on {tag!r}")


def enum_fallbacks(enum, problems):
    where = {
        "kotlin": (OUT / "kotlin/src/main/kotlin/org/openapitools/client/models" / f"{enum}.kt", "unknown_default_open_api"),
        "dart": (OUT / "dart-dio/lib/src/model" / f"{snake(enum)}.dart", "fallback: true"),
        "swift": (next(OUT.glob("swift6/**/Models"), OUT) / f"{enum}.swift", "case unknownDefaultOpenApi"),
        "typescript": (OUT / "typescript-fetch/models" / f"{enum}.ts", "UnknownDefaultOpenApi"),
    }
    for language, (path, fallback) in where.items():
        if fallback not in read(path):
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


def main():
    document = json.loads(DOCUMENT.read_text())
    unions = tagged_unions(document)
    problems = []
    for needed in ["Move", "StoredEvent"]:
        if needed not in unions:
            problems.append(f"the document does not tag {needed} (discriminator and mapping)")
    for union, members in unions.items():
        for check in (kotlin, dart, swift, typescript):
            check(union, members, problems)
    enums = string_enums(document)
    for enum in enums:
        enum_fallbacks(enum, problems)
    warnings(problems)
    for p in problems:
        print(f"codegen: {p}", file=sys.stderr)
    if problems:
        sys.exit(1)
    print(
        f"codegen: {len(unions)} tagged unions chosen by their tag and {len(enums)} enums "
        f"with a fallback, in {', '.join(GENERATORS)}"
    )


if __name__ == "__main__":
    main()
