# Sourced by the load scripts after herald-dev.sh: start_fake_apns FOLDER LOG starts `herald-dev fake-apns`
# (HTTP/2 over TLS on loopback, its key and CA written to FOLDER) and sets `fake` (its pid) and `apns`
# (the `herald serve` options that send to it).
start_fake_apns() {
    "$herald_dev" fake-apns --port 0 --folder "$1" > "$2" 2>&1 &
    fake=$!
    for _ in $(seq 1 100); do grep -q "^fake APNs listening" "$2" && break; sleep 0.1; done
    local url
    url="$(sed -n 's/^fake APNs listening on //p' "$2")"
    apns=(--apns-key-file "$1/AuthKey.p8" --apns-key-id FAKEKEY001 --apns-team-id FAKETEAM01
        --apns-topic org.example.herald --apns-host "$url" --apns-sandbox-host "$url" --apns-ca-file "$1/ca.pem")
}
