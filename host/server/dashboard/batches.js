// Batches (admins only): from the instance list's filter, a bulk action
// that shows its dry run (how many instances, and which) before it
// starts; the batches, each with its progress; and one batch, with its
// failures and, while it runs, Stop.

import {api, query} from "./api.js";
import {canChange, refresh} from "./app.js";
import {h, instanceLink, json, replace, time} from "./dom.js";

// actions are what a batch does, each with the arguments it takes.
const actions = {
  cancel: ["reason"],
  terminate: ["reason"],
  raise: ["event", "data"],
  reset: ["resetTo", "module"],
  upgrade: ["module"],
};

// labels and hints of the arguments' inputs.
const args = {
  reason: ["Reason", "why, for the histories"],
  event: ["Event", "the event's name"],
  data: ["Data", "JSON (empty: null)"],
  resetTo: ["Reset to", "last-failure, start or an event's number"],
  module: ["Module", "a module hash, or its first digits"],
};

// bulkAction returns the bulk action control of the instance list, for
// the filter it shows (without its cursor); null when the token may not
// change anything or the filter selects every instance.
export function bulkAction(filter) {
  if (canChange()) return null;
  const q = {};
  for (const [k, v] of Object.entries(filter)) if (k !== "cursor" && (Array.isArray(v) ? v.length : v)) q[k] = v;
  if (!Object.keys(q).length) return h("p", {class: "card muted", id: "bulk"}, "Filter the instances to act on them all at once (a batch).");
  const action = h("select", {id: "bulk-action"}, Object.keys(actions).map(a => h("option", {value: a}, a)));
  const inputs = {};
  for (const [k, [label, hint]] of Object.entries(args)) {
    inputs[k] = h("input", {id: "bulk-" + k, placeholder: hint, size: k === "data" ? 24 : 16, spellcheck: false});
  }
  const rate = h("input", {id: "bulk-rate", type: "number", min: 0, step: "any", placeholder: "no limit", size: 6});
  const fields = h("span", {class: "bulk-fields"});
  const result = h("div", {id: "bulk-result"});
  const start = h("button", {type: "button", id: "bulk-start", hidden: true}, "Start batch");
  const showFields = () => replace(fields, actions[action.value].map(k => h("label", {}, args[k][0] + " ", inputs[k])));
  action.addEventListener("change", () => {
    showFields();
    start.hidden = true;
    replace(result);
  });
  showFields();
  const request = dryRun => {
    const body = {action: action.value, dryRun};
    for (const k of actions[action.value]) {
      const v = inputs[k].value.trim();
      if (v) body[k] = k === "data" ? JSON.parse(v) : v;
    }
    if (rate.value) body.rate = Number(rate.value);
    return api("/v1/batches" + query(q), {method: "POST", body});
  };
  const fail = err => replace(result, h("p", {class: "action-message error"}, "refused: " + err.message));
  const dry = h("button", {type: "button", id: "bulk-dry-run", onclick: async () => {
    start.hidden = true;
    try {
      const d = await request(true);
      replace(result,
        h("p", {id: "bulk-matched"}, `${action.value} would take ${d.matched} instance${d.matched === 1 ? "" : "s"}` +
          (d.matched > d.ids.length ? ` (the first ${d.ids.length} shown)` : "") + ":"),
        h("ul", {id: "bulk-ids", class: "ids"}, d.ids.map(id => h("li", {}, instanceLink(id)))));
      start.hidden = d.matched === 0;
    } catch (err) {
      fail(err);
    }
  }}, "Dry run");
  start.addEventListener("click", async () => {
    start.disabled = true;
    try {
      const b = await request(false);
      location.hash = "#/batches/" + b.id;
    } catch (err) {
      fail(err);
    } finally {
      start.disabled = false;
    }
  });
  return h("form", {class: "card bulk", id: "bulk", onsubmit: e => e.preventDefault()},
    h("strong", {}, "Act on every instance this filter selects "),
    h("label", {}, "Action ", action), " ", fields, " ", h("label", {}, "Rate/s ", rate), " ", dry, " ", start, result);
}

// progress shows how far a batch is, as a bar and counts.
function progress(b) {
  const taken = b.done + b.failed + b.skipped;
  return h("span", {class: "progress"},
    h("progress", {max: Math.max(b.matched, 1), value: b.matched ? taken : 1}), " ",
    `${taken} of ${b.matched}: ${b.done} done, ${b.failed} failed, ${b.skipped} skipped`);
}

