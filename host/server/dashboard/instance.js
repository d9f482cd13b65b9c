// One instance: what it is, what it may be asked (raise, update, cancel,
// terminate, purge), a query to run, the handlers it has, what it waits
// on and its last progress, its custom status, input and result or failure,
// its executions, the history of one of them as a timeline, and its tree
// of children.

import {api, query} from "./api.js";
import {canChange, refresh} from "./app.js";
import {ago, badge, duration, h, instanceLink, isTerminal, json, replace, short, time} from "./dom.js";

export function instanceView(id, params) {
  const chosen = Number(params.get("execution")) || 0; // 0: the current one
  const path = "/v1/instances/" + encodeURIComponent(id);

  const header = h("div", {class: "instance-header"});
  const actions = h("div", {class: "actions card", id: "actions"});
  const ask = h("div", {class: "card query", id: "query"});
  const replay = h("div", {class: "card replay", id: "replay"});
  const overview = h("div", {class: "overview"});
  const executions = h("div", {id: "executions"});
  const history = h("div", {id: "timeline"});
  const children = h("div", {id: "children"});
  const el = h("section", {id: "instance-page"},
    header, actions, ask, overview,
    h("h2", {}, "History"), replay, history,
    h("h2", {}, "Executions"), executions,
    h("h2", {}, "Children"), children);

  const act = newActions(id, path, actions);
  newQuery(path, ask);
  let lastDetails = "", lastHistory = "", lastAccess = "";
  let events = [], live = null;
  // diverged is the event a replay on another module diverged at.
  let diverged = 0;
  const redraw = () => replace(history, timeline(events, live, diverged));
  const check = newReplay(path, chosen, replay, eventId => {
    diverged = eventId;
    redraw();
  });
  return {el, async refresh() {
    const details = await api(path);
    const execution = chosen || details.executionId;
    events = (await api(path + "/history" + query({execution: chosen || ""}))).events;
    const detailsJSON = JSON.stringify(details);
    const access = canChange();
    if (detailsJSON !== lastDetails || access !== lastAccess) {
      lastDetails = detailsJSON;
      lastAccess = access;
      showHeader(header, details);
      act.update(details);
      showOverview(overview, details);
      showExecutions(executions, id, details, execution);
      showChildren(children, details);
      await check.update(details);
    }
    // A running execution's open operations grow with the clock: draw
    // it every time; a finished one only when it changes.
    const historyJSON = JSON.stringify(events);
    if (historyJSON !== lastHistory || !isTerminal(details.status)) {
      lastHistory = historyJSON;
      live = execution === details.executionId ? details : null;
      redraw();
    }
  }};
}

function showHeader(el, d) {
  replace(el,
    h("h1", {}, h("span", {class: "mono", id: "instance-id"}, d.id), " ", h("span", {id: "instance-status"}, badge(d.status))),
    h("dl", {class: "facts"},
      h("dt", {}, "Orchestration"), h("dd", {}, h("a", {href: "#/instances" + query({name: d.name})}, d.name)),
      h("dt", {}, "Module"), h("dd", {class: "mono", title: d.moduleHash}, h("a", {href: "#/modules"}, short(d.moduleHash))),
      h("dt", {}, "Execution"), h("dd", {}, String(d.executionId)),
      h("dt", {}, "Created"), h("dd", {class: "time"}, time(d.createdAt)),
      h("dt", {}, isTerminal(d.status) ? "Finished" : "Updated"), h("dd", {class: "time"}, time(d.updatedAt)),
      d.parentId ? [h("dt", {}, "Parent"), h("dd", {}, instanceLink(d.parentId))] : null));
}

function showOverview(el, d) {
  replace(el,
    (d.warnings || []).map(w => h("div", {class: "card warning"}, h("h3", {}, "Warning"), h("p", {}, w))),
    h("div", {class: "card"}, h("h3", {}, "Custom status"),
      h("p", {id: "custom-status", class: d.customStatus ? "" : "muted"}, d.customStatus || "none set")),
    isTerminal(d.status) ? null : waitingCard(d),
    d.attributes ? h("div", {class: "card", id: "attributes"}, h("h3", {}, "Search attributes"),
      h("table", {class: "list"}, h("tbody", {}, d.attributes.map(attributeRow)))) : null,
    h("div", {class: "card"}, h("h3", {}, "Input"), h("pre", {id: "input"}, json(d.input))),
    d.result !== undefined ? h("div", {class: "card"}, h("h3", {}, "Result"), h("pre", {id: "result"}, json(d.result))) : null,
    d.failure ? h("div", {class: "card failure", id: "failure"},
      h("h3", {}, failureTitle(d)),
      h("pre", {}, d.failure.message),
      d.failure.details ? h("details", {}, h("summary", {}, "Details"), h("pre", {}, d.failure.details)) : null) : null);
}

