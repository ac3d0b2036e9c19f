#!/usr/bin/env bash
# Checks the operator files under ops/: the alert rules with promtool (syntax, then the unit tests in
# herald-alerts.test.yml), the Grafana dashboard (JSON, and its queries parsed by promtool) and the
# systemd unit (systemd-analyze verify, when present). promtool comes with Debian's
# `prometheus` package; when it is missing this installs that package with apt-get (root, or sudo
# without a password), otherwise prints the command and fails.
#
# The package would start a Prometheus server (:9090) and enable its unit. Herald only wants the
# tool, so the install runs under a policy-rc.d that forbids starting services, and the unit it
# enabled is disabled again (stopped too when systemd is running). Recommends
# (prometheus-node-exporter, another listening daemon) are left out.
set -euo pipefail

cd "$(dirname "$0")/../.."

rules=ops/prometheus/herald-alerts.yml
rule_tests=ops/prometheus/herald-alerts.test.yml
dashboard=ops/grafana/herald-dashboard.json

run_as_root() {
  if [ "$(id -u)" -eq 0 ]; then
    "$@"
  else
    sudo "$@"
  fi
}

install_promtool() {
  if [ "$(id -u)" -ne 0 ] && ! { command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null; }; then
    echo "ops-check: promtool is missing and cannot be installed without root. Run:" >&2
    echo "  sudo apt-get update && sudo apt-get install -y --no-install-recommends prometheus" >&2
    echo "  sudo systemctl disable --now prometheus   # only the promtool binary is needed" >&2
    exit 1
  fi
  echo "ops-check: installing Debian's prometheus package for promtool (its service is not started)"
  local policy=/usr/sbin/policy-rc.d made_policy=0
  if [ ! -e "$policy" ]; then
    # exit 101: "action forbidden by policy", which invoke-rc.d and deb-systemd-invoke both honour.
    printf '#!/bin/sh\nexit 101\n' | run_as_root tee "$policy" >/dev/null
    run_as_root chmod 755 "$policy"
    made_policy=1
  fi
  local status=0
  run_as_root apt-get update -qq || status=$?
  if [ "$status" -eq 0 ]; then
    run_as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends prometheus \
      || status=$?
  fi
  if [ "$made_policy" -eq 1 ]; then run_as_root rm -f "$policy"; fi
  [ "$status" -eq 0 ] || exit "$status"
  # Enabled by the package even without a running systemd (a symlink that a later boot would follow).
  if [ -d /run/systemd/system ]; then
    run_as_root systemctl disable --now prometheus.service >/dev/null 2>&1 || true
  elif command -v systemctl >/dev/null 2>&1; then
    run_as_root systemctl disable prometheus.service >/dev/null 2>&1 || true
  fi
}

if ! command -v promtool >/dev/null 2>&1; then
  install_promtool
fi

promtool --version 2>&1 | head -n 1
promtool check rules "$rules"
promtool test rules "$rule_tests"
python3 -m json.tool "$dashboard" >/dev/null
echo "ops-check: $dashboard is valid JSON"

# The dashboard's queries as recording rules, so promtool parses their PromQL too (Grafana's
# variables replaced by plain values first).
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
python3 - "$dashboard" "$scratch/dashboard-queries.yml" <<'PY'
import json, sys

def exprs(node):
    if isinstance(node, dict):
        for key, value in node.items():
            if key == "expr" and isinstance(value, str):
                yield value
            else:
                yield from exprs(value)
    elif isinstance(node, list):
        for value in node:
            yield from exprs(value)

with open(sys.argv[1]) as f:
    found = list(exprs(json.load(f)))
if not found:
    sys.exit("ops-check: no PromQL expression in the dashboard")
with open(sys.argv[2], "w") as out:
    out.write("groups:\n  - name: dashboard\n    rules:\n")
    for number, expr in enumerate(found):
        plain = expr.replace("$__rate_interval", "5m").replace("$job", ".*").replace("$instance", ".*")
        out.write(f"      - record: dashboard:query{number}\n        expr: {json.dumps(plain)}\n")
PY
promtool check rules "$scratch/dashboard-queries.yml" | sed "s|$scratch/dashboard-queries.yml|the dashboard's queries|"

# The unit, when systemd-analyze is here: unknown keys and bad values are printed, not fatal, so any
# output fails. ExecStart points at a binary that exists, since verify checks that too.
if command -v systemd-analyze >/dev/null 2>&1; then
  sed 's|/usr/local/bin/herald|/bin/true|' ops/systemd/herald.service >"$scratch/herald.service"
  complaints=$(systemd-analyze verify "$scratch/herald.service" 2>&1 || true)
  if [ -n "$complaints" ]; then
    echo "ops-check: ops/systemd/herald.service:" >&2
    echo "$complaints" >&2
    exit 1
  fi
  echo "ops-check: ops/systemd/herald.service verified by systemd-analyze"
else
  echo "ops-check: systemd-analyze not found; ops/systemd/herald.service NOT verified"
fi
