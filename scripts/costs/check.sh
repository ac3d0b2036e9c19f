#!/usr/bin/env bash
# The instruction-count guard (`make costs`, a stage of `make check`): runs herald-costs' fixed workload
# (2,000 registrations, then one broadcast to 10,000 subscribers, through the real router and SQLite
# store, fixed keys and clock; then the 12,000 pushes they queued, drained through the outbox and the
# APNs provider into an in-memory transport; then, docs/protocol.md §10, a broadcast filtered by the
# subscribers' settings and mutes and a type 4 to 1,000 of them through their buckets) under
# callgrind, which counts instructions: the same on
# every run, on a busy machine as on an idle one, so the check cannot flake the way a timed one would.
# It prints the instructions per registration, per broadcast recipient and per push and fails when one
# exceeds its budget in
# scripts/costs/budgets.json by more than 10%. Raising a budget is a commit that says why.
#
# Usage: scripts/costs/check.sh [HERALD_COSTS_BINARY] [REGISTRATIONS] [SUBSCRIBERS]
#        (default: the release build's herald-costs, 2000, 10000)
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
binary="${1:-$root/.build/release/herald-costs}"
registrations="${2:-2000}"
subscribers="${3:-10000}"
if ! command -v valgrind > /dev/null; then
    echo "costs: valgrind is missing (Debian: apt-get install valgrind; make test installs it)" >&2
    exit 1
fi
[[ -x "$binary" ]] || { echo "costs: no $binary (swift build -c release --product herald-costs)" >&2; exit 1; }
work="$(mktemp -d "${TMPDIR:-/tmp}/herald-costs.XXXXXX")"
trap 'rm -rf "$work"' EXIT
# Valgrind 3.19 cannot read the DWARF 5 that Swift writes ("possibly corrupted debuginfo"); the symbol
# table is all callgrind needs here.
objcopy --strip-debug "$binary" "$work/herald-costs"
# Instrumentation starts off: the set-up (migrations, 10,000 subscribers, signing) runs at near native
# speed, and herald-costs turns counting on around each phase and dumps it by name.
if ! valgrind --tool=callgrind --instr-atstart=no --callgrind-out-file="$work/callgrind.out" \
    "$work/herald-costs" "$registrations" "$subscribers" > "$work/run.log" 2>&1; then
    cat "$work/run.log"
    echo "costs: the workload failed under valgrind" >&2
    exit 1
fi
grep '^phase ' "$work/run.log" || true
python3 "$root/scripts/costs/compare.py" "${HERALD_COSTS_BUDGETS:-$root/scripts/costs/budgets.json}" "$registrations" "$subscribers" \
    "$work"/callgrind.out*
