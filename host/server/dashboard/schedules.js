// The schedules: each one's slots, next run and counts; and one schedule
// with its next runs, its last runs (linked to their instances) and, for
// the admin token, pause, resume and trigger.

import {api} from "./api.js";
import {canChange, refresh} from "./app.js";
import {h, instanceLink, json, replace, time} from "./dom.js";

// when shows a schedule's slots.
function when(s) {
  if (s.every) return "every " + s.every;
  return s.timezone ? `${s.cron} (${s.timezone})` : s.cron;
}

function schedulePath(name) {
  return "/v1/schedules/" + encodeURIComponent(name);
}

export function schedulesView() {
  const body = h("tbody");
  const el = h("section", {id: "schedules-page"},
    h("h1", {}, "Schedules"),
    h("table", {class: "list", id: "schedules"},
      h("thead", {}, h("tr", {}, ["Schedule", "When", "Starts", "Overlap", "Next run (UTC)", "Last run", "Started", "Skipped", "Missed"].map(c => h("th", {}, c)))),
      body));
  let last = "";
  return {el, async refresh() {
    const {schedules} = await api("/v1/schedules");
    const now = JSON.stringify(schedules);
    if (now === last) return;
    last = now;
    replace(body, schedules.length ? schedules.map(s => h("tr", {dataset: {schedule: s.name}},
      h("td", {}, h("a", {href: "#/schedules/" + encodeURIComponent(s.name)}, s.name)),
      h("td", {class: "mono"}, when(s)),
      h("td", {}, s.orchestration),
      h("td", {}, s.overlap),
      h("td", {class: "time next-run"}, s.paused ? h("span", {class: "badge status-canceled"}, "paused") : time(s.nextRuns[0])),
      h("td", {}, s.lastInstance ? instanceLink(s.lastInstance) : h("span", {class: "muted"}, "none")),
      h("td", {}, String(s.started)), h("td", {}, String(s.skipped)), h("td", {}, String(s.missed))))
      : h("tr", {}, h("td", {colspan: 9, class: "muted"}, "No schedule: durabox schedule create NAME --cron EXPR --start ORCH")));
  }};
}

export function scheduleView(name) {
  const overview = h("dl", {class: "card facts", id: "schedule-overview"});
  const actions = h("div", {class: "actions", id: "schedule-actions"});
  const message = h("p", {class: "action-message", id: "schedule-message"});
  const next = h("ol", {id: "next-runs", class: "mono"});
  const runs = h("tbody");
  const el = h("section", {id: "schedule-page"},
    h("h1", {}, "Schedule ", h("span", {class: "mono"}, name)),
    overview, actions, message,
    h("h2", {}, "Next runs (UTC)"), next,
    h("h2", {}, "Last runs"),
    h("table", {class: "list", id: "schedule-runs"},
      h("thead", {}, h("tr", {}, ["Slot (UTC)", "Decided", "Outcome", "Instance"].map(c => h("th", {}, c)))),
      runs));
  const act = (what, done) => async () => {
    for (const b of actions.querySelectorAll("button")) b.disabled = true;
    try {
      await api(schedulePath(name) + "/" + what, {method: "POST", body: {}});
      message.className = "action-message ok";
      message.textContent = done;
      refresh();
    } catch (err) {
      message.className = "action-message error";
      message.textContent = what + " refused: " + err.message;
    } finally {
      for (const b of actions.querySelectorAll("button")) b.disabled = false;
    }
  };
  let last = "";
  return {el, async refresh() {
    const s = await api(schedulePath(name));
    const access = canChange();
    const now = JSON.stringify(s) + access;
    if (now === last) return;
    last = now;
    const row = (k, v) => [h("dt", {}, k), h("dd", {}, v)];
    replace(overview,
      row("When", when(s)), row("Starts", [s.orchestration, " ", h("code", {}, json(s.input))]),
      row("Overlap", s.overlap), row("Catch-up window", s.catchupWindow),
      s.jitter ? row("Jitter", s.jitter) : null,
      s.paused ? row("Paused", s.note || "yes") : null,
      s.buffered ? row("Held back", time(s.buffered)) : null,
      row("Runs", `${s.started} started, ${s.skipped} skipped, ${s.missed} missed`));
    const why = access;
    replace(actions,
      h("button", {type: "button", id: s.paused ? "schedule-resume" : "schedule-pause", disabled: !!why, title: why || null,
        onclick: s.paused ? act("resume", "Resumed.") : act("pause", "Paused.")}, s.paused ? "Resume" : "Pause"), " ",
      h("button", {type: "button", id: "schedule-trigger", disabled: !!why, title: why || null,
        onclick: act("trigger", "A run started.")}, "Trigger now"));
    replace(next, s.nextRuns.length ? s.nextRuns.map(t => h("li", {}, time(t))) : h("li", {class: "muted"}, s.paused ? "paused" : "none"));
    replace(runs, (s.runs || []).length ? s.runs.map(r => h("tr", {dataset: {outcome: r.outcome}},
      h("td", {class: "time"}, time(r.slot)),
      h("td", {class: "time"}, time(r.firedAt)),
      h("td", {}, r.outcome + (r.manual ? " (by hand)" : "") + (r.error ? ": " + r.error : "")),
      h("td", {}, r.instanceId ? instanceLink(r.instanceId) : "")))
      : h("tr", {}, h("td", {colspan: 4, class: "muted"}, "No slot has come yet.")));
  }};
}
