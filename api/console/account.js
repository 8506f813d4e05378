// The page where a person deletes their Huit account outside the app
// (Google Play's web link; docs/API.md "Accounts"): log in, see what is
// erased and what stays, download one's data, delete. It reads only the
// public HTTP API, with the token of this page's log-in, kept in this
// tab alone. Plain ES module, no build step, no library.

import { Problem, h, loginFields, request } from "/admin/common.js";

const app = document.getElementById("app");
const who = document.getElementById("who");
let token = sessionStorage.getItem("huit.account");

async function call(method, path, body) {
  const res = await request(method, path, body, token);
  const text = await res.text();
  const json = (res.headers.get("content-type") || "").includes("json") && text ? JSON.parse(text) : null;
  if (res.status === 401 && json?.code === "unauthorized") {
    forget();
    throw new Problem(401, { detail: "Your session has ended: log in again." });
  }
  if (!res.ok) throw new Problem(res.status, json || { detail: text });
  return json;
}

function forget() {
  sessionStorage.removeItem("huit.account");
  token = null;
}

const show = (...nodes) => app.replaceChildren(...nodes.filter(Boolean));
const when = (at) => new Date(at).toLocaleString();

function loginForm(note) {
  const error = h("p", { class: "error", role: "alert" });
  const form = loginFields();
  form.addEventListener("submit", async (ev) => {
    ev.preventDefault();
    const data = new FormData(form);
    try {
      const session = await call("POST", "/sessions", {
        username: data.get("username"),
        password: data.get("password"),
      });
      token = session.token;
      sessionStorage.setItem("huit.account", token);
      account(session.deletion_cancelled);
    } catch (e) {
      error.textContent = e.message;
    }
  });
  who.replaceChildren();
  show(h("h1", {}, "Delete your Huit account"),
    note && h("p", { class: "panel", id: "notice" }, note),
    h("p", {}, "Log in with the account you want to delete. A guest account, which has no password, is deleted from the app."),
    form, error);
}

async function account(cancelled) {
  let me, profile, sessions;
  try {
    me = await call("GET", "/me");
    sessions = (await call("GET", "/me/sessions")).sessions;
    profile = await call("GET", `/players/${encodeURIComponent(me.username)}`).catch(() => null);
  } catch (e) {
    loginForm(e.message);
    return;
  }
  const games = (profile?.stats || []).reduce((n, s) => n + s.games, 0);
  who.replaceChildren(`${me.username} `, h("a", { href: "#", onclick: (ev) => { ev.preventDefault(); logOut(); } }, "log out"));
  const error = h("p", { class: "error", role: "alert" });
  const form = h("form", { class: "panel", id: "delete" },
    h("label", {}, "Your password, again",
      h("input", { name: "password", type: "password", autocomplete: "current-password", required: true })),
    h("label", { class: "check" }, h("input", { name: "sure", type: "checkbox", required: true }),
      " I understand that my account will be erased"),
    h("button", { type: "submit", class: "danger" }, "Delete my account"));
  form.addEventListener("submit", async (ev) => {
    ev.preventDefault();
    const data = new FormData(form);
    try {
      const deletion = await call("DELETE", "/me", { password: data.get("password") });
      forget();
      deleted(me.username, deletion.erase_at);
    } catch (e) {
      error.textContent = e.message;
    }
  });
  show(h("h1", {}, `Delete the account ${me.username}`),
    cancelled && h("p", { class: "panel", id: "notice" },
      "This log-in cancelled the deletion you had asked for: your account stays. Delete it again below if you still want to."),
    h("section", { class: "panel", id: "erased" },
      h("h2", {}, "What is erased"),
      h("ul", {},
        h("li", {}, `Your name, ${me.username}, and your password: the name may be taken by someone else.`),
        h("li", {}, `Your sessions: you are logged out of every device (${sessions.length} now).`),
        h("li", {}, `Your statistics and ratings (${games} rated games), your notifications and your devices.`))),
    h("section", { class: "panel", id: "kept" },
      h("h2", {}, "What stays"),
      h("p", {}, "The games you played stay, for the other players: your seat shows as an erased player, " +
        "never your name, and every game's log still verifies. Your games in progress are resigned now.")),
    h("p", {}, "Your account is erased after a grace period: the date is shown once you ask. " +
      "Logging in before then cancels the deletion. ",
      h("a", { href: "#", id: "export", onclick: download }, "Download your data"), " first if you want a copy."),
    form, error);
}

async function download(ev) {
  ev.preventDefault();
  const data = await call("GET", "/me/export");
  const blob = new Blob([JSON.stringify(data, null, 2)], { type: "application/json" });
  const link = h("a", { href: URL.createObjectURL(blob), download: "huit-export.json" });
  link.click();
  URL.revokeObjectURL(link.href);
}

function deleted(name, eraseAt) {
  who.replaceChildren();
  show(h("h1", {}, "Your account will be erased"),
    h("p", { class: "panel", id: "deleted", "data-erase-at": eraseAt },
      `The account ${name} is logged out everywhere and will be erased on ${when(eraseAt)}. ` +
      "Logging in before then cancels the deletion."));
}

function logOut() {
  call("DELETE", "/sessions/current").catch(() => {});
  forget();
  loginForm();
}

if (token) account(false);
else loginForm();