// waitingCard shows what a running instance waits on (its activity calls,
// then its timers, events, children and updates) and when a turn last
// changed it.
function waitingCard(d) {
  const waits = d.waitingOn || [], activities = d.activities || [];
  return h("div", {class: "card", id: "waiting"}, h("h3", {}, "Waiting on"),
    d.lastProgress ? h("p", {id: "last-progress"}, "Last progress ", h("span", {class: "time"}, time(d.lastProgress)),
      " (", ago(d.lastProgress), ")") : null,
    activities.length ? h("ul", {id: "activities"}, activities.map(activityItem)) : null,
    waits.length ? h("ul", {id: "waits"}, waits.map(waitItem)) : null,
    !activities.length && !waits.length ? h("p", {class: "muted"}, "Nothing yet: its next turn says.") : null);
}

// attributeRow shows a search attribute, its value a link to the
// instances that have the same (for a keyword list, each element's).
function attributeRow(a) {
  const values = a.type === "keywords" ? a.value : [a.value];
  const link = v => h("a", {href: "#/instances" + query({where: `${a.name} = ${JSON.stringify(v)}`})}, JSON.stringify(v));
  return h("tr", {dataset: {name: a.name}}, h("td", {class: "mono"}, a.name),
    h("td", {}, values.flatMap((v, i) => i ? [", ", link(v)] : [link(v)])), h("td", {class: "muted"}, a.type));
}

// activityItem describes an activity call the instance waits on: where it
// runs, its attempt, its last error and next retry, and its last heartbeat.
function activityItem(a) {
  const where = a.queue ? ["on task queue ", h("span", {class: "mono"}, a.queue)] : "in its module";
  let state = a.running ? `attempt ${a.attempt} running` :
    (a.noWorker ? "waiting: no worker has polled its queue" : "waiting for a worker") + (a.attempt ? `, after ${a.attempt} attempt(s)` : "");
  if (a.nextRetry) state = [`attempt ${a.attempt} failed, next attempt at `, h("span", {class: "time"}, time(a.nextRetry))];
  return h("li", {}, h("span", {class: "chip"}, "activity"), " ", h("b", {}, a.activity), " ", where, ": ", state, ", since ", time(a.since),
    a.timeoutMs ? `, each attempt's deadline ${duration(a.timeoutMs)}` : null,
    a.lastError ? [h("br"), "last error: ", h("code", {class: "last-error"}, a.lastError)] : null,
    a.lastHeartbeat !== undefined ? [h("br"), "last heartbeat: ", h("code", {}, JSON.stringify(a.lastHeartbeat))] : null);
}

// waitItem describes a timer, an event, a child or an update the instance
// waits on.
function waitItem(w) {
  const what = {
    timer: () => ["due at ", h("span", {class: "time"}, time(w.due))],
    event: () => [h("b", {}, w.name), w.persistent ? " (persistent)" : ""],
    child: () => [h("b", {}, w.name), " ", instanceLink(w.id)],
    update: () => w.id ? [h("b", {}, w.name), " ", h("span", {class: "mono"}, w.id), ", its handler running"] : "of any name: it waits on nothing else",
  }[w.kind];
  return h("li", {dataset: {kind: w.kind}}, h("span", {class: "chip"}, w.kind), " ", what ? what() : "",
    w.since ? [", since ", time(w.since)] : null);
}

function failureTitle(d) {
  if (/^nondeterminism at event \d+/.test(d.failure.message)) return "Nondeterminism: the code no longer replays its history";
  return {Canceled: "Canceled", Terminated: "Terminated"}[d.status] || "Failure";
}

