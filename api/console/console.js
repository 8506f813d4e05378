// The Huit console: the disputes queue, a table's rounds, audit and log,
// and a replay of any round drawn as a card table. It reads only the public
// HTTP API (docs/API.md), with the token of the account that logs in here.
// Plain ES module, no build step, no library.
//
// Routes (the hash of /admin): #/disputes[?status=open|resolved],
// #/disputes/<id> (a verdict, and a correction previewed before it is
// applied), #/tables/<id>, #/tables/<id>/rounds/<n>[?step=K],
// #/accounts/<id> (sanctions, and whom the player plays with most).
// Players open /replay/<table>/<round> (the same replay, read-only, no
// audit); an app may pass its token as #token=<token>. Anyone opens
// /players/<username>, a player's ratings and last games (public, no token).

import { Problem, h, loginFields, request } from "/admin/common.js";

const app = document.getElementById("app");
const nav = document.getElementById("nav");
const who = document.getElementById("who");

// ----- the API -----

let token = sessionStorage.getItem("huit.token");
// A token a link brings (#token= on a replay page) is that page's alone: it
// is never stored, so it never replaces the account logged in in this tab.
let linked = false;
let me = null;

async function call(method, path, body) {
  const res = await request(method, path, body, token);
  if (res.status === 401 && path !== "/sessions") {
    logOut();
    throw new Problem(401, { detail: "Your session has ended: log in again." });
  }
  const text = await res.text();
  const type = res.headers.get("content-type") || "";
  if (!res.ok) {
    throw new Problem(res.status, type.includes("json") ? JSON.parse(text) : { detail: text });
  }
  if (type.includes("ndjson")) return text.split("\n").filter(Boolean).map((l) => JSON.parse(l));
  return type.includes("json") ? JSON.parse(text) : text;
}
const get = (path) => call("GET", path);
const post = (path, body) => call("POST", path, body);

function logOut() {
  if (!linked) sessionStorage.removeItem("huit.token");
  token = null;
  linked = false;
  me = null;
}

// ----- building the page -----

function show(...nodes) {
  app.replaceChildren(...nodes.filter((n) => n !== null && n !== undefined));
}

function failure(e) {
  return h("p", { class: "error", role: "alert" }, e.message);
}

const when = (at) => (at ? new Date(at).toLocaleString() : "");
// A name as shown: an erased account has none (docs/API.md "Accounts").
const named = (name) => name ?? "an erased player";

// ----- cards -----

const SUITS = { H: ["♥", true], D: ["♦", true], C: ["♣", false], S: ["♠", false] };
const SUIT_NAMES = { H: "hearts", D: "diamonds", C: "clubs", S: "spades" };

/** A card code (docs/API.md "Cards and moves") drawn as a card. */
function card(code, big = false) {
  const size = big ? " big" : "";
  if (code === "JK") {
    return h("span", { class: `card joker${size}`, "data-card": code, title: "joker" },
      h("span", { class: "rank" }, "JOKER"), h("span", { class: "suit" }, "☺"));
  }
  if (code === "STAR") {
    return h("span", { class: `card star${size}`, "data-card": code, title: "star" },
      h("span", { class: "rank" }, "STAR"), h("span", { class: "suit" }, "★"));
  }
  if (code === "BANG") {
    return h("span", { class: `card bang${size}`, "data-card": code, title: "pétard" },
      h("span", { class: "rank" }, "PÉTARD"), h("span", { class: "suit" }, "✸"));
  }
  if (/^[A-Z]$/.test(code)) {
    return h("span", { class: `card letter${size}`, "data-card": code, title: `letter ${code}` },
      h("span", { class: "rank" }, code));
  }
  const rank = code.slice(0, -1);
  const [symbol, red] = SUITS[code.slice(-1)] || ["?", false];
  return h("span", { class: `card${red ? " red" : ""}${size}`, "data-card": code, title: code },
    h("span", { class: "rank" }, rank), h("span", { class: "suit" }, symbol));
}

// ----- logging in -----

async function whoAmI() {
  if (!token) return null;
  if (!me) me = await get("/me");
  return me;
}

function loginForm(why, replay) {
  const error = h("p", { class: "error", role: "alert" }, why || "");
  const form = loginFields();
  form.addEventListener("submit", async (ev) => {
    ev.preventDefault();
    const data = new FormData(form);
    try {
      const session = await post("/sessions", {
        username: data.get("username"),
        password: data.get("password"),
      });
      token = session.token;
      linked = false;
      me = session.account;
      sessionStorage.setItem("huit.token", token);
      route();
    } catch (e) {
      error.textContent = e.message;
    }
  });
  if (replay) {
    // A player's replay page, opened without its link's token: say what it
    // is and how to open it, then offer to log in.
    show(h("h1", {}, `Replay of round ${replay[2]}`),
      h("p", { id: "replay-help" }, "This page replays a finished round of a Huit table, every hand shown. " +
        "Open it with the link your game app gives you (it carries your session), or log in with your Huit account below."),
      form, error);
    return;
  }
  show(h("h1", {}, "Log in"), form, error);
}

