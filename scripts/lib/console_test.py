"""The admin console in a real browser (headless Chromium through WebDriver).

Run by scripts/console against a `huit serve` it started: arranges, through
the API, a game between a person and a bot with a dispute about its round,
and a second one whose log is then altered in the database; then, in the
browser, logs in as the admin, opens the disputed table from the queue,
checks the audit verdict shown, steps through the round with the arrow keys
(the hands drawn at each step are those of GET .../replay?step=K), opens the
altered table and checks that its first bad seq is shown, and opens the
players' replay page; lists the webhook deliveries (failed ones first, as
nothing listened) and sends one again from the page once something
listens; previews and applies a correction of a rated game's result from
its dispute, then suspends and reinstates a player from her account's
page; and on the page where a person deletes their account, asks for
a deletion and sees a log-in cancel it. Screenshots (a desktop and a phone width) go to the
folder given.

Usage: console_test.py BASE DATABASE_URL ADMIN_PASSWORD SCREENSHOTS
"""

import http.server
import json
import os
import threading
import subprocess
import sys
import time
import urllib.error
import urllib.request

from selenium import webdriver
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.common.by import By
from selenium.webdriver.common.keys import Keys
from selenium.webdriver.support import expected_conditions as EC
from selenium.webdriver.support.ui import Select, WebDriverWait

BASE, DATABASE_URL, ADMIN_PASSWORD, SHOTS = sys.argv[1:5]
PASSWORD = "correct horse battery"


def log(*what):
    print("scripts/console:", *what, file=sys.stderr, flush=True)


def call(method, path, body=None, token=None):
    headers = {"Content-Type": "application/json"}
    if token:
        headers["Authorization"] = "Bearer " + token
    data = None if body is None else json.dumps(body).encode()
    req = urllib.request.Request(BASE + path, data, headers, method=method)
    try:
        with urllib.request.urlopen(req, timeout=30) as res:
            text = res.read().decode()
    except urllib.error.HTTPError as e:
        raise SystemExit(f"{method} {path}: {e.code} {e.read().decode()}")
    return json.loads(text) if text.strip().startswith(("{", "[")) else text


def login(name):
    return call("POST", "/v1/sessions", {"username": name, "password": PASSWORD if name != "console_admin" else ADMIN_PASSWORD})["token"]


def player(name):
    call("POST", "/v1/accounts", {"username": name, "password": PASSWORD})
    return login(name)


def psql(sql):
    subprocess.run(["psql", DATABASE_URL, "-Xq", "-v", "ON_ERROR_STOP=1", "-c", sql], check=True)


def played_game(token, ruleset="classique"):
    """A one-round game of the caller against a basic bot, played to its end
    (the caller plays its first legal move)."""
    body = {"ruleset": ruleset, "seats": 2, "options": {"rounds": 1}, "bots": [{"level": "basic"}]}
    table = call("POST", "/v1/tables", body, token)["id"]
    call("POST", f"/v1/tables/{table}/start", None, token)
    deadline = time.time() + 120
    while time.time() < deadline:
        view = call("GET", f"/v1/tables/{table}/view", token=token)
        if view["status"] == "finished":
            return table
        if view["current_seat"] == view["my_seat"] and view["legal_moves"]:
            body = {"move": view["legal_moves"][0], "expected_version": view["version"]}
            req = urllib.request.Request(
                BASE + f"/v1/tables/{table}/moves", json.dumps(body).encode(),
                {"Content-Type": "application/json", "Authorization": "Bearer " + token}, method="POST")
            try:
                urllib.request.urlopen(req, timeout=30).read()
            except urllib.error.HTTPError as e:
                if e.code != 409:  # the bot moved first
                    raise
        else:
            time.sleep(0.05)
    raise SystemExit(f"the game at {table} did not end")


