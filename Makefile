# Lift: two commands for a newcomer — `make run` and `make test`.
SHELL := /bin/bash
GO    ?= go
LIFT  := .lift/bin/lift

.PHONY: run test bench stop build check

build:
	@command -v $(GO) >/dev/null || { echo "Go is missing: install Go 1.26 (https://go.dev/dl) and retry"; exit 1; }
	@mkdir -p .lift/bin
	$(GO) build -o $(LIFT) ./cmd/lift

# Install what is missing, start Postgres, Redis and ClickHouse under .lift/,
# migrate, seed the demo shop and serve on :8080.
run: build
	$(LIFT) dev

# The same local stack, then every test. Services this target started are
# stopped afterwards unless LIFT_KEEP_STACK=1.
test: build
	@$(LIFT) stack up --started-file .lift/test-started >/dev/null
	@status=0; $(GO) test -count=1 -timeout 25m ./... || status=$$?; \
	if [ -z "$$LIFT_KEEP_STACK" ]; then $(LIFT) stack down --started-file .lift/test-started; fi; \
	exit $$status

# Benchmarks (DESIGN §11): ingest against a bare handler, API read latency,
# results timings.
bench: build
	@$(LIFT) stack up >/dev/null
	$(GO) test -run '^$$' -bench . -benchmem ./ingest/ ./stats/
	$(LIFT) bench ingest
	$(LIFT) bench api
	$(LIFT) bench results

# Stop the local services.
stop: build
	$(LIFT) stack down

# What the before-stop hook checks.
check:
	@test -z "$$(gofmt -l $$(git ls-files '*.go'))" || { gofmt -l $$(git ls-files '*.go'); exit 1; }
	$(GO) vet ./...
