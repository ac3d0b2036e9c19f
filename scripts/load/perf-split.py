#!/usr/bin/env python3
"""Where a second run's extra CPU went, by kind of code: reads two `perf report --no-children -q -g none
--sort dso,sym --stdio` listings of the same node under the same load (BEFORE, AFTER: e.g. a registration
without the setup confirmation, then with it), scales AFTER so that the libsecp256k1 share matches (one
recovery per registration in both runs, so the samples become "per registration"), and prints each kind's
share of BEFORE's total (100 = the CPU of one operation in BEFORE) in both runs and the difference.

Usage: scripts/load/perf-split.py BEFORE.txt AFTER.txt
"""
import re
import sys

LINE = re.compile(r"\s*([\d.]+)%\s+(\S+)\s+\[.\]\s+(.*)")


def kind(dso: str, symbol: str) -> str:
    # Order matters: BoringSSL, NIO and Herald are all linked into the herald binary; the symbol tells them apart.
    if dso.startswith("libsecp256k1"):
        return "libsecp256k1 (the normaliser)"
    if dso == "[kernel.kallsyms]":
        return "kernel (system calls, wake-ups)"
    if dso.startswith("libsqlite3"):
        return "SQLite"
    if "BoringSSL" in symbol or "bssl" in symbol or "NIOSSL" in symbol:
        return "TLS (NIOSSL, BoringSSL)"
    if "NIOHTTP2" in symbol or "NIOHPACK" in symbol:
        return "NIO HTTP/2 and HPACK"
    if "NIOPosix" in symbol or "NIOCore" in symbol or "NIOHTTP1" in symbol:
        return "NIO channels and event loops"
    if "PostgresNIO" in symbol:
        return "postgres-nio"
    if dso.startswith("libc"):
        return "libc (malloc, free, memcpy)"
    if dso == "libswiftCore.so":
        return "Swift runtime (retain, release, metadata)"
    if dso.startswith("libswift_Concurrency"):
        return "Swift concurrency"
    if "Herald" in symbol or "herald" in symbol:
        return "Herald's code"
    return "other"


def shares(path: str) -> dict[str, float]:
    totals: dict[str, float] = {}
    with open(path) as listing:
        for line in listing:
            match = LINE.match(line)
            if match:
                name = kind(match.group(2), match.group(3))
                totals[name] = totals.get(name, 0.0) + float(match.group(1))
    return totals


def main() -> None:
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    before, after = shares(sys.argv[1]), shares(sys.argv[2])
    normaliser = "libsecp256k1 (the normaliser)"
    if not before.get(normaliser) or not after.get(normaliser):
        sys.exit("perf-split: no libsecp256k1 samples in one of the listings: nothing to normalise by")
    scale = before[normaliser] / after[normaliser]
    # The listings' lines leave out samples under perf's display threshold: BEFORE's shown total is the 100.
    unit = 100.0 / sum(before.values())
    before = {name: share * unit for name, share in before.items()}
    after = {name: share * unit for name, share in after.items()}
    rows = sorted(set(before) | set(after), key=lambda name: before.get(name, 0.0) - after.get(name, 0.0) * scale)
    print(f"{'kind of code':44s} {'before':>7s} {'after':>7s} {'extra':>7s}   (100 = one operation before)")
    extra = 0.0
    for name in rows:
        was, now = before.get(name, 0.0), after.get(name, 0.0) * scale
        extra += now - was
        print(f"{name:44s} {was:7.1f} {now:7.1f} {now - was:+7.1f}")
    print(f"{'in all':44s} {sum(before.values()):7.1f} {sum(after.values()) * scale:7.1f} {extra:+7.1f}")


if __name__ == "__main__":
    main()
