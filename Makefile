# Orkestra — build, test and run. `make help` lists the targets.
SHELL := /usr/bin/env bash
.SHELLFLAGS := -euo pipefail -c

# Go from PATH, or the standard install location on a fresh machine.
GO ?= $(shell command -v go 2>/dev/null || echo /usr/local/go/bin/go)
BIN := bin
VERSION ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)
LDFLAGS := -s -w -X main.version=$(VERSION)
EXAMPLES := examples/website/katalog.yaml examples/legacy-website/katalog.yaml examples/state-machine/katalog.yaml
IMAGE ?= orkestra:$(VERSION)

.PHONY: help
help: ## list targets
	@grep -E '^[a-zA-Z_-]+:.*## ' $(MAKEFILE_LIST) | awk -F':.*## ' '{printf "  %-12s %s\n", $$1, $$2}'

.PHONY: build
build: ## build bin/orkestra
	CGO_ENABLED=0 $(GO) build -trimpath -ldflags '$(LDFLAGS)' -o $(BIN)/orkestra ./cmd/orkestra

.PHONY: run
run: build ## the main job: a local control plane running the example katalog (orkestra dev)
	$(BIN)/orkestra dev -f examples/website/katalog.yaml

.PHONY: envtest
envtest: ## build and cache kube-apiserver and etcd for envtest in bin/envtest
	GO=$(GO) hack/envtest-assets.sh >/dev/null

.PHONY: lint
lint: ## gofmt and go vet
	@unformatted=$$(gofmt -l $$(git ls-files '*.go' | grep -v '^hack/tools/')); \
	  if [ -n "$$unformatted" ]; then echo "gofmt needed:"; echo "$$unformatted"; exit 1; fi
	$(GO) vet ./...

.PHONY: check-examples
check-examples: build ## orkestra check on every example katalog
	for k in $(EXAMPLES); do $(BIN)/orkestra check -f $$k; done

.PHONY: simulate-examples
simulate-examples: build ## orkestra simulate on every example's Simulate specs (in memory)
	$(BIN)/orkestra simulate ./examples/...

.PHONY: test
test: lint build ## everything CI runs: lint, race tests against a real API server, examples
	KUBEBUILDER_ASSETS="$$(GO=$(GO) hack/envtest-assets.sh)"; export KUBEBUILDER_ASSETS; \
	  $(GO) test -race -count=1 -timeout 40m ./...
	$(MAKE) --no-print-directory check-examples
	$(MAKE) --no-print-directory simulate-examples
	$(MAKE) --no-print-directory conformance
	$(MAKE) --no-print-directory e2e-examples

.PHONY: conformance
conformance: build ## the conformance suite, a real API server included, on every example katalog (JUnit in bin/conformance/)
	@mkdir -p $(BIN)/conformance
	KUBEBUILDER_ASSETS="$$(GO=$(GO) hack/envtest-assets.sh)"; export KUBEBUILDER_ASSETS; \
	  for k in $(EXAMPLES); do \
	    d=$$(dirname $$k); \
	    $(BIN)/orkestra conformance --apiserver -f $$k --junit $(BIN)/conformance/$$(basename $$d).xml $$d/*.yaml; \
	  done

.PHONY: e2e-examples
e2e-examples: build ## orkestra e2e on every example's E2E spec (one local control plane per spec)
	KUBEBUILDER_ASSETS="$$(GO=$(GO) hack/envtest-assets.sh)"; export KUBEBUILDER_ASSETS; \
	  $(BIN)/orkestra e2e $(patsubst %/katalog.yaml,-f %/e2e.yaml,$(EXAMPLES))

.PHONY: bench
bench: ## run the benchmarks (ratios against baselines measured in the same run)
	KUBEBUILDER_ASSETS="$$(GO=$(GO) hack/envtest-assets.sh)"; export KUBEBUILDER_ASSETS; \
	  $(GO) test -run '^$$' -bench . -benchmem ./...

.PHONY: image
image: ## build the container image (needs a container engine)
	docker build --build-arg VERSION=$(VERSION) -t $(IMAGE) .

.PHONY: clean
clean: ## remove build outputs (keeps the envtest cache)
	rm -f $(BIN)/orkestra

# Fuzz targets, one package each (go test -fuzz takes one target at a time).
FUZZ_TARGETS := \
	./katalog:FuzzLoad ./katalog:FuzzReadCRD ./engine/cel:FuzzParseTemplate ./engine/cel:FuzzCompileEval \
	./engine/gotmpl:FuzzLegacy ./engine/conversion:FuzzStash ./webhook:FuzzConvertWebsite \
	./webhook:FuzzConvertHandler ./engine/jsonval:FuzzDecodeJSON ./engine/gotmpl/migrate:FuzzMigrate
FUZZTIME ?= 2m

.PHONY: fuzz
fuzz: ## run every fuzz target for FUZZTIME each (default 2m; e.g. make fuzz FUZZTIME=10m)
	for t in $(FUZZ_TARGETS); do \
	  pkg=$${t%%:*}; name=$${t##*:}; \
	  echo "== $$pkg $$name"; \
	  $(GO) test -run '^$$' -fuzz "^$$name\$$" -fuzztime $(FUZZTIME) $$pkg || exit 1; \
	done
