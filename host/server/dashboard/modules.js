// The deployed modules, newest first: what each registers, when it was
// deployed, and its instances per status.

import {api, query} from "./api.js";
import {badge, h, replace, short, statuses, time} from "./dom.js";

export function modulesView() {
  const body = h("tbody");
  const el = h("section", {id: "modules-page"},
    h("h1", {}, "Modules"),
    h("table", {class: "list", id: "modules"},
      h("thead", {}, h("tr", {}, ["Module", "Deployed (UTC)", "Orchestrations", "Activities", "Environment", "Instances"].map(c => h("th", {}, c)))),
      body));
  let last = "";
  return {el, async refresh() {
    const {modules} = await api("/v1/modules");
    const now = JSON.stringify(modules);
    if (now === last) return;
    last = now;
    replace(body, modules.length ? modules.map(m => h("tr", {dataset: {hash: m.hash}},
      h("td", {class: "mono", title: m.hash}, short(m.hash)),
      h("td", {class: "time"}, time(m.deployedAt)),
      h("td", {}, m.orchestrations.map(o => h("a", {class: "chip", href: "#/instances" + query({name: o, module: m.hash})}, o))),
      h("td", {}, m.activities.map(a => h("span", {class: "chip plain"}, a))),
      h("td", {class: "mono"}, (m.envKeys || []).join(" ")),
      h("td", {class: "module-counts"}, statuses.filter(s => m.instances?.[s]).map(s =>
        h("a", {class: "count", href: "#/instances" + query({status: s, module: m.hash}), dataset: {status: s}},
          h("span", {class: "n"}, String(m.instances[s])), " ", badge(s))))))
      : h("tr", {}, h("td", {colspan: 6, class: "muted"}, "No module deployed: durabox deploy FILE.wasm")));
  }};
}
