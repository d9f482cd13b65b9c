// Building the page: elements from data, never HTML from strings, so that
// nothing an orchestration writes (names, inputs, results, reasons) can
// become markup.

// h makes an element: h("a", {href: "#/x", class: "y"}, "text", child…).
// An attribute whose value is null, undefined or false is left out; one
// named on… is an event listener.
export function h(tag, attrs, ...children) {
  const el = document.createElement(tag);
  for (const [name, value] of Object.entries(attrs || {})) {
    if (value === null || value === undefined || value === false) continue;
    if (name.startsWith("on")) el.addEventListener(name.slice(2), value);
    else if (name === "dataset") Object.assign(el.dataset, value);
    else el.setAttribute(name, value === true ? "" : String(value));
  }
  append(el, children);
  return el;
}

function append(el, children) {
  for (const c of children) {
    if (c === null || c === undefined || c === false) continue;
    if (Array.isArray(c)) append(el, c);
    else el.append(c instanceof Node ? c : String(c));
  }
}

// replace makes el's content children.
export function replace(el, ...children) {
  el.replaceChildren();
  append(el, children);
}

// The statuses an instance can have, in the order the filters show them.
export const statuses = ["Pending", "Running", "Completed", "Failed", "Canceled", "Terminated"];

export function isTerminal(status) {
  return status === "Completed" || status === "Failed" || status === "Canceled" || status === "Terminated";
}

export function badge(status) {
  return h("span", {class: "badge status-" + status.toLowerCase(), dataset: {status}}, status);
}

// time shows an RFC 3339 time as "2006-01-02 15:04:05.000" (UTC).
export function time(t) {
  if (!t) return "";
  const d = new Date(t);
  if (isNaN(d)) return t;
  return d.toISOString().replace("T", " ").replace("Z", "");
}

// duration shows milliseconds as "850ms", "1.25s", "3m20s", "2h05m", "3d4h".
export function duration(ms) {
  if (ms < 0) ms = 0;
  if (ms < 1000) return Math.round(ms) + "ms";
  const s = ms / 1000;
  if (s < 60) return (s < 10 ? s.toFixed(2) : s.toFixed(1)) + "s";
  const m = Math.floor(s / 60);
  if (m < 60) return m + "m" + String(Math.floor(s % 60)).padStart(2, "0") + "s";
  const hours = Math.floor(m / 60);
  if (hours < 48) return hours + "h" + String(m % 60).padStart(2, "0") + "m";
  return Math.floor(hours / 24) + "d" + (hours % 24) + "h";
}

// ago shows how long before now t was.
export function ago(t) {
  return duration(Date.now() - new Date(t).getTime()) + " ago";
}

// json shows a JSON value compactly, or pretty when it is long.
export function json(v) {
  if (v === undefined) return "";
  const s = JSON.stringify(v);
  return s.length > 80 ? JSON.stringify(v, null, 2) : s;
}

export function short(hash) {
  return hash ? hash.slice(0, 12) : "";
}

export function instanceLink(id) {
  return h("a", {href: "#/instances/" + encodeURIComponent(id), class: "mono"}, id);
}