function header() {
  nav.replaceChildren();
  who.replaceChildren();
  if (!me) return;
  if (me.role === "admin") {
    nav.append(h("a", { href: "/admin#/disputes" }, "Disputes"), " ",
      h("a", { href: "/admin#/webhooks" }, "Webhooks"), " ",
      h("a", { href: "/admin#/pushes" }, "Pushes"));
  }
  who.append(`${me.username} (${me.role}) `,
    h("a", { href: "#", onclick: (ev) => { ev.preventDefault(); call("DELETE", "/sessions/current").catch(() => {}); logOut(); route(); } }, "log out"));
}

// ----- the disputes queue -----

async function disputesPage(params) {
  const status = params.get("status") ?? "open";
  const after = params.get("after");
  const query = new URLSearchParams({ limit: "50" });
  if (status) query.set("status", status);
  if (after) query.set("after", after);
  const page = await get(`/admin/disputes?${query}`);
  const tab = (s, label) => h("a", { href: `#/disputes?status=${s}`, class: s === status ? "on" : "" }, label);
  const rows = page.disputes.map((d) => h("tr", { "data-dispute": d.id },
    h("td", {}, when(d.created_at)),
    h("td", {}, h("a", { href: `#/disputes/${d.id}` }, d.reason)),
    h("td", {}, d.round === null ? "the game" : `round ${d.round}`),
    h("td", {}, named(d.filed_by)),
    h("td", {}, h("a", { href: `#/tables/${d.table_id}` }, d.table_id.slice(0, 8))),
    h("td", {}, h("span", { class: `badge ${d.status}` }, d.verdict ? `${d.status}: ${d.verdict}` : d.status))));
  const more = page.next
    ? h("p", {}, h("a", { href: `#/disputes?status=${status}&after=${page.next}` }, "Next page →"))
    : null;
  show(h("h1", {}, "Disputes"),
    h("div", { class: "tabs" }, tab("open", "Open"), tab("resolved", "Resolved"), tab("", "All")),
    rows.length
      ? h("div", { class: "scroll" }, h("table", { class: "list", id: "disputes" },
        h("thead", {}, h("tr", {}, ["Filed", "Reason", "About", "By", "Table", "Status"].map((t) => h("th", {}, t)))),
        h("tbody", {}, rows)))
      : h("p", { class: "muted" }, "No dispute here."),
    more);
}

// ----- a dispute -----

async function disputePage(id) {
  const d = await get(`/admin/disputes/${id}`);
  const facts = h("div", { class: "panel" },
    h("p", {}, h("b", {}, named(d.filed_by)), ` disputes ${d.round === null ? "the game" : `round ${d.round}`} of table `,
      h("a", { href: `#/tables/${d.table_id}` }, d.table_id), `, ${when(d.created_at)}:`),
    h("blockquote", { id: "reason" }, d.reason),
    h("p", {}, "Status: ", h("span", { class: `badge ${d.status}`, id: "dispute-status" }, d.status),
      d.verdict ? ` — ${d.verdict} by ${d.resolved_by}, ${when(d.resolved_at)}: ` : "",
      d.note ? h("q", {}, d.note) : ""));
  if (d.correction) {
    facts.append(h("p", { id: "dispute-correction" }, "Correction: ", describeCorrection(d.correction)));
  }
  let resolve = null;
  if (d.status === "open") {
    const error = h("span", { class: "error" });
    const fields = correctionFields(d);
    const verdict = h("select", { name: "verdict" },
      h("option", { value: "rejected" }, "rejected: the score stands"),
      h("option", { value: "upheld" }, "upheld: the player is right"));
    // A correction comes with an upheld verdict.
    fields.kind.addEventListener("change", () => { if (fields.kind.value) verdict.value = "upheld"; });
    resolve = h("form", { class: "panel", id: "resolve" },
      h("div", { class: "inline" },
        h("label", {}, "Verdict", verdict),
        h("label", {}, "Note (shown to the player)", h("textarea", { name: "note", required: true, maxlength: "2000" }))),
      fields.node,
      h("div", { class: "inline" }, h("button", { type: "submit" }, "Resolve"), error));
    resolve.addEventListener("submit", async (ev) => {
      ev.preventDefault();
      const data = new FormData(resolve);
      try {
        await post(`/admin/disputes/${id}/resolution`,
          { verdict: data.get("verdict"), note: data.get("note"), correction: fields.value() });
        route();
      } catch (e) {
        error.textContent = e.message;
      }
    });
  }
  const actions = h("div", { class: "scroll" }, h("table", { class: "list", id: "actions" },
    h("thead", {}, h("tr", {}, ["When", "Admin", "Action"].map((t) => h("th", {}, t)))),
    h("tbody", {}, d.actions.map((a) => h("tr", {},
      h("td", {}, when(a.at)), h("td", {}, named(a.admin)),
      h("td", {}, a.action.replaceAll("_", " "), a.dispute_id === id ? " (this dispute)" : ""))))));
  const table = await tableSection(d.table_id, d.audit);
  show(h("h1", {}, "Dispute"), facts, resolve,
    h("h2", {}, "Admin actions on this table"), actions, table);
}

