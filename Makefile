# Herald: `make run` and `make test` set up a fresh Debian machine (apt-get), build, and go.
SHELL := /bin/bash
SWIFT ?= swift
# What `make run` runs: the server on its defaults (127.0.0.1:8080, ./herald-data/herald.sqlite).
# Override with e.g. make run ARGS="serve --port 9000" or ARGS="wallet list".
ARGS ?= serve

.PHONY: all setup build release run test quick check unit install deb interop interop-check contract contract-check fuzz fuzz-check costs bench ops-check format lint clean

all: build

setup:
	@./scripts/setup.sh

build: setup
	$(SWIFT) build

# The shipped binary: Swift's runtime linked in (it runs where no toolchain is installed), and the
# commit it was built from stamped in for `herald --version` (scripts/package/commit-object.sh).
RELEASE_FLAGS = -c release --static-swift-stdlib
release: setup
	$(SWIFT) build $(RELEASE_FLAGS) --product herald -Xlinker "$$(./scripts/package/commit-object.sh)"

# Installs the binary, the systemd unit, the sample configuration (as $(SYSCONFDIR)/herald/herald.yaml
# unless one is there), bash/zsh/fish completions and the man page. DESTDIR for staging.
PREFIX ?= /usr/local
SYSCONFDIR ?= /etc
install: release
	./scripts/package/stage.sh "$$($(SWIFT) build $(RELEASE_FLAGS) --show-bin-path)/herald" "$(DESTDIR)" \
	  "$(PREFIX)" "$(SYSCONFDIR)"

# A Debian package (dpkg-deb) in .build/deb/: /usr/bin/herald, the unit, /etc/herald/herald.yaml as a
# conffile, completions, man page; its postinst creates the `herald` system user.
deb: release
	./scripts/package/deb.sh "$$($(SWIFT) build $(RELEASE_FLAGS) --show-bin-path)/herald" .build/deb

run: build
	$(SWIFT) run --skip-build herald $(ARGS)

# The README's test command: a debug build, every Swift test but the crash and limiter-memory tests, the
# eth-account interop check and the schemathesis contract stage (Python packages install beside the
# build). Stage times are printed at the end; docs/development.md gives them.
# HERALD_SKIP_INTEROP=1 / HERALD_SKIP_CONTRACT=1 leave those stages out on a machine without PyPI.
test:
	@./scripts/stages.sh test

# Everything (CI runs this): make test's stages, then those that need builds of their own: the
# instruction-count guard (release herald-costs under callgrind), the crash test against the release
# binary, the Debian package built and run from a scratch root, 30 s of libFuzzer per parser
# (HERALD_SKIP_FUZZ=1 leaves it out), and the operators' files (promtool; HERALD_SKIP_OPS=1).
check:
	@./scripts/stages.sh check

# The unit and route tests of an existing debug build, in under two minutes: no end-to-end processes,
# no PostgreSQL, none of the timing suites. FILTER narrows it (a swift test --filter pattern).
QUICK_SKIP = HeraldCLITests|HeraldFuzzingTests|MeteredReadsTests|RateLimiterTests|SlowWebPushServiceTests|FakeProviderTests
quick:
	@test -x "$$($(SWIFT) build --show-bin-path)/herald" || { echo "quick: no debug build; run make unit or make test first" >&2; exit 1; }
	env -u HERALD_TEST_POSTGRES_URL $(SWIFT) test --skip-build --skip "$(QUICK_SKIP)" $(if $(FILTER),--filter "$(FILTER)")

unit: setup
	$(SWIFT) build --build-tests
	$(SWIFT) test --skip-build

interop: build interop-check

interop-check:
	@if [ "$${HERALD_SKIP_INTEROP:-0}" = "1" ]; then \
	  echo "interop: skipped (HERALD_SKIP_INTEROP=1): eth-account compatibility NOT checked"; \
	else \
	  ./scripts/interop/run.sh "$$($(SWIFT) build --show-bin-path)/herald"; \
	fi

contract: build contract-check

contract-check:
	@if [ "$${HERALD_SKIP_CONTRACT:-0}" = "1" ]; then \
	  echo "contract: skipped (HERALD_SKIP_CONTRACT=1): the API was NOT fuzzed against Schemas/openapi.yaml"; \
	else \
	  ./scripts/contract/run.sh "$$($(SWIFT) build --show-bin-path)/herald"; \
	fi

# Coverage-guided fuzzing (libFuzzer + AddressSanitizer) of every parser, FUZZ_SECONDS per target.
FUZZ_SECONDS ?= 300
fuzz: setup
	./scripts/fuzz/run.sh $(FUZZ_SECONDS)

fuzz-check: setup
	@if [ "$${HERALD_SKIP_FUZZ:-0}" = "1" ]; then \
	  echo "fuzz: skipped (HERALD_SKIP_FUZZ=1): the parsers were NOT fuzzed"; \
	else \
	  ./scripts/fuzz/run.sh 30; \
	fi

# The instruction-count guard alone (a stage of make test): herald-costs' fixed workload under callgrind,
# compared with scripts/costs/budgets.json.
costs: setup
	$(SWIFT) build -c release --product herald-costs
	./scripts/costs/check.sh "$$($(SWIFT) build -c release --show-bin-path)/herald-costs"

# The benchmarks are herald-dev's (beside herald, not in it); bench crypto starts no server.
bench: setup
	$(SWIFT) build -c release --product herald-dev
	"$$($(SWIFT) build -c release --show-bin-path)/herald-dev" bench crypto

# The operator files under ops/: alert rules (promtool check and unit tests), the Grafana dashboard,
# the systemd unit. Installs Debian's prometheus package for promtool if needed, service not started.
ops-check:
	./scripts/ops/check.sh

format:
	$(SWIFT) format format --in-place --recursive Sources Tests Package.swift

lint:
	$(SWIFT) format lint --strict --recursive Sources Tests Package.swift

clean:
	rm -rf .build
