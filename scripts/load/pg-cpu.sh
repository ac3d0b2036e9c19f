#!/usr/bin/env bash
# CPU seconds (user + system) a throwaway cluster of scripts/postgres/cluster.sh has used so far:
# the postmaster, its exited children (reaped, so counted in its cutime/cstime) and its live ones.
#
# Usage: scripts/load/pg-cpu.sh DIR     (the DIR given to cluster.sh start)
set -euo pipefail
cluster="$(cat "${1:?usage: pg-cpu.sh DIR}/cluster")"
postmaster="$(head -1 "$cluster/data/postmaster.pid")"
hz="$(getconf CLK_TCK)"
{
    awk '{ print $14 + $15 + $16 + $17 }' "/proc/$postmaster/stat"
    for child in $(pgrep -P "$postmaster"); do
        awk '{ print $14 + $15 }' "/proc/$child/stat" 2> /dev/null || true
    done
} | awk -v hz="$hz" '{ ticks += $1 } END { printf "%.1f\n", ticks / hz }'
