# Every target creates .venv when it is missing and installs the project into it.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
PROTOS := $(wildcard proto/arena/v1/*.proto)

.PHONY: demo test bench bench-openspiel-env lint typecheck proto proto-check proto-lint proto-breaking docs \
	node-bot check clean

$(STAMP): pyproject.toml sdk/pyproject.toml sdk/games/pyproject.toml
	@test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e ./sdk -e ./sdk/games -e '.[dev]'
	@touch $(STAMP)

demo: $(STAMP)
	$(BIN)/arena demo

# The Node.js example bot's tests need its npm packages: installed when npm is here, else they
# are skipped (CI sets ARENA_REQUIRE_NODE and fails instead). The suite runs on pytest-xdist's
# workers (a core each, see tests/conftest.py), then the tests marked realtime alone, in one process:
# they hold honest bots to real deadlines. `.venv/bin/python -m pytest` runs it all in one process.
test: $(STAMP)
	@if ! command -v npm >/dev/null 2>&1; then echo "npm not found: the Node.js bot's tests are skipped"; \
	elif ! $(MAKE) --no-print-directory node-bot; then echo "the Node.js bot's tests are skipped"; fi
	@# Under PYTHONDONTWRITEBYTECODE no process writes its bytecode, and each of the suite's
	@# processes (arena, serve, its referees, bots) would compile every module it imports again.
	$(BIN)/python -m compileall -q -j 0 referee tournaments sdk/arena sdk/arena_sdk sdk/games example_bots tests scripts
	$(BIN)/python -m pytest -n auto --dist worksteal -m 'not realtime'
	$(BIN)/python -m pytest -m realtime

# OpenSpiel, for the engines' baseline, lives in the benchmark's own environment only.
OPENSPIEL := bench/.venv-openspiel
$(OPENSPIEL)/.installed: bench/openspiel-requirements.txt
	@test -x $(OPENSPIEL)/bin/python || $(PYTHON) -m venv $(OPENSPIEL)
	$(OPENSPIEL)/bin/python -m pip install --quiet -r bench/openspiel-requirements.txt
	@touch $@

bench-openspiel-env: $(OPENSPIEL)/.installed

# Benchmarks print ratios against baselines measured in the same run; never part of the tests.
# If the OpenSpiel env cannot be installed, bench.engines says so and uses a plain-Python loop.
bench: $(STAMP)
	-$(MAKE) bench-openspiel-env
	$(BIN)/python -m bench.all

# lint-imports: the layers and their edges, as pyproject.toml's [tool.importlinter] says.
lint: $(STAMP)
	$(BIN)/ruff check referee sdk/arena_sdk sdk/games $(wildcard tournaments) example_bots tests bench
	$(BIN)/ruff format --check referee sdk/arena_sdk sdk/games $(wildcard tournaments) example_bots tests bench
	$(BIN)/lint-imports --no-cache

typecheck: $(STAMP)
	$(BIN)/mypy referee sdk/arena_sdk sdk/games/arena_games $(wildcard tournaments) example_bots

# Regenerates the Python code of proto/ into the SDK (the only place it lives).
proto: $(STAMP)
	PATH=$(abspath $(BIN)):$$PATH bash scripts/gen_proto.sh sdk

# Writes docs/observations.md from proto/'s comments and the engines (a test checks it is current).
docs: $(STAMP)
	$(BIN)/python scripts/observations_doc.py

# Fails when the generated code in sdk/ differs from what proto/ gives.
proto-check: $(STAMP)
	PATH=$(abspath $(BIN)):$$PATH bash scripts/gen_proto.sh --check

# buf's standard lint rules, from buf's npm package (offline once installed).
proto-lint:
	npx --yes @bufbuild/buf@1.75.0 lint

# buf breaking (WIRE_JSON, see buf.yaml) against the version of proto/ before its latest change.
proto-breaking:
	bash scripts/proto_breaking.sh

# The Node.js example bot's npm packages, exactly as its package-lock.json pins them.
NODE_BOT := example_bots/node
$(NODE_BOT)/node_modules/.installed: $(NODE_BOT)/package.json $(NODE_BOT)/package-lock.json
	cd $(NODE_BOT) && npm ci --ignore-scripts --no-audit --no-fund
	@touch $@

node-bot: $(NODE_BOT)/node_modules/.installed

check: lint typecheck proto-check test

clean:
	rm -rf $(VENV) .pytest_cache .mypy_cache .ruff_cache
