#!/usr/bin/env bash
# Web Push delivery rate (docs/protocol.md §9) from the outbox to a local fake Web Push service, against the
# APNs path measured the same way in the same run (scripts/load/push-bench.sh), with the server's CPU
# per push: every Web Push costs an ECDH, three HKDFs and an AES-GCM seal that an APNs push does not.
# Seeds PUSHES queued pushes with `herald-dev bench broadcast`, turns their bindings into Web Push
# subscriptions on the fake (one key pair for all: encryption costs the same per send), starts
# `herald-dev fake-webpush` and one node, and times until the fake has accepted them all.
#
# Usage: scripts/load/webpush-bench.sh [HERALD_BINARY] [PUSHES] [CONCURRENCY]
#        (default .build/release/herald, 100000, 100)
set -euo pipefail

herald="${1:-.build/release/herald}"
pushes="${2:-100000}"
concurrency="${3:-100}"
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
source "$root/scripts/load/herald-dev.sh"
work="$(mktemp -d "${TMPDIR:-/tmp}/herald-webpush-bench.XXXXXX")"
cleanup() {
    kill $(jobs -p) 2> /dev/null || true
    sleep 1
    rm -rf "$work"
}
trap cleanup EXIT

echo "APNs, for comparison:"
"$root/scripts/load/push-bench.sh" "$herald" "$pushes" "$concurrency" sqlite | tail -1

echo "Web Push:"
database="$work/webpush.sqlite"
"$herald_dev" bench broadcast --database "$database" --subscribers "$pushes" --rounds 1 | tail -1
"$herald_dev" fake-webpush --port 0 --folder "$work/fake" > "$work/fake.log" 2>&1 &
fake=$!
for _ in $(seq 1 100); do grep -q "^fake Web Push listening" "$work/fake.log" && break; sleep 0.1; done
origin="$(sed -n 's/^fake Web Push listening on \(https:\/\/[^/]*\)\/.*/\1/p' "$work/fake.log")"
# Any P-256 point serves as the subscriptions' p256dh: a VAPID public key is one.
p256dh="$("$herald" webpush keygen --out "$work/subscriber.pem")"
auth="$(head -c 16 /dev/urandom | base64 | tr '+/' '-_' | tr -d '=')"
"$herald" webpush keygen --out "$work/vapid.pem" > /dev/null
sqlite3 "$database" "
    UPDATE bindings SET platform = 'webpush', device_token = '$origin/push/' || lower(hex(wallet)),
                        p256dh = '$p256dh', auth = '$auth';
    UPDATE push_outbox SET platform = 'webpush', device_token = '$origin/push/' || lower(hex(wallet))
    WHERE status = 'queued';"

started="$(date +%s.%N)"
"$herald" serve --database "$database" --port 0 --rate-limit 0 --log-level warning \
    --push-concurrency "$concurrency" --webpush-vapid-key-file "$work/vapid.pem" \
    --webpush-subject mailto:bench@example.org --webpush-ca-file "$work/fake/ca.pem" \
    --webpush-allow-network 127.0.0.0/8 > "$work/serve.log" 2>&1 &
server=$!
peak=0
while true; do
    sleep 0.5
    if ! kill -0 "$server" 2> /dev/null; then echo "herald serve exited:"; cat "$work/serve.log"; exit 1; fi
    rss="$(ps -o rss= -p "$server" | tr -d ' ' || echo 0)"
    [[ "$rss" -gt "$peak" ]] && peak="$rss"
    accepted="$(sed -n 's/^received [0-9]* (\([0-9]*\) accepted).*/\1/p' "$work/fake.log" | tail -1)"
    [[ "${accepted:-0}" -ge "$pushes" ]] && break
done
finished="$(date +%s.%N)"
seconds="$(echo "$finished - $started" | bc)"
rate="$(echo "$pushes / $seconds" | bc)"
best="$(sed -n 's/.*, \([0-9]*\)\/s$/\1/p' "$work/fake.log" | sort -n | tail -1)"
# CPU seconds (user + system) from /proc, and per push: the fake checks each request's VAPID JWT (a
# verified token is taken on sight after, as the fake APNs does), so its cost compares with the fake APNs's.
cpu() { awk -v hz="$(getconf CLK_TCK)" '{ printf "%.1f", ($14 + $15) / hz }' "/proc/$1/stat"; }
per_push() { echo "$1 * 1000000 / $pushes" | bc; }
server_cpu="$(cpu "$server")"
fake_cpu="$(cpu "$fake")"
echo "webpush: $pushes pushes delivered in ${seconds} s (server start included): ${rate}/s, best second ${best}/s;" \
    "concurrency $concurrency; server peak RSS $((peak / 1024)) MB; CPU: server ${server_cpu} s" \
    "($(per_push "$server_cpu") µs a push), fake ${fake_cpu} s ($(per_push "$fake_cpu") µs a push)"