// ----- a correction of a game's result, previewed -----

function describeCorrection(c) {
  switch (c.kind) {
    case "void": return "void: the game counts for no one";
    case "points": return `round ${c.round}'s points set to ${c.points.join(", ")} (by seat)`;
    case "disqualify": return `seat ${c.seat} disqualified`;
    default: return "none: the original result";
  }
}

const signed = (x) => `${x >= 0 ? "+" : ""}${decimals(x)}`;
function ratingMove(m) {
  if (!m) return h("span", { class: "muted" }, "unrated");
  const change = m.after - m.before;
  return [decimals(m.after), " ", h("span", { class: change >= 0 ? "gain" : "loss" }, signed(change))];
}

/** The correction's part of a dispute's form: its kind and what the kind
 * takes, and a preview of what it makes of the game. */
function correctionFields(d) {
  const kind = h("select", { name: "correction", id: "correction-kind" },
    h("option", { value: "" }, "no correction"),
    h("option", { value: "void" }, "void: the game counts for no one"),
    h("option", { value: "points" }, "points: one round's points"),
    h("option", { value: "disqualify" }, "disqualify a seat"),
    h("option", { value: "none" }, "none: the original result again"));
  const round = h("input", { name: "round", type: "number", min: "1", value: d.round ?? 1 });
  const points = h("input", { name: "points", placeholder: "by seat: 12, 0, 30" });
  const seat = h("input", { name: "seat", type: "number", min: "0", value: "0" });
  const shown = { round: h("label", {}, "Round", round), points: h("label", {}, "Points by seat", points), seat: h("label", {}, "Seat", seat) };
  const preview = h("div", { id: "preview" });
  function value() {
    switch (kind.value) {
      case "": return undefined;
      case "points": return { kind: "points", round: Number(round.value), points: points.value.split(",").map((p) => Number(p.trim())) };
      case "disqualify": return { kind: "disqualify", seat: Number(seat.value) };
      default: return { kind: kind.value };
    }
  }
  function fit() {
    shown.round.hidden = shown.points.hidden = kind.value !== "points";
    shown.seat.hidden = kind.value !== "disqualify";
    preview.replaceChildren();
  }
  kind.addEventListener("change", fit);
  fit();
  const button = h("button", { type: "button", id: "preview-button", onclick: async () => {
    const correction = value();
    if (!correction) return preview.replaceChildren(h("p", { class: "muted" }, "Choose a correction to preview it."));
    try {
      const p = await post(`/admin/disputes/${d.id}/preview`, { correction });
      const rated = Object.fromEntries(p.ratings.map((r) => [r.seat, r]));
      const rows = p.corrected.ranking.map((r) => h("tr", { "data-seat": r.seat },
        h("td", {}, r.place), h("td", {}, rated[r.seat] ? named(rated[r.seat].username) : `seat ${r.seat}`),
        h("td", {}, p.corrected.totals[r.seat]),
        h("td", { class: "now" }, ratingMove(rated[r.seat]?.now)),
        h("td", { class: "corrected" }, ratingMove(rated[r.seat]?.corrected))));
      preview.replaceChildren(
        h("p", { id: "preview-summary" }, p.corrected.winners.length
          ? `Winners: ${p.corrected.winners.map((s) => (rated[s] ? named(rated[s].username) : `seat ${s}`)).join(", ")}; `
          : "No winner (those who lost by a rule still lose); ",
        p.corrected.rated ? "rated." : "not rated."),
        h("div", { class: "scroll" }, h("table", { class: "list", id: "preview-table" },
          h("thead", {}, h("tr", {}, ["Place", "Player", "Total", "Rating from this game now", "Once corrected"].map((t) => h("th", {}, t)))),
          h("tbody", {}, rows))));
    } catch (e) {
      preview.replaceChildren(failure(e));
    }
  } }, "Preview");
  const node = h("fieldset", { class: "correction" }, h("legend", {}, "Correct the game's result (upheld only)"),
    h("div", { class: "inline" }, h("label", {}, "Correction", kind), shown.round, shown.points, shown.seat, button),
    preview);
  return { node, kind, value };
}

// ----- an account, for admins -----

