# Lift: two commands for a newcomer — `make run` and `make test`.
SHELL := /bin/bash
GO    ?= go
LIFT  := .lift/bin/lift

.PHONY: run test bench stop build check fuzz docs-assets app-assets chdb-check

build:
	@command -v $(GO) >/dev/null || { echo "Go is missing: install Go 1.26 (https://go.dev/dl) and retry"; exit 1; }
	@mkdir -p .lift/bin
	$(GO) build -buildvcs=auto -ldflags "-X main.buildTime=$$(date -u +%Y-%m-%dT%H:%M:%SZ)" -o $(LIFT) ./cmd/lift

# Install what is missing, start Postgres, Redis and ClickHouse under .lift/,
# migrate, seed the demo shop and serve on :8080.
run: build
	$(LIFT) dev

# The same local stack (and Debian's chromium for the browser tests, which
# fail rather than skip here), then every test. Services this target started are
# stopped afterwards unless LIFT_KEEP_STACK=1.
test: build
	@$(LIFT) stack up --browser --started-file .lift/test-started >/dev/null
	@status=0; LIFT_REQUIRE_BROWSER=1 $(GO) test -count=1 -timeout 25m ./... || status=$$?; \
	if [ -z "$$LIFT_KEEP_STACK" ]; then $(LIFT) stack down --started-file .lift/test-started; fi; \
	exit $$status

# Benchmarks (DESIGN §11): every Go benchmark (ingest's decoding and WAL,
# the track-event route on the real stores, the middleware), ingest against a
# bare handler, API read latency, results timings.
bench: build
	@$(LIFT) stack up >/dev/null
	$(GO) test -run '^$$' -bench . -benchmem ./ingest/ ./api/storefront/ ./api/
	$(LIFT) bench ingest
	$(LIFT) bench api
	$(LIFT) bench results

# Fuzz every request decoder (issue 12), and the hand-written track-event
# decoder against encoding/json (FuzzEventJSONParity), for FUZZTIME each: every
# Fuzz function in the module has a line here. -fuzz takes one
# target per package run, hence one line per target. The HTTP-level targets
# (…HTTP) use the services as the tests do (LIFT_* or the local stack).
# Findings land in the package's testdata/fuzz and then run in every go test.
FUZZTIME ?= 20s
fuzz:
	$(GO) test -run '^$$' -fuzz '^FuzzParseCreate$$' -fuzztime $(FUZZTIME) ./experiment/
	$(GO) test -run '^$$' -fuzz '^FuzzApplyPatch$$' -fuzztime $(FUZZTIME) ./experiment/
	$(GO) test -run '^$$' -fuzz '^FuzzWebhookBodies$$' -fuzztime $(FUZZTIME) ./experiment/
	$(GO) test -run '^$$' -fuzz '^FuzzContested$$' -fuzztime $(FUZZTIME) ./experiment/
	$(GO) test -run '^$$' -fuzz '^FuzzEdge$$' -fuzztime $(FUZZTIME) ./api/
	$(GO) test -run '^$$' -fuzz '^FuzzListQuery$$' -fuzztime $(FUZZTIME) ./api/v1/
	$(GO) test -run '^$$' -fuzz '^FuzzResultQueryBody$$' -fuzztime $(FUZZTIME) ./api/v1/
	$(GO) test -run '^$$' -fuzz '^FuzzCreateHTTP$$' -fuzztime $(FUZZTIME) ./api/v1/
	$(GO) test -run '^$$' -fuzz '^FuzzPatchHTTP$$' -fuzztime $(FUZZTIME) ./api/v1/
	$(GO) test -run '^$$' -fuzz '^FuzzTrackingHTTP$$' -fuzztime $(FUZZTIME) ./api/storefront/
	$(GO) test -run '^$$' -fuzz '^FuzzSessionHTTP$$' -fuzztime $(FUZZTIME) ./api/session/
	$(GO) test -run '^$$' -fuzz '^FuzzCarrierRates$$' -fuzztime $(FUZZTIME) ./api/webhooks/
	$(GO) test -run '^$$' -fuzz '^FuzzParseCatalog$$' -fuzztime $(FUZZTIME) ./store/
	$(GO) test -run '^$$' -fuzz '^FuzzTrackEventBody$$' -fuzztime $(FUZZTIME) ./ingest/
	$(GO) test -run '^$$' -fuzz '^FuzzTrackAssignmentBody$$' -fuzztime $(FUZZTIME) ./ingest/
	$(GO) test -run '^$$' -fuzz '^FuzzLegacyBody$$' -fuzztime $(FUZZTIME) ./ingest/
	$(GO) test -run '^$$' -fuzz '^FuzzObserveQuery$$' -fuzztime $(FUZZTIME) ./ingest/
	$(GO) test -run '^$$' -fuzz '^FuzzEventJSONParity$$' -fuzztime $(FUZZTIME) ./ingest/
	$(GO) test -run '^$$' -fuzz '^FuzzAnalyze$$' -fuzztime $(FUZZTIME) ./stats/
	$(GO) test -run '^$$' -fuzz '^FuzzParseRequest$$' -fuzztime $(FUZZTIME) ./stats/

