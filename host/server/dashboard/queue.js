// The work waiting now: messages ready for turns, timers, turns running,
// activity tasks, and the oldest of each.

import {api} from "./api.js";
import {ago, h, instanceLink, replace, time} from "./dom.js";

export function queueView() {
  const body = h("div", {class: "queue"});
  const el = h("section", {id: "queue-page"}, h("h1", {}, "Queue"), body);
  return {el, async refresh() {
    const q = await api("/v1/queue");
    replace(body,
      tile("ready", "Messages ready", q.ready, `for ${q.readyInstances} instance(s), ${q.starts} of them starts`, oldest(q.oldestReady)),
      tile("running", "Turns running", q.running, "instances running a turn now"),
      tile("timers", "Timers waiting", q.timers, q.nextTimer ? "the next is due " + time(q.nextTimer) : "none due"),
      tile("activities", "Activities waiting", q.activities, `${q.activitiesRunning} running`, oldest(q.oldestActivity)),
      (q.taskQueues || []).map(taskQueue));
  }};
}

// taskQueue is the tile of a task queue of workers outside the host.
function taskQueue(t) {
  const polled = t.lastPoll ? h("p", {class: "muted"}, "a worker polled it ", ago(t.lastPoll)) :
    h("p", {class: "warning"}, "no worker has polled it (through this host, since it started): its tasks wait");
  return tile("task-queue-" + t.name, "Task queue " + t.name, t.waiting, `waiting, ${t.running} running`, polled);
}

function tile(id, title, n, about, extra) {
  return h("div", {class: "card tile", id: "queue-" + id},
    h("div", {class: "big"}, String(n)), h("h3", {}, title), h("p", {class: "muted"}, about), extra || null);
}

function oldest(item) {
  if (!item) return h("p", {class: "muted"}, "nothing waits");
  return h("p", {class: "oldest"}, "oldest: ", item.what, " for ", instanceLink(item.instanceId),
    h("br"), "waiting since ", time(item.since), " (", ago(item.since), ")");
}