def rated_game(winner, loser, visibility="public"):
    """A game between two people who each make a move (their first legal
    one), then `loser` resigns: rated (docs/RULES.md D43)."""
    body = {"ruleset": "moderne", "seats": 2, "visibility": visibility}
    created = call("POST", "/v1/tables", body, winner)
    table = created["id"]
    if visibility == "private":
        call("POST", f"/v1/invites/{created['invite_code']}", None, loser)
    else:
        call("POST", f"/v1/tables/{table}/players", None, loser)
    call("POST", f"/v1/tables/{table}/start", None, winner)
    tokens, moved = [winner, loser], set()
    while len(moved) < 2:
        seat = call("GET", f"/v1/tables/{table}/view", token=winner)["current_seat"]
        view = call("GET", f"/v1/tables/{table}/view", token=tokens[seat])
        body = {"move": view["legal_moves"][0], "expected_version": view["version"]}
        call("POST", f"/v1/tables/{table}/moves", body, tokens[seat])
        moved.add(seat)
    call("POST", f"/v1/tables/{table}/resign", None, loser)
    return table


def player_page(driver, wait, table, shot):
    """alice_console's public page, opened without a token: her rating in
    moderne (provisional, marked "?") and her last game with its replay."""
    driver.execute_script("sessionStorage.clear()")
    driver.get(BASE + "/players/alice_console")
    wait.until(EC.presence_of_element_located((By.ID, "ratings")))
    assert driver.find_element(By.ID, "player").text == "alice_console"
    assert driver.title == "Huit: alice_console", driver.title
    profile = call("GET", "/v1/players/alice_console")
    [moderne] = [s for s in profile["stats"] if s["ruleset"] == "moderne"]
    row = driver.find_element(By.CSS_SELECTOR, "#ratings tr[data-ruleset='moderne']")
    rating = row.find_element(By.CSS_SELECTOR, ".rating").text
    assert rating == f"{moderne['rating']:.1f}?", rating
    links = [a.get_attribute("href") for a in driver.find_elements(By.CSS_SELECTOR, "#recent a.replay-link")]
    assert BASE + f"/replay/{table}/1" in links, links
    # Her private game is listed without naming its table.
    assert len(links) == len(profile["recent"]) - 1, links
    assert "private" in driver.find_element(By.ID, "recent").text
    assert driver.find_elements(By.ID, "login") == [], "a public page asks nobody to log in"
    driver.save_screenshot(os.path.join(SHOTS, shot))
    driver.get(BASE + "/players/nobody_here")
    wait.until(EC.presence_of_element_located((By.CSS_SELECTOR, "p.error")))
    assert "no player" in driver.find_element(By.CSS_SELECTOR, "p.error").text


def status_of(method, path, token):
    """The HTTP status of a request (no body)."""
    req = urllib.request.Request(BASE + path, None, {"Authorization": "Bearer " + token}, method=method)
    try:
        with urllib.request.urlopen(req, timeout=30) as res:
            return res.status
    except urllib.error.HTTPError as e:
        return e.code


def account_page(driver, wait, name, shot):
    """The page where a person deletes their account outside the app
    (Google Play's web link): log in, see what is erased and what stays,
    a wrong password refused, the deletion asked (every session ended),
    then a log-in on the page cancelling it, as the page says."""
    player(name)
    other = login(name)
    driver.execute_script("sessionStorage.clear()")
    driver.get(BASE + "/account")
    wait.until(EC.presence_of_element_located((By.ID, "login")))
    assert driver.title == "Huit: delete your account", driver.title
    driver.find_element(By.NAME, "username").send_keys(name)
    driver.find_element(By.NAME, "password").send_keys(PASSWORD + Keys.ENTER)
    wait.until(EC.presence_of_element_located((By.ID, "delete")))
    assert name in driver.find_element(By.TAG_NAME, "h1").text
    erased = driver.find_element(By.ID, "erased").text
    assert "password" in erased and "3 now" in erased, erased
    assert "erased player" in driver.find_element(By.ID, "kept").text
    form = driver.find_element(By.ID, "delete")
    form.find_element(By.NAME, "password").send_keys("not my password")
    form.find_element(By.NAME, "sure").click()
    form.find_element(By.TAG_NAME, "button").click()
    wait.until(EC.text_to_be_present_in_element((By.CSS_SELECTOR, "p.error"), "not the account's password"))
    assert status_of("GET", "/v1/me", other) == 200, "a refused deletion changes nothing"
    driver.save_screenshot(os.path.join(SHOTS, shot))
    password = form.find_element(By.NAME, "password")
    password.clear()
    password.send_keys(PASSWORD)
    form.find_element(By.TAG_NAME, "button").click()
    deleted = wait.until(EC.presence_of_element_located((By.ID, "deleted")))
    assert deleted.get_attribute("data-erase-at"), "the erasure's date"
    assert "Logging in before then cancels" in deleted.text, deleted.text
    assert status_of("GET", "/v1/me", other) == 401, "every session ended"
    assert driver.execute_script("return sessionStorage.getItem('huit.account')") is None
    # Logging in on the page again cancels the deletion, and says so.
    driver.get(BASE + "/account")
    wait.until(EC.presence_of_element_located((By.ID, "login")))
    driver.find_element(By.NAME, "username").send_keys(name)
    driver.find_element(By.NAME, "password").send_keys(PASSWORD + Keys.ENTER)
    notice = wait.until(EC.presence_of_element_located((By.ID, "notice")))
    assert "cancelled the deletion" in notice.text, notice.text
    assert status_of("GET", "/v1/me", login(name)) == 200


