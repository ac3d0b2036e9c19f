#!/usr/bin/env bash
# How long a debug build of Herald's dependencies alone takes on this machine: the floor under `make
# test`'s build stage, which no change to Herald's own code can go below.
#
# It generates, in a scratch folder, a package with Package.swift's dependencies and one empty target
# that depends on every product Herald's targets use, resolves it (the same local package copies), and
# times `swift build` of it from clean. Run it on a quiet machine: anything else building skews it.
#
# Usage: scripts/dependency-floor.sh [KEEP_FOLDER]   (default: a temporary folder, removed afterwards)
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
work="${1:-$(mktemp -d "${TMPDIR:-/tmp}/herald-dependency-floor.XXXXXX")}"
[[ $# -ge 1 ]] || trap 'rm -rf "$work"' EXIT
mkdir -p "$work/Sources/Floor"

python3 - "$root/Package.swift" "$work/Package.swift" <<'PY'
import re, sys
source = open(sys.argv[1]).read()
# The package-level `dependencies: [ … ]` block: the one that holds `.package(` lines.
start = source.index("dependencies: [\n        .package(")
end = source.index("\n    ],", start) + len("\n    ],")
dependencies = source[start:end]
products = sorted(set(re.findall(r'\.product\(name: "([^"]+)", package: "([^"]+)"\)', source)))
# Testing helpers are still built by `swift build --build-tests`; keep every product the targets name.
lines = ",\n                ".join(f'.product(name: "{name}", package: "{package}")' for name, package in products)
tools = re.search(r'swift-tools-version:([0-9.]+)', source).group(1)
open(sys.argv[2], "w").write(f"""// swift-tools-version:{tools}
import PackageDescription

let package = Package(
    name: "HeraldDependencyFloor",
    platforms: [.macOS(.v15), .iOS(.v18)],
    {dependencies}
    targets: [
        .target(
            name: "Floor",
            dependencies: [
                {lines}
            ]
        )
    ]
)
""")
print(f"{len(products)} products of {dependencies.count('.package(')} packages", file=sys.stderr)
PY
echo "// Empty: only the dependencies are built." > "$work/Sources/Floor/Floor.swift"

cd "$work"
swift package resolve > "$work/resolve.log" 2>&1 || { cat "$work/resolve.log" >&2; exit 1; }
start=$(date +%s)
swift build > "$work/build.log" 2>&1 || { tail -20 "$work/build.log" >&2; exit 1; }
end=$(date +%s)
echo "dependencies alone, debug build from clean: $((end - start)) s ($(nproc) cores)"
