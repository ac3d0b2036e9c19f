#!/usr/bin/env bash
# A throwaway PostgreSQL cluster for the tests: initdb into a temporary folder as an unprivileged
# user, listening on 127.0.0.1 at a free port (and a unix socket in the folder), one database
# `herald` owned by the role `herald`. Installs Debian's `postgresql` first if no initdb is found.
#
#   scripts/postgres/cluster.sh start DIR    prints the URL (postgres://herald@127.0.0.1:PORT/herald?sslmode=disable)
#   scripts/postgres/cluster.sh stop DIR     stops it and removes DIR
#   scripts/postgres/cluster.sh pause DIR    stops the server, keeping its data (an outage, for the tests)
#   scripts/postgres/cluster.sh resume DIR   starts it again on the same data folder and port
set -euo pipefail

command="${1:?usage: cluster.sh start|stop|pause|resume DIR}"
dir="${2:?usage: cluster.sh start|stop|pause|resume DIR}"

find_bin() {
    ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -1
}

# Run as the unprivileged `postgres` user when root (initdb refuses root), else as ourselves.
as_owner() {
    if [[ "$(id -u)" -eq 0 ]]; then
        runuser -u postgres -- "$@"
    else
        "$@"
    fi
}

# start_server BIN CLUSTER PORT: pg_ctl start, waiting until it accepts connections.
start_server() {
    # pg_stat_statements: the benchmarks count statements per operation.
    as_owner "$1/pg_ctl" -D "$2/data" -l "$2/server.log" -w -t 60 \
        -o "-p $3 -k $2 -c listen_addresses=127.0.0.1 -c max_connections=200 -c shared_preload_libraries=pg_stat_statements" \
        start > /dev/null ||
        { cat "$2/server.log" >&2; exit 1; }
}

case "$command" in
start)
    bin="$(find_bin)"
    if [[ -z "$bin" ]]; then
        echo "postgres: no PostgreSQL server found; installing Debian's postgresql" >&2
        if [[ "$(id -u)" -eq 0 ]]; then
            apt-get update -qq
            DEBIAN_FRONTEND=noninteractive apt-get install -y -qq postgresql >&2
        elif command -v sudo > /dev/null && sudo -n true 2> /dev/null; then
            sudo apt-get update -qq
            sudo DEBIAN_FRONTEND=noninteractive apt-get install -y -qq postgresql >&2
        else
            echo "postgres: cannot install without root. Run: sudo apt-get install -y postgresql" >&2
            exit 1
        fi
        bin="$(find_bin)"
        [[ -n "$bin" ]] || { echo "postgres: initdb still not found after installing postgresql" >&2; exit 1; }
    fi
    mkdir -p "$dir"
    # The cluster lives in a folder of its own that its owner can reach (DIR's parents may be private
    # to root); DIR records where.
    cluster="$(mktemp -d "${TMPDIR:-/tmp}/herald-pg.XXXXXX")"
    echo "$cluster" > "$dir/cluster"
    if [[ "$(id -u)" -eq 0 ]]; then
        id postgres > /dev/null 2>&1 || { echo "postgres: no 'postgres' user to run the cluster as" >&2; exit 1; }
        chown postgres "$cluster"
        chmod 755 "$cluster"
    fi
    port="$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')"
    as_owner "$bin/initdb" -D "$cluster/data" -U herald --auth=trust -E UTF8 --no-sync > "$dir/initdb.log" 2>&1 ||
        { cat "$dir/initdb.log" >&2; exit 1; }
    start_server "$bin" "$cluster" "$port"
    as_owner "$bin/createdb" -h "$cluster" -p "$port" -U herald herald
    echo "$port" > "$dir/port"
    echo "postgres://herald@127.0.0.1:$port/herald?sslmode=disable"
    ;;
stop)
    bin="$(find_bin)"
    cluster="$(cat "$dir/cluster" 2> /dev/null || true)"
    if [[ -n "$bin" && -n "$cluster" && -d "$cluster/data" ]]; then
        as_owner "$bin/pg_ctl" -D "$cluster/data" -m fast -w stop > /dev/null 2>&1 || true
    fi
    [[ -n "$cluster" ]] && rm -rf "$cluster"
    rm -rf "$dir"
    ;;
pause)
    as_owner "$(find_bin)/pg_ctl" -D "$(cat "$dir/cluster")/data" -m fast -w stop > /dev/null
    ;;
resume)
    start_server "$(find_bin)" "$(cat "$dir/cluster")" "$(cat "$dir/port")"
    ;;
*)
    echo "usage: cluster.sh start|stop|pause|resume DIR" >&2
    exit 64
    ;;
esac
# The last line, for callers that cannot rely on seeing the exit (a server started here outlives us).
if [[ "${CLUSTER_SAY_DONE:-0}" == 1 ]]; then echo "cluster.sh: done"; fi
exit 0