def correction_and_sanction(driver, wait, admin, bob, rated):
    """bob_console disputes a rated game he lost to alice_console; the admin
    previews her disqualification on the dispute's page (the preview's
    ranking and ratings are the API's), applies it (the stored ratings are
    the preview's), then opens her account's page from the table: whom she
    plays with, a suspension that refuses her log-in, lifted from the page.
    Returns a new token of hers (the suspension ended her sessions)."""
    body = {"reason": "alice_console saw my hand"}
    dispute = call("POST", f"/v1/tables/{rated}/disputes", body, bob)["id"]
    driver.get(BASE + f"/admin#/disputes/{dispute}")
    wait.until(EC.presence_of_element_located((By.ID, "resolve")))
    Select(driver.find_element(By.ID, "correction-kind")).select_by_value("disqualify")
    seat = driver.find_element(By.NAME, "seat")
    seat.clear()
    seat.send_keys("0")
    driver.find_element(By.ID, "preview-button").click()
    wait.until(EC.presence_of_element_located((By.ID, "preview-table")))
    correction = {"kind": "disqualify", "seat": 0}
    expected = call("POST", f"/v1/admin/disputes/{dispute}/preview", {"correction": correction}, admin)
    rows = driver.find_elements(By.CSS_SELECTOR, "#preview-table tbody tr")
    assert [r.get_attribute("data-seat") for r in rows] == [str(p["seat"]) for p in expected["corrected"]["ranking"]]
    assert rows[-1].get_attribute("data-seat") == "0", "disqualified: last"
    for r in expected["ratings"]:
        row = driver.find_element(By.CSS_SELECTOR, f"#preview-table tr[data-seat='{r['seat']}']")
        for part in ("now", "corrected"):
            shown = row.find_element(By.CSS_SELECTOR, f".{part}").text
            assert shown.startswith(f"{r[part]['after']:.1f}"), f"seat {r['seat']} {part}: {shown}"
    driver.save_screenshot(os.path.join(SHOTS, "correction-desktop.png"))
    assert Select(driver.find_element(By.NAME, "verdict")).first_selected_option.get_attribute("value") == "upheld"
    driver.find_element(By.NAME, "note").send_keys("alice_console is disqualified from this game.")
    driver.find_element(By.CSS_SELECTOR, "#resolve button[type='submit']").click()
    wait.until(EC.text_to_be_present_in_element((By.ID, "dispute-status"), "resolved"))
    assert "seat 0 disqualified" in driver.find_element(By.ID, "dispute-correction").text
    assert "1. bob_console" in driver.find_element(By.ID, "corrected-result").text
    [alice_seat] = [r for r in expected["ratings"] if r["seat"] == 0]
    recent = call("GET", "/v1/players/alice_console")["recent"]
    [game] = [g for g in recent if g["table_id"] == rated]
    assert abs(game["rating_after"] - alice_seat["corrected"]["after"]) < 1e-9, "stored as previewed"
    log("a correction previewed, then applied from the dispute's page")
    # Its players' replay shows the corrected result beside the round.
    driver.get(BASE + f"/replay/{rated}/1#token={bob}")
    shown = wait.until(EC.presence_of_element_located((By.ID, "replay-corrected"))).text
    assert "seat 0 disqualified" in shown and "1. bob_console" in shown, shown
    driver.get(BASE + f"/admin#/disputes/{dispute}")
    wait.until(EC.presence_of_element_located((By.ID, "table")))

    # Her account's page, from the table's list of players.
    driver.find_element(By.CSS_SELECTOR, "#table a.account").click()
    wait.until(EC.text_to_be_present_in_element((By.ID, "account"), "alice_console"))
    partners = driver.find_elements(By.CSS_SELECTOR, "#partners tbody tr")
    assert len(partners) == 1 and "bob_console" in partners[0].text, [p.text for p in partners]
    assert partners[0].find_element(By.CSS_SELECTOR, ".games").text == "2"
    form = driver.find_element(By.ID, "sanction")
    driver.execute_script("arguments[0].value = arguments[1]", form.find_element(By.NAME, "until"), "2030-01-01T12:00")
    form.find_element(By.NAME, "reason").send_keys("Looked at other players' hands")
    form.find_element(By.CSS_SELECTOR, "button[type='submit']").click()
    wait.until(EC.presence_of_element_located((By.CSS_SELECTOR, "#sanctions tr[data-standing='true']")))
    refused = urllib.request.Request(
        BASE + "/v1/sessions", json.dumps({"username": "alice_console", "password": PASSWORD}).encode(),
        {"Content-Type": "application/json"}, method="POST")
    try:
        urllib.request.urlopen(refused, timeout=30)
        raise SystemExit("a suspended account logged in")
    except urllib.error.HTTPError as e:
        problem = json.loads(e.read().decode())
        assert (e.code, problem["code"]) == (403, "account_suspended"), problem
        assert problem["until"].startswith("2030-01-01"), problem
    driver.save_screenshot(os.path.join(SHOTS, "account-admin-desktop.png"))
    driver.find_element(By.CSS_SELECTOR, "#sanctions button.lift").click()
    wait.until(EC.presence_of_element_located((By.CSS_SELECTOR, "#sanctions tr[data-standing='false']")))
    assert "lifted by console_admin" in driver.find_element(By.CSS_SELECTOR, "#sanctions .status").text
    log("an account's page: whom she plays with; a suspension refused her log-in, lifted")
    return login("alice_console")


