#!/usr/bin/env bash
# API contract fuzzing with a tool nobody on the team wrote: schemathesis (PyPI) generates requests
# from Schemas/openapi.yaml against a real `herald serve` on a throwaway database, and fails on any 5xx
# (`not_a_server_error`), any answer that does not match the document (status code, content type,
# response schema), schema-invalid data accepted, a required header ignored, and its other checks. The hooks in signing_hooks.py sign most generated cases with keys the server
# knows (eth-account), so the routes past the signature check and the FeedAccess-guarded reads are
# fuzzed and their 200/202 answers checked against the document too.
#
# Usage: scripts/contract/run.sh [HERALD_BINARY]   (default: .build/debug/herald)
# HERALD_CONTRACT_EXAMPLES sets the examples per operation (default 60), HERALD_CONTRACT_SEED the
# generator's seed (default fixed, so CI runs the same cases; change it to explore).
set -euo pipefail

binary="${1:-.build/debug/herald}"
examples="${HERALD_CONTRACT_EXAMPLES:-60}"
seed="${HERALD_CONTRACT_SEED:-20261122}"
if [[ ! -x "$binary" ]]; then
    echo "error: $binary is not an executable herald binary (build it, or pass its path)" >&2
    exit 64
fi
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
work="$(mktemp -d "${TMPDIR:-/tmp}/herald-contract.XXXXXX")"
cleanup() {
    [[ -n "${server:-}" ]] && kill "$server" 2>/dev/null && wait "$server" 2>/dev/null
    rm -rf "$work"
}
trap cleanup EXIT

# HERALD_VENV: a venv scripts/python-env.sh prepared (make test does, beside the build); else a throwaway one.
venv="${HERALD_VENV:-}"
if [[ -z "$venv" ]]; then
    echo "setting up schemathesis in a temporary venv…" >&2
    venv="$work/venv"
    "$root/scripts/python-env.sh" "$venv" >&2
fi
python="$venv/bin/python"
hooks_dir="$root/scripts/contract"
audience="herald-contract"

# The channel the hooks sign notifications with, known to the server before it starts.
channel="$("$python" "$hooks_dir/signing_hooks.py" --channel-address)"
env -u HERALD_DATABASE "$binary" channel add "$channel" --name Contract --database "$work/herald.sqlite" \
    --home "$work/home" > /dev/null

env -u HERALD_HOST -u HERALD_PORT -u HERALD_DATABASE -u HERALD_AUDIENCE \
    "$binary" serve --port 0 --database "$work/herald.sqlite" --audience "$audience" --rate-limit 0 --bisq-relay --log-level error \
    > "$work/serve.out" 2> "$work/serve.err" &
server=$!
for _ in $(seq 1 200); do
    url="$(sed -n 's/^herald listening on \(http:[^ ]*\) .*/\1/p' "$work/serve.out")"
    [[ -n "$url" ]] && break
    kill -0 "$server" 2>/dev/null || { echo "herald serve exited:" >&2; cat "$work/serve.err" >&2; exit 1; }
    sleep 0.1
done
[[ -n "$url" ]] || { echo "herald serve did not start" >&2; exit 1; }
export HERALD_CONTRACT_AUDIENCE="$audience"
"$python" "$hooks_dir/signing_hooks.py" "$url"

# Every check schemathesis has but positive_data_acceptance, which expects every schema-valid request
# to succeed: a schema cannot say which signatures are valid or which mixed-case addresses pass
# EIP-55, so that check only reports what the descriptions already say. (Run by hand, it did find
# one real mismatch: sid 000000 matched the path pattern but was a 400; now it is a 404.)
# The coverage phase is left out: schemathesis 4.32.5 crashes in it on this document (an internal
# AST error of its lambda descriptions), which would fail the stage for no fault of the server.
cd "$work"
status=0
SCHEMATHESIS_HOOKS=signing_hooks PYTHONPATH="$hooks_dir" "$venv/bin/schemathesis" run "$root/Schemas/openapi.yaml" --url "$url" \
    --checks all --exclude-checks positive_data_acceptance \
    --phases examples,fuzzing --max-examples "$examples" --workers 2 --seed "$seed" \
    --suppress-health-check all || status=$?
if ! kill -0 "$server" 2>/dev/null; then
    echo "herald serve died during the run:" >&2
    cat "$work/serve.err" >&2
    exit 1
fi
"$python" "$hooks_dir/signing_hooks.py" --report "$url" || status=1
exit $status