function showExecutions(el, id, d, shown) {
  replace(el, h("table", {class: "list"},
    h("thead", {}, h("tr", {}, ["Execution", "Events", "Started", "Ended", "End"].map(c => h("th", {}, c)))),
    h("tbody", {}, d.executions.map(x => h("tr", {class: x.id === shown ? "selected" : ""},
      h("td", {}, x.id === shown ? String(x.id) + " (shown)" :
        h("a", {href: "#/instances/" + encodeURIComponent(id) + (x.id === d.executionId ? "" : "?execution=" + x.id)}, String(x.id))),
      h("td", {}, String(x.events)),
      h("td", {class: "time"}, time(x.startedAt)),
      h("td", {class: "time"}, time(x.endedAt)),
      h("td", {}, x.end || (x.id === d.executionId ? "running" : "")))))));
}

// showChildren shows the instance's children as a tree: each child opens
// to its own children.
function showChildren(el, d) {
  if (!d.children.length) {
    replace(el, h("p", {class: "muted"}, "It started no instance."));
    return;
  }
  replace(el, h("ul", {class: "tree"}, d.children.map(childNode)),
    d.childrenNext ? h("a", {href: "#/instances" + query({parent: d.id})}, "All its children…") : null);
}

function childNode(c) {
  const below = h("ul", {class: "tree"});
  let loaded = false;
  const node = h("details", {ontoggle: async () => {
    if (!node.open || loaded) return;
    loaded = true;
    try {
      const page = await api("/v1/instances" + query({parent: c.id, limit: 100}));
      replace(below, page.instances.length ? page.instances.map(childNode) : h("li", {class: "muted"}, "no children"));
    } catch (e) {
      replace(below, h("li", {class: "error"}, e.message));
    }
  }}, h("summary", {}, instanceLink(c.id), " ", c.name, " ", badge(c.status), c.customStatus ? h("span", {class: "muted"}, " " + c.customStatus) : null), below);
  return h("li", {dataset: {id: c.id}}, node);
}

// The completions of each kind of operation, for durations.
const completes = {
  ActivityScheduled: ["ActivityCompleted", "ActivityFailed"],
  TimerCreated: ["TimerFired", "TimerCancelled"],
  SubOrchestrationScheduled: ["SubOrchestrationCompleted", "SubOrchestrationFailed"],
  ExternalSubscribed: ["ExternalEvent", "ExternalSubscribedCancelled"],
  ExternalSubscribedPersistent: ["ExternalEventPersistent", "ExternalSubscribedCancelled"],
};

// timeline draws a history: a row per event with its time from the
// start, kind, name, data, the duration of the operation it opens (or
// closes), and a bar placing that operation in the execution's span. A
// failure is marked, and so is the event a nondeterminism or a crash
// names is highlighted, or the one a replay on another module diverged at
// (diverged). live is the instance when the history is its current
// execution's (its open operations run until now).
function timeline(events, live, diverged) {
  if (!events.length) return h("p", {class: "muted"}, "No history yet: the instance has not run its first turn.");
  const t0 = Date.parse(events[0].time);
  const running = live && !isTerminal(live.status);
  const end = running ? Math.max(Date.now(), Date.parse(events.at(-1).time)) : Date.parse(events.at(-1).time);
  const span = Math.max(end - t0, 1);
  const byId = new Map(events.map(e => [e.id, e]));
  const closedBy = new Map();
  for (const e of events) {
    const opener = e.scheduleId && byId.get(e.scheduleId);
    if (opener && completes[opener.kind]?.includes(e.kind) && !closedBy.has(opener.id)) closedBy.set(opener.id, e);
  }
  const failure = live?.failure?.message || events.find(e => e.kind === "OrchestrationFailed" || e.kind === "OrchestrationCanceled")?.failure?.message || "";
  const named = /(?:nondeterminism at event|applying event) (\d+)/.exec(failure);
  const blamed = diverged || (named ? Number(named[1]) : 0);

  return h("table", {class: "timeline list"},
    h("thead", {}, h("tr", {}, ["#", "Time (UTC)", "+", "Kind", "Name", "Data", "Duration", ""].map(c => h("th", {}, c)))),
    h("tbody", {}, events.map(e => {
      const at = Date.parse(e.time);
      let took = null, open = false;
      if (completes[e.kind]) {
        const done = closedBy.get(e.id);
        if (done) took = Date.parse(done.time) - at;
        else if (running) {
          took = Date.now() - at;
          open = true;
        }
      }
      const opener = e.scheduleId && byId.get(e.scheduleId);
      const classes = ["kind-" + category(e.kind)];
      if (e.failure || e.kind === "OrchestrationTerminated") classes.push("failed");
      if (e.id === blamed) classes.push("blamed");
      if (open) classes.push("open");
      return h("tr", {class: classes.join(" "), dataset: {event: e.id, kind: e.kind}},
        h("td", {class: "num"}, String(e.id)),
        h("td", {class: "time"}, time(e.time)),
        h("td", {class: "num"}, "+" + duration(at - t0)),
        h("td", {class: "kind"}, e.kind),
        h("td", {}, e.name || (e.instanceId && e.kind !== "OrchestrationStarted" ? instanceLink(e.instanceId) : "")),
        h("td", {class: "data"}, data(e, opener), e.id === blamed ? h("div", {class: "blame"}, "the replay diverged here") : null),
        h("td", {class: "num duration"}, took === null ? (opener ? "after " + duration(at - Date.parse(opener.time)) : "") : (open ? "running " : "") + duration(took)),
        h("td", {class: "bar-cell"}, bar(at - t0, took, span)));
    })));
}

