#!/usr/bin/env python3
"""Reads herald-costs' callgrind dumps (one per phase, named by its client request), prints the
instructions per operation beside the budgets, and exits 1 when one is more than 10% over its budget.

Usage: compare.py BUDGETS.json REGISTRATIONS SUBSCRIBERS DUMP...
"""
import json
import re
import sys

TOLERANCE = 0.10


def phase_totals(paths):
    """{phase name: instructions} from the dumps triggered by CALLGRIND_DUMP_STATS_AT(name)."""
    totals = {}
    for path in paths:
        name, total = None, None
        with open(path, encoding="utf-8", errors="replace") as dump:
            for line in dump:
                match = re.match(r"desc: Trigger: Client Request: (\S+)", line)
                if match:
                    name = match.group(1)
                # `totals`, not `summary`: callgrind 3.19's summary wraps below zero when the counters
                # were zeroed inside a call that returns before the dump (the broadcast's phase).
                match = re.match(r"totals: (\d+)", line)
                if match:
                    total = int(match.group(1))
        if name is not None and total is not None:
            totals[name] = total
    return totals


def main():
    budgets_path, registrations, subscribers, *dumps = sys.argv[1:]
    with open(budgets_path, encoding="utf-8") as file:
        budgets = json.load(file)
    totals = phase_totals(dumps)
    # Every registration queues a setup confirmation and every recipient a push: the last phase drains both.
    operations = {
        "registrations": int(registrations),
        "broadcast": int(subscribers),
        "pushes": int(registrations) + int(subscribers),
        # docs/protocol.md §10: a broadcast through settings and mutes, a type 4 to at most 1,000.
        "controlled": int(subscribers),
        "subset": min(int(subscribers), 1000),
    }
    failed = False
    print(f"{'phase':<14} {'per':<13} {'instructions':>13} {'budget':>13} {'change':>8}")
    for phase, count in operations.items():
        budget = budgets.get(phase)
        if phase in totals and budget is None:
            print(f"costs: the phase {phase!r} ({totals[phase] / count:,.0f} per operation) has no budget in {budgets_path}")
            failed = True
            continue
        if phase not in totals:
            print(f"costs: no callgrind dump for the phase {phase!r} (was herald-costs built with valgrind's headers?)")
            failed = True
            continue
        per = totals[phase] / count
        change = per / budget["instructions"] - 1
        verdict = ""
        if change > TOLERANCE:
            verdict = f"  OVER BUDGET by more than {TOLERANCE:.0%}"
            failed = True
        elif change < -TOLERANCE:
            verdict = "  well under: lower the budget in scripts/costs/budgets.json to keep the gain"
        print(f"{phase:<14} {budget['unit']:<13} {per:>13,.0f} {budget['instructions']:>13,} {change:>+8.1%}{verdict}")
    if failed:
        print("costs: FAILED. Profile with: valgrind --tool=callgrind (see docs/benchmarks.md, \"The instruction-count guard\");"
              " if the cost is deliberate, raise the budget in a commit that says why.")
        return 1
    print("costs: every phase within its budget (+10%)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
