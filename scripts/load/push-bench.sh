#!/usr/bin/env bash
# Delivery rate from the outbox to a local fake APNs (HTTP/2 over TLS), and the server's memory while
# the pushes wait: seeds PUSHES queued pushes with `herald-dev bench broadcast`, starts `herald-dev fake-apns`
# and the node(s) on that database, and times until the fake has accepted them all.
#
# Usage: scripts/load/push-bench.sh [HERALD_BINARY] [PUSHES] [CONCURRENCY] [BACKEND]
#        (default .build/release/herald, 100000, 100, sqlite)
# BACKEND: sqlite (one node on a SQLite file), postgres (one node on a throwaway PostgreSQL cluster),
# postgres-2 (two nodes draining one outbox on one PostgreSQL; they share the 2 cores with the fake and
# the database), or upstream (one SQLite node without credentials sending through an upstream Herald,
# docs/protocol.md §7, which holds the fake's credentials; the RSS and CPU printed are the upstream's). On
# PostgreSQL it also prints the statements and commits per push from pg_stat_statements.
set -euo pipefail

herald="${1:-.build/release/herald}"
pushes="${2:-100000}"
concurrency="${3:-100}"
backend="${4:-sqlite}"
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
source "$root/scripts/load/herald-dev.sh"
source "$root/scripts/load/fake-apns.sh"
work="$(mktemp -d "${TMPDIR:-/tmp}/herald-push-bench.XXXXXX")"
cleanup() {
    kill $(jobs -p) 2> /dev/null || true
    sleep 1
    [[ -d "$work/postgres" ]] && "$root/scripts/postgres/cluster.sh" stop "$work/postgres" > /dev/null 2>&1
    rm -rf "$work"
}
trap cleanup EXIT

case "$backend" in
sqlite | upstream) database="$work/push.sqlite" nodes=1 ;;
postgres | postgres-2)
    database="$("$root/scripts/postgres/cluster.sh" start "$work/postgres")"
    nodes=1
    [[ "$backend" == postgres-2 ]] && nodes=2
    ;;
*) echo "BACKEND is sqlite, postgres, postgres-2 or upstream" >&2; exit 64 ;;
esac

"$herald_dev" bench broadcast --database "$database" --subscribers "$pushes" --rounds 1 | tail -1
if [[ "$backend" == postgres* ]]; then
    psql "$database" -Atq -c "CREATE EXTENSION IF NOT EXISTS pg_stat_statements; SELECT pg_stat_statements_reset()" \
        > /dev/null
    commits_before="$(psql "$database" -Atq -c "SELECT xact_commit FROM pg_stat_database WHERE datname = current_database()")"
    postgres_cpu_before="$("$root/scripts/load/pg-cpu.sh" "$work/postgres")"
fi
start_fake_apns "$work/apns" "$work/fake.log"
started="$(date +%s.%N)"
servers=()
if [[ "$backend" == upstream ]]; then
    # The upstream holds the credentials; the node on the queued pushes has none and forwards them.
    installation="$("$herald" installation add --name bench --rate 1000000 --json --database "$work/upstream.sqlite")"
    id="$(echo "$installation" | python3 -c 'import json, sys; print(json.load(sys.stdin)["id"])')"
    echo "$installation" | python3 -c 'import json, sys; print(json.load(sys.stdin)["key"])' > "$work/installation.key"
    "$herald" serve --database "$work/upstream.sqlite" --port 0 --rate-limit 0 --log-level warning \
        --push-concurrency "$concurrency" "${apns[@]}" > "$work/upstream.log" 2>&1 &
    servers+=($!)
    for _ in $(seq 1 100); do grep -q "listening on" "$work/upstream.log" && break; sleep 0.1; done
    upstream_url="$(sed -n 's/^herald listening on \(http:[^ ]*\) .*/\1/p' "$work/upstream.log")"
    "$herald" serve --database "$database" --port 0 --rate-limit 0 --log-level warning \
        --push-concurrency "$concurrency" --upstream "$upstream_url" --upstream-installation-id "$id" \
        --upstream-installation-key-file "$work/installation.key" > "$work/serve.1.log" 2>&1 &
    downstream=$!