function category(kind) {
  if (kind.startsWith("Update")) return "update";
  if (kind.startsWith("Activity")) return "activity";
  if (kind.startsWith("Timer")) return "timer";
  if (kind.startsWith("External")) return "event";
  if (kind.startsWith("SubOrchestration") || kind === "OrchestrationChained") return "child";
  return "orchestration";
}

// data shows what an event carries.
function data(e, opener) {
  const parts = [];
  if (e.updateId) parts.push(h("pre", {}, "update " + e.updateId));
  if (e.input !== undefined) parts.push(h("pre", {}, "input " + json(e.input)));
  if (e.result !== undefined) parts.push(h("pre", {}, (e.kind.startsWith("External") ? "data " : "result ") + json(e.result)));
  if (e.failure) parts.push(h("pre", {class: "failure-text"}, e.failure.message));
  if (e.failure?.details) parts.push(h("details", {}, h("summary", {}, "details"), h("pre", {}, e.failure.details)));
  if (e.fireAt) parts.push(h("span", {}, "due " + time(e.fireAt) + (e.kind === "TimerCreated" ? " (in " + duration(Date.parse(e.fireAt) - Date.parse(e.time)) + ")" : "")));
  if (e.reason) parts.push(h("span", {}, "reason: " + e.reason));
  if (e.by) parts.push(h("span", {class: "by"}, "by " + e.by));
  if (e.customStatus) parts.push(h("span", {}, "“" + e.customStatus + "”"));
  if (opener) parts.push(h("span", {class: "muted"}, " for #" + opener.id + (opener.name ? " " + opener.name : "")));
  return parts;
}

// bar places an operation (or an instant, as a tick) in the execution's
// span.
function bar(offset, took, span) {
  const b = h("span", {class: took === null ? "tick" : "bar"});
  b.style.left = (100 * offset / span).toFixed(2) + "%";
  if (took !== null) b.style.width = Math.max(100 * took / span, 0.5).toFixed(2) + "%";
  return h("div", {class: "track"}, b);
}

// newReplay makes the replay check: the execution shown, replayed on a
// module that registers the orchestration (its own by default), which
// says whether the module reproduces the history or where it diverges
// (shown to onDiverge, for the timeline). It changes nothing, and needs
// only the read-only token.
function newReplay(path, execution, el, onDiverge) {
  const modules = h("select", {id: "replay-module"});
  const outcome = h("span", {id: "replay-outcome"});
  const button = h("button", {type: "submit"}, "Replay");
  let name = "";
  replace(el, h("form", {id: "replay-form", onsubmit: asking(button, outcome, "replay", async () => {
    const r = await api(path + "/replay" + query({module: modules.value, execution: execution || ""}));
    const d = r.divergence;
    outcome.className = d || r.failure ? "error" : "ok";
    outcome.textContent = d ? "diverges at event " + d.eventId + ": " + d.message :
      r.failure ? "fails: " + r.failure : `reproduces the ${r.events} events (${r.status})`;
    onDiverge(d ? d.eventId : 0);
  })}, h("label", {}, "Replay this execution on ", modules), " ", button, " ", outcome));

  return {async update(d) {
    if (name === d.name) return;
    name = d.name;
    const mods = (await api("/v1/modules")).modules.filter(m => m.orchestrations.includes(d.name));
    replace(modules, mods.map(m => h("option", {value: m.hash, selected: m.hash === d.moduleHash},
      short(m.hash) + " (" + time(m.deployedAt) + (m.hash === d.moduleHash ? ", its own" : "") + ")")));
  }};
}

