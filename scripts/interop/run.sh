#!/usr/bin/env bash
# Checks that herald's keystores interoperate with eth-account (Python), and that `herald serve`
# accepts operations eth-account signed: DeviceBinding, Subscription, Notification, FeedAccess
# (EIP-712 and EIP-191); and that Herald's Bisq messages (docs/protocol.md §8) decrypt with pycryptodome's
# AES-CBC (an eth-account dependency) and the other way round.
#
# Usage: scripts/interop/run.sh [HERALD_BINARY]   (default: .build/debug/herald)
#
# Uses the venv in HERALD_VENV, or installs eth-account into a throwaway one (needs PyPI), runs
# eth_account_interop.py against the binary, and removes its own venv on exit. Prints one line per check, then `N passed, M failed`;
# exits 1 if any check failed.
set -euo pipefail

binary="${1:-.build/debug/herald}"
if [[ ! -x "$binary" ]]; then
    echo "error: $binary is not an executable herald binary (build it, or pass its path)" >&2
    exit 64
fi
binary="$(cd "$(dirname "$binary")" && pwd)/$(basename "$binary")"
script_dir="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"

# HERALD_VENV: a venv scripts/python-env.sh prepared (make test does, beside the build); else a throwaway one.
venv="${HERALD_VENV:-}"
if [[ -z "$venv" ]]; then
    work="$(mktemp -d "${TMPDIR:-/tmp}/herald-interop-venv.XXXXXX")"
    trap 'rm -rf "$work"' EXIT
    echo "setting up eth-account and schemathesis in a temporary venv…" >&2
    venv="$work/venv"
    "$script_dir/../python-env.sh" "$venv" >&2
fi

"$venv/bin/python" "$script_dir/eth_account_interop.py" "$binary"
