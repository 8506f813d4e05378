// What the pages served by huit share (the console, the account page):
// a call to the API, the problem+json error of one, and building elements.

/** `method` on `/v1` + `path`, with `token` (if any) and `body` as JSON (if
 * any): the fetch's response. */
export function request(method, path, body, token) {
  const headers = { Accept: "application/json" };
  if (token) headers.Authorization = `Bearer ${token}`;
  if (body !== undefined) headers["Content-Type"] = "application/json";
  return fetch(`/v1${path}`, {
    method,
    headers,
    body: body === undefined ? undefined : JSON.stringify(body),
  });
}

/** An API refusal: its status, and the problem's detail and code. */
export class Problem extends Error {
  constructor(status, body) {
    super(body?.detail || `HTTP ${status}`);
    this.status = status;
    this.code = body?.code;
  }
}

/** An element with attributes (`on…`: listeners) and children. */
export function h(tag, attrs = {}, ...children) {
  const el = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) {
    if (v === undefined || v === null || v === false) continue;
    if (k === "class") el.className = v;
    else if (k.startsWith("on")) el.addEventListener(k.slice(2), v);
    else el.setAttribute(k, v === true ? "" : v);
  }
  for (const c of children.flat(Infinity)) {
    if (c === undefined || c === null || c === false) continue;
    el.append(c instanceof Node ? c : document.createTextNode(String(c)));
  }
  return el;
}

/** A page's log-in form (`#login`): a username, a password, a button. */
export function loginFields() {
  return h("form", { class: "panel inline", id: "login" },
    h("label", {}, "Username", h("input", { name: "username", autocomplete: "username", required: true })),
    h("label", {}, "Password", h("input", { name: "password", type: "password", autocomplete: "current-password", required: true })),
    h("button", { type: "submit" }, "Log in"));
}
