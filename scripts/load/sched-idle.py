#!/usr/bin/env python3
"""Where the idle time of a load run comes from, from a scheduler trace.

Reads `perf script -F cpu,time,event,trace` output of `perf record -a -e sched:sched_switch -e
sched:sched_wakeup -e sched:sched_migrate_task` taken while `herald serve` was under load
(register-wrk.sh records one when SCHED=1), and prints:

- how much of the two cores' time was idle, and in gaps of what length;
- for the idle time, what the store writer, the two event loops and wrk were doing when a core
  went idle: R (running or runnable), S (sleeping: waiting for work), D (waiting for the disk);
- how much of it a core spent idle while a thread was runnable but queued on the other core, which
  thread that was and how it got there (preempted by the thread now running there, or woken onto
  that core): time the scheduler, not the work, left unused;
- where wake-ups of those threads landed while the other core was idle: on the idle core, or on
  the waker's busy one.

Threads are told apart by name and priority: NIO's threads run at nice -2 (libdispatch's priority,
inherited), the store writer ten nice levels above them (WriterThreadPriority), wrk is `wrk`.

Usage: sched-idle.py TRACE.txt SERVER_THREAD_ID...  (the server's threads: ls /proc/PID/task)
"""
import collections
import re
import sys

SWITCH = re.compile(
    r"\[(\d+)\]\s+([\d.]+):\s+sched:sched_switch: prev_comm=(.*?) prev_pid=(\d+) prev_prio=(\d+) "
    r"prev_state=(\S+) ==> next_comm=(.*?) next_pid=(\d+) next_prio=(\d+)")
WAKEUP = re.compile(r"\[(\d+)\]\s+([\d.]+):\s+sched:sched_wakeup: comm=(.*?) pid=(\d+) prio=(\d+) target_cpu=(\d+)")
MIGRATE = re.compile(
    r"\[(\d+)\]\s+([\d.]+):\s+sched:sched_migrate_task: comm=(.*?) pid=(\d+) prio=(\d+) orig_cpu=(\d+) dest_cpu=(\d+)")
# Kernel priorities: 120 is nice 0; the event loops run at 118 (nice -2), the writer at 108.
WRITER_PRIORITY_AT_MOST = 112
# A thread seen runnable longer ago than this without a switch is taken as missed by the trace.
STALE_SECONDS = 0.05


def role(command, priority, pid, server):
    if pid in server and command.startswith("NIO-"):
        return "writer" if priority <= WRITER_PRIORITY_AT_MOST else "loop"
    return "wrk" if command == "wrk" else None


