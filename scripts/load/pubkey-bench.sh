#!/usr/bin/env bash
# Public-key reads (GET /v1/users/{wallet}/pubkey) under wrk against one SQLite node and one PostgreSQL
# node, each on a database holding BINDINGS bindings (`herald-dev bench store`, 16 a wallet), in one run:
# requests/s, p50 and p99, and the node's CPU per read. The wallets read are every stored key's, in turn.
#
# Usage: scripts/load/pubkey-bench.sh [HERALD_BINARY] [BINDINGS] [SECONDS] [CONNECTIONS]
#        (default .build/release/herald, 1000000, 10, 16)
# Needs wrk (Debian: apt-get install wrk), sqlite3 and PostgreSQL (scripts/postgres/cluster.sh installs it).
set -euo pipefail

herald="${1:-.build/release/herald}"
bindings="${2:-1000000}"
seconds="${3:-10}"
connections="${4:-16}"
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
source "$root/scripts/load/herald-dev.sh"
source "$root/scripts/load/serve-node.sh"
work="$(mktemp -d "${TMPDIR:-/tmp}/herald-pubkey-bench.XXXXXX")"
cleanup() {
    [[ -f "$work/pids" ]] && kill $(cat "$work/pids") 2> /dev/null || true
    sleep 1
    "$root/scripts/postgres/cluster.sh" stop "$work/postgres" > /dev/null 2>&1 || true
    rm -rf "$work"
}
trap cleanup EXIT
command -v wrk > /dev/null || { echo "wrk is missing: apt-get install wrk" >&2; exit 1; }

cpu() { awk -v hz="$(getconf CLK_TCK)" '{ printf "%.2f", ($14 + $15) / hz }' "/proc/$1/stat"; }

# read_keys LABEL DATABASE WALLETS_FILE: serves DATABASE, reads under wrk, prints one line of figures.
read_keys() {
    local label="$1" database="$2" wallets="$3"
    local url pid before
    url="$(serve_node "$label" "$database")"
    pid="$(cat "$work/$label.pid")"
    before="$(cpu "$pid")"
    wrk -t1 -c"$connections" -d"${seconds}s" --latency -s "$root/scripts/load/pubkey.lua" "$url" -- "$wallets" \
        > "$work/wrk.$label"
    local used rate p50 p99 count
    used="$(awk -v a="$before" -v b="$(cpu "$pid")" 'BEGIN { print b - a }')"
    rate="$(awk '/^Requests\/sec/ { print $2 }' "$work/wrk.$label")"
    p50="$(awk '$1 == "50%" { print $2 }' "$work/wrk.$label")"
    p99="$(awk '$1 == "99%" { print $2 }' "$work/wrk.$label")"
    count="$(awk '/requests in/ { print $1 }' "$work/wrk.$label")"
    printf '%-10s %8.0f reads/s   p50 %s   p99 %s   node %s µs a read\n' "$label" "$rate" "$p50" "$p99" \
        "$(awk -v u="$used" -v n="$count" 'BEGIN { printf "%.0f", u * 1000000 / n }')"
    grep -q "Non-2xx" "$work/wrk.$label" && echo "  ($label: $(grep Non-2xx "$work/wrk.$label"))"
    kill "$pid"
}

echo "seeding $bindings bindings on each backend…" >&2
"$herald_dev" bench store --changes "$bindings" --database "$work/keys.sqlite" > /dev/null
sqlite3 "$work/keys.sqlite" "SELECT '0x' || lower(hex(wallet)) FROM wallet_keys" > "$work/wallets.sqlite"
postgres="$("$root/scripts/postgres/cluster.sh" start "$work/postgres")"
"$herald_dev" bench store --changes "$bindings" --database "$postgres" > /dev/null
psql "$postgres" -Atq -c "SELECT '0x' || encode(wallet, 'hex') FROM wallet_keys" > "$work/wallets.postgres"
echo "$(wc -l < "$work/wallets.sqlite") and $(wc -l < "$work/wallets.postgres") wallets with a key" >&2

read_keys sqlite "$work/keys.sqlite" "$work/wallets.sqlite"
read_keys postgres "$postgres" "$work/wallets.postgres"
