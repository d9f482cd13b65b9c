// The instances: counts per status, filters (among them how long an
// instance has gone without progress, and what it waits on), for the
// admin a bulk action on every instance the filter selects (batches.js),
// and a page of summaries with a link to the next page.

import {api, query} from "./api.js";
import {bulkAction} from "./batches.js";
import {badge, h, instanceLink, replace, short, statuses, time} from "./dom.js";

// pageSize is how many instances a page shows.
const pageSize = 50;

// The filters of GET /v1/instances the page offers, beside status.
const textFilters = ["name", "module", "idPrefix", "parent", "createdAfter", "createdBefore", "stalledFor", "waitingOn", "where"];

// stalls are the choices of "No progress for" (GET /v1/instances?stalledFor=),
// and waitKinds those of "Waiting on" (?waitingOn=).
const stalls = ["5m", "15m", "1h", "24h"];
const waitKinds = ["activity", "timer", "event", "update", "child"];

export function instancesView(params) {
  const chosen = params.getAll("status");
  const filter = {status: chosen};
  for (const f of textFilters) filter[f] = params.get(f) || "";
  const cursor = params.get("cursor") || "";

  const names = h("select", {name: "name", id: "filter-name"}, h("option", {value: ""}, "any"));
  const modules = h("select", {name: "module", id: "filter-module"}, h("option", {value: ""}, "any"));
  const idPrefix = h("input", {name: "idPrefix", id: "filter-id", value: filter.idPrefix, placeholder: "id begins with", size: 16});
  const after = h("input", {type: "datetime-local", step: 1, name: "createdAfter", id: "filter-after", value: toInput(filter.createdAfter)});
  const before = h("input", {type: "datetime-local", step: 1, name: "createdBefore", id: "filter-before", value: toInput(filter.createdBefore)});
  const stalled = h("select", {name: "stalledFor", id: "filter-stalled"}, h("option", {value: ""}, "any time"),
    stalls.map(v => h("option", {value: v, selected: v === filter.stalledFor}, v)));
  const waiting = h("select", {name: "waitingOn", id: "filter-waiting"}, h("option", {value: ""}, "anything"),
    waitKinds.map(v => h("option", {value: v, selected: v === filter.waitingOn}, v)));
  const where = h("input", {name: "where", id: "filter-where", value: filter.where, size: 40, spellcheck: false,
    placeholder: 'customer = "c-42" AND amount > 100', title: "A filter on search attributes and status, name, id, created, updated (docs/filters.md)"});
  const boxes = statuses.map(s => h("input", {type: "checkbox", name: "status", value: s, checked: chosen.includes(s)}));

  const form = h("form", {class: "filters card", id: "filters", onsubmit: e => {
    e.preventDefault();
    const next = {
      status: boxes.filter(b => b.checked).map(b => b.value),
      name: names.value, module: modules.value, idPrefix: idPrefix.value.trim(),
      parent: filter.parent, createdAfter: fromInput(after.value), createdBefore: fromInput(before.value),
      stalledFor: stalled.value, waitingOn: waiting.value,
      where: where.value.trim(),
    };
    location.hash = "#/instances" + query(next);
  }},
    h("fieldset", {class: "statuses"}, h("legend", {}, "Status"), statuses.map((s, i) => h("label", {}, boxes[i], " ", s))),
    h("label", {}, "Orchestration ", names),
    h("label", {}, "Module ", modules),
    h("label", {}, "Id ", idPrefix),
    h("label", {}, "Created from ", after),
    h("label", {}, "to ", before),
    h("label", {}, "No progress for ", stalled),
    h("label", {}, "Waiting on ", waiting),
    h("label", {}, "Filter ", where),
    filter.parent ? h("span", {class: "chip"}, "children of ", instanceLink(filter.parent), " ",
      h("a", {href: "#/instances" + query({...filter, parent: ""})}, "×")) : null,
    h("button", {type: "submit"}, "Apply"), " ",
    h("a", {href: "#/instances"}, "Clear"));

  const counts = h("div", {class: "counts", id: "counts"});
  const rows = h("tbody");
  const pager = h("div", {class: "pager"});
  const el = h("section", {id: "instances-page"},
    h("h1", {}, "Instances"), counts, form, bulkAction(filter),
    h("table", {class: "list", id: "instances"},
      h("thead", {}, h("tr", {}, ["Id", "Orchestration", "Status", "Custom status", "Created", "Updated", "Module", "Parent"].map(c => h("th", {}, c)))),
      rows),
    pager);

  let lastModules = "";
  return {el, async refresh() {
    const [page, mods] = await Promise.all([
      api("/v1/instances" + query({...filter, limit: pageSize, cursor})),
      api("/v1/modules"),
    ]);
    const modsJSON = JSON.stringify(mods);
    if (modsJSON !== lastModules) {
      lastModules = modsJSON;
      fillChoices(names, [...new Set(mods.modules.flatMap(m => m.orchestrations))].sort(), filter.name, n => n);
      fillChoices(modules, mods.modules.map(m => m.hash), filter.module, short);
      showCounts(counts, mods.modules);
    }
    replace(rows, page.instances.length ? page.instances.map(row) :
      h("tr", {}, h("td", {colspan: 8, class: "muted"}, cursor ? "No more instances." : "No instance matches.")));
    replace(pager,
      cursor ? h("a", {href: "#/instances" + query(filter)}, "« Newest") : null, " ",
      page.next ? h("a", {href: "#/instances" + query({...filter, cursor: page.next}), id: "next-page"}, "Older »") : null);
  }};
}

function row(inst) {
  return h("tr", {dataset: {id: inst.id}},
    h("td", {}, instanceLink(inst.id)),
    h("td", {}, inst.name),
    h("td", {}, badge(inst.status)),
    h("td", {class: "custom-status"}, inst.customStatus || ""),
    h("td", {class: "time"}, time(inst.createdAt)),
    h("td", {class: "time"}, time(inst.updatedAt)),
    h("td", {class: "mono", title: inst.moduleHash}, short(inst.moduleHash)),
    h("td", {}, inst.parentId ? instanceLink(inst.parentId) : ""));
}

// fillChoices gives a select the values (shown by label), keeping chosen.
function fillChoices(select, values, chosen, label) {
  if (chosen && !values.includes(chosen)) values = [chosen, ...values];
  replace(select, h("option", {value: ""}, "any"), values.map(v => h("option", {value: v, selected: v === chosen}, label(v))));
}

// showCounts shows how many instances have each status, over every module,
// each a link to them.
function showCounts(el, mods) {
  const total = {};
  for (const m of mods) for (const [s, n] of Object.entries(m.instances || {})) total[s] = (total[s] || 0) + n;
  replace(el, statuses.map(s => h("a", {href: "#/instances" + query({status: s}), class: "count", dataset: {status: s}},
    h("span", {class: "n"}, String(total[s] || 0)), " ", badge(s))));
}

// toInput and fromInput convert between RFC 3339 (UTC) and the value of a
// datetime-local input, which the page reads as UTC.
function toInput(t) {
  return t ? t.replace(/Z$/, "").replace(/\.\d+$/, "") : "";
}

function fromInput(v) {
  if (!v) return "";
  return (v.length === 16 ? v + ":00" : v) + "Z";
}