async function accountPage(id) {
  const a = await get(`/admin/accounts/${id}`);
  const status = (s) => s.standing ? "standing" : s.lifted_at ? `lifted by ${named(s.lifted_by)}` : "ended";
  const sanctions = a.sanctions.length === 0
    ? h("p", { class: "muted", id: "no-sanctions" }, "No sanction.")
    : h("div", { class: "scroll" }, h("table", { class: "list", id: "sanctions" },
      h("thead", {}, h("tr", {}, ["Imposed", "Action", "Until", "Reason", "Games voided", "By", "Status", ""].map((t) => h("th", {}, t)))),
      h("tbody", {}, a.sanctions.map((s) => h("tr", { "data-sanction": s.id, "data-standing": String(s.standing) },
        h("td", {}, when(s.created_at)), h("td", {}, s.action), h("td", {}, s.until ? when(s.until) : "—"),
        h("td", {}, s.reason), h("td", {}, s.games_voided), h("td", {}, named(s.created_by)),
        h("td", { class: "status" }, status(s)),
        h("td", {}, s.standing ? h("button", { type: "button", class: "lift", onclick: async (ev) => {
          try {
            await call("DELETE", `/admin/accounts/${id}/sanctions/${s.id}`);
            route();
          } catch (e) {
            ev.target.replaceWith(failure(e));
          }
        } }, "Lift") : ""))))));
  const partners = a.partners.length === 0
    ? h("p", { class: "muted" }, "No rated game with another person.")
    : h("div", { class: "scroll" }, h("table", { class: "list", id: "partners" },
      h("thead", {}, h("tr", {}, ["Plays with", "Games together", `${a.username}'s wins`, "average place", "Their wins", "average place"].map((t) => h("th", {}, t)))),
      h("tbody", {}, a.partners.map((p) => h("tr", { "data-account": p.account_id },
        h("td", {}, h("a", { href: `#/accounts/${p.account_id}` }, named(p.username))),
        h("td", { class: "games" }, p.games), h("td", {}, p.wins), h("td", {}, decimals(p.average_place, 2)),
        h("td", {}, p.partner_wins), h("td", {}, decimals(p.partner_average_place, 2)))))));
  const error = h("span", { class: "error" });
  const until = h("input", { name: "until", type: "datetime-local" });
  const form = h("form", { class: "panel inline", id: "sanction" },
    h("label", {}, "Action", h("select", { name: "action" },
      h("option", { value: "suspend" }, "suspend until"), h("option", { value: "ban" }, "ban"))),
    h("label", {}, "Until (a suspension)", until),
    h("label", {}, "Reason (admins only)", h("textarea", { name: "reason", required: true, maxlength: "2000" })),
    h("label", {}, "Void rated games since", h("input", { name: "since", type: "datetime-local" })),
    h("button", { type: "submit" }, "Sanction"), error);
  form.addEventListener("submit", async (ev) => {
    ev.preventDefault();
    const data = new FormData(form);
    const instant = (v) => (v ? new Date(v).toISOString() : undefined);
    const action = data.get("action");
    try {
      await post(`/admin/accounts/${id}/sanctions`, {
        action, reason: data.get("reason"),
        until: action === "suspend" ? instant(data.get("until")) : undefined,
        void_rated_games_since: instant(data.get("since")),
      });
      route();
    } catch (e) {
      error.textContent = e.message;
    }
  });
  show(h("h1", { id: "account" }, a.username),
    h("p", {}, `${a.role}, since ${when(a.created_at)}. `, h("a", { href: `/players/${a.username}` }, "public page")),
    h("h2", {}, "Sanctions"), sanctions, form,
    h("h2", {}, "Plays most with (rated games)"), partners);
}

// ----- the webhooks -----

async function webhooksPage() {
  // Failed deliveries first (those to send again), then the newest others.
  const failed = await get("/admin/webhooks?status=failed&limit=100");
  const others = await get("/admin/webhooks?limit=50");
  const rows = [...failed.deliveries, ...others.deliveries.filter((d) => d.status !== "failed")];
  const error = h("span", { class: "error", id: "webhooks-error" });
  const act = async (path) => {
    try {
      await post(path);
      route();
    } catch (e) {
      error.textContent = e.message;
    }
  };
  const state = failed.url === null
    ? h("p", { class: "muted" }, "Webhooks are off (no HUIT_WEBHOOK_URL).")
    : h("p", { id: "webhooks-state" }, "Sent to ", h("code", {}, failed.url), ": ",
      failed.paused_at
        ? [h("span", { class: "badge failed" }, `paused by a 410 Gone, ${when(failed.paused_at)}`), " ",
          h("button", { id: "resume", onclick: () => act("/admin/webhooks/resume") }, "Resume")]
        : h("span", { class: "badge resolved" }, "sending"),
      " ", h("span", { id: "webhooks-pending" },
        `${failed.pending} waiting to be sent (failed once older than the feed's retention)`));
  show(h("h1", {}, "Webhooks"), state, error,
    outboxTable("deliveries", rows, ["Item"], (d) => [String(d.item.id)],
      (d) => ({ key: d.item.id, retry: () => act(`/admin/webhooks/${d.item.id}/retry`) })));
}

