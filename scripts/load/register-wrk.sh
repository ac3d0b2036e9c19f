#!/usr/bin/env bash
# Verified registrations under `wrk` (HTTP/1.1 keep-alive, 64 connections, one thread): starts
# `herald serve` on a fresh SQLite file with the defaults (setup confirmation on) and no rate limit,
# signs the bodies with `herald-dev bench register --sign-only --write-bodies` (they carry the server's
# audience and expire, so they are made for each run), posts them with scripts/load/register.lua and
# prints, beside wrk's rate and p99, what the server spent per registration: CPU (from /proc/PID/stat),
# bytes and write system calls (from /proc/PID/io: almost all of it the write-ahead log) and the log
# file's size at the end, and what the store's writer did (from /metrics: writes per transaction, the
# share of the run it spent in transactions, the mean wait of a write for its commit). Compare the rate with the one-core C rate of `herald-dev bench crypto`, run just
# before (issue 14's ratio).
#
# With SCHED=1 it also records one second of the scheduler's switches, wake-ups and migrations in
# the middle of the run (`perf`, Debian's linux-perf) and prints where the cores' idle time came from,
# including how much of it a core idled while a thread waited on the other (scripts/load/sched-idle.py).
#
# Usage: scripts/load/register-wrk.sh [HERALD_BINARY] [SERVE_ARGUMENTS...]
#        (default .build/release/herald; DURATION=10s, PORT=8320, BODIES=120000, SCHED=0 in the environment)
set -euo pipefail

herald="${1:-.build/release/herald}"
shift || true
duration="${DURATION:-10s}"
port="${PORT:-8320}"
count="${BODIES:-120000}"
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
source "$root/scripts/load/herald-dev.sh"
command -v wrk > /dev/null || { echo "register-wrk: wrk is missing (Debian: apt-get install wrk)" >&2; exit 1; }
work="$(mktemp -d "${TMPDIR:-/tmp}/herald-register-wrk.XXXXXX")"
cleanup() {
    kill -INT $(jobs -p) 2> /dev/null || true
    wait 2> /dev/null || true
    rm -rf "$work"
}
trap cleanup EXIT

"$herald" serve --port "$port" --rate-limit 0 --database "$work/herald.sqlite" --log-level warning "$@" \
    > "$work/serve.log" 2>&1 &
server=$!
for _ in $(seq 100); do
    curl -fs "http://127.0.0.1:$port/v1/info" > /dev/null 2>&1 && break
    sleep 0.1
done
"$herald_dev" bench register --server "http://127.0.0.1:$port" --requests "$count" --sign-only \
    --write-bodies "$work/bodies.jsonl" > /dev/null

field() { awk -v key="$1" '$1 == key ":" { print $2 }' "/proc/$server/io"; }
cpu() { awk '{ print $14 + $15 }' "/proc/$server/stat"; }
ticks=$(getconf CLK_TCK)
metric() { curl -fs "http://127.0.0.1:$port/metrics" | awk -v name="$1" '$1 == name { print $2 }'; }
writer() { echo "$(metric herald_store_transactions_total) $(metric herald_store_writes_total) $(metric herald_store_busy_seconds_total) $(metric herald_store_wait_seconds_total)"; }
writer0=$(writer) start=$(date +%s.%N)
cpu0=$(cpu) bytes0=$(field wchar) calls0=$(field syscw)
if [ "${SCHED:-0}" = 1 ]; then
    command -v perf > /dev/null || { echo "register-wrk: SCHED=1 needs perf (Debian: apt-get install linux-perf)" >&2; exit 1; }
    (sleep 3 && perf record -q -a -e sched:sched_switch -e sched:sched_wakeup -e sched:sched_migrate_task -o "$work/sched.data" -- sleep 1 \
        > /dev/null 2>&1) &
    recorder=$!
fi
# wrk's own CPU (bash's `time`: user and system seconds, its start included) shares the two cores.
TIMEFORMAT='%U %S'
{ time wrk -t1 -c64 -d"$duration" --latency -s "$root/scripts/load/register.lua" "http://127.0.0.1:$port" \
    -- "$work/bodies.jsonl" > "$work/wrk.out"; } 2> "$work/wrk.time"
result=$(cat "$work/wrk.out")
cpu1=$(cpu) bytes1=$(field wchar) calls1=$(field syscw)
writer1=$(writer) end=$(date +%s.%N)
requests=$(echo "$result" | sed -n 's/ *\([0-9]*\) requests in.*/\1/p')
echo "$result" | grep -E "Requests/sec|  99%|Non-2xx" || true
awk -v c=$((cpu1 - cpu0)) -v t="$ticks" -v b=$((bytes1 - bytes0)) -v s=$((calls1 - calls0)) -v n="$requests" \
    -v wal="$(stat -c %s "$work/herald.sqlite-wal")" -v w="$(cat "$work/wrk.time")" 'BEGIN {
        printf "server per registration: %.0f µs CPU, %.1f KB written in %.1f write calls; log file %.0f MB\n",
            c / t / n * 1e6, b / n / 1000, s / n, wal / 1048576
        split(w, wrk, " ")
        printf "wrk per request: %.0f µs CPU\n", (wrk[1] + wrk[2]) / n * 1e6 }'
echo "$writer0 $writer1" | awk -v start="$start" -v end="$end" '{
    seconds = end - start; transactions = $5 - $1; writes = $6 - $2
    if (transactions > 0 && writes > 0)
        printf "store writer: %.1f writes a transaction, in transactions %.0f%% of the time, a write waited %.2f ms for its commit\n",
            writes / transactions, ($7 - $3) / seconds * 100, ($8 - $4) / writes * 1000 }'
if [ "${SCHED:-0}" = 1 ]; then
    wait "$recorder"
    perf script -i "$work/sched.data" -F cpu,time,event,trace 2> /dev/null > "$work/sched.txt"
    python3 "$root/scripts/load/sched-idle.py" "$work/sched.txt" $(ls "/proc/$server/task")
fi
