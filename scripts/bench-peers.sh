#!/usr/bin/env bash
# make bench-peers: the peers' harnesses and Durabox's own, one after the
# other on this machine, then one table of their figures (BENCHMARKS.md
# opens with it). Durabox's is internal/bench/peer, which drives this
# checkout through its HTTP API on SQLite, then on PostgreSQL; the peers'
# are those of ../shared/peers beside this repository (PEERS to name
# another folder): dbos/run.sh runs DBOS Transact for Go on the same
# PostgreSQL server, restate/run.sh the Restate server and its TypeScript
# SDK. Each needs what its own
# README says (PostgreSQL at 127.0.0.1:5432 for two of them, the Go module
# proxy, the npm registry); a harness that fails is reported and its
# column left empty, and the others still run.
#
#   scripts/bench-peers.sh                            # full size
#   N=200 N1=20 FANOUT=100 SEQ=100 scripts/bench-peers.sh   # smoke
#
# Sizes (N, C, N1, WARMUP, FANOUT, SEQ) pass to every harness. The
# harnesses run from a copy in WORK (default ~/.cache/durabox-bench-peers),
# where their logs stay in results/; this run's outputs, and the table, go
# to OUT (default /tmp/durabox-bench-peers-<UTC time>).
set -euo pipefail
REPO="$(cd "$(dirname "$0")/.." && pwd)"
PEERS="${PEERS:-$REPO/../shared/peers}"
if [[ ! -x "$PEERS/dbos/run.sh" || ! -x "$PEERS/restate/run.sh" ]]; then
  echo "bench-peers: no peer harnesses at $PEERS (want dbos/ and restate/ with run.sh each); set PEERS to their folder" >&2
  exit 2
fi
PEERS="$(cd "$PEERS" && pwd)"
OUT="${OUT:-/tmp/durabox-bench-peers-$(date -u +%Y%m%dT%H%M%SZ)}"
mkdir -p "$OUT"
# The harnesses write beside themselves (bin/, results/, node_modules/):
# they run from a copy in WORK, kept between runs so that what they build
# and install is built once, and the shared folder stays as it is.
WORK="${WORK:-${XDG_CACHE_HOME:-$HOME/.cache}/durabox-bench-peers}"
mkdir -p "$WORK"
tar -C "$PEERS" --exclude=results --exclude=bin --exclude=node_modules -cf - dbos restate | tar -C "$WORK" -xf -
PEERS="$WORK"
echo "# bench-peers: $(date -u +%FT%TZ), $(uname -srm), $(nproc) CPUs, load $(cut -d' ' -f1-3 /proc/loadavg), Durabox at $(git -C "$REPO" rev-parse --short HEAD), outputs in $OUT"

run() { # name, then the command
  local name=$1
  shift
  echo "# $name: $* (load $(cut -d' ' -f1-3 /proc/loadavg))"
  if ! "$@" >"$OUT/$name.txt" 2>"$OUT/$name.stderr"; then
    echo "# $name failed; its last lines:"
    tail -n 5 "$OUT/$name.stderr" "$OUT/$name.txt" | sed 's/^/#   /'
  fi
  grep -E '^[A-Z]+ [a-z0-9_]+ ' "$OUT/$name.txt" || true
}
run durabox-sqlite env STORE=sqlite "$REPO/internal/bench/peer/run.sh"
run durabox-postgres env STORE=postgres "$REPO/internal/bench/peer/run.sh"
run dbos "$PEERS/dbos/run.sh"
run restate "$PEERS/restate/run.sh"

# The table: one column a system, one row a figure, the values each
# harness printed for it (REPS>1 prints one a run), joined by "/".
awk -v out="$OUT" '
function value(col, fig,   v) { v = vals[col, fig]; return v == "" ? "–" : v }
BEGIN {
  ncol = split("durabox-sqlite durabox-postgres dbos restate", cols, " ")
  split("Durabox SQLite|Durabox PostgreSQL|DBOS (PostgreSQL)|Restate", heads, "|")
  for (i = 1; i <= ncol; i++) {
    file = out "/" cols[i] ".txt"
    while ((getline line < file) > 0) {
      if (line !~ /^[A-Z]+ [a-z0-9_]+ /) continue
      split(line, f, " ")
      v = f[3] " " f[4]
      vals[cols[i], f[2]] = (vals[cols[i], f[2]] == "" ? v : vals[cols[i], f[2]] " / " v)
    }
    close(file)
  }
  nrow = split("hello_throughput hello_latency_p50 hello_latency_p99 hello_loaded_latency_p50 fanout_total sequential_per_step hello_write_tx_per_workflow sequential_write_tx_per_step hello_wal_syncs_per_workflow sequential_wal_syncs_per_step sqlite_commit_rate pg_commit_rate", rows, " ")
  split("hello, 64 in flight|hello one at a time, p50|hello one at a time, p99|hello at 64 in flight, p50|fan-out of 1,000|sequential, per step|write transactions per hello|write transactions per step|WAL syncs per hello|WAL syncs per step|raw SQLite commit rate|raw PostgreSQL commit rate", names, "|")
  printf "\n| figure |"
  for (i = 1; i <= ncol; i++) printf " %s |", heads[i]
  printf "\n|---|"
  for (i = 1; i <= ncol; i++) printf "---|"
  printf "\n"
  for (r = 1; r <= nrow; r++) {
    printf "| %s |", names[r]
    for (i = 1; i <= ncol; i++) printf " %s |", value(cols[i], rows[r])
    printf "\n"
  }
}' </dev/null | tee "$OUT/table.md"
