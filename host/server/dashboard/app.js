// The dashboard: a page per route of the location's hash, each refreshed
// from the JSON API every 2 seconds while the tab is visible.
//
//   #/instances?status=…&name=…   the instances, filtered, a page at a time
//   #/instances/ID?execution=N    one instance: history, executions, children, actions
//   #/modules                     the deployed modules
//   #/queue                       the work waiting
//   #/schedules                   the schedules
//   #/schedules/NAME              one schedule: next runs, last runs, actions
//   #/batches                     the batches (admin token)
//   #/batches/ID                  one batch: its progress and failures, Stop
//
// A page's section says which location it shows (data-hash) and, once it
// has shown what the host said, data-loaded.

import {api, APIError, setToken, token} from "./api.js";
import {batchesView, batchView} from "./batches.js";
import {h, replace} from "./dom.js";
import {instancesView} from "./instances.js";
import {instanceView} from "./instance.js";
import {modulesView} from "./modules.js";
import {queueView} from "./queue.js";
import {scheduleView, schedulesView} from "./schedules.js";

// pollMillis is how often the page asks the host again.
const pollMillis = 2000;

const main = document.getElementById("main");
const accessEl = document.getElementById("access");
const forget = document.getElementById("forget");

// session is what the token may do: access is "admin" or "read".
export const session = {access: "", tokenRequired: false};

// canChange says whether the token may change anything, and why not.
export function canChange() {
  return session.access === "admin" ? "" : "needs the admin token: this token may only read";
}

let current = null; // the view shown: {el, refresh}
let busy = false;

function route() {
  const hash = location.hash.replace(/^#/, "") || "/instances";
  const [path, q] = hash.split("?");
  const params = new URLSearchParams(q || "");
  const parts = path.split("/").filter(Boolean).map(decodeURIComponent);
  for (const a of document.querySelectorAll("nav a")) a.classList.toggle("active", a.dataset.nav === parts[0]);
  switch (parts[0]) {
    case "modules":
      return modulesView();
    case "queue":
      return queueView();
    case "schedules":
      return parts.length > 1 ? scheduleView(parts.slice(1).join("/")) : schedulesView();
    case "batches":
      return parts.length > 1 ? batchView(parts[1]) : batchesView();
    case "instances":
      if (parts.length > 1) return instanceView(parts.slice(1).join("/"), params);
  }
  return instancesView(params);
}

// show mounts the view of the location, once the token is known good.
async function show() {
  current = route();
  current.el.dataset.hash = location.hash;
  replace(main, current.el);
  await refresh();
}

// refresh asks the host for what the view shows; a refusal of the token
// asks for another.
export async function refresh() {
  if (!current || busy) return;
  busy = true;
  const view = current;
  try {
    await view.refresh();
    view.el.querySelector(".load-error")?.remove();
    view.el.dataset.loaded = "true";
  } catch (e) {
    if (e instanceof APIError && e.status === 401) {
      askToken(e.message);
      return;
    }
    let banner = view.el.querySelector(".load-error");
    if (!banner) {
      banner = h("p", {class: "load-error error"});
      view.el.prepend(banner);
    }
    banner.textContent = e.message;
  } finally {
    busy = false;
  }
}

// askToken replaces the page with a form that asks for the token.
function askToken(why) {
  current = null;
  setToken("");
  showAccess();
  const input = h("input", {type: "password", id: "token", name: "token", autocomplete: "off", required: true, size: 48});
  replace(main, h("form", {class: "card token-form", id: "token-form", onsubmit: e => {
    e.preventDefault();
    setToken(input.value.trim());
    start();
  }},
    h("h1", {}, "This host asks for a token"),
    h("p", {class: "error"}, why),
    h("p", {}, "Give the admin token to act on instances, or the read-only token to look. The dashboard keeps it in this tab only, and sends it to this host as a bearer token."),
    h("label", {}, "Token ", input), " ",
    h("button", {type: "submit"}, "Open")));
  input.focus();
}

function showAccess() {
  const labels = {admin: session.tokenRequired ? "admin token" : "no token needed", read: "read-only token"};
  accessEl.textContent = labels[session.access] || "";
  accessEl.dataset.access = session.access;
  // Batches are the admin's: another token may not read them.
  document.querySelector('nav a[data-nav="batches"]').hidden = session.access !== "admin";
  forget.hidden = !token();
}

// start learns what the token may do, then shows the page.
async function start() {
  try {
    Object.assign(session, await api("/v1/access"));
  } catch (e) {
    session.access = "";
    if (e instanceof APIError && e.status === 401) askToken(e.message);
    else replace(main, h("p", {class: "error load-error"}, "The host does not answer: " + e.message));
    return;
  }
  showAccess();
  await show();
}

forget.addEventListener("click", () => {
  setToken("");
  session.access = "";
  start();
});
addEventListener("hashchange", () => {
  if (current) show();
});
setInterval(() => {
  if (!document.hidden) refresh();
}, pollMillis);
start();
