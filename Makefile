# The two commands of README.md: `make qualify` (the main job) and `make test` (the tests).
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
PYTEST_WORKERS ?= 2
# A test past this many seconds fails, printing where it hung (pytest-timeout), instead of
# holding the run until CI's limit (the longest test takes about 220 s).
TEST_TIMEOUT_S ?= 1200
PYTEST := $(BIN)/pytest --timeout $(TEST_TIMEOUT_S)

.PHONY: setup build browser docs schemas wheel test test-local test-kind test-kind-chaos test-long test-signals test-zones test-kind-zones lint unit qualify qualify-scale bench-ceiling certify down clean

$(BIN)/.installed: pyproject.toml setup.py pytest.ini
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet -e '.[dev]'
	touch $@

setup: $(BIN)/.installed

# Pinned upstream binaries: cached in ~/.cache/zoneproof, built from Go modules when missing.
build: setup
	$(BIN)/zoneproof build

# Debian's chromium: the headless browser that looks at the HTML report and plots. Optional:
# installed only as root; without it the browser checks are skipped, saying why.
browser:
	@command -v chromium >/dev/null || { [ "$$(id -u)" = 0 ] && apt-get update -qq && \
		apt-get install -y -qq chromium; } || \
		echo "no chromium: browser checks are skipped (as root: apt-get install -y chromium)"

# The documentation site (docs/): built strictly, a broken link fails.
docs: setup
	NO_MKDOCS_2_WARNING=1 $(BIN)/mkdocs build --strict --site-dir build/site

# The JSON Schemas of the files zoneproof reads and writes, from their pydantic models: into the
# package beside each model and into the docs (tests/unit/{slo/test_schema,suites/test_profile_schema,
# report/test_summary_schema}.py hold both equal to the models).
schemas: setup
	$(BIN)/python -c "import pathlib; \
		from zoneproof.slo import spec; from zoneproof.suites import profile; \
		from zoneproof.report import summary_file; \
		[pathlib.Path(p).write_text(m.json_schema()) for m in (spec, profile, summary_file) \
		 for p in (m.SCHEMA_FILE, 'docs/reference/schemas/' + m.SCHEMA_FILE.name)]"

# The wheel a user installs (pip install dist/zoneproof-*.whl; pipx install . does the same).
wheel: setup
	$(BIN)/pip wheel --no-deps --wheel-dir dist .

lint: setup
	$(BIN)/ruff check .
	$(BIN)/mypy
	$(BIN)/lint-imports

unit: setup
	$(PYTEST) tests/unit -q

# Every test: on local beds, then on kind clusters.
test: test-local test-kind

# Unit, test-bed integration, conformance and chaos, on real local beds (no docker needed).
# The chaos experiments run after the rest, a bed per worker, as qualify runs them: beside
# a pip install or a browser their history traffic fell under its 100 ops/s floor (VOID).
LOCAL_MARKERS = "not kind and not long and not zones"
test-local: lint docs build browser
	$(PYTEST) -n $(PYTEST_WORKERS) --dist loadgroup -m $(LOCAL_MARKERS) \
		--ignore chaos/test_experiments.py
	$(PYTEST) -n $(PYTEST_WORKERS) --dist loadgroup -m $(LOCAL_MARKERS) chaos/test_experiments.py

# The zone experiments and their broken twins (tag zones), each worker on a zoned bed of its
# own (root: network namespaces); see docs/zones.md for their figures and time.
test-zones: build
	$(PYTEST) -n $(PYTEST_WORKERS) --dist loadgroup -m zones chaos/test_experiments.py

# The slow variants left out above (every signal at every phase, ...), on local beds.
test-long: build
	$(PYTEST) -n $(PYTEST_WORKERS) --dist loadgroup -m "long and not kind"

# Every signal (SIGINT, SIGTERM, SIGKILL) at every phase (up, conformance, fault, revert).
test-signals: build
	$(PYTEST) -p no:cacheprovider tests/integration/test_signals.py

