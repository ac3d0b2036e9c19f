#!/usr/bin/env bash
# `make test` and `make check`: their stages in order, each timed, the times printed at the end (also
# when a stage fails), then the Swift tests' own summary again so that it closes the output.
#
#   scripts/stages.sh test    one debug build: every Swift test (the crash test aside), the eth-account
#                             interop check and the schemathesis contract stage. Python packages install
#                             in the background while Swift builds.
#   scripts/stages.sh check   test, then what needs builds of its own: the instruction-count guard (a
#                             release herald-costs under callgrind, scripts/costs/check.sh), the crash
#                             test against the release binary, the Debian package (built, unpacked into
#                             a scratch root, run), 30 s of libFuzzer per target (AddressSanitizer
#                             build), and the operators' files (promtool, the dashboard JSON).
#
# HERALD_SKIP_INTEROP=1, HERALD_SKIP_CONTRACT=1 (no PyPI), HERALD_SKIP_POSTGRES=1, HERALD_SKIP_FUZZ=1 and
# HERALD_SKIP_OPS=1 leave those stages out, and say so.
set -uo pipefail

mode="${1:-test}"
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
swift="${SWIFT:-swift}"
work="$(mktemp -d "${TMPDIR:-/tmp}/herald-stages.XXXXXX")"
names=()
seconds=()
results=()
summary=""

report() {
    local status=$?
    [[ -n "${python_job:-}" ]] && kill "$python_job" 2>/dev/null
    [[ -d "$work/postgres" ]] && ./scripts/postgres/cluster.sh stop "$work/postgres"
    echo
    echo "stage times (make $mode):"
    for i in "${!names[@]}"; do
        printf '  %-44s %5d s  %s\n' "${names[$i]}" "${seconds[$i]}" "${results[$i]}"
    done
    printf '  %-44s %5d s\n' "wall clock (the python packages overlap the build)" "$SECONDS"
    [[ -n "$summary" ]] && printf '\n%s\n' "$summary"
    rm -rf "$work"
    exit $status
}
trap report EXIT

# stage NAME COMMAND...: runs it, records its time and outcome; a failure ends the run.
stage() {
    local name="$1"
    shift
    echo
    echo "=== $name"
    local start=$SECONDS
    "$@"
    local status=$?
    names+=("$name")
    seconds+=($((SECONDS - start)))
    if [[ $status -ne 0 ]]; then
        results+=("FAILED (exit $status)")
        exit $status
    fi
    results+=("ok")
}

skipped() {
    names+=("$1")
    seconds+=(0)
    results+=("SKIPPED ($2)")
    echo
    echo "=== $1: skipped ($2): $3"
}

# swift test, its closing summary kept for the end of the output.
swift_tests() {
    local log="$work/swift-test.log"
    "$swift" test --skip-build "$@" 2>&1 | tee "$log"
    local status=${PIPESTATUS[0]}
    # Each run's closing line, the first run's (every test but the crash test) printed last.
    local closing
    closing="$(grep -E '^(✔|✘).*Test run with' "$log" | tail -1)"
    summary="$closing${summary:+$'\n'$summary}"
    return $status
}

python_needed=1
if [[ "${HERALD_SKIP_INTEROP:-0}" == 1 && "${HERALD_SKIP_CONTRACT:-0}" == 1 ]]; then python_needed=0; fi
if [[ $python_needed == 1 ]]; then
    # eth-account and schemathesis from PyPI into one throwaway venv, while Swift compiles.
    export HERALD_VENV="$work/venv"
    (
        start=$SECONDS
        ./scripts/python-env.sh "$HERALD_VENV" > "$work/python.log" 2>&1
        echo "$? $((SECONDS - start))" > "$work/python.status"
    ) &
    python_job=$!
fi

wait_for_python() {
    wait "$python_job" 2>/dev/null
    python_job=""
    local status took
    read -r status took < "$work/python.status" || status=1
    cat "$work/python.log"
    names+=("python packages (beside the build)")
    seconds+=("${took:-0}")
    if [[ "$status" != 0 ]]; then
        results+=("FAILED (PyPI unreachable? HERALD_SKIP_INTEROP=1 HERALD_SKIP_CONTRACT=1 leave it out)")
        exit 1
    fi
    results+=("ok")
}

