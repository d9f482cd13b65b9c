# Durabox. `make demo` runs the whole path end to end; `make test` runs every test.

GO       ?= go
EXAMPLES := hello retry parentchild approval fanout eternal
WASM     := $(foreach e,$(EXAMPLES),examples/wasm/$(e)/$(e).wasm)

export CGO_ENABLED = 1

.PHONY: build examples test demo bench crashtest crashtest-pg FORCE

build: bin/durabox examples

bin/durabox: FORCE
	$(GO) build -o $@ ./cmd/durabox

examples: $(WASM)

examples/wasm/%.wasm: FORCE
	GOOS=wasip1 GOARCH=wasm $(GO) build -trimpath -buildmode=c-shared -o $@ ./$(dir $@)

test:
	$(GO) vet ./...
	$(GO) test ./...

demo: build
	./scripts/demo.sh

# The kill -9 torture test: the host killed at random moments, at least 20
# times, then every instance and history checked. CRASHFLAGS passes flags,
# e.g. CRASHFLAGS=--seed=42 to replay a run.
crashtest: bin/durabox
	$(GO) run ./internal/torture/cmd/crashtest --bin bin/durabox $(CRASHFLAGS)

# The torture test on PostgreSQL: three hosts sharing one database, killed
# 30 times in all (sometimes two at once), their connections cut by the
# server, then the same checks. It finds PostgreSQL as the tests do.
crashtest-pg: bin/durabox
	$(GO) run ./internal/torture/cmd/crashtest --bin bin/durabox --postgres auto --hosts 3 --kills 30 $(CRASHFLAGS)

# The benchmark suite: every figure on a line "BENCH <name> <value> <unit>".
# BENCHFLAGS passes flags, e.g. BENCHFLAGS=--durability=normal.
bench:
	$(GO) run ./internal/bench $(BENCHFLAGS)

FORCE:
