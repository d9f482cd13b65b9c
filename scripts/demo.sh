#!/usr/bin/env bash
# The user's path, end to end: start a host on a new SQLite file, deploy the
# hello module, run Greeting with input "world", print its result, stop the
# host. Run it through `make demo`, which builds everything first.
set -euo pipefail
cd "$(dirname "$0")/.."

dir=$(mktemp -d)
log="$dir/serve.log"
host_pid=
cleanup() {
	if [ -n "$host_pid" ]; then kill "$host_pid" 2>/dev/null || true; wait "$host_pid" 2>/dev/null || true; fi
	rm -rf "$dir"
}
trap cleanup EXIT

# RUNTIME (make demo RUNTIME=wasmtime) picks the WebAssembly runtime.
./bin/durabox serve --db "$dir/demo.db" --addr 127.0.0.1:0 --runtime "${RUNTIME:-wazero}" 2>"$log" &
host_pid=$!

# serve prints "durabox: serving on http://ADDR (db FILE)" once it listens.
addr=
for _ in $(seq 100); do
	addr=$(sed -n 's|^durabox: serving on http://\([^ ]*\).*|\1|p' "$log" | head -n 1)
	[ -n "$addr" ] && break
	if ! kill -0 "$host_pid" 2>/dev/null; then cat "$log" >&2; echo "demo: the host did not start" >&2; exit 1; fi
	sleep 0.1
done
[ -n "$addr" ] || { cat "$log" >&2; echo "demo: the host did not report its address" >&2; exit 1; }
export DURABOX_ADDR=$addr
echo "The dashboard is at http://$addr/ while the demo runs (durabox serve prints where it is)."

echo "\$ durabox deploy examples/wasm/hello/hello.wasm"
./bin/durabox deploy examples/wasm/hello/hello.wasm
echo "\$ durabox start Greeting --input '\"world\"' --wait"
./bin/durabox start Greeting --input '"world"' --wait