// asking returns the submit handler of a form that asks the host (ask)
// and shows the answer in out: while it asks, button is disabled and out
// says so; a refusal shows in out as the error, named after what.
function asking(button, out, what, ask) {
  return async e => {
    e.preventDefault();
    button.disabled = true;
    out.className = "";
    out.textContent = "asking…";
    try {
      await ask();
    } catch (err) {
      out.className = "error";
      out.textContent = what + " refused: " + err.message;
    } finally {
      button.disabled = false;
    }
  };
}

// newQuery makes the form that runs a query of the instance and shows its
// answer: a GET, which the read-only token may send, and which writes
// nothing; and the button that lists the queries and updates the
// instance handles (asked only on a click: asking costs the instance's
// next turn a replay).
function newQuery(path, el) {
  const name = h("input", {name: "name", id: "query-name", required: true, placeholder: "Progress", list: "query-names"});
  const names = h("datalist", {id: "query-names"});
  const data = h("input", {name: "data", id: "query-data", size: 24, placeholder: "null"});
  const answer = h("pre", {id: "query-answer"});
  const button = h("button", {type: "submit"}, "Query");
  const listed = h("p", {id: "handlers", class: "muted"});
  const list = h("button", {type: "button", id: "list-handlers"}, "List handlers");
  list.onclick = asking(list, listed, "the handlers", async () => {
    const r = await api(path + "/handlers");
    replace(names, r.queries.map(n => h("option", {value: n})));
    listed.className = "ok";
    listed.textContent = "Queries: " + (r.queries.join(", ") || "none") + ". Updates: " + (r.updates.join(", ") || "none") + ".";
  });
  replace(el, h("form", {id: "query-form", onsubmit: asking(button, answer, "query", async () => {
    const r = await api(path + "/queries/" + encodeURIComponent(name.value) + query({data: data.value}));
    answer.className = "ok";
    answer.textContent = JSON.stringify(r.result, null, 2);
  })}, h("label", {}, "Query ", name), names, " ", h("label", {}, "with (JSON) ", data), " ", button, " ", list), answer, listed);
}

