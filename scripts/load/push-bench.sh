#!/usr/bin/env bash
# Delivery rate from the outbox to a local fake APNs (HTTP/2 over TLS), and the server's memory while
# the pushes wait: seeds PUSHES queued pushes with `herald bench broadcast`, starts `herald fake-apns`
# and `herald serve` on that database, and times until the fake has accepted them all.
#
# Usage: scripts/load/push-bench.sh [HERALD_BINARY] [PUSHES] [CONCURRENCY]
#        (default .build/release/herald, 100000, 100)
set -euo pipefail

herald="${1:-.build/release/herald}"
pushes="${2:-100000}"
concurrency="${3:-100}"
work="$(mktemp -d "${TMPDIR:-/tmp}/herald-push-bench.XXXXXX")"
trap 'kill $(jobs -p) 2>/dev/null || true; rm -rf "$work"' EXIT

"$herald" bench broadcast --database "$work/push.sqlite" --subscribers "$pushes" --rounds 1 | tail -1
"$herald" fake-apns --port 0 --folder "$work/apns" > "$work/fake.log" 2>&1 &
for _ in $(seq 1 100); do grep -q "^fake APNs listening" "$work/fake.log" && break; sleep 0.1; done
apns_url="$(sed -n 's/^fake APNs listening on //p' "$work/fake.log")"

started="$(date +%s.%N)"
"$herald" serve --database "$work/push.sqlite" --port 0 --rate-limit 0 --log-level warning \
    --push-concurrency "$concurrency" --apns-key-file "$work/apns/AuthKey.p8" --apns-key-id FAKEKEY001 \
    --apns-team-id FAKETEAM01 --apns-topic org.example.herald --apns-host "$apns_url" \
    --apns-sandbox-host "$apns_url" --apns-ca-file "$work/apns/ca.pem" > "$work/serve.log" 2>&1 &
server=$!
peak=0
while true; do
    sleep 0.5
    rss="$(ps -o rss= -p "$server" | tr -d ' ')"
    [[ -n "$rss" && "$rss" -gt "$peak" ]] && peak="$rss"
    accepted="$(sed -n 's/^received [0-9]* (\([0-9]*\) accepted).*/\1/p' "$work/fake.log" | tail -1)"
    [[ "${accepted:-0}" -ge "$pushes" ]] && break
    if ! kill -0 "$server" 2>/dev/null; then echo "herald serve exited:"; cat "$work/serve.log"; exit 1; fi
done
finished="$(date +%s.%N)"
seconds="$(echo "$finished - $started" | bc)"
rate="$(echo "$pushes / $seconds" | bc)"
peaks="$(sed -n 's/.*, \([0-9]*\)\/s$/\1/p' "$work/fake.log" | sort -n | tail -1)"
echo "$pushes pushes delivered in ${seconds} s (server start included): ${rate}/s, best second ${peaks}/s;" \
    "concurrency $concurrency; server peak RSS $((peak / 1024)) MB"