// One row per delivery of an outbox (the webhooks', the pushes'): its own
// first columns, then the item's kind, account, table and time, the
// status, attempts, last error, and when it is tried next or a button to
// send it again.
function outboxTable(id, rows, firstHeads, firstCells, rowOf) {
  if (!rows.length) return h("p", { class: "muted" }, "No delivery yet.");
  const list = rows.map((d) => {
    const { key, retry } = rowOf(d);
    return h("tr", { "data-delivery": String(key), class: d.status },
      ...firstCells(d).map((cell) => h("td", {}, cell)),
      h("td", {}, d.item.kind.replaceAll("_", " ")),
      h("td", {}, d.account_id.slice(0, 8)),
      h("td", {}, h("a", { href: `#/tables/${d.item.table_id}` }, d.item.table_id.slice(0, 8))),
      h("td", {}, when(d.item.at)),
      h("td", {}, h("span", { class: `badge ${d.status}` }, d.status)),
      h("td", {}, String(d.attempts)),
      h("td", {}, d.last_error ?? ""),
      h("td", {}, d.status === "pending" ? when(d.next_attempt_at)
        : h("button", { class: "retry", onclick: retry }, "Send again")));
  });
  const heads = [...firstHeads, "Kind", "Account", "Table", "At", "Status", "Attempts", "Last error", "Next"];
  return h("div", { class: "scroll" }, h("table", { class: "list", id },
    h("thead", {}, h("tr", {}, heads.map((t) => h("th", {}, t)))),
    h("tbody", {}, list)));
}

// ----- the pushes to phones -----

async function pushesPage() {
  // Failed pushes first (those to send again), then the newest others.
  const failed = await get("/admin/pushes?status=failed&limit=100");
  const others = await get("/admin/pushes?limit=50");
  const rows = [...failed.pushes, ...others.pushes.filter((p) => p.status !== "failed")];
  const error = h("span", { class: "error", id: "pushes-error" });
  const retry = async (id) => {
    try {
      await post(`/admin/pushes/${id}/retry`);
      route();
    } catch (e) {
      error.textContent = e.message;
    }
  };
  const on = [failed.apns && "APNs", failed.fcm && "FCM"].filter(Boolean);
  const state = on.length
    ? h("p", { id: "pushes-state" }, `Pushing to ${on.join(" and ")}: `,
      h("span", { id: "pushes-pending" },
        `${failed.pending} waiting to be sent (failed once older than the feed's retention)`))
    : h("p", { class: "muted" }, "Push is off (no HUIT_APNS_KEY_FILE, no HUIT_FCM_CREDENTIALS).");
  show(h("h1", {}, "Pushes to phones"), state, error,
    outboxTable("pushes", rows, ["Push", "Platform", "Item"],
      (p) => [String(p.id), p.platform, String(p.item.id)],
      (p) => ({ key: p.id, retry: () => retry(p.id) })));
}

// ----- a table -----

async function tablePage(id) {
  const audit = await get(`/admin/tables/${id}/audit`);
  show(h("h1", {}, `Table ${id}`), await tableSection(id, audit));
}

function auditVerdict(audit) {
  const ok = audit.ok;
  const chain = audit.chain_valid ? "the hash chain is valid" : "the hash chain is broken";
  let text;
  if (ok) text = `Audit: OK — ${chain} and every round's points recompute (${audit.events} events).`;
  else if (audit.first_bad_seq !== null) text = `Audit: FAILED — ${chain}; the first bad event is seq ${audit.first_bad_seq}.`;
  else text = `Audit: FAILED — ${chain}; see the problems below.`;
  return h("div", {
    class: `verdict ${ok ? "ok" : "bad"}`, id: "audit-verdict", "data-ok": String(ok),
    "data-chain-valid": String(audit.chain_valid), "data-first-bad-seq": audit.first_bad_seq ?? "",
  }, text);
}

// Whether the game's deals are its seeds' (docs/API.md "Fair deals").
function dealsVerdict(deals) {
  const d = deals ?? { status: "unchecked" };
  const text = {
    verified: () => `Deals verified — the ${d.deals} deal(s) and ${d.reshuffles} reshuffle(s) are the ones the revealed server seed and the players' seeds derive.`,
    pending: () => "Deals not verified yet: the server seed is revealed when the game is over.",
    unproven: () => "Deals unproven: this table was created before fair deals.",
    unchecked: () => "Deals not checked.",
    failed: () => `Deals NOT verified — ${d.reason}`,
  }[d.status] ?? (() => `Deals: ${d.status}`);
  const kind = d.status === "verified" ? "ok" : d.status === "failed" ? "bad" : "muted";
  return h("div", { class: `verdict ${kind}`, id: "deals-verdict", "data-status": d.status }, text());
}

function describe(e) {
  const data = { ...e.data };
  delete data.salt;
  return JSON.stringify(data);
}

/** The seqs of what the server did for a seat: each `turn_timed_out` or
 * `bot_moved`, and the events up to the move that follows it. */