class Trace:
    def __init__(self, server):
        self.server = server
        self.roles, self.states = {}, {}
        self.idle_since, self.state_at_idle = {}, {}
        self.by_state, self.gaps = collections.Counter(), []
        self.running = {}  # cpu -> pid
        self.queued = {}  # pid -> (cpu, since, how it got there)
        self.waiting_idle = collections.Counter()  # (who, how) -> seconds
        self.placements = collections.Counter()  # (who, where) -> wake-ups while another core idled
        self.first = self.last = None
        self.clock = None

    def name(self, pid):
        return self.roles.get(pid) or ("idle" if pid == 0 else "other")

    def snapshot(self):
        def of(wanted):
            return "".join(sorted(self.states.get(p, "?") for p, r in self.roles.items() if r == wanted)) or "-"
        return f"writer {of('writer')}, loops {of('loop')}, wrk {of('wrk')}"

    def advance(self, time):
        """Charges the time since the last event to idle cores that had work queued elsewhere."""
        if self.clock is not None:
            spent = time - self.clock
            for cpu, pid in self.running.items():
                if pid != 0:
                    continue
                elsewhere = [(p, how) for p, (c, since, how) in self.queued.items()
                             if c != cpu and time - since < STALE_SECONDS]
                if elsewhere:
                    p, how = elsewhere[0]
                    self.waiting_idle[(self.name(p), how)] += spent
        self.clock = time
        self.first = self.first if self.first is not None else time
        self.last = time

    def end_idle(self, cpu, time):
        if cpu in self.idle_since:
            gap = time - self.idle_since.pop(cpu)
            self.by_state[self.state_at_idle.pop(cpu)] += gap
            self.gaps.append(gap)

    def switch(self, cpu, time, prev_comm, prev_pid, prev_prio, prev_state, next_comm, next_pid, next_prio):
        self.advance(time)
        for command, pid, priority in ((prev_comm, prev_pid, prev_prio), (next_comm, next_pid, next_prio)):
            if (r := role(command, priority, pid, self.server)) is not None:
                self.roles[pid] = r
        # Some kernels never log the switch away from a CPU's idle task: its next event ends the gap.
        self.end_idle(cpu, time)
        self.states[prev_pid] = "R" if prev_state.startswith("R") else prev_state[0]
        self.states[next_pid] = "R"
        if prev_pid != 0 and prev_state.startswith("R"):
            self.queued[prev_pid] = (cpu, time, f"preempted by {self.name(next_pid)}")
        self.queued.pop(next_pid, None)
        self.running[cpu] = next_pid
        if next_pid == 0:
            self.idle_since[cpu], self.state_at_idle[cpu] = time, self.snapshot()

    def wakeup(self, cpu, time, pid, target):
        self.advance(time)
        self.end_idle(cpu, time)
        self.end_idle(target, time)
        self.states[pid] = "R"
        if pid in self.running.values():
            return
        waker = self.running.get(cpu, 0)
        how = f"woken by {self.name(waker)} onto its core" if target == cpu else "woken onto this core"
        self.queued[pid] = (target, time, how)
        others_idle = [c for c, p in self.running.items() if p == 0 and c != target]
        if pid in self.roles and others_idle:
            where = "the idle core" if self.running.get(target) == 0 else "a busy core"
            self.placements[(self.roles[pid], where)] += 1

    def migrate(self, time, pid, destination):
        self.advance(time)
        if pid in self.queued:
            _, since, how = self.queued[pid]
            self.queued[pid] = (destination, since, how)

    def report(self, path):
        if self.first is None or self.last <= self.first:
            sys.exit("sched-idle: no scheduler events in " + path)
        span = (self.last - self.first) * 2  # two cores
        idle = sum(self.gaps)
        print(f"idle: {idle / span * 100:.1f}% of the two cores over {self.last - self.first:.2f} s, "
              f"in {len(self.gaps)} gaps")
        for shortest in (0.0001, 0.001, 0.005):
            share = sum(g for g in self.gaps if g >= shortest) / idle * 100 if idle else 0
            print(f"  in gaps of {shortest * 1000:g} ms or more: {share:.0f}% of the idle time")
        print("what the threads were doing when a core went idle (share of the cores' time):")
        for state, seconds in self.by_state.most_common(8):
            print(f"  {seconds / span * 100:5.1f}%  {state}")
        queued = sum(self.waiting_idle.values())
        print(f"a core idle while a thread waited, runnable, on the other one: {queued / span * 100:.1f}% "
              "of the cores' time")
        for (who, how), seconds in self.waiting_idle.most_common(8):
            print(f"  {seconds / span * 100:5.1f}%  {who}, {how}")
        print("wake-ups of these threads while the other core was idle, by the core they were put on:")
        for (who, where), count in sorted(self.placements.items()):
            print(f"  {count / (self.last - self.first):7.0f}/s  {who} onto {where}")


def main(path, server):
    trace = Trace(server)
    with open(path) as lines:
        for line in lines:
            if m := SWITCH.search(line):
                cpu, time, prev_comm, prev_pid, prev_prio, prev_state, next_comm, next_pid, next_prio = m.groups()
                trace.switch(int(cpu), float(time), prev_comm, int(prev_pid), int(prev_prio), prev_state,
                             next_comm, int(next_pid), int(next_prio))
            elif m := WAKEUP.search(line):
                cpu, time, _, pid, _, target = m.groups()
                trace.wakeup(int(cpu), float(time), int(pid), int(target))
            elif m := MIGRATE.search(line):
                _, time, _, pid, _, _, destination = m.groups()
                trace.migrate(float(time), int(pid), int(destination))
    trace.report(path)


if __name__ == "__main__":
    if len(sys.argv) < 3:
        sys.exit("usage: sched-idle.py TRACE.txt SERVER_THREAD_ID...")
    main(sys.argv[1], {int(tid) for tid in sys.argv[2:]})
