# Sourced by the load scripts that register under wrk, after they set "$herald" and "$work":
# serve_node NAME DATABASE [OPTION…] starts `herald serve` on DATABASE for the audience the bench bodies
# are signed for, without rate limits, its pid in $work/NAME.pid (and appended to $work/pids), and prints
# its URL once it listens.
serve_node() {
    local name="$1" database="$2"
    shift 2
    "$herald" serve --port 0 --database "$database" --audience herald-bench --rate-limit 0 --log-level error \
        "$@" > "$work/$name.out" 2> "$work/$name.err" &
    echo $! >> "$work/pids"
    echo $! > "$work/$name.pid"
    local url
    for _ in $(seq 1 200); do
        url="$(sed -n 's/^herald listening on \(http:[^ ]*\) .*/\1/p' "$work/$name.out")"
        [[ -n "$url" ]] && { echo "$url"; return; }
        sleep 0.1
    done
    echo "node $name did not start:" >&2
    cat "$work/$name.err" >&2
    exit 1
}
