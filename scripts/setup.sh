#!/usr/bin/env bash
# Installs what a fresh Debian machine lacks to build Herald: the C libraries Herald links
# (libsecp256k1, SQLite), pkg-config and valgrind. Uses apt-get when it can (root, or sudo without a
# password); otherwise prints the exact command to run and fails.
set -euo pipefail

# valgrind: the instruction-count guard of make test (scripts/costs/check.sh) runs under callgrind, and
# herald-costs compiles its client requests from valgrind's headers.
packages=(libsecp256k1-dev libsqlite3-dev pkg-config valgrind)

if ! command -v swift >/dev/null 2>&1; then
  echo "setup: swift is not on PATH. Install Swift 6.1 or newer (https://www.swift.org/install/linux/)." >&2
  exit 1
fi

missing=()
for package in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$package")
  fi
done

if [ ${#missing[@]} -eq 0 ]; then
  exit 0
fi

echo "setup: installing ${missing[*]}"
if [ "$(id -u)" -eq 0 ]; then
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}"
elif command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null; then
  sudo apt-get update -qq
  sudo DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}"
else
  echo "setup: cannot install packages without root. Run:" >&2
  echo "  sudo apt-get update && sudo apt-get install -y ${missing[*]}" >&2
  exit 1
fi