# Stop the local services.
stop: build
	$(LIFT) stack down

# What the before-stop hook checks.
check:
	@test -z "$$(gofmt -l $$(git ls-files '*.go'))" || { gofmt -l $$(git ls-files '*.go'); exit 1; }
	$(GO) vet ./...

# Re-copy the API reference renderer (GET /docs) from the Redoc version
# api/apidoc/web pins; the copy is committed, so build and test need no npm.
# npm works in .lift/ (the go tool skips dot directories, never node_modules).
docs-assets:
	rm -rf .lift/npm/redoc && mkdir -p .lift/npm/redoc
	cp api/apidoc/web/package.json api/apidoc/web/package-lock.json .lift/npm/redoc/
	cd .lift/npm/redoc && npm ci --ignore-scripts --legacy-peer-deps --no-audit --no-fund
	cp .lift/npm/redoc/node_modules/redoc/bundles/redoc.standalone.js .lift/npm/redoc/node_modules/redoc/bundles/redoc.standalone.js.LICENSE.txt api/apidoc/assets/

# Current ClickHouse next to the local 18.16: every DDL file (a fresh
# install and an 18.16 database upgraded in place) and every results
# statement the warehouse tests generate, run in chDB (the npm package
# pinned in clickhouse/chdb).
chdb-check: build
	@$(LIFT) stack up >/dev/null
	rm -rf .lift/sqldump && mkdir -p .lift/sqldump .lift/npm/chdb
	LIFT_DUMP_SQL=$(CURDIR)/.lift/sqldump $(GO) test -count=1 -run '^(TestResultsSQLRunsOnClickHouse|TestCovariatesSQLRunsOnClickHouse|TestAnalyticsSQLRunsOnClickHouse)$$' ./warehouse/
	cp clickhouse/chdb/package.json clickhouse/chdb/package-lock.json .lift/npm/chdb/
	cd .lift/npm/chdb && npm install --no-audit --no-fund # npm ci trips on chdb's per-platform optional libraries; install keeps the lockfile's versions
	NODE_PATH=$(CURDIR)/.lift/npm/chdb/node_modules node clickhouse/chdb/check.js clickhouse .lift/sqldump
# The results app's chart library (web/app): install exactly what
# web/app/package-lock.json pins, in a scratch directory, and copy its built
# files into web/app/vendor/ with a MANIFEST (version, sha256 of each file).
# vendor/ is committed and embedded in the binary, so run and test need no
# npm; run this only after changing web/app/package.json.
APP_VENDOR := web/app/vendor
app-assets:
	@command -v npm >/dev/null || { echo "npm is missing: install Node.js and npm, then retry"; exit 1; }
	@tmp=$$(mktemp -d) && trap 'rm -rf "$$tmp"' EXIT && \
	cp web/app/package.json web/app/package-lock.json "$$tmp"/ && \
	(cd "$$tmp" && npm ci --ignore-scripts --no-audit --no-fund >/dev/null) && \
	mkdir -p $(APP_VENDOR) && \
	cp "$$tmp"/node_modules/uplot/dist/uPlot.iife.min.js "$$tmp"/node_modules/uplot/dist/uPlot.min.css $(APP_VENDOR)/ && \
	cp "$$tmp"/node_modules/uplot/LICENSE $(APP_VENDOR)/uPlot.LICENSE && \
	version=$$(node -p 'require(process.argv[1]).version' "$$tmp"/node_modules/uplot/package.json) && \
	{ echo "uplot $$version"; (cd $(APP_VENDOR) && sha256sum uPlot.iife.min.js uPlot.min.css uPlot.LICENSE); } > $(APP_VENDOR)/MANIFEST.tmp && \
	mv $(APP_VENDOR)/MANIFEST.tmp $(APP_VENDOR)/MANIFEST && cat $(APP_VENDOR)/MANIFEST
