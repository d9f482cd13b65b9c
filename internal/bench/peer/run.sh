#!/usr/bin/env bash
# Durabox's peer harness (make bench-peers runs it beside the peers'):
# builds durabox, the two modules and bin/dbxbench from the checkout this
# folder is in, then for each rep starts `durabox serve` on a fresh store,
# runs the workloads through the HTTP API and prints the DURABOX lines.
#
#   ./run.sh                                   # full size, SQLite
#   STORE=postgres ./run.sh                    # full size, PostgreSQL
#   N=200 N1=20 FANOUT=100 SEQ=100 ./run.sh    # smoke
#   REPS=3 ./run.sh                            # three independent runs
#
# Environment (all optional):
#   STORE          sqlite (default: a fresh file in a temp dir, serve's default
#                  durability) or postgres (database dropped and recreated)
#   DURABOX_BENCH_DB  with STORE=postgres, the database URL, loopback only
#                  (default postgres://postgres@127.0.0.1:5432/dbxbench?sslmode=disable)
#   N C N1 WARMUP  hello_throughput count, its in-flight limit, hello_latency
#                  count, warm-up count (2000, 64, 100, 50)
#   FANOUT SEQ     fan-out width, sequential length (1000, 1000)
#   HTTP_POOL      idle keep-alive connections to the host (default C+8;
#                  0 = Go's default of 2)
#   REPS           how many runs (default 1)
#   OUTDIR         where the logs go (default results/<UTC time>-<store>)
#   GO             the go command (default go)
set -euo pipefail
ROOT="$(cd "$(dirname "$0")" && pwd)"
CHECKOUT="$(cd "$ROOT/../../.." && pwd)"
cd "$ROOT"
GO="${GO:-go}"
REPS="${REPS:-1}"
export STORE="${STORE:-sqlite}"
OUTDIR="${OUTDIR:-$ROOT/results/$(date -u +%Y%m%dT%H%M%SZ)-$STORE}"
export CGO_ENABLED=1

mkdir -p bin
echo "# building from ${CHECKOUT} ($(git -C "$CHECKOUT" rev-parse --short HEAD 2>/dev/null || echo 'not git'))"
(cd "$CHECKOUT" && "$GO" build -o "$ROOT/bin/durabox" ./cmd/durabox)
(cd "$CHECKOUT" && GOOS=wasip1 GOARCH=wasm "$GO" build -trimpath -buildmode=c-shared -o "$ROOT/bin/hello.wasm" ./examples/wasm/hello)
(cd "$CHECKOUT" && GOOS=wasip1 GOARCH=wasm "$GO" build -trimpath -buildmode=c-shared -o "$ROOT/bin/guest.wasm" ./internal/bench/guest)
"$GO" build -o bin/dbxbench .

mkdir -p "$OUTDIR"
{
  echo "# date: $(date -u +%FT%TZ)"
  echo "# host: $(uname -srm); cpus=$(nproc); mem=$(free -g | awk '/Mem:/{print $2}')GiB; load: $(cut -d' ' -f1-3 /proc/loadavg)"
  echo "# go: $("$GO" version)"
  echo "# durabox: $(git -C "$CHECKOUT" log -1 --format='%h %cI %s' 2>/dev/null || echo 'checkout not under git')"
  if [[ -n "$(git -C "$CHECKOUT" status --porcelain 2>/dev/null)" ]]; then echo "# durabox: the checkout has uncommitted changes"; fi
  echo "# store: $STORE"
} | tee "$OUTDIR/env.txt"

rc=0
for r in $(seq 1 "$REPS"); do
  [[ "$REPS" -gt 1 ]] && echo "# rep $r of $REPS"
  mkdir -p "$OUTDIR/rep$r"
  if ! OUTDIR="$OUTDIR/rep$r" timeout 1800 bin/dbxbench -json "$OUTDIR/bench-rep$r.json" \
      > "$OUTDIR/bench-rep$r.txt" 2> "$OUTDIR/bench-rep$r.stderr"; then
    rc=1
    echo "# rep $r failed (exit non-zero); stderr tail:"
    tail -5 "$OUTDIR/bench-rep$r.stderr" | sed 's/^/#   /'
  fi
  grep -E '^# (sqlite|postgres|durabox serve|warmup|Greeting|FanOut|Sequential|final check|  )' "$OUTDIR/bench-rep$r.txt" || true
  grep -E '^DURABOX ' "$OUTDIR/bench-rep$r.txt" || true
done
echo "# logs in ${OUTDIR#"$ROOT"/}"
exit "$rc"
