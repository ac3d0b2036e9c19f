#!/usr/bin/env bash
# Prints the path of an object file that defines `herald_build_commit` as this checkout's commit
# (`git describe --always --dirty`), compiling it if needed. `make` passes it to the linker
# (`-Xlinker PATH`), so that `herald --version` names the commit: the path holds the commit, so a new
# commit changes the link flags and relinks; nothing is recompiled.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
commit="$(git -C "$root" describe --always --dirty --abbrev=12 2>/dev/null || echo unknown)"
# Only characters a C string and a file name can hold as they are.
commit="$(printf '%s' "$commit" | tr -c 'A-Za-z0-9._-' '_')"
object="$root/.build/stamp/commit-$commit.o"
if [[ ! -f "$object" ]]; then
    mkdir -p "$(dirname "$object")"
    printf 'const char herald_build_commit[] = "%s";\n' "$commit" | cc -x c -c -o "$object" -
fi
echo "$object"
