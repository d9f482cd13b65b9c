# Durabox. `make demo` runs the whole path end to end; `make test` runs every test;
# `make check` is the quick tier a developer runs on every change.

GO       ?= go
EXAMPLES := hello retry parentchild approval fanout eternal mutex order fulfil
WASM     := $(foreach e,$(EXAMPLES),examples/wasm/$(e)/$(e).wasm)
# The C examples (guest-sdk/c), twins of the Go ones of the same names.
C_EXAMPLES := hello approval fanout
C_WASM     := $(foreach e,$(C_EXAMPLES),examples/c/$(e)/$(e).wasm) examples/conformance/c/conformance.wasm

export CGO_ENABLED = 1

.PHONY: build examples c-examples vet check test race fuzz demo bench bench-scale bench-backlog bench-pg bench-filter bench-peers crashtest crashtest-workers crashtest-pg dbrestarttest partitiontest soaktest FORCE

build: bin/durabox examples c-examples

bin/durabox: FORCE
	$(GO) build -o $@ ./cmd/durabox

examples: $(WASM)

examples/wasm/%.wasm: FORCE
	GOOS=wasip1 GOARCH=wasm $(GO) build -trimpath -buildmode=c-shared -o $@ ./$(dir $@)

include guest-sdk/c/durabox.mk

# The C examples need clang, lld and wasi-libc; without them make build
# says what is missing and goes on (make test's C tests then skip, saying
# so, unless $$DURABOX_REQUIRE_CLANG is 1, as in CI, where they fail).
c-examples:
	@missing="$(strip $(durabox_c_missing))"; \
	if [ -n "$$missing" ]; then echo "make: the C examples are not built: missing $$missing (apt-get install clang lld wasi-libc libclang-rt-14-dev-wasm32)"; \
	else $(MAKE) --no-print-directory $(C_WASM); fi

# A C module is built from the one C file beside it, with the SDK.
examples/%.wasm: examples/%.c $(DURABOX_C_DEPS)
	$(DURABOX_CC) $(DURABOX_CFLAGS) -o $@ $(DURABOX_C_SDK) $<

# The Rust examples (guest-sdk/rust), twins of the Go ones of the same
# names, built with rustc alone by guest-sdk/rust/build.sh. Without a rustc
# that has the standard library for wasm32-wasi, make build says so and
# goes on (make test's Rust tests then skip, saying so, unless
# $$DURABOX_REQUIRE_RUST is 1, as in CI, where they fail).
RUST_EXAMPLES := hello approval fanout

.PHONY: rust-examples
build: rust-examples

rust-examples:
	@guest-sdk/rust/build.sh $(foreach e,$(RUST_EXAMPLES),examples/rust/$(e)/lib.rs examples/rust/$(e)/$(e).wasm); \
	code=$$?; if [ $$code -eq 3 ]; then echo "make: the Rust examples are not built (see above)"; else exit $$code; fi

# Durabox is four modules (RATIONALE.md): abi, engine and guest-sdk, each
# of its own so that a guest needs none of the host's modules, and the
# host's at the root. A ./... pattern stops at a nested go.mod, so vet and
# test run in each module, the fast ones first.
MODULES := abi engine guest-sdk internal/bench/peer .

vet:
	for m in $(MODULES); do (cd $$m && $(GO) vet ./...) || exit 1; done

# The quick tier, in under a minute on a 2-core machine: go vet, every test
# of the nested modules (abi, engine, guest-sdk: a second between them),
# and of the root module the packages in CHECK, chosen by what they cost
# (go test -json, 2026-11-27, 2 cores at a load of 4 to 7): none runs a
# module in a wasm runtime, and each takes under 2 s but
# internal/guestbuild (2 to 6 s, building small modules) and store/sqlite
# (11 to 16 s, the store conformance suite among them, and about 12 s more
# for its cost tests, which count SQLite's steps over backlogs of 10,000:
# 45 s in all at a load of 16). Under -short the
# odd database of store/sqlite (a real host, 12 s) and the torture test's
# runs skip. Left to make test: host (8 to 12 minutes), cmd/durabox (real
# durabox serve processes, a minute), host/internal/sandbox (31 s),
# store/postgres (18 s), host/replaytest (10 s), host/guestkit (30 to 90 s,
# the conformance kit on each SDK's module and a broken one, on both
# runtimes), the examples (2 to 4 s
# each, building and replaying their module), host/internal/wasmrewrite
# and internal/kitparity (3 s each, running modules). docs/testing.md
# lists the same packages.
CHECK := ./store/sqlite ./store/internal/... ./internal/docs ./internal/layout \
	./internal/guestbuild ./internal/torture ./host/bundle ./host/client/... \
	./host/api ./host/server ./host/metrics ./host/internal/wasi ./host/internal/wasmlimits

