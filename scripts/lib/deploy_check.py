"""What the Dockerfile and compose.yaml must hold, checked without building
the image (no registry is reachable where the tests run). Run by
scripts/deploy-check after hadolint, from the repository's root:

    deploy_check.py            check Dockerfile and compose.yaml
    deploy_check.py --self     also break each rule in a copy, and check
                               that the check notices (it must not pass
                               what it exists to refuse)

compose.yaml is validated against the Compose Specification's own schema
(scripts/lib/compose-spec.json, from compose-spec/compose-spec at
170098b, Apache-2.0), then for what this server needs of it.
"""

import copy
import json
import re
import sys
from pathlib import Path

import jsonschema
import yaml

ROOT = Path.cwd()
UID = "10001"


def instructions(dockerfile):
    """The Dockerfile's instructions, (KEYWORD, arguments), continuation
    lines joined, comments dropped; a stage starts at each FROM."""
    lines, current = [], ""
    for raw in dockerfile.splitlines():
        line = raw.strip()
        if line.startswith("#") or not (line or current):
            continue
        if line.endswith("\\"):
            current += line[:-1] + " "
            continue
        current += line
        keyword, _, rest = current.partition(" ")
        lines.append((keyword.upper(), rest.strip()))
        current = ""
    return lines


def stages(dockerfile):
    out = []
    for keyword, rest in instructions(dockerfile):
        if keyword == "FROM":
            out.append([])
        if out:
            out[-1].append((keyword, rest))
    return out


def ignored(path, dockerignore):
    patterns = [
        p.strip()
        for p in dockerignore.splitlines()
        if p.strip() and not p.startswith("#")
    ]
    first = path.split("/")[0]
    return any(re.fullmatch(p.replace("*", ".*"), first) for p in patterns)


def workspace_members(cargo_toml):
    block = re.search(r"members\s*=\s*\[([^\]]*)\]", cargo_toml)
    return re.findall(r'"([^"]+)"', block.group(1)) if block else []


def check_dockerfile(dockerfile, dockerignore, cargo_toml, exists):
    problems = []
    all_stages = stages(dockerfile)
    if len(all_stages) < 2:
        return ["the Dockerfile does not build in one stage and run in another"], None
    builder, runtime = all_stages[0], all_stages[-1]

    copied = set()
    for keyword, rest in builder:
        if keyword != "COPY" or "--from" in rest:
            continue
        sources = rest.split()[:-1]
        for source in sources:
            copied.add(source.rstrip("/"))
            if not exists(source):
                problems.append(f"COPY {source}: no such file in the repository")
            elif ignored(source, dockerignore):
                problems.append(f"COPY {source}: .dockerignore leaves it out of the context")
    for needed in ["Cargo.toml", "Cargo.lock", ".sqlx", "migrations"] + workspace_members(cargo_toml):
        if needed not in copied:
            problems.append(f"the build does not COPY {needed} (cargo needs it)")

    images = [rest.split()[0] for stage in all_stages for k, rest in stage if k == "FROM"]
    releases = {(re.findall(r"bookworm|bullseye|trixie", i) or [i])[0] for i in images}
    if len(releases) != 1:
        problems.append(f"the stages are not one Debian release (glibc must match): {images}")

    run = " ".join(rest for k, rest in runtime if k == "RUN")
    if not re.search(rf"groupadd\b[^&;]*--gid {UID}\b", run):
        problems.append(f"the runtime stage makes no group {UID}")
    if not re.search(rf"useradd\b[^&;]*--uid {UID}\b[^&;]*--gid {UID}\b", run):
        problems.append(f"the runtime stage makes no user {UID} in group {UID}")
    users = [rest for k, rest in runtime if k == "USER"]
    if users != [f"{UID}:{UID}"]:
        problems.append(f"the image runs as {users}, not USER {UID}:{UID} (numeric, not root)")

    copied_in = [rest.split()[-1] for k, rest in runtime if k == "COPY" and "--from" in rest]
    entry = [json.loads(rest) for k, rest in runtime if k == "ENTRYPOINT"]
    cmd = [json.loads(rest) for k, rest in runtime if k == "CMD"]
    if entry != [["/usr/local/bin/huit"]] or "/usr/local/bin/huit" not in copied_in:
        problems.append(f"the entry point is not the huit binary copied in: {entry}")
    if cmd != [["serve"]]:
        problems.append(f"the default command is not serve: {cmd}")

    health = [rest for k, rest in runtime if k == "HEALTHCHECK"]
    if len(health) != 1 or not re.search(r'CMD \["/usr/local/bin/huit", "health"\]', health[0]):
        problems.append(f"no HEALTHCHECK running huit health: {health}")

    bind = [re.search(r"BIND=\S*:(\d+)", rest) for k, rest in runtime if k == "ENV"]
    bind_ports = [m.group(1) for m in bind if m]
    exposed = [rest.split("/")[0] for k, rest in runtime if k == "EXPOSE"]
    if not bind_ports or exposed != bind_ports:
        problems.append(f"EXPOSE {exposed} is not the port of BIND {bind_ports}")
    return problems, (bind_ports or [None])[0]


def settings(env_example):
    """Every setting .env.example lists (set or commented out)."""
    return set(re.findall(r"^#?\s*([A-Z][A-Z0-9_]+)=", env_example, re.M))