ETCD_EXPERIMENTS = etcd-kill-leader,etcd-kill-follower,etcd-quorum-loss

# The kind backend on this machine: docker (set up if needed, as root), the offline node
# image (built once, ~11 min cold) and the components' images (~2.5 min cold), the kind tests
# on real kind clusters (the components in-cluster among them), then the same
# conformance suite and the zone-outage and dns-outage experiments on kind (--zp-backend
# kind, unchanged), and the etcd experiments on an HA control plane (3 control-plane nodes,
# ~7 min), and the in-cluster experiments (the webhook's rolling restart with its broken
# twin). The generated controller schedules are left to test-local and test-kind-chaos:
# their nodes are Node objects the executor posts on either backend (~4.5 min on kind). The
# VOID self-check judges the runner, not the backend: test-local runs it (~90 s on kind).
test-kind: setup
	bash scripts/setup-docker.sh
	$(BIN)/zoneproof build --node-image
	$(BIN)/zoneproof build --images
	$(PYTEST) -p no:xdist -m kind tests/integration/kind
	$(PYTEST) -p no:xdist -m "not mutants" --zp-backend kind conformance \
		--ignore conformance/ha_controller/test_generated.py \
		chaos/test_experiments.py --zp-experiments zone-outage,dns-outage \
		-k "not test_a_void_history_runs_the_experiment_again"
	$(PYTEST) -p no:xdist --zp-backend kind --zp-etcd-members 3 --zp-nodes-per-zone 1 \
		chaos/test_experiments.py --zp-experiments $(ETCD_EXPERIMENTS)
	$(PYTEST) -p no:xdist --zp-backend kind --zp-components in-cluster --zp-nodes-per-zone 1 \
		chaos/test_experiments.py --zp-experiments zone-outage-components,webhook-rollout \
		-k "(test_experiment and not catches) or webhook-rollout-no-drain"

# The rest of the chaos set on kind (~19 min on 2 cores) and the generated controller
# schedules on kind (~4.5 min): not in test-kind, see README.
test-kind-chaos: setup
	$(PYTEST) -p no:xdist --zp-backend kind -m "not zones" chaos/test_experiments.py \
		--zp-skip-experiments zone-outage,dns-outage,$(ETCD_EXPERIMENTS)
	$(PYTEST) -p no:xdist --zp-backend kind conformance/ha_controller/test_generated.py

# The zone experiments kind's plain clusters take (kubelet-apiserver-cut: nftables in the zone's
# node containers) and their broken twins, on one kind cluster; not in test-kind (docs/zones.md).
test-kind-zones: setup
	bash scripts/setup-docker.sh
	$(BIN)/zoneproof build --node-image
	$(BIN)/zoneproof build --images
	$(PYTEST) -p no:xdist --zp-backend kind -m zones chaos/test_experiments.py \
		--zp-experiments kubelet-apiserver-cut

# The release gate on the default local backend: build, up, suite, reports, down (no root).
qualify: build
	$(BIN)/zoneproof qualify

# Heavy runs outside `make test`, each needing the machine to itself: the scale profile
# (SCALE kwok nodes per zone, SCALE_PODS pods: 300 nodes and 10,000 pods by default) and the
# bed's ceiling (1,002 nodes and 100,000 pods: the controller's figures and every bed
# process's memory and CPU at that size; about 90 minutes on 2 cores, most of it the fill).
SCALE ?= 100
SCALE_PODS ?= 10000
qualify-scale: build
	$(BIN)/zoneproof qualify --scale $(SCALE) --scale-pods $(SCALE_PODS)

bench-ceiling: build
	$(BIN)/zoneproof bench bed-ceiling --runs 1

# Certify the components a profile names; signs with KEY (a PEM private key).
PROFILE ?= certification/profile.example.yaml
certify: build
	$(BIN)/zoneproof certify $(PROFILE) --key $(KEY)

down: setup
	$(BIN)/zoneproof down

clean:
	rm -rf $(VENV) .pytest_cache .mypy_cache .ruff_cache .hypothesis build dist
