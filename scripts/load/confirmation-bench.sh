#!/usr/bin/env bash
# What the setup confirmation (docs/protocol.md §4.3, on by default) costs a registration: one node on
# BACKEND registers for SECONDS with wrk (64 connections, pre-signed bodies) with the confirmation off,
# then on, each time on a new database and with a local fake APNs that accepts every push, and waits until
# the outbox has sent every confirmation before reading the CPU used. Prints, per registration, the node's
# and (on PostgreSQL) the database's CPU for each, and their ratio: what the confirmation costs in all.
#
# Usage: scripts/load/confirmation-bench.sh [HERALD_BINARY] [SECONDS] [BACKEND] [PAIRS]
#        (default .build/release/herald, 10, sqlite, 1; BACKEND: sqlite or postgres; PAIRS runs of off, on)
# With HERALD_BENCH_PERF=1 it also samples the node with `perf` during each run and prints, per pair, where
# the confirmation's extra CPU went by kind of code (scripts/load/perf-split.py).
# Needs wrk (Debian: apt-get install wrk); PostgreSQL comes from scripts/postgres/cluster.sh.
set -euo pipefail

herald="${1:-.build/release/herald}"
seconds="${2:-10}"
backend="${3:-sqlite}"
pairs="${4:-1}"
per_run="${HERALD_BENCH_BODIES:-150000}"
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
source "$root/scripts/load/herald-dev.sh"
source "$root/scripts/load/fake-apns.sh"
source "$root/scripts/load/serve-node.sh"
[[ "$backend" == sqlite || "$backend" == postgres ]] || { echo "BACKEND is sqlite or postgres" >&2; exit 64; }
command -v wrk > /dev/null || { echo "wrk is missing: apt-get install wrk" >&2; exit 1; }
if [[ "${HERALD_BENCH_PERF:-0}" == 1 ]] && ! command -v perf > /dev/null; then
    echo "HERALD_BENCH_PERF=1 needs perf (Debian: apt-get install linux-perf)" >&2
    exit 1
fi
work="$(mktemp -d "${TMPDIR:-/tmp}/herald-confirmation-bench.XXXXXX")"
cleanup() {
    kill $(jobs -p) 2> /dev/null || true
    sleep 1
    [[ -d "$work/postgres" ]] && "$root/scripts/postgres/cluster.sh" stop "$work/postgres" > /dev/null 2>&1
    rm -rf "$work"
}
trap cleanup EXIT

if [[ "$backend" == postgres ]]; then
    server_url="$("$root/scripts/postgres/cluster.sh" start "$work/postgres")"
fi

start_fake_apns "$work/apns" "$work/fake.log"

# serve NAME DATABASE CONFIRMATION: a node sending to the fake APNs, its URL.
serve() { serve_node "$1" "$2" --setup-confirmation "$3" "${apns[@]}"; }

cpu() { awk -v hz="$(getconf CLK_TCK)" '{ printf "%.2f", ($14 + $15) / hz }' "/proc/$1/stat"; }
postgres_cpu() { [[ "$backend" == postgres ]] && "$root/scripts/load/pg-cpu.sh" "$work/postgres" || echo 0; }

# Bodies for every run, signed once for the audience every node shares (a replayed body is a 409).
runs=$((pairs * 2))
echo "signing $((per_run * runs)) bodies…" >&2
signer="$(serve signer "$work/signer.sqlite" false)"
"$herald_dev" bench register --server "$signer" --requests $((per_run * runs)) --write-bodies "$work/all.jsonl" \
    --sign-only > /dev/null
kill "$(cat "$work/signer.pid")"
split -l "$per_run" -d -a 3 "$work/all.jsonl" "$work/bodies."

# run INDEX CONFIRMATION: one node on a new database; prints "rate herald_ms postgres_ms registered".
run() {
    local database query
    if [[ "$backend" == postgres ]]; then
        psql "$server_url" -Atq -c "CREATE DATABASE run$1"
        database="${server_url/\/herald\?//run$1?}"
        query() { psql "$database" -Atq -c "$1"; }
    else
        database="$work/run$1.sqlite"
        query() { sqlite3 "$database" "$1"; }
    fi
    local url node before pg_before
    url="$(serve "node$1" "$database" "$2")"
    node="$(cat "$work/node$1.pid")"
    before="$(cpu "$node")"
    pg_before="$(postgres_cpu)"
    local sampler=""
    if [[ "${HERALD_BENCH_PERF:-0}" == 1 ]]; then
        perf record -F 999 -p "$node" -o "$work/perf.$1" -- sleep "$seconds" > /dev/null 2>&1 &
        sampler=$!
    fi
    wrk -t1 -c64 -d"${seconds}s" -s "$root/scripts/load/register.lua" "$url" -- "$(printf '%s/bodies.%03d' "$work" "$1")" \
        > "$work/wrk.$1"
    if [[ -n "$sampler" ]]; then
        wait "$sampler" || true
        perf report -i "$work/perf.$1" --no-children -q -g none --sort dso,sym --stdio > "$work/perf.$1.txt" 2> /dev/null
    fi
    # Every confirmation out of the queue before the CPU is read.
    for _ in $(seq 1 600); do
        [[ "$(query "SELECT count(*) FROM push_outbox WHERE status = 'queued'")" == 0 ]] && break
        sleep 0.1
    done
    local registered sent
    registered="$(query "SELECT count(*) FROM bindings")"
    sent="$(query "SELECT count(*) FROM push_outbox WHERE status = 'sent'")"
    awk -v rate="$(awk '/^Requests\/sec/ { print $2 }' "$work/wrk.$1")" -v n="$registered" -v sent="$sent" \
        -v h="$(echo "$(cpu "$node") - $before" | bc)" -v p="$(echo "$(postgres_cpu) - $pg_before" | bc)" \
        'BEGIN { printf "%.0f %.3f %.3f %d %d\n", rate, h * 1000 / n, p * 1000 / n, n, sent }'
    kill "$node"
    wait "$node" 2> /dev/null || true
}

index=0
for pair in $(seq 1 "$pairs"); do
    read -r rate_off herald_off postgres_off registered_off sent_off < <(run "$index" false)
    index=$((index + 1))
    read -r rate_on herald_on postgres_on registered_on sent_on < <(run "$index" true)
    index=$((index + 1))
    echo "$backend, pair $pair: confirmation off: $rate_off registrations/s, herald ${herald_off} ms" \
        "+ PostgreSQL ${postgres_off} ms a registration ($registered_off registered, $sent_off pushes sent)"
    echo "$backend, pair $pair: confirmation on:  $rate_on registrations/s, herald ${herald_on} ms" \
        "+ PostgreSQL ${postgres_on} ms a registration ($registered_on registered, $sent_on confirmations sent)"
    awk -v a="$herald_off" -v b="$postgres_off" -v c="$herald_on" -v d="$postgres_on" \
        'BEGIN { printf "  the confirmation: %.2fx the CPU of a registration without it (herald %.2fx)\n", (c + d) / (a + b), c / a }'
    if [[ "${HERALD_BENCH_PERF:-0}" == 1 ]]; then
        echo "  where the node's extra CPU went (perf samples while wrk ran):"
        "$root/scripts/load/perf-split.py" "$work/perf.$((index - 2)).txt" "$work/perf.$((index - 1)).txt" | sed 's/^/    /'
    fi
done
echo "fake APNs CPU in all: $(cpu "$fake") s"