function automatic(events) {
  const moves = ["card_played", "cards_drawn", "turn_passed", "challenged"];
  const auto = new Set();
  let marking = false;
  for (const e of events) {
    if (e.type === "bot_moved" || e.type === "turn_timed_out") {
      auto.add(e.seq);
      marking = true;
    } else if (marking) {
      auto.add(e.seq);
      marking = !moves.includes(e.type);
    }
  }
  return auto;
}

function eventRow(e, { bad, auto, current, onclick }) {
  return h("div", {
    class: `event${bad ? " bad" : ""}${auto ? " auto" : ""}${current ? " current" : ""}${onclick ? " step" : ""}`,
    "data-seq": e.seq, onclick,
  }, h("span", {}, e.seq), h("span", { class: "type" }, e.type), h("span", { class: "data" }, describe(e)));
}

async function tableSection(id, audit) {
  const [summary, rounds, log] = await Promise.all([
    get(`/tables/${id}`), get(`/tables/${id}/rounds`), get(`/tables/${id}/log`),
  ]);
  const names = Object.fromEntries(summary.players.map((p) => [p.seat, named(p.username)]));
  const seats = summary.players.map((p) => p.seat);
  // A person's name opens their account's page.
  const person = (p) => (p.account_id && p.username
    ? h("a", { href: `#/accounts/${p.account_id}`, class: "account" }, p.username)
    : named(p.username));
  const players = h("p", {}, `${summary.ruleset}, ${summary.status}. Players: `,
    summary.players.map((p, i) => [i ? ", " : "", h("b", {}, person(p)), ` (seat ${p.seat}${p.bot ? `, bot ${p.bot}` : ""})`]));
  const result = rounds.result;
  const ranked = (r) => r.ranking.map((p) => `${p.place}. ${names[p.seat]} (${p.total})`).join(", ");
  const outcome = result && h("p", { id: "result" }, "Result: ", ranked(result),
    result.corrected ? [h("br"), h("span", { id: "corrected-result" }, "Corrected: ", ranked(result.corrected),
      result.corrected.rated ? "" : " (not rated)")] : "");
  const roundRows = rounds.rounds.map((r) => h("tr", {},
    h("td", {}, h("a", { href: `#/tables/${id}/rounds/${r.round}` }, `Round ${r.round}`)),
    seats.map((s) => h("td", {}, `${r.points[s] ?? 0} (${r.totals[s] ?? 0})`))));
  const last = log.filter((e) => e.type === "round_started").length;
  const running = last > rounds.rounds.length
    ? h("p", {}, h("a", { href: `#/tables/${id}/rounds/${last}` }, `Round ${last} (running)`))
    : null;
  const bad = audit.first_bad_seq;
  const problems = audit.problems.length
    ? h("ul", {}, audit.problems.map((p) => h("li", {}, `seq ${p.seq}: ${p.reason}`)))
    : null;
  const auto = automatic(log);
  const events = h("div", { class: "events", id: "events" },
    log.map((e) => eventRow(e, { bad: e.seq === bad, auto: auto.has(e.seq) })));
  // Once drawn, the list (not the page) scrolls to the first bad event.
  requestAnimationFrame(() => {
    const first = events.querySelector(".event.bad");
    if (first) events.scrollTop = first.offsetTop - events.clientHeight / 2;
  });
  return h("section", { id: "table", "data-table": id },
    h("h2", {}, "Table"), players, outcome,
    auditVerdict(audit), dealsVerdict(audit.deals), problems,
    h("h2", {}, "Rounds: points (totals)"),
    h("div", { class: "scroll" }, h("table", { class: "list", id: "rounds" },
      h("thead", {}, h("tr", {}, h("th", {}, ""), seats.map((s) => h("th", {}, names[s])))),
      h("tbody", {}, roundRows))),
    running,
    h("h2", {}, "Event log"), events);
}

// ----- a replay -----

const replays = new Map();

async function replayAt(id, n, step) {
  const key = `${id}/${n}/${step}`;
  if (!replays.has(key)) {
    const q = step === null ? "" : `?step=${step}`;
    replays.set(key, await get(`/tables/${id}/rounds/${n}/replay${q}`));
  }
  return replays.get(key);
}

function pending(p) {
  switch (p.kind) {
    case "none": return "none";
    case "attack": return `attack: draw ${p.draw}${p.count ? ` (${p.count} cards)` : ""}, seat ${p.seat}`;
    case "draw": return `draw ${p.draw}, seat ${p.seat}`;
    case "must_replay": return `play again or draw ${p.draw}, seat ${p.seat}`;
    case "may_replay": return `may play again, seat ${p.seat}`;
    case "drawn": return `may play the drawn card, seat ${p.seat}`;
    default: return p.kind;
  }
}