function state(b) {
  const cls = {running: "status-running", completed: "status-completed", stopped: "status-canceled"}[b.state] || "";
  return h("span", {class: "badge " + cls, dataset: {state: b.state}}, b.state);
}

// what says what a batch does.
function what(b) {
  const r = b.request || {};
  switch (b.action) {
    case "raise": return `raise ${r.event} ${json(r.data === undefined ? null : r.data)}`;
    case "reset": return `reset to ${r.resetTo}` + (r.module ? ` on ${r.module.slice(0, 12)}` : "");
    case "upgrade": return `upgrade to ${(r.module || "").slice(0, 12)}`;
  }
  return b.action + (r.reason ? `: ${r.reason}` : "");
}

// filterText shows a batch's filter, a query, for people.
function filterText(f) {
  return [...new URLSearchParams(f)].map(([k, v]) => `${k}=${v}`).join(" ");
}

export function batchesView() {
  const body = h("tbody");
  const el = h("section", {id: "batches-page"},
    h("h1", {}, "Batches"),
    h("table", {class: "list", id: "batches"},
      h("thead", {}, h("tr", {}, ["Batch", "Action", "Filter", "State", "Progress", "By", "Started"].map(c => h("th", {}, c)))),
      body));
  let last = "";
  return {el, async refresh() {
    const {batches} = await api("/v1/batches");
    const now = JSON.stringify(batches);
    if (now === last) return;
    last = now;
    replace(body, batches.length ? batches.map(b => h("tr", {dataset: {batch: b.id}},
      h("td", {}, h("a", {href: "#/batches/" + b.id}, "#" + b.id)),
      h("td", {}, what(b)),
      h("td", {class: "mono"}, h("a", {href: "#/instances?" + b.filter}, filterText(b.filter))),
      h("td", {}, state(b)),
      h("td", {}, progress(b)),
      h("td", {}, b.by || ""),
      h("td", {class: "time"}, time(b.createdAt))))
      : h("tr", {}, h("td", {colspan: 7, class: "muted"}, "No batch: filter the instances, then act on them all from the instance list.")));
  }};
}

export function batchView(id) {
  const overview = h("dl", {class: "card facts", id: "batch-overview"});
  const buttons = h("div", {class: "actions", id: "batch-actions"});
  const message = h("p", {class: "action-message", id: "batch-message"});
  const failures = h("tbody");
  const el = h("section", {id: "batch-page"},
    h("h1", {}, "Batch ", h("span", {class: "mono"}, "#" + id)),
    overview, buttons, message,
    h("h2", {}, "Failures"),
    h("table", {class: "list", id: "batch-failures"},
      h("thead", {}, h("tr", {}, ["Instance", "Why"].map(c => h("th", {}, c)))),
      failures));
  let last = "";
  return {el, async refresh() {
    const b = await api("/v1/batches/" + encodeURIComponent(id));
    const now = JSON.stringify(b);
    if (now === last) return;
    last = now;
    const row = (k, v) => [h("dt", {}, k), h("dd", {}, v)];
    replace(overview,
      row("Action", what(b)),
      row("Filter", h("a", {class: "mono", href: "#/instances?" + b.filter}, filterText(b.filter))),
      row("State", state(b)),
      row("Progress", h("span", {id: "batch-progress"}, progress(b))),
      row("Rate", b.request && b.request.rate ? `${b.request.rate} a second` : "no limit"),
      b.lastInstance ? row("Last instance", instanceLink(b.lastInstance)) : null,
      b.by ? row("By", b.by) : null,
      row("Started", time(b.createdAt)), row("Updated", time(b.updatedAt)));
    replace(buttons, b.state === "running" ? h("button", {type: "button", id: "batch-stop", onclick: async () => {
      try {
        await api("/v1/batches/" + encodeURIComponent(id) + "/stop", {method: "POST", body: {}});
        message.className = "action-message ok";
        message.textContent = "Stopped: it takes no more instances.";
        refresh();
      } catch (err) {
        message.className = "action-message error";
        message.textContent = "stop refused: " + err.message;
      }
    }}, "Stop") : null);
    replace(failures, (b.failures || []).length ? b.failures.map(f => h("tr", {}, h("td", {}, instanceLink(f.instanceId)), h("td", {}, f.error)))
      : h("tr", {}, h("td", {colspan: 2, class: "muted"}, "None.")));
  }};
}