def browser(width, height, phone=False):
    options = webdriver.ChromeOptions()
    for arg in ("--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--disable-gpu",
                f"--window-size={width},{height}", "--lang=en-GB"):
        options.add_argument(arg)
    if phone:
        # A phone's viewport (a window cannot be made that narrow).
        options.add_experimental_option(
            "mobileEmulation", {"deviceMetrics": {"width": width, "height": height, "pixelRatio": 2}})
    options.binary_location = os.environ.get("CHROMIUM", "/usr/bin/chromium")
    service = Service(executable_path=os.environ.get("CHROMEDRIVER", "/usr/bin/chromedriver"))
    return webdriver.Chrome(options=options, service=service)


def webhooks(driver, wait, admin):
    """The deliveries page: failed ones first; one sent again with its
    button arrives at a receiver now listening."""
    deadline = time.time() + 30
    while time.time() < deadline:
        failed = call("GET", "/v1/admin/webhooks?status=failed", token=admin)["deliveries"]
        if failed:
            break
        time.sleep(0.2)
    assert failed, "deliveries fail while nothing listens"
    got = []

    class Receiver(http.server.BaseHTTPRequestHandler):
        def do_POST(self):
            got.append(self.headers["webhook-id"])
            self.rfile.read(int(self.headers["content-length"]))
            self.send_response(204)
            self.end_headers()

        def log_message(self, *args):
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", int(os.environ["HOOK_PORT"])), Receiver)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        driver.get(BASE + "/admin#/webhooks")
        wait.until(EC.presence_of_element_located((By.ID, "deliveries")))
        rows = driver.find_elements(By.CSS_SELECTOR, "#deliveries tbody tr")
        statuses = [r.get_attribute("class") for r in rows]
        first_other = next((i for i, s in enumerate(statuses) if s != "failed"), len(statuses))
        assert all(s == "failed" for s in statuses[:first_other]) and first_other > 0, statuses
        item = rows[0].get_attribute("data-delivery")
        driver.save_screenshot(os.path.join(SHOTS, "webhooks-desktop.png"))
        rows[0].find_element(By.CSS_SELECTOR, "button.retry").click()
        deadline = time.time() + 30
        while time.time() < deadline and item not in got:
            time.sleep(0.1)
        assert item in got, f"item {item} sent again arrives"
        deadline = time.time() + 30
        while time.time() < deadline:
            # Items still pending when the receiver began to listen are
            # delivered too: look past the first page's 20.
            delivered = call("GET", "/v1/admin/webhooks?status=delivered&limit=100", token=admin)["deliveries"]
            if any(str(d["item"]["id"]) == item for d in delivered):
                break
            time.sleep(0.1)
        else:
            every = call("GET", "/v1/admin/webhooks?limit=100", token=admin)["deliveries"]
            raise SystemExit(f"item {item} is not marked delivered: "
                             f"{[d for d in every if str(d['item']['id']) == item]}, {len(delivered)} delivered")
        driver.get(BASE + "/admin#/webhooks")
        wait.until(EC.presence_of_element_located((By.ID, "deliveries")))
        still = driver.find_elements(By.CSS_SELECTOR, f"#deliveries tr[data-delivery='{item}'].failed")
        assert not still, "no longer among the failed ones"
    finally:
        server.shutdown()
    log(f"{len(failed)} failed webhook deliveries listed first; item {item} sent again from the page, delivered")