else
    for node in $(seq 1 "$nodes"); do
        "$herald" serve --database "$database" --port 0 --rate-limit 0 --log-level warning \
            --push-concurrency "$concurrency" "${apns[@]}" > "$work/serve.$node.log" 2>&1 &
        servers+=($!)
    done
fi
peak=0
while true; do
    sleep 0.5
    rss=0
    for server in "${servers[@]}"; do
        rss=$((rss + $(ps -o rss= -p "$server" | tr -d ' ' || echo 0)))
        if ! kill -0 "$server" 2> /dev/null; then echo "herald serve exited:"; cat "$work"/serve.*.log; exit 1; fi
    done
    [[ "$rss" -gt "$peak" ]] && peak="$rss"
    accepted="$(sed -n 's/^received [0-9]* (\([0-9]*\) accepted).*/\1/p' "$work/fake.log" | tail -1)"
    [[ "${accepted:-0}" -ge "$pushes" ]] && break
done
finished="$(date +%s.%N)"
seconds="$(echo "$finished - $started" | bc)"
rate="$(echo "$pushes / $seconds" | bc)"
peaks="$(sed -n 's/.*, \([0-9]*\)\/s$/\1/p' "$work/fake.log" | sort -n | tail -1)"
# CPU seconds (user + system) from /proc: the servers' and the fake's, so the reader sees who used the cores.
cpu() { awk -v hz="$(getconf CLK_TCK)" '{ printf "%.1f", ($14 + $15) / hz }' "/proc/$1/stat"; }
per_push() { echo "$1 * 1000000 / $pushes" | bc; }
server_cpu=0
for server in "${servers[@]}"; do server_cpu="$(echo "$server_cpu + $(cpu "$server")" | bc)"; done
received="$(sed -n 's/^received \([0-9]*\) (.*/\1/p' "$work/fake.log" | tail -1)"
[[ -n "${downstream:-}" ]] && echo "  downstream CPU $(cpu "$downstream") s"
echo "$backend, $nodes node(s): $pushes pushes delivered in ${seconds} s (server start included): ${rate}/s," \
    "best second ${peaks}/s; concurrency $concurrency; servers' peak RSS $((peak / 1024)) MB;" \
    "CPU: servers ${server_cpu} s ($(per_push "$server_cpu") µs a push), fake $(cpu "$fake") s" \
    "($(per_push "$(cpu "$fake")") µs a push); requests at the fake ${received:-?}"
if [[ "$backend" == postgres* ]]; then
    # Let the last outcomes commit before counting.
    sleep 1
    commits="$(psql "$database" -Atq -c "SELECT xact_commit FROM pg_stat_database WHERE datname = current_database()")"
    psql "$database" -Atq -F ' ' -c "
        SELECT round(sum(calls)::numeric / $pushes, 3), round(($commits - $commits_before)::numeric / $pushes, 4)
        FROM pg_stat_statements WHERE dbid = (SELECT oid FROM pg_database WHERE datname = current_database())" |
        while read -r statements commits; do
            # A write batch's prepared BEGIN and COMMIT are not in pg_stat_statements.
            echo "  PostgreSQL per push delivered: $statements statements (BEGIN, COMMIT aside), $commits transactions," \
                "$(per_push "($("$root/scripts/load/pg-cpu.sh" "$work/postgres") - $postgres_cpu_before)") µs of CPU" \
                "(the last second idle included)"
        done
    echo "  the statements that took longest, in all (calls, total ms, mean ms):"
    psql "$database" -Atq -F ' | ' -c "
        SELECT calls, round(total_exec_time::numeric), round(mean_exec_time::numeric, 2),
               left(regexp_replace(query, '\s+', ' ', 'g'), 90)
        FROM pg_stat_statements WHERE dbid = (SELECT oid FROM pg_database WHERE datname = current_database())
        ORDER BY total_exec_time DESC LIMIT 4" | sed 's/^/    /'
fi
