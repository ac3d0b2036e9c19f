#!/usr/bin/env bash
# Registrations per second with wrk (POST /v1/devices, pre-signed bodies, 64 connections, 10 s) against
# one node on SQLite, one node on PostgreSQL and two nodes on one PostgreSQL (wrk spreading 32
# connections over each), in one run, on one throwaway PostgreSQL cluster; then the statements and
# round trips PostgreSQL saw per registration, from pg_stat_statements and pg_stat_database.
#
# Usage: scripts/load/nodes-bench.sh [HERALD_BINARY] [SECONDS]   (default .build/release/herald, 10)
# Needs wrk (Debian: apt-get install wrk) and PostgreSQL (scripts/postgres/cluster.sh installs it).
set -euo pipefail

herald="${1:-.build/release/herald}"
seconds="${2:-10}"
# Bodies per run: more than a run can send (a body sent twice is a 409).
per_run="${HERALD_BENCH_BODIES:-150000}"
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
source "$root/scripts/load/herald-dev.sh"
source "$root/scripts/load/serve-node.sh"
work="$(mktemp -d "${TMPDIR:-/tmp}/herald-nodes-bench.XXXXXX")"
cleanup() {
    [[ -f "$work/pids" ]] && kill $(cat "$work/pids") 2> /dev/null || true
    sleep 1
    "$root/scripts/postgres/cluster.sh" stop "$work/postgres" > /dev/null 2>&1 || true
    rm -rf "$work"
}
trap cleanup EXIT
command -v wrk > /dev/null || { echo "wrk is missing: apt-get install wrk" >&2; exit 1; }

server_url="$("$root/scripts/postgres/cluster.sh" start "$work/postgres")"
admin() { psql "$server_url" -v ON_ERROR_STOP=1 -Atq -c "$1"; }
database_url() { echo "${server_url/\/herald\?//$1?}"; }

# serve NAME DATABASE: a node without the setup confirmation (registrations alone), its URL.
serve() { serve_node "$1" "$2" --setup-confirmation false; }

# Bodies signed once for the audience every node shares; each run takes fresh ones (a replay is a 409).
echo "signing bodies…" >&2
first="$(serve signer "$work/signer.sqlite")"
"$herald_dev" bench register --server "$first" --requests $((per_run * 3)) --write-bodies "$work/all.jsonl" --sign-only \
    > /dev/null
kill "$(cat "$work/signer.pid")"
split -l "$per_run" -d "$work/all.jsonl" "$work/bodies."

# wrk_run LABEL BODIES URL...: 64 connections split over the URLs; prints requests/s summed and the worst p99.
wrk_run() {
    local label="$1" bodies="$2"
    shift 2
    local count=$# per=$((64 / $#)) i=0 pids=()
    for url in "$@"; do
        sed -n "$((i + 1))~${count}p" "$bodies" > "$work/part.$i"
        wrk -t1 -c"$per" -d"${seconds}s" --latency -s "$root/scripts/load/register.lua" "$url" -- "$work/part.$i" \
            > "$work/wrk.$i" &
        pids+=($!)
        i=$((i + 1))
    done
    wait "${pids[@]}"
    local rate=0 p99=""
    for ((i = 0; i < count; i++)); do
        rate="$(awk -v sum="$rate" '/^Requests\/sec/ { print sum + $2 }' "$work/wrk.$i")"
        p99="$p99 $(awk '$1 == "99%" { print $2 }' "$work/wrk.$i")"
        grep -q "Non-2xx" "$work/wrk.$i" && echo "  ($label: $(grep Non-2xx "$work/wrk.$i"))"
    done
    printf '%-34s %8.0f registrations/s   p99%s\n' "$label" "$rate" "$p99"
}

# cpu PID...: CPU seconds (user + system) the processes have used so far.
cpu() {
    local pid total=0
    for pid in "$@"; do
        total="$(awk -v t="$total" -v hz="$(getconf CLK_TCK)" '{ printf "%.2f", t + ($14 + $15) / hz }' "/proc/$pid/stat")"
    done
    echo "$total"
}
# per_registration LABEL BEFORE AFTER REGISTERED: CPU milliseconds per registration.
per_registration() {
    printf '%s %s ms' "$1" "$(awk -v a="$2" -v b="$3" -v n="$4" 'BEGIN { printf "%.3f", (b - a) * 1000 / n }')"
}
# count DATABASE_URL: registrations stored.
count() { psql "$1" -Atq -c "SELECT COUNT(*) FROM bindings"; }

sqlite="$(serve sqlite "$work/bench.sqlite")"
before="$(cpu "$(cat "$work/sqlite.pid")")"
wrk_run "one node, SQLite" "$work/bodies.00" "$sqlite"
registered="$(sqlite3 "$work/bench.sqlite" "SELECT COUNT(*) FROM bindings" 2> /dev/null || echo 0)"
if [[ "$registered" -gt 0 ]]; then
    echo "  CPU per registration: $(per_registration herald "$before" "$(cpu "$(cat "$work/sqlite.pid")")" "$registered")"
fi

admin "CREATE DATABASE one"
one="$(serve pg1 "$(database_url one)")"
psql "$(database_url one)" -Atq -c "CREATE EXTENSION IF NOT EXISTS pg_stat_statements; SELECT pg_stat_statements_reset()" > /dev/null
# Transactions from the database's own count: a prepared BEGIN or COMMIT is not in pg_stat_statements.
transactions() { psql "$(database_url one)" -Atq -c "SELECT xact_commit FROM pg_stat_database WHERE datname = 'one'"; }
transactions_before="$(transactions)"
before="$(cpu "$(cat "$work/pg1.pid")")"
pg_before="$("$root/scripts/load/pg-cpu.sh" "$work/postgres")"
wrk_run "one node, PostgreSQL" "$work/bodies.01" "$one"
registered="$(count "$(database_url one)")"
echo "  CPU per registration: $(per_registration herald "$before" "$(cpu "$(cat "$work/pg1.pid")")" "$registered")," \
    "$(per_registration PostgreSQL "$pg_before" "$("$root/scripts/load/pg-cpu.sh" "$work/postgres")" "$registered")"
psql "$(database_url one)" -Atq -F ' ' -c "
    SELECT round(sum(calls)::numeric / $registered, 2),
           round(($(transactions) - $transactions_before)::numeric / $registered, 3)
    FROM pg_stat_statements WHERE dbid = (SELECT oid FROM pg_database WHERE datname = 'one')
      AND query !~* '^(BEGIN|COMMIT)'" |
    while read -r statements commits; do
        echo "  PostgreSQL per registration: $statements statements and $commits transactions, each a BEGIN" \
            "and a COMMIT more ($registered registered)"
    done

admin "CREATE DATABASE two"
a="$(serve pgA "$(database_url two)")"
b="$(serve pgB "$(database_url two)")"
before="$(cpu "$(cat "$work/pgA.pid")" "$(cat "$work/pgB.pid")")"
pg_before="$("$root/scripts/load/pg-cpu.sh" "$work/postgres")"
wrk_run "two nodes, one PostgreSQL" "$work/bodies.02" "$a" "$b"
registered="$(count "$(database_url two)")"
echo "  CPU per registration: $(per_registration "herald (both)" "$before" "$(cpu "$(cat "$work/pgA.pid")" "$(cat "$work/pgB.pid")")" "$registered")," \
    "$(per_registration PostgreSQL "$pg_before" "$("$root/scripts/load/pg-cpu.sh" "$work/postgres")" "$registered")"
