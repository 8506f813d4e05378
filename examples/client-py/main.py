"""Huit's Python example client: two accounts open a `moderne` table with
two bots and play it to the end, with the types openapi-python-client
generated from the API's document only (huit_client, see scripts/client-py).

    python main.py http://127.0.0.1:8080 [LOG_FILE]

Each person on turn posts the first of their legal moves, based on the
version seen; when nobody may move (a bot is on turn), alice long-polls her
view until the table moves. Then alice checks every hash of the table's log
with a stock RFC 8785 library (rfc8785, not the server's code); bob deletes
his account (the server erases at once: HUIT_ERASE_GRACE_SECS=0), and alice
checks the log again: the same hashes, each recomputed, and bob's name
nowhere. With LOG_FILE, it saves the log there and prints the table's id
first (scripts/client-py checks its deals with the README's check_deals.py).
Prints one line:
client-py ruleset=moderne moves=<n> rounds=<r> winners=[...] events=<e> verified=<v> after_erasure=<v>
"""

import hashlib
import json
import sys
import uuid
from typing import Any, TypeVar

import httpx
import rfc8785

from huit_client import AuthenticatedClient, Client
from huit_client.api.accounts import create_account
from huit_client.api.history import export_log, list_rounds
from huit_client.api.sessions import create_session
from huit_client.api.tables import create_table, get_events, get_view, join_table, post_move, start_table
from huit_client.models import (
    AccountDto,
    BotRequest,
    Credentials,
    EventPage,
    MoveAnswer,
    MoveRequest,
    NewAccount,
    NewTable,
    Problem,
    RoundsDto,
    SessionDto,
    TableOptions,
    TableStatus,
    TableSummary,
    TableView,
)

T = TypeVar("T")
PASSWORD = "correct horse battery"
MOST_MOVES = 3000


def expect(answer: object, kind: type[T], what: str) -> T:
    """The answer, when it is of the type expected; else the program fails
    saying what came instead (a Problem carries its code)."""
    if isinstance(answer, kind):
        return answer
    if isinstance(answer, Problem):
        sys.exit(f"client-py: {what}: {answer.status} {answer.code}: {answer.detail}")
    sys.exit(f"client-py: {what}: unexpected answer {answer!r}")


def player(base: str, name: str) -> AuthenticatedClient:
    """A new account, logged in."""
    anonymous = Client(base_url=base)
    expect(create_account.sync(client=anonymous, body=NewAccount(username=name, password=PASSWORD)), AccountDto, f"register {name}")
    session = expect(create_session.sync(client=anonymous, body=Credentials(username=name, password=PASSWORD)), SessionDto, f"log in {name}")
    return AuthenticatedClient(base_url=base, token=session.token)


def verified_log(client: AuthenticatedClient, table: uuid.UUID) -> list[dict[str, Any]]:
    """The table's log (NDJSON, which the generated client reads as text),
    every hash recomputed with rfc8785: the SHA-256 of the previous hash and
    the canonical JSON of {seq, type, v, at, data} (docs/API.md "The event
    log")."""
    text = expect(export_log.sync(table, client=client), str, "export the log")
    log = [json.loads(line) for line in text.splitlines()]
    prev = "0" * 64
    for e in log:
        hashed = {k: e[k] for k in ("seq", "type", "v", "at", "data")}
        digest = hashlib.sha256(prev.encode() + rfc8785.dumps(hashed)).hexdigest()
        if e["prev_hash"] != prev or e["hash"] != digest:
            sys.exit(f"client-py: the log does not verify at seq {e['seq']}")
        prev = e["hash"]
    return log


def main() -> None:
    base = sys.argv[1]
    suffix = uuid.uuid4().hex[:8]
    bob_name = f"py_bob_{suffix}"
    alice, bob = player(base, f"py_alice_{suffix}"), player(base, bob_name)
    opening = NewTable(
        ruleset="moderne",
        seats=4,
        bots=[BotRequest(level="basic"), BotRequest(level="random")],
        options=TableOptions(rounds=1),
    )
    table = expect(create_table.sync(client=alice, body=opening), TableSummary, "open a table")
    expect(join_table.sync(table.id, client=bob), TableSummary, "bob joins")
    expect(start_table.sync(table.id, client=alice), TableSummary, "start")

    moves = 0
    while True:
        views = [expect(get_view.sync(table.id, client=p), TableView, "view") for p in (alice, bob)]
        if views[0].status != TableStatus.PLAYING:
            break
        on_turn = [(p, v) for p, v in zip((alice, bob), views) if v.legal_moves and v.current_seat == v.my_seat]
        if not on_turn:
            # A bot's turn: wait for the table to move past alice's version.
            get_view.sync_detailed(table.id, client=alice, wait=5, if_none_match=f'"{views[0].version}"')
            continue
        client, view = on_turn[0]
        answer = post_move.sync(table.id, client=client, body=MoveRequest(move=view.legal_moves[0], expected_version=view.version))
        if isinstance(answer, Problem) and answer.code == "version_conflict":
            continue  # a bot moved first: read again
        expect(answer, MoveAnswer, f"move at version {view.version}")
        moves += 1
        if moves > MOST_MOVES:
            sys.exit("client-py: the game does not end")

    final = expect(get_view.sync(table.id, client=alice), TableView, "the last view")
    if final.status != TableStatus.FINISHED or final.result is None:
        sys.exit(f"client-py: the game ended as {final.status}")
    rounds = expect(list_rounds.sync(table.id, client=alice), RoundsDto, "rounds")
    events = expect(get_events.sync(table.id, client=bob, after=0, limit=500), EventPage, "bob's events")
    before = verified_log(alice, table.id)
    if len(sys.argv) > 2:
        with open(sys.argv[2], "w") as saved:
            saved.writelines(json.dumps(e) + "\n" for e in before)
        print(f"table {table.id}")

    # Bob deletes his account: erased at once, his log verifies still.
    gone = httpx.request(
        "DELETE", f"{base}/v1/me", headers={"Authorization": f"Bearer {bob.token}"}, json={"password": PASSWORD}
    )
    if gone.status_code != 202:
        sys.exit(f"client-py: bob's deletion: {gone.status_code} {gone.text}")
    after = verified_log(alice, table.id)
    if [e["hash"] for e in after] != [e["hash"] for e in before]:
        sys.exit("client-py: a hash changed with the erasure")
    summary = httpx.get(f"{base}/v1/tables/{table.id}", headers={"Authorization": f"Bearer {alice.token}"}).text
    if bob_name in json.dumps(after) or bob_name in summary:
        sys.exit("client-py: bob's name is still shown")
    print(
        f"client-py ruleset=moderne moves={moves} rounds={len(rounds.rounds)} "
        f"winners={final.result.winners} events={len(events.events)} "
        f"verified={len(before)} after_erasure={len(after)}"
    )


if __name__ == "__main__":
    main()