def hands_drawn(driver):
    hands = {}
    for hand in driver.find_elements(By.CSS_SELECTOR, "#replay [data-hand]"):
        seat = int(hand.get_attribute("data-hand"))
        hands[seat] = [c.get_attribute("data-card") for c in hand.find_elements(By.CSS_SELECTOR, "[data-card]")]
    return [hands[s] for s in sorted(hands)]


def wait_for_step(driver, step):
    WebDriverWait(driver, 15).until(
        lambda d: d.find_element(By.ID, "replay").get_attribute("data-step") == str(step))


def main():
    os.makedirs(SHOTS, exist_ok=True)
    admin = login("console_admin")
    alice = player("alice_console")
    bob = player("bob_console")
    rated = rated_game(alice, bob)
    rated_game(alice, bob, "private")
    fair = played_game(alice)
    altered = played_game(alice)
    letters = played_game(alice, "amerix")
    call("POST", f"/v1/tables/{fair}/disputes", {"round": 1, "reason": "The bot's last card was never announced"}, alice)
    call("POST", f"/v1/tables/{altered}/disputes", {"reason": "My points look wrong"}, alice)
    # An edit of the altered table's log (seq 6), as a forger with database
    # access would make it: the hash no longer matches the content.
    bad_seq = 6
    psql("ALTER TABLE events DISABLE TRIGGER USER")
    psql(f"UPDATE events SET data = jsonb_set(data::jsonb, '{{salt}}', '\"forged\"')::json WHERE table_id = '{altered}' AND seq = {bad_seq}")
    psql("ALTER TABLE events ENABLE TRIGGER USER")
    log(f"tables: fair {fair}, altered {altered} (seq {bad_seq})")

    driver = browser(1280, 900)
    try:
        wait = WebDriverWait(driver, 15)
        driver.get(BASE + "/admin")
        wait.until(EC.presence_of_element_located((By.ID, "login")))
        driver.find_element(By.NAME, "username").send_keys("console_admin")
        driver.find_element(By.NAME, "password").send_keys(ADMIN_PASSWORD + Keys.ENTER)
        # The queue: both disputes; open the fair table's.
        wait.until(EC.presence_of_element_located((By.ID, "disputes")))
        rows = driver.find_elements(By.CSS_SELECTOR, "#disputes tbody tr")
        assert len(rows) == 2, f"two open disputes, not {len(rows)}"
        driver.save_screenshot(os.path.join(SHOTS, "queue-desktop.png"))
        link = driver.find_element(By.XPATH, "//a[contains(., \"last card was never announced\")]")
        link.click()
        verdict = wait.until(EC.presence_of_element_located((By.ID, "audit-verdict")))
        assert verdict.get_attribute("data-ok") == "true", verdict.text
        assert "OK" in verdict.text and "hash chain is valid" in verdict.text, verdict.text
        deals = driver.find_element(By.ID, "deals-verdict")
        assert deals.get_attribute("data-status") == "verified", deals.text
        assert deals.text.startswith("Deals verified"), deals.text
        assert driver.find_element(By.ID, "reason").text == "The bot's last card was never announced"
        actions = driver.find_element(By.ID, "actions").text
        assert "audit" in actions and "console_admin" in actions, actions

        # The replay of round 1, stepped with the arrow keys.
        driver.find_element(By.CSS_SELECTOR, f"a[href='#/tables/{fair}/rounds/1']").click()
        wait_for_step(driver, 0)
        last = call("GET", f"/v1/tables/{fair}/rounds/1/replay", token=admin)["last_step"]
        body = driver.find_element(By.TAG_NAME, "body")
        steps = list(range(1, min(last, 12) + 1))
        for step in steps:
            body.send_keys(Keys.ARROW_RIGHT)
            wait_for_step(driver, step)
            expected = call("GET", f"/v1/tables/{fair}/rounds/1/replay?step={step}", token=admin)["state"]
            assert hands_drawn(driver) == expected["hands"], f"step {step}: {hands_drawn(driver)} != {expected['hands']}"
            top = driver.find_element(By.CSS_SELECTOR, "#top-card [data-card]").get_attribute("data-card")
            assert top == expected["top_card"], f"step {step}: top {top} != {expected['top_card']}"
            assert driver.find_element(By.ID, "stock").text == f"{len(expected['stock'])} cards"
            current = driver.find_element(By.CSS_SELECTOR, "#round-events .event.current")
            assert current == driver.find_elements(By.CSS_SELECTOR, "#round-events .event")[step]
        body.send_keys(Keys.ARROW_LEFT)
        wait_for_step(driver, steps[-1] - 1)
        expected = call("GET", f"/v1/tables/{fair}/rounds/1/replay?step={steps[-1] - 1}", token=admin)["state"]
        assert hands_drawn(driver) == expected["hands"], "a step back"
        driver.execute_script("window.scrollTo(0, 0)")
        driver.save_screenshot(os.path.join(SHOTS, "replay-desktop.png"))
        log(f"stepped {len(steps)} steps forward and one back; the hands match the API's")

        # The altered table: its first bad seq, in the verdict and the list.
        driver.get(BASE + "/admin#/disputes")
        wait.until(EC.presence_of_element_located((By.ID, "disputes")))
        driver.find_element(By.XPATH, "//a[contains(., 'My points look wrong')]").click()
        verdict = wait.until(EC.presence_of_element_located((By.ID, "audit-verdict")))
        assert verdict.get_attribute("data-ok") == "false", verdict.text
        assert verdict.get_attribute("data-first-bad-seq") == str(bad_seq), verdict.get_attribute("data-first-bad-seq")
        assert verdict.get_attribute("data-chain-valid") == "false", "the chain is broken"
        assert "hash chain is broken" in verdict.text, verdict.text
        assert f"seq {bad_seq}" in verdict.text, verdict.text
        bad = driver.find_elements(By.CSS_SELECTOR, "#events .event.bad")
        assert [b.get_attribute("data-seq") for b in bad] == [str(bad_seq)], "the bad event is marked"
        driver.execute_script("document.getElementById('audit-verdict').scrollIntoView()")
        driver.save_screenshot(os.path.join(SHOTS, "tampered-desktop.png"))
        # Resolve it from the page.
        driver.find_element(By.NAME, "note").send_keys("The log was altered at seq 6; the score stands void.")
        Select(driver.find_element(By.NAME, "verdict")).select_by_value("upheld")
        driver.find_element(By.CSS_SELECTOR, "#resolve button[type='submit']").click()
        wait.until(EC.text_to_be_present_in_element((By.ID, "dispute-status"), "resolved"))
        log("the altered table's first bad seq is shown; its dispute resolved from the page")
        webhooks(driver, wait, admin)
        # The pushes' page beside it (push is off here: the fakes of Apple
        # and Google are in tests/tests/server/push.rs).
        driver.find_element(By.CSS_SELECTOR, "nav a[href='/admin#/pushes']").click()
        wait.until(EC.text_to_be_present_in_element((By.TAG_NAME, "h1"), "Pushes to phones"))
        assert "Push is off" in driver.find_element(By.TAG_NAME, "main").text
        log("the pushes' page says push is off")
        alice = correction_and_sanction(driver, wait, admin, bob, rated)
        player_page(driver, wait, rated, "player-desktop.png")
        log("a player's public page: ratings and last games, with their replays")
        account_page(driver, wait, "delia", "account-desktop.png")
        log("the account page: a deletion asked, then cancelled by a log-in")
    finally:
        driver.quit()

    # A phone's width: the replay, then the player's own replay page.
    driver = browser(390, 844, phone=True)
    try:
        wait = WebDriverWait(driver, 15)
        # An admin is logged in in this tab; a player's link must not
        # replace that account: its token stays with its page.
        driver.get(BASE + "/admin")
        wait.until(EC.presence_of_element_located((By.ID, "login")))
        driver.find_element(By.NAME, "username").send_keys("console_admin")
        driver.find_element(By.NAME, "password").send_keys(ADMIN_PASSWORD + Keys.ENTER)
        wait.until(lambda d: d.execute_script("return sessionStorage.getItem('huit.token')"))
        stored = driver.execute_script("return sessionStorage.getItem('huit.token')")
        driver.get(BASE + f"/replay/{fair}/1#token={alice}")
        wait_for_step(driver, 0)
        kept = driver.execute_script("return sessionStorage.getItem('huit.token')")
        assert kept == stored, "the link's token did not replace the tab's account"
        assert driver.find_elements(By.ID, "audit-verdict") == [], "no audit for players"
        deals = driver.find_element(By.ID, "deals-verdict")
        assert deals.get_attribute("data-status") == "verified", "the player's replay says: " + deals.text
        driver.find_element(By.TAG_NAME, "body").send_keys(Keys.ARROW_RIGHT)
        wait_for_step(driver, 1)
        expected = call("GET", f"/v1/tables/{fair}/rounds/1/replay?step=1", token=alice)["state"]
        assert hands_drawn(driver) == expected["hands"], "the player's replay"
        assert "#token" not in driver.current_url, "the token leaves the address bar"
        driver.find_element(By.ID, "forward").click()
        wait_for_step(driver, 2)
        driver.save_screenshot(os.path.join(SHOTS, "replay-phone.png"))
        # The letter deck (amerix): letters, stars and pétards as cards.
        driver.get(BASE + f"/replay/{letters}/1#token={alice}")
        wait_for_step(driver, 0)
        for step in range(1, 4):
            driver.find_element(By.TAG_NAME, "body").send_keys(Keys.ARROW_RIGHT)
            wait_for_step(driver, step)
            expected = call("GET", f"/v1/tables/{letters}/rounds/1/replay?step={step}", token=alice)["state"]
            assert hands_drawn(driver) == expected["hands"], f"amerix, step {step}"
        driver.save_screenshot(os.path.join(SHOTS, "letters-phone.png"))
        # A replay page opened without its link's token says what it is
        # and how to open it, before it offers to log in.
        driver.execute_script("sessionStorage.clear()")
        driver.get(BASE + f"/replay/{fair}/1")
        wait.until(EC.presence_of_element_located((By.ID, "replay-help")))
        assert driver.title == "Huit replay: round 1", driver.title
        assert "link your game app gives you" in driver.find_element(By.ID, "replay-help").text
        assert driver.find_elements(By.ID, "login"), "and a way to log in"
        # The admin console, at a phone's width (another page load, logged
        # out: the player's token is forgotten first).
        driver.execute_script("sessionStorage.clear()")
        driver.get(BASE + f"/admin#/tables/{fair}/rounds/1?step=3")
        wait.until(EC.presence_of_element_located((By.ID, "login")))
        driver.find_element(By.NAME, "username").send_keys("console_admin")
        driver.find_element(By.NAME, "password").send_keys(ADMIN_PASSWORD + Keys.ENTER)
        wait_for_step(driver, 3)
        driver.save_screenshot(os.path.join(SHOTS, "console-phone.png"))
        player_page(driver, wait, rated, "player-phone.png")
        log("the player's replay page and the console at a phone's width")
        account_page(driver, wait, "phoebe", "account-phone.png")
        log("the account page at a phone's width")
    finally:
        driver.quit()
    log(f"screenshots in {SHOTS}")


main()