check: vet
	for m in $(filter-out .,$(MODULES)); do (cd $$m && $(GO) test -short ./...) || exit 1; done
	$(GO) test -short $(CHECK)

# The host package runs hundreds of real wasm instances and takes minutes;
# on a busy machine more than go test's default ten, so the limit is raised.
test: vet
	for m in $(MODULES); do (cd $$m && $(GO) test -timeout 30m ./...) || exit 1; done

# The race detector over the sandbox (whole: instances started, reset and
# closed at once) and the host's tests that run its dispatchers, caches and
# workers concurrently, and its updates (callers waiting on a commit while
# turns answer them: 2 minutes of the run here, quiet). Not the whole host package: under the detector its
# tests take longer than CI can give them (every module compiles with an
# instrumented compiler).
RACE_HOST := EndToEnd|WorkMadeHere|Concurrent|LiveCache|Fetcher|Hostile|FailOnlyTheir|ModuleLoadedOnce|CacheDoesNotChange|Metrics|Purge|CallContext|TestUpdate|TheWorkerProtocol|AHungAttempt|ACancelledActivityInTheModule|CompletionFromOutside|TestSchedule

race:
	$(GO) test -race -timeout 30m ./host/internal/...
	$(GO) test -race -timeout 30m -run '$(RACE_HOST)' ./host

# Each fuzz target over untrusted input for FUZZTIME, one after another:
# module bytes and manifests through deploy's checks, requests to every
# route of the HTTP API, stored event rows given to the engine, and the
# check of a module's declared sizes that stands before wazero's decoder.
# A failing input is written under the package's testdata/fuzz, where go
# test then runs it as a seed. FUZZTIME is a count of inputs, not a
# duration: with a duration, Go 1.26's fuzzing coordinator can report
# "context deadline exceeded" as a failure when its own deadline passes
# (go.dev/issue/75804, fixed in Go 1.27), which failed CI once with no
# failing input. 3000 inputs take 0.4 to 5 s a target here; the
# minimization of each new interesting input is held to 100 runs so that it
# cannot stall a target for the minute it is given by default.
FUZZTIME ?= 3000x
FUZZ     := FuzzDeploy:./host FuzzAPI:./host FuzzStoredHistory:./store/sqlite FuzzCheck:./host/internal/wasmlimits FuzzParse:./store/query

fuzz:
	for t in $(FUZZ); do $(GO) test -run '^$$' -fuzz "^$${t%%:*}$$" -fuzztime $(FUZZTIME) -fuzzminimizetime 100x "$${t#*:}" || exit 1; done

# RUNTIME=wasmtime runs the demo's host on wasmtime instead of wazero.
demo: build
	RUNTIME=$(RUNTIME) ./scripts/demo.sh

# The kill -9 torture test: the host killed at random moments, at least 20
# times, then every instance and history checked. CRASHFLAGS passes flags,
# e.g. CRASHFLAGS=--seed=42 to replay a run.
crashtest: bin/durabox
	$(GO) run ./internal/torture/cmd/crashtest --bin bin/durabox $(CRASHFLAGS)

# The torture test on PostgreSQL: three hosts sharing one database, killed
# 30 times in all (sometimes two at once), their connections cut by the
# server, then the same checks. It finds PostgreSQL as the tests do.
# crashtest with every activity in 3 worker processes outside the host
# (package worker), which are killed too.
crashtest-workers: bin/durabox
	$(GO) run ./internal/torture/cmd/crashtest --bin bin/durabox --workers 3 $(CRASHFLAGS)

