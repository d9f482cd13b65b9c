#!/usr/bin/env python3
"""A Durabox worker in Python, with nothing but the standard library.

It serves the activity PublishOrder of the fulfil example
(examples/wasm/fulfil) on the task queue "events", through the worker
protocol of the host's HTTP API (docs/workers.md): it polls for tasks,
sends a heartbeat, and completes each with an event id of its own making,
"py-ORDER". It shows that a worker needs no Durabox package: any language
that speaks HTTP and JSON will do.

    python3 examples/worker-python/worker.py --host http://127.0.0.1:7070 \\
        --token-file worker.token [--tasks N]

With --tasks N it stops after N tasks; without, it runs until interrupted.
"""

import argparse
import json
import os
import sys
import time
import urllib.error
import urllib.parse
import urllib.request


class Host:
    """The host's worker protocol."""

    def __init__(self, base, token):
        self.base = base.rstrip("/")
        self.token = token

    def post(self, path, body):
        req = urllib.request.Request(
            self.base + path,
            data=json.dumps(body).encode(),
            headers={"Content-Type": "application/json"},
            method="POST",
        )
        if self.token:
            req.add_header("Authorization", "Bearer " + self.token)
        try:
            with urllib.request.urlopen(req, timeout=90) as resp:
                data = resp.read()
                return json.loads(data) if data else None
        except urllib.error.HTTPError as e:
            message = e.read().decode(errors="replace")
            try:
                message = json.loads(message)["error"]
            except (ValueError, KeyError):
                pass
            raise RuntimeError(f"{path}: {e.code}: {message}") from None

    def task(self, token, op, body):
        return self.post("/v1/tasks/" + urllib.parse.quote(token, safe="") + "/" + op, body)


def publish_order(order):
    """The activity: it 'publishes' the order and returns the event's id."""
    return "py-" + order["id"]


ACTIVITIES = {"PublishOrder": publish_order}


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    addr = os.environ.get("DURABOX_ADDR", "127.0.0.1:7070")
    p.add_argument("--host", default=addr if "://" in addr else "http://" + addr)
    p.add_argument("--token-file", help="the worker token (default $DURABOX_TOKEN)")
    p.add_argument("--queue", default="events")
    p.add_argument("--tasks", type=int, default=0, help="stop after this many tasks (0: never)")
    args = p.parse_args()
    token = os.environ.get("DURABOX_TOKEN", "")
    if args.token_file:
        with open(args.token_file) as f:
            token = f.read().strip()
    host = Host(args.host, token)
    done = 0
    while args.tasks == 0 or done < args.tasks:
        poll = {"queue": args.queue, "activities": sorted(ACTIVITIES), "max": 1}
        for task in host.post("/v1/tasks/poll?wait=30s", poll)["tasks"]:
            fn = ACTIVITIES[task["activity"]]
            beat = host.task(task["token"], "heartbeat", {"details": {"worker": "python"}})
            if beat["cancelRequested"]:
                host.task(task["token"], "fail", {"message": "cancelled before it began"})
                continue
            try:
                result = fn(task["input"])
            except Exception as e:  # the activity failed: report it
                host.task(task["token"], "fail", {"message": str(e)})
            else:
                host.task(task["token"], "complete", {"result": result})
            done += 1
            print(f"worker.py: {task['activity']} of {task['instanceId']} done", file=sys.stderr)


if __name__ == "__main__":
    try:
        main()
    except KeyboardInterrupt:
        pass
    except RuntimeError as e:
        print(f"worker.py: {e}", file=sys.stderr)
        sys.exit(1)
