#!/usr/bin/env bash
# The cost of docs/protocol.md §10's per-wallet buckets on a large type 4, on both backends in one run:
# `herald-dev bench subset` seeds RECIPIENTS subscribers, then commits ROUNDS type-4 sends to all of them
# at the store under the default limits (each send reads and writes one bucket per recipient). On
# PostgreSQL it also prints the statements per send from pg_stat_statements.
#
# Usage: scripts/load/subset-bench.sh [HERALD_BINARY] [RECIPIENTS] [ROUNDS]
#        (default .build/release/herald, 1000, 10)
set -euo pipefail

herald="${1:-.build/release/herald}"
recipients="${2:-1000}"
rounds="${3:-10}"
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
source "$root/scripts/load/herald-dev.sh"
work="$(mktemp -d "${TMPDIR:-/tmp}/herald-subset-bench.XXXXXX")"
cleanup() {
    [[ -d "$work/postgres" ]] && "$root/scripts/postgres/cluster.sh" stop "$work/postgres" > /dev/null 2>&1
    rm -rf "$work"
}
trap cleanup EXIT

echo "SQLite:"
"$herald_dev" bench subset --database "$work/subset.sqlite" --recipients "$recipients" --rounds 0 > /dev/null
"$herald_dev" bench subset --database "$work/subset.sqlite" --recipients "$recipients" --rounds "$rounds" | sed 's/^/  /'

echo "PostgreSQL:"
database="$("$root/scripts/postgres/cluster.sh" start "$work/postgres")"
"$herald_dev" bench subset --database "$database" --recipients "$recipients" --rounds 0 > /dev/null
psql "$database" -Atq -c "CREATE EXTENSION IF NOT EXISTS pg_stat_statements; SELECT pg_stat_statements_reset()" > /dev/null
"$herald_dev" bench subset --database "$database" --recipients "$recipients" --rounds "$rounds" | sed 's/^/  /'
# What the sends ran, less the store's opening (migrations check, the writer's first reads).
psql "$database" -Atq -F ' ' -c "
    SELECT sum(calls) FILTER (WHERE query ~* '(feed_items|wallet_buckets|notifications|nonces|subscriptions s)'),
           sum(calls)
    FROM pg_stat_statements WHERE dbid = (SELECT oid FROM pg_database WHERE datname = current_database())" |
    while read -r sends all; do
        echo "  PostgreSQL: $(( ${sends:-0} / rounds )) statements a send ($all statements in all, opening included)"
    done
