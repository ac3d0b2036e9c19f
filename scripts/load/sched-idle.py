#!/usr/bin/env python3
"""Where the idle time of a load run comes from, from a scheduler trace.

Reads `perf script -F cpu,time,event,trace` output of `perf record -a -e sched:sched_switch -e
sched:sched_wakeup` taken while `herald serve` was under load (register-wrk.sh records one when
SCHED=1), and prints:

- how much of the two cores' time was idle, and in gaps of what length;
- for the idle time, what the store writer, the two event loops and wrk were doing when a core
  went idle: R (running or runnable), S (sleeping: waiting for work), D (waiting for the disk).

Threads are told apart by name and priority: NIO's threads run at nice -2 (libdispatch's priority,
inherited), the store writer ten nice levels above them (WriterThreadPriority), wrk is `wrk`.

Usage: sched-idle.py TRACE.txt SERVER_THREAD_ID...  (the server's threads: ls /proc/PID/task)
"""
import collections
import re
import sys

SWITCH = re.compile(
    r"\[(\d+)\]\s+([\d.]+): sched:sched_switch: prev_comm=(.*?) prev_pid=(\d+) prev_prio=(\d+) "
    r"prev_state=(\S+) ==> next_comm=(.*?) next_pid=(\d+) next_prio=(\d+)")
WAKEUP = re.compile(r"\[(\d+)\]\s+([\d.]+): sched:sched_wakeup: comm=(.*?) pid=(\d+) prio=(\d+) target_cpu=(\d+)")
# Kernel priorities: 120 is nice 0; the event loops run at 118 (nice -2), the writer at 108.
WRITER_PRIORITY_AT_MOST = 112


def role(command, priority, pid, server):
    if pid in server and command.startswith("NIO-"):
        return "writer" if priority <= WRITER_PRIORITY_AT_MOST else "loop"
    return "wrk" if command == "wrk" else None


def main(path, server):
    roles, states = {}, {}
    idle_since, state_at_idle = {}, {}
    by_state, gaps = collections.Counter(), []
    first = last = None

    def snapshot():
        def of(wanted):
            return "".join(sorted(states.get(p, "?") for p, r in roles.items() if r == wanted)) or "-"
        return f"writer {of('writer')}, loops {of('loop')}, wrk {of('wrk')}"

    def end_idle(cpu, time):
        if cpu in idle_since:
            gap = time - idle_since.pop(cpu)
            by_state[state_at_idle.pop(cpu)] += gap
            gaps.append(gap)

    with open(path) as trace:
        for line in trace:
            if m := SWITCH.search(line):
                cpu, time, prev_comm, prev_pid, prev_prio, prev_state, next_comm, next_pid, next_prio = m.groups()
                time, prev_pid, next_pid = float(time), int(prev_pid), int(next_pid)
                first = first if first is not None else time
                last = time
                for command, pid, priority in ((prev_comm, prev_pid, prev_prio), (next_comm, next_pid, next_prio)):
                    if (r := role(command, int(priority), pid, server)) is not None:
                        roles[pid] = r
                # Some kernels never log the switch away from a CPU's idle task: its next event ends the gap.
                end_idle(cpu, time)
                states[prev_pid] = "R" if prev_state.startswith("R") else prev_state[0]
                states[next_pid] = "R"
                if next_pid == 0:
                    idle_since[cpu], state_at_idle[cpu] = time, snapshot()
            elif m := WAKEUP.search(line):
                cpu, time, _, pid, _, target = m.groups()
                end_idle(cpu, float(time))
                end_idle(target, float(time))
                states[int(pid)] = "R"
    if first is None or last <= first:
        sys.exit("sched-idle: no scheduler events in " + path)
    span = (last - first) * 2  # two cores
    idle = sum(gaps)
    print(f"idle: {idle / span * 100:.1f}% of the two cores over {last - first:.2f} s, in {len(gaps)} gaps")
    for shortest in (0.0001, 0.001, 0.005):
        share = sum(g for g in gaps if g >= shortest) / idle * 100 if idle else 0
        print(f"  in gaps of {shortest * 1000:g} ms or more: {share:.0f}% of the idle time")
    print("what the threads were doing when a core went idle (share of the cores' time):")
    for state, seconds in by_state.most_common(8):
        print(f"  {seconds / span * 100:5.1f}%  {state}")


if __name__ == "__main__":
    if len(sys.argv) < 3:
        sys.exit("usage: sched-idle.py TRACE.txt SERVER_THREAD_ID...")
    main(sys.argv[1], {int(tid) for tid in sys.argv[2:]})
