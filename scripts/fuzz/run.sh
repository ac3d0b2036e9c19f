#!/usr/bin/env bash
# Coverage-guided fuzzing of Herald's parsers with libFuzzer (clang's, shipped with Swift), under
# AddressSanitizer: builds Fuzz/ into .build-fuzz, then runs each target for SECONDS, starting from
# its seed corpus in Fuzz/Corpus/<target>. A crash stops the run, leaves the input in
# .build-fuzz/crashes/<target>/, and fails: copy the input into Fuzz/Regressions/<target>/, where
# `swift test` (FuzzReplayTests) replays it on every run, and fix the code.
#
# Usage: scripts/fuzz/run.sh [SECONDS per target (default 30)] [TARGET...]
set -euo pipefail

seconds="${1:-30}"
shift || true
targets=("$@")
[[ ${#targets[@]} -gt 0 ]] || targets=(envelope signature eip712 ecies cryptojs keystore push bisq webpush webpush-subscription webpush-ingest)
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
scratch="$root/.build-fuzz"
fuzzer_lib="$(ls /opt/swift/usr/lib/clang/*/lib/linux/libclang_rt.fuzzer_no_main-x86_64.a 2>/dev/null | head -1 || true)"
if [[ -z "$fuzzer_lib" ]]; then
    fuzzer_lib="$(find "$(dirname "$(dirname "$(command -v swift)")")/lib" -name 'libclang_rt.fuzzer_no_main-*.a' | head -1)"
fi
[[ -n "$fuzzer_lib" ]] || { echo "error: libclang_rt.fuzzer_no_main not found in the Swift toolchain" >&2; exit 1; }

echo "building the fuzz targets (AddressSanitizer, coverage) in $scratch…" >&2
swift build --package-path "$root/Fuzz" --scratch-path "$scratch" -c release \
    -Xswiftc -sanitize=address -Xswiftc -sanitize-coverage=edge,trace-cmp,inline-8bit-counters,pc-table \
    -Xlinker "$fuzzer_lib" -Xlinker -lstdc++ >&2
binary="$scratch/release/herald-fuzz"

failed=0
for target in "${targets[@]}"; do
    corpus="$scratch/corpus/$target"
    crashes="$scratch/crashes/$target"
    mkdir -p "$corpus" "$crashes"
    # Its seeds, and every input that once crashed it (Fuzz/Regressions).
    for kept in "$root/Fuzz/Corpus/$target" "$root/Fuzz/Regressions/$target"; do
        [[ -d "$kept" ]] && cp -n "$kept"/* "$corpus"/ 2>/dev/null || true
    done
    log="$scratch/$target.log"
    if HERALD_FUZZ_TARGET="$target" "$binary" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 \
        -artifact_prefix="$crashes/" -print_final_stats=1 "$corpus" > "$log" 2>&1; then
        runs="$(sed -n 's/^stat::number_of_executed_units: *//p' "$log")"
        edges="$(grep -o 'cov: [0-9]*' "$log" | tail -1)"
        echo "fuzz $target: ${runs:-?} inputs in ${seconds} s, ${edges:-cov ?}, no crash"
    else
        failed=1
        echo "fuzz $target: FAILED; input kept in $crashes/ (copy it into Fuzz/Regressions/$target/)" >&2
        tail -30 "$log" >&2
    fi
done
exit $failed