def check_compose(compose_text, schema, env_example, exposed):
    problems = []
    compose = yaml.safe_load(compose_text)
    for error in jsonschema.Draft7Validator(schema).iter_errors(compose):
        where = "/".join(str(p) for p in error.absolute_path)
        problems.append(f"compose.yaml /{where}: {error.message}")
    services = compose.get("services", {})
    db, huit = services.get("db", {}), services.get("huit", {})

    if not str(db.get("image", "")).startswith("postgres:15"):
        problems.append(f"the database is not PostgreSQL 15: {db.get('image')}")
    if not db.get("healthcheck", {}).get("test"):
        problems.append("the database has no health check")
    volumes = compose.get("volumes") or {}
    data = [v for v in db.get("volumes") or [] if str(v).endswith(":/var/lib/postgresql/data")]
    if len(data) != 1 or data[0].split(":")[0] not in volumes:
        problems.append("the database's data is not on a named volume")

    if huit.get("build") not in (".", {"context": "."}):
        problems.append("huit is not built from this repository's Dockerfile")
    depends = huit.get("depends_on")
    db_dependency = depends.get("db") if isinstance(depends, dict) else None
    if (db_dependency or {}).get("condition") != "service_healthy":
        problems.append("huit does not wait for a healthy database (depends_on: condition: service_healthy)")
    env = huit.get("environment") or {}
    if not isinstance(env, dict):
        problems.append("huit's environment is not a map")
        env = {}
    if not re.match(r"postgres://[^@]+@db:5432/", str(env.get("DATABASE_URL", ""))):
        problems.append("huit's DATABASE_URL does not name the db service")
    bind = re.search(r":(\d+)$", str(env.get("BIND", "")))
    published = [str(p).rsplit(":", 1)[-1] for p in huit.get("ports") or []]
    if not bind or bind.group(1) != exposed or exposed not in published:
        problems.append(f"BIND {env.get('BIND')} is not the image's port {exposed}, published")
    if huit.get("read_only") is not True or huit.get("cap_drop") != ["ALL"]:
        problems.append("huit does not run read-only with every capability dropped")

    known = settings(env_example) | {"RUST_LOG"}
    named = set(env) | set(re.findall(r"^\s*#\s*([A-Z][A-Z0-9_]+):", compose_text, re.M))
    for name in sorted(named - known):
        problems.append(f"compose.yaml sets {name}, which is no setting of .env.example")
    return problems


def check(files):
    dockerfile_problems, exposed = check_dockerfile(
        files["Dockerfile"], files[".dockerignore"], files["Cargo.toml"], files["exists"]
    )
    return dockerfile_problems + check_compose(
        files["compose.yaml"], files["schema"], files[".env.example"], exposed
    )


def read():
    text = lambda name: (ROOT / name).read_text()
    return {
        "Dockerfile": text("Dockerfile"),
        ".dockerignore": text(".dockerignore"),
        "Cargo.toml": text("Cargo.toml"),
        "compose.yaml": text("compose.yaml"),
        ".env.example": text(".env.example"),
        "schema": json.loads(text("scripts/lib/compose-spec.json")),
        "exists": lambda p: (ROOT / p).exists(),
    }


# Each rule broken once: (what, file, text replaced, replacement).
BREAKS = [
    ("a COPY of a missing file", "Dockerfile", "COPY api ./api", "COPY apy ./api"),
    ("a workspace member not copied", "Dockerfile", "COPY bench ./bench\n", ""),
    ("root", "Dockerfile", "USER 10001:10001", "USER root"),
    ("a named user", "Dockerfile", "USER 10001:10001", "USER huit:huit"),
    ("no health check", "Dockerfile", 'CMD ["/usr/local/bin/huit", "health"]', 'CMD ["true"]'),
    ("another port exposed", "Dockerfile", "EXPOSE 8080", "EXPOSE 8081"),
    ("another default command", "Dockerfile", 'CMD ["serve"]', 'CMD ["health"]'),
    ("no wait for a healthy database", "compose.yaml", "condition: service_healthy", "condition: service_started"),
    ("an unknown setting", "compose.yaml", "HUIT_TRUST_PROXY:", "HUIT_TRUST_PROXIES:"),
    ("a field the specification does not have", "compose.yaml", "restart: unless-stopped\n\n  huit:", "restarts: unless-stopped\n\n  huit:"),
    ("the data on no volume", "compose.yaml", "      - pgdata:/var/lib/postgresql/data\n", ""),
    ("no database health check", "compose.yaml", 'test: ["CMD", "pg_isready"', 'disable: true\n      x: ["CMD", "pg_isready"'),
]


def self_check(files):
    missed = []
    for what, name, old, new in BREAKS:
        broken = dict(files)
        assert old in broken[name], f"the self-check's text for {what!r} is not in {name}"
        broken[name] = broken[name].replace(old, new, 1)
        if not check(broken):
            missed.append(what)
    return missed


def main():
    files = read()
    problems = check(files)
    for p in problems:
        print(f"deploy-check: {p}", file=sys.stderr)
    if "--self" in sys.argv[1:]:
        missed = self_check(copy.copy(files))
        for what in missed:
            print(f"deploy-check: the check passes {what}", file=sys.stderr)
        problems += missed
    if problems:
        sys.exit(1)
    print(f"deploy-check: Dockerfile and compose.yaml hold ({len(BREAKS)} breaks noticed)")


if __name__ == "__main__":
    main()