async function replayPage(id, n, wanted, { player = false } = {}) {
  const summary = await get(`/tables/${id}`);
  const names = Object.fromEntries(summary.players.map((p) => [p.seat, named(p.username)]));
  let r = await replayAt(id, n, wanted);
  const board = h("div", { class: "felt", id: "replay" });
  const list = h("div", { class: "events", id: "round-events" });
  const auto = automatic(r.events);

  async function go(step) {
    if (step < 0 || step > r.last_step) return;
    r = await replayAt(id, n, step);
    draw();
    const hash = player ? `#step=${step}` : `#/tables/${id}/rounds/${n}?step=${step}`;
    history.replaceState(null, "", hash);
  }

  function draw() {
    const s = r.state;
    const controls = h("div", { class: "controls" },
      h("button", { id: "first", title: "first step (Home)", onclick: () => go(0), disabled: r.step === 0 }, "«"),
      h("button", { id: "back", title: "step back (←)", onclick: () => go(r.step - 1), disabled: r.step === 0 }, "◀"),
      h("button", { id: "forward", title: "step forward (→)", onclick: () => go(r.step + 1), disabled: r.step === r.last_step }, "▶"),
      h("button", { id: "last", title: "last step (End)", onclick: () => go(r.last_step), disabled: r.step === r.last_step }, "»"),
      h("span", { class: "stepno", id: "step" }, `step ${r.step} / ${r.last_step}`));
    const active = s.active_suit ? `${SUITS[s.active_suit][0]} ${SUIT_NAMES[s.active_suit]}`
      : s.active_letter ? `letter ${s.active_letter}` : s.active_rank ? `rank ${s.active_rank}` : "—";
    const centre = h("div", { class: "centre" },
      h("div", { class: "fact" }, "Pile", h("span", { id: "top-card" }, card(s.top_card, true))),
      h("div", { class: "fact" }, "Active", h("b", { id: "active" }, active)),
      h("div", { class: "fact" }, "Stock", h("b", { id: "stock" }, `${s.stock.length} cards`)),
      h("div", { class: "fact" }, "Direction", h("b", { id: "direction" }, s.direction === "clockwise" ? "↻ clockwise" : "↺ counter-clockwise")),
      h("div", { class: "fact" }, "Turn", h("b", { id: "turn" }, s.current_seat === null ? "—" : names[s.current_seat] ?? `seat ${s.current_seat}`)),
      h("div", { class: "fact" }, "Pending", h("b", { id: "pending" }, pending(s.pending))));
    const seats = h("div", { class: "seats" }, s.hands.map((hand, seat) => h("div", {
      class: `seat${s.current_seat === seat ? " turn" : ""}`, "data-seat": seat,
    },
    h("div", { class: "name" }, names[seat] ?? `seat ${seat}`,
      seat === s.dealer ? h("span", { class: "tag" }, "dealer") : null,
      s.announced[seat] ? h("span", { class: "tag" }, "last card!") : null,
      s.out_order.includes(seat) ? h("span", { class: "tag" }, `out #${s.out_order.indexOf(seat) + 1}`) : null,
      h("span", { class: "tag" }, `${hand.length} cards · total ${s.totals[seat]}`)),
    h("div", { class: "hand", "data-hand": seat }, hand.map((c) => card(c))))));
    board.setAttribute("data-step", r.step);
    board.replaceChildren(controls, centre, seats);
    list.replaceChildren(...r.events.map((e, k) => eventRow(e, {
      auto: auto.has(e.seq), current: k === r.step, onclick: () => go(k),
    })));
    // Scroll the list only (not the page) to the current event.
    const current = list.querySelector(".current");
    if (current) list.scrollTop = current.offsetTop - list.clientHeight / 2;
  }

  document.onkeydown = (ev) => {
    if (ev.target instanceof HTMLInputElement || ev.target instanceof HTMLTextAreaElement) return;
    const to = { ArrowRight: r.step + 1, ArrowLeft: r.step - 1, Home: 0, End: r.last_step }[ev.key];
    if (to !== undefined) {
      ev.preventDefault();
      go(to);
    }
  };
  draw();
  const back = player ? null : h("p", {}, h("a", { href: `#/tables/${id}` }, "← the table"));
  // The game's result as an admin corrected it, beside the round's own.
  const c = r.corrected;
  const corrected = c && h("p", { class: "panel", id: "replay-corrected" },
    `An admin corrected this game's result (${describeCorrection(c.correction)}): `,
    c.ranking.map((p) => `${p.place}. ${names[p.seat] ?? `seat ${p.seat}`} (${c.totals[p.seat]})`).join(", "),
    c.rated ? "." : "; the game is not rated.");
  show(h("h1", {}, `Round ${n} of table ${id.slice(0, 8)}`), back, corrected, dealsVerdict(r.deals),
    h("p", { class: "muted" }, "← → step through the round (Home, End: first, last); ⚙ marks a move the server made for a seat."),
    board, h("h2", {}, "Events of the round"), list);
}

// ----- a player's page (public) -----

const decimals = (x, n = 1) => Number(x).toFixed(n);

