# Sourced by the load scripts after they set "$herald": sets herald_dev, the herald-dev built beside it,
# which holds the benchmarks and the fakes (swift build -c release --product herald-dev).
herald_dev="$(dirname "$herald")/herald-dev"
if [[ ! -x "$herald_dev" ]]; then
    echo "$(basename "$0"): no $herald_dev: build it beside $herald (swift build -c release --product herald-dev)" >&2
    exit 1
fi