crashtest-pg: bin/durabox
	$(GO) run ./internal/torture/cmd/crashtest --bin bin/durabox --postgres auto --hosts 3 --kills 30 $(CRASHFLAGS)

# The database goes down: three hosts on a PostgreSQL cluster of the run's
# own (initdb, pg_ctl), which is stopped fast, stopped immediately and
# killed with SIGKILL in turn, 6 times, between the hosts' kills.
dbrestarttest: bin/durabox
	$(GO) run ./internal/torture/cmd/crashtest --bin bin/durabox --postgres own --hosts 3 --kills 12 --db-restarts 6 $(CRASHFLAGS)

# Partitions: the same three hosts, each in a network namespace of its own
# (ip netns, veth, nft; needs root), one at a time cut off from its
# database (both ways, or one way) or from everything, or its link to the
# database slowed, for 1 to 15 seconds, 6 times, between the kills.
partitiontest: bin/durabox
	$(GO) run ./internal/torture/cmd/crashtest --bin bin/durabox --postgres own --hosts 3 --kills 12 --partitions 6 $(CRASHFLAGS)

# The soak run: a real durabox serve with --retention set, under a steady
# load (100 hellos a second, 50 approvals waiting, 20 instances continuing
# as new every second) for SOAK_MINUTES, sampled throughout; it fails when
# its memory, threads, live cache, database, WAL or log keep growing once
# warm. It prints every figure on a line "SOAK <name> <value> <unit>", then
# the samples. SOAKFLAGS passes flags, e.g. SOAKFLAGS=--runtime=wasmtime.
SOAK_MINUTES ?= 3
soaktest: bin/durabox
	$(GO) run ./internal/soak --bin bin/durabox --minutes $(SOAK_MINUTES) $(SOAKFLAGS)

# The benchmark suite: every figure on a line "BENCH <name> <value> <unit>".
# BENCHFLAGS passes flags, e.g. BENCHFLAGS=--durability=normal.
bench:
	$(GO) run ./internal/bench $(BENCHFLAGS)

# The many-waiting figures at full scale: 1,000,000 instances waiting for
# an event in one SQLite file, 100,000 of them woken (make bench runs a
# tenth of it). It prints the same BENCH lines.
bench-scale:
	$(GO) run ./internal/bench --only waiting --waiting 1000000 --wake 100000 $(BENCHFLAGS)

# The backlog figures at issue 35's sizes: one instance's fan-out of 1,000,
# 10,000 and 100,000 activities, of 1,000 and 10,000 children, and 1,000,
# 10,000 and 100,000 events raised at it, each with the cost of an item and
# how it grows (make bench takes 1,000 of each), on wazero.
bench-backlog:
	$(GO) run ./internal/bench --only backlog --backlog 1000,10000,100000 --runtimes wazero $(BENCHFLAGS)

# The hello and sequential figures on PostgreSQL, with 1, 2 and 3 hosts
# sharing the database (found as the tests find it), for BENCHMARKS.md.
bench-pg:
	for n in 1 2 3; do $(GO) run ./internal/bench --postgres auto --hosts $$n --hello 1000 --sequential 1000 $(BENCHFLAGS) || exit 1; done

# The peers' harnesses (../shared/peers: DBOS, Restate) and Durabox's own
# (internal/bench/peer, on SQLite and on PostgreSQL) one after the other,
# then one table of their figures: BENCHMARKS.md opens with it. Sizes by
# environment (N, C, N1, WARMUP, FANOUT, SEQ); see scripts/bench-peers.sh.
bench-peers:
	scripts/bench-peers.sh

# list --where on 1,000,000 instances with two search attributes each,
# seeded in bulk SQL, on SQLite and on PostgreSQL (found as the tests find
# it): a page of 100 under four filters, p50 and p99 (BENCHMARKS.md).
bench-filter:
	$(GO) test ./store/sqlite ./store/postgres -run XXX -bench BenchmarkListWhere_1M -benchtime 400x -timeout 30m

FORCE:
