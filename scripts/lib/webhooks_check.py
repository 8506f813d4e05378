"""Webhooks checked by the Standard Webhooks library itself (scripts/webhooks).

Usage: webhooks_check.py PORT BASE SECRET

Receives on 127.0.0.1:PORT (where the server under test sends its webhooks),
verifying every request with standardwebhooks' Webhook.verify; meanwhile
plays a short game at BASE (two players, a few moves, a resignation); then
waits until every item of both players' feeds arrived, verified, each
account's in the feed's order, with the item as the feed shows it.
"""

import json
import sys
import threading
import time
import urllib.request
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from standardwebhooks.webhooks import Webhook

PORT, BASE, SECRET = int(sys.argv[1]), sys.argv[2], sys.argv[3]
received: list[dict] = []
refused: list[str] = []
lock = threading.Lock()


class Receiver(BaseHTTPRequestHandler):
    def do_POST(self) -> None:
        body = self.rfile.read(int(self.headers["content-length"]))
        headers = {k.lower(): v for k, v in self.headers.items()}
        try:
            payload = Webhook(SECRET).verify(body, headers)
        except Exception as e:  # the library's verification error
            with lock:
                refused.append(f"{headers.get('webhook-id')}: {e}")
            self.send_response(400)
        else:
            with lock:
                received.append({"id": headers["webhook-id"], "payload": payload})
            self.send_response(204)
        self.end_headers()

    def log_message(self, *args: object) -> None:
        pass


def call(method: str, path: str, token: str | None = None, body: object = None) -> object:
    data = None if body is None else json.dumps(body).encode()
    req = urllib.request.Request(BASE + path, data=data, method=method)
    req.add_header("content-type", "application/json")
    if token:
        req.add_header("authorization", f"Bearer {token}")
    with urllib.request.urlopen(req, timeout=30) as res:
        text = res.read()
        return json.loads(text) if text else None


def player(name: str) -> str:
    call("POST", "/v1/accounts", body={"username": name, "password": "correct horse battery"})
    session = call("POST", "/v1/sessions", body={"username": name, "password": "correct horse battery"})
    return session["token"]


def main() -> None:
    server = ThreadingHTTPServer(("127.0.0.1", PORT), Receiver)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    tag = str(int(time.time() * 1000))[-8:]
    tokens = [player(f"hook_a{tag}"), player(f"hook_b{tag}")]
    table = call("POST", "/v1/tables", tokens[0],
                 {"ruleset": "classique", "seats": 2, "options": {"target": 100000}})
    tid = table["id"]
    call("POST", f"/v1/tables/{tid}/players", tokens[1])
    call("POST", f"/v1/tables/{tid}/start", tokens[0])
    for _ in range(6):
        seat = call("GET", f"/v1/tables/{tid}/view", tokens[0])["current_seat"]
        view = call("GET", f"/v1/tables/{tid}/view", tokens[seat])
        call("POST", f"/v1/tables/{tid}/moves", tokens[seat],
             {"move": view["legal_moves"][0], "expected_version": view["version"]})
    call("POST", f"/v1/tables/{tid}/resign", tokens[0])

    feeds = {}
    for token in tokens:
        me = call("GET", "/v1/me", token)
        feeds[me["id"]] = call("GET", "/v1/me/feed", token)["items"]
    wanted = {str(i["id"]) for items in feeds.values() for i in items}
    deadline = time.time() + 60
    while time.time() < deadline:
        with lock:
            if wanted <= {r["id"] for r in received}:
                break
        time.sleep(0.1)
    with lock:
        got, bad = list(received), list(refused)
    assert not bad, f"requests the library refused: {bad}"
    firsts: dict[str, list[dict]] = {}
    seen = set()
    for r in got:
        if r["id"] in seen:
            continue
        seen.add(r["id"])
        data = r["payload"]["data"]
        firsts.setdefault(data["account_id"], []).append(data)
    for account, items in feeds.items():
        expected = [dict(i, account_id=account) for i in items]
        assert firsts.get(account) == expected, f"{account}: {firsts.get(account)} != {expected}"
    print(f"scripts/webhooks: {len(got)} webhooks verified by standardwebhooks, "
          f"{len(wanted)} items, each account's in order")
    server.shutdown()


main()