// newActions makes the instance's actions: each opens a small form; all
// need the admin token, and each only what the instance's status allows.
function newActions(id, path, el) {
  const message = h("p", {class: "action-message", id: "action-message"});
  const panel = h("div", {class: "action-panel"});
  const buttons = {};
  let status = "";

  const send = (what, method, url, body, done) => async e => {
    e.preventDefault();
    const form = e.target;
    for (const b of form.querySelectorAll("button")) b.disabled = true;
    try {
      await api(url, {method, body});
      replace(panel);
      message.className = "action-message ok";
      message.textContent = done;
      if (what === "purge") location.hash = "#/instances";
      else refresh();
    } catch (err) {
      message.className = "action-message error";
      message.textContent = what + " refused: " + err.message;
      for (const b of form.querySelectorAll("button")) b.disabled = false;
    }
  };
  const forms = {
    raise: () => {
      const name = h("input", {name: "name", id: "raise-name", required: true, placeholder: "Approval"});
      const payload = h("textarea", {name: "data", id: "raise-data", rows: 2, cols: 40}, "null");
      const persistent = h("input", {type: "checkbox", name: "persistent", id: "raise-persistent"});
      const form = h("form", {id: "raise-form", onsubmit: e => {
        let value;
        try {
          value = JSON.parse(payload.value || "null");
        } catch (err) {
          e.preventDefault();
          message.className = "action-message error";
          message.textContent = "The data is not JSON: " + err.message;
          return;
        }
        return send("raise", "POST", path + "/events", {name: name.value, data: value, persistent: persistent.checked}, "Event " + name.value + " raised.")(e);
      }},
        h("label", {}, "Event ", name), " ", h("label", {}, "Data (JSON) ", payload), " ",
        h("label", {}, persistent, " persistent"), " ", h("button", {type: "submit"}, "Raise"));
      return [form, name];
    },
    update: () => {
      const name = h("input", {name: "name", id: "update-name", required: true, placeholder: "Approve", list: "update-names"});
      const names = h("datalist", {id: "update-names"});
      const payload = h("textarea", {name: "data", id: "update-data", rows: 2, cols: 40}, "null");
      const updateId = h("input", {name: "id", id: "update-id", size: 16, placeholder: "(a new one)"});
      const button = h("button", {type: "submit"}, "Update");
      // The names it handles, for the list: asked once, when the form opens.
      api(path + "/handlers").then(r => replace(names, r.updates.map(n => h("option", {value: n}))), () => {});
      const form = h("form", {id: "update-form", onsubmit: async e => {
        e.preventDefault();
        let value;
        try {
          value = JSON.parse(payload.value || "null");
        } catch (err) {
          message.className = "action-message error";
          message.textContent = "The data is not JSON: " + err.message;
          return;
        }
        button.disabled = true;
        try {
          const u = await api(path + "/updates/" + encodeURIComponent(name.value), {method: "POST", body: {data: value, id: updateId.value || undefined}});
          message.className = "action-message " + (u.state === "Completed" ? "ok" : "error");
          message.textContent = u.state === "Completed" ? "Update " + u.name + " (" + u.id + ") answered " + JSON.stringify(u.result) + "." :
            u.state === "Refused" ? "Update " + u.name + " refused, and nothing of it written: " + u.failure.message :
            u.state === "Failed" ? "Update " + u.name + " failed: " + u.failure.message :
            "Update " + u.name + " (" + u.id + ") is " + u.state + ": no answer yet.";
          refresh();
        } catch (err) {
          message.className = "action-message error";
          message.textContent = "update refused: " + err.message;
        } finally {
          button.disabled = false;
        }
      }},
        h("p", {class: "muted"}, "Runs the orchestration's handler and waits for its answer; the handler's validator may refuse it, writing nothing."),
        h("label", {}, "Update ", name), names, " ", h("label", {}, "Data (JSON) ", payload), " ", h("label", {}, "Id ", updateId), " ", button);
      return [form, name];
    },
    cancel: () => reasonForm("cancel", "Cancel", "The orchestration sees the request and may clean up before it ends.",
      reason => send("cancel", "POST", path + "/cancel", {reason}, "Cancellation requested.")),
    terminate: () => reasonForm("terminate", "Terminate", "Ends it now, without its cooperation; its children still running end with it.",
      reason => send("terminate", "POST", path + "/terminate", {reason}, "Termination requested.")),
    purge: () => {
      const form = h("form", {id: "purge-form", onsubmit: send("purge", "DELETE", path, undefined, "Purged.")},
        h("span", {}, "Delete the instance and the history of all its executions? "), h("button", {type: "submit", class: "danger"}, "Purge"));
      return [form, form.querySelector("button")];
    },
  };
  const labels = {raise: "Raise event…", update: "Update…", cancel: "Cancel…", terminate: "Terminate…", purge: "Purge…"};
  for (const [what, label] of Object.entries(labels)) {
    // Disabled until the instance's status is known.
    buttons[what] = h("button", {type: "button", id: "action-" + what, disabled: true, onclick: () => {
      message.textContent = "";
      const [form, focus] = forms[what]();
      replace(panel, form);
      focus.focus();
    }}, label);
  }
  replace(el, h("h3", {}, "Actions"), Object.values(buttons), panel, message);

  return {update(d) {
    const denied = canChange();
    if (status !== d.status) replace(panel);
    status = d.status;
    for (const [what, b] of Object.entries(buttons)) {
      const why = denied || (what === "purge" ? (isTerminal(d.status) ? "" : "only a finished instance can be purged") :
        (isTerminal(d.status) ? "the instance has finished" : ""));
      b.disabled = Boolean(why);
      b.title = why;
    }
    el.classList.toggle("read-only", Boolean(denied));
  }};
}

function reasonForm(what, label, about, submit) {
  const reason = h("input", {name: "reason", id: what + "-reason", size: 40, placeholder: "why (kept in its history)"});
  const form = h("form", {id: what + "-form", onsubmit: e => submit(reason.value)(e)},
    h("p", {class: "muted"}, about), h("label", {}, "Reason ", reason), " ", h("button", {type: "submit", class: what === "terminate" ? "danger" : ""}, label));
  return [form, reason];
}