stage "system packages (apt-get if missing)" ./scripts/setup.sh
stage "debug build with tests" "$swift" build --build-tests
debug_bin="$("$swift" build --show-bin-path)"

if [[ $python_needed == 1 ]]; then
    echo
    echo "=== waiting for the python packages"
    wait_for_python
fi
if [[ "${HERALD_SKIP_INTEROP:-0}" == 1 ]]; then
    skipped "interop (eth-account)" "HERALD_SKIP_INTEROP=1" "eth-account compatibility NOT checked"
else
    stage "interop (eth-account)" ./scripts/interop/run.sh "$debug_bin/herald"
fi
if [[ "${HERALD_SKIP_CONTRACT:-0}" == 1 ]]; then
    skipped "contract (schemathesis)" "HERALD_SKIP_CONTRACT=1" "the API was NOT fuzzed against Schemas/openapi.yaml"
else
    stage "contract (schemathesis)" ./scripts/contract/run.sh "$debug_bin/herald"
fi
# A real PostgreSQL for the PostgreSQL store suite and the multi-node tests, stopped and removed at the end.
start_postgres() {
    local url
    url="$(./scripts/postgres/cluster.sh start "$work/postgres")" || return 1
    export HERALD_TEST_POSTGRES_URL="$url"
    echo "postgres: a throwaway cluster at ${url%%\?*}"
}
if [[ "${HERALD_SKIP_POSTGRES:-0}" == 1 ]]; then
    skipped "postgres (throwaway cluster)" "HERALD_SKIP_POSTGRES=1" "the PostgreSQL backend was NOT tested"
    unset HERALD_TEST_POSTGRES_URL
else
    stage "postgres (throwaway cluster)" start_postgres
fi
# The crash test and the limiter's memory test drive the release binary: make check runs them. The
# outage and slow-peer tests time what servers answer under a database stop, a full disk, a tarpit,
# and the metering tests sign 20,000 envelopes and run 300,000 limiter rounds on both cores: they run
# next, alone, so that neither makes the other suites' servers and deadlines look late.
alone="PostgresOutageTests|SlowPushServiceTests|SlowWebPushServiceTests|DiskFullTests|HostilePushServiceTests|MeteredReadsTests|RateLimiterTests"
stage "swift tests (debug)" swift_tests --skip "CrashSafetyTests|LimiterMemoryTests|$alone"
stage "outage and slow-peer tests (debug, alone)" swift_tests --filter "$alone"

if [[ "$mode" == check ]]; then
    # The instruction-count guard counts what ships: the release build, which the crash test reuses.
    stage "release build of herald-costs" "$swift" build -c release --product herald-costs
    stage "instruction counts (callgrind)" ./scripts/costs/check.sh "$("$swift" build -c release --show-bin-path)/herald-costs"
    # The binary as make release and make deb build it: Swift's runtime linked in, the commit stamped.
    release_flags=(-c release --static-swift-stdlib)
    stage "release build of herald" "$swift" build "${release_flags[@]}" --product herald \
        -Xlinker "$(./scripts/package/commit-object.sh)"
    release_bin="$("$swift" build "${release_flags[@]}" --show-bin-path)/herald"
    export HERALD_TEST_RELEASE_BINARY="$release_bin"
    stage "crash and limiter tests (release binary)" swift_tests --filter "CrashSafetyTests|LimiterMemoryTests"
    stage "Debian package (built, unpacked, run)" ./scripts/package/check-deb.sh "$release_bin"
    if [[ "${HERALD_SKIP_FUZZ:-0}" == 1 ]]; then
        skipped "fuzz (libFuzzer, 30 s per target)" "HERALD_SKIP_FUZZ=1" "the parsers were NOT fuzzed"
    else
        stage "fuzz (build + 30 s per target)" ./scripts/fuzz/run.sh 30
    fi
    if [[ "${HERALD_SKIP_OPS:-0}" == 1 ]]; then
        skipped "operators' files (promtool)" "HERALD_SKIP_OPS=1" "alert rules and dashboard NOT checked"
    elif [[ -x ./scripts/ops/check.sh ]]; then
        stage "operators' files (promtool)" ./scripts/ops/check.sh
    fi
fi
