#!/usr/bin/env bash
# The floor under a PostgreSQL node's pushes: the CPU PostgreSQL itself spends on a push's claim and outcome
# statements when nothing else costs anything (no node, no client library, no protocol, no TLS, no fake push
# service: a procedure runs them in a loop inside the server, scripts/load/outbox-floor.sql). Seeds PUSHES
# queued APNs pushes with `herald-dev bench broadcast` on a throwaway cluster, then prints, for each of RUNS
# runs of ROUNDS claims of LIMIT pushes, the cluster's CPU (every PostgreSQL process, as push-bench.sh counts
# it) per push. Compare with push-bench.sh's "µs of CPU" a push on PostgreSQL: the difference is what the
# protocol and the batching around the statements cost.
#
# Usage: scripts/load/outbox-floor.sh [HERALD_BINARY] [PUSHES] [ROUNDS] [LIMIT] [RUNS]
#        (default .build/release/herald, 300000, 1000, 90, 3; PUSHES must cover ROUNDS × LIMIT × RUNS)
set -euo pipefail

herald="${1:-.build/release/herald}"
pushes="${2:-300000}"
rounds="${3:-1000}"
limit="${4:-90}"
runs="${5:-3}"
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
source "$root/scripts/load/herald-dev.sh"
if ((rounds * limit * runs > pushes)); then
    echo "outbox-floor: $runs runs of $rounds claims of $limit need $((rounds * limit * runs)) queued pushes" >&2
    exit 64
fi
work="$(mktemp -d "${TMPDIR:-/tmp}/herald-outbox-floor.XXXXXX")"
cleanup() {
    "$root/scripts/postgres/cluster.sh" stop "$work/postgres" > /dev/null 2>&1 || true
    rm -rf "$work"
}
trap cleanup EXIT

database="$("$root/scripts/postgres/cluster.sh" start "$work/postgres")"
echo "seeding $pushes queued pushes…" >&2
"$herald_dev" bench broadcast --database "$database" --subscribers "$pushes" --rounds 1 | tail -1
psql "$database" -Atq -c "VACUUM ANALYZE" -f "$root/scripts/load/outbox-floor.sql"
for run in $(seq 1 "$runs"); do
    before="$("$root/scripts/load/pg-cpu.sh" "$work/postgres")"
    started="$(date +%s.%N)"
    psql "$database" -Atq -c "CALL herald_outbox_floor($rounds, $limit)"
    finished="$(date +%s.%N)"
    after="$("$root/scripts/load/pg-cpu.sh" "$work/postgres")"
    claimed=$((rounds * limit))
    awk -v cpu="$(echo "$after - $before" | bc)" -v wall="$(echo "$finished - $started" | bc)" -v n="$claimed" -v run="$run" \
        'BEGIN { printf "run %d: %d pushes claimed and recorded sent in %.2f s: %.0f µs of PostgreSQL CPU a push\n", run, n, wall, cpu * 1000000 / n }'
done