async function playerPage(username) {
  document.title = `Huit: ${username}`;
  const brand = document.querySelector(".brand span");
  if (brand) brand.textContent = "players";
  const p = await get(`/players/${encodeURIComponent(username)}`);
  document.title = `Huit: ${p.username}`;
  const ratings = p.stats.length === 0
    ? h("p", { class: "muted", id: "no-ratings" }, "No rated game yet: ratings count finished games between people.")
    : h("div", { class: "scroll" }, h("table", { class: "list", id: "ratings" },
      h("thead", {}, h("tr", {}, ["Ruleset", "Rating", "Deviation", "Games", "Wins", "Average place", "Points"].map((t) => h("th", {}, t)))),
      h("tbody", {}, p.stats.map((s) => h("tr", { "data-ruleset": s.ruleset },
        h("td", {}, s.ruleset),
        // A provisional rating is marked with "?", as lichess does.
        h("td", { class: "rating" }, decimals(s.rating), s.provisional ? h("abbr", { title: "provisional: too few games yet" }, "?") : ""),
        h("td", {}, decimals(s.rating_deviation)),
        h("td", {}, s.games), h("td", {}, s.wins),
        h("td", {}, decimals(s.average_place, 2)), h("td", {}, s.points))))));
  const games = p.recent.length === 0 ? null
    : h("div", { class: "scroll" }, h("table", { class: "list", id: "recent" },
      h("thead", {}, h("tr", {}, ["Ended", "Ruleset", "Place", "Total", "Rating", ""].map((t) => h("th", {}, t)))),
      h("tbody", {}, p.recent.map((g) => {
        const change = g.rating_after - g.rating_before;
        return h("tr", {},
          h("td", {}, when(g.ended_at)), h("td", {}, g.ruleset),
          h("td", {}, g.won ? h("strong", {}, g.place) : g.place), h("td", {}, g.total),
          h("td", {}, decimals(g.rating_after), " ",
            h("span", { class: change >= 0 ? "gain" : "loss" }, `${change >= 0 ? "+" : ""}${decimals(change)}`)),
          h("td", {}, g.table_id === null ? h("span", { class: "muted" }, "private")
            : h("a", { class: "replay-link", href: `/replay/${g.table_id}/1` }, "replay")));
      }))));
  show(h("h1", { id: "player" }, p.username),
    h("h2", {}, "Ratings"), ratings,
    games && h("h2", {}, "Last rated games"), games,
    games && h("p", { class: "muted" }, "A replay opens for the table's players (and administrators), who log in to see it."));
}

// ----- routing -----

async function route() {
  document.onkeydown = null;
  const player = location.pathname.match(/^\/players\/([A-Za-z0-9_-]{3,32})$/);
  if (player) {
    try {
      return await playerPage(player[1]);
    } catch (e) {
      return show(h("h1", {}, player[1]), failure(e));
    }
  }
  const replay = location.pathname.match(/^\/replay\/([0-9a-f-]{36})\/(\d+)$/);
  const fragment = new URLSearchParams(location.hash.replace(/^#\/?/, ""));
  if (replay && fragment.has("token")) {
    token = fragment.get("token");
    linked = true;
    history.replaceState(null, "", location.pathname);
  }
  if (replay) {
    document.title = `Huit replay: round ${replay[2]}`;
    const brand = document.querySelector(".brand span");
    if (brand) brand.textContent = "replay";
  }
  try {
    if (!(await whoAmI())) return loginForm(null, replay);
  } catch (e) {
    return loginForm(e.message, replay);
  }
  header();
  try {
    if (replay) {
      const step = fragment.get("step");
      return await replayPage(replay[1], Number(replay[2]), step === null ? 0 : Number(step), { player: true });
    }
    if (me.role !== "admin") {
      return show(h("p", { class: "error" }, "The console is for administrators. Players open their replays by the link their app gives them."));
    }
    const [path, query] = location.hash.replace(/^#/, "").split("?");
    const params = new URLSearchParams(query || "");
    let m;
    if ((m = path.match(/^\/disputes\/([0-9a-f-]{36})$/))) return await disputePage(m[1]);
    if ((m = path.match(/^\/tables\/([0-9a-f-]{36})\/rounds\/(\d+)$/))) {
      const step = params.get("step");
      return await replayPage(m[1], Number(m[2]), step === null ? 0 : Number(step));
    }
    if ((m = path.match(/^\/tables\/([0-9a-f-]{36})$/))) return await tablePage(m[1]);
    if ((m = path.match(/^\/accounts\/([0-9a-f-]{36})$/))) return await accountPage(m[1]);
    if (path === "/webhooks") return await webhooksPage();
    if (path === "/pushes") return await pushesPage();
    return await disputesPage(params);
  } catch (e) {
    show(failure(e));
  }
}

window.addEventListener("hashchange", () => {
  if (location.pathname.startsWith("/admin")) route();
});
route();
