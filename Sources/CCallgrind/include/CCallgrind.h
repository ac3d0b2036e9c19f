// Valgrind's callgrind client requests, for `herald-costs` (the instruction-count guard): they
// let the workload count only its measured phases. Outside valgrind each is a few no-op instructions.
// Without valgrind's headers (Debian's `valgrind` package ships them) they compile to nothing and
// `herald_callgrind_available()` says so.
#ifndef HERALD_CCALLGRIND_H
#define HERALD_CCALLGRIND_H

#if __has_include(<valgrind/callgrind.h>)
#include <valgrind/callgrind.h>
static inline int herald_callgrind_available(void) { return 1; }
static inline int herald_running_on_valgrind(void) { return RUNNING_ON_VALGRIND ? 1 : 0; }
static inline void herald_callgrind_start(void) { CALLGRIND_START_INSTRUMENTATION; }
static inline void herald_callgrind_stop(void) { CALLGRIND_STOP_INSTRUMENTATION; }
static inline void herald_callgrind_zero(void) { CALLGRIND_ZERO_STATS; }
static inline void herald_callgrind_dump(const char *name) { CALLGRIND_DUMP_STATS_AT(name); }
#else
static inline int herald_callgrind_available(void) { return 0; }
static inline int herald_running_on_valgrind(void) { return 0; }
static inline void herald_callgrind_start(void) {}
static inline void herald_callgrind_stop(void) {}
static inline void herald_callgrind_zero(void) {}
static inline void herald_callgrind_dump(const char *name) { (void)name; }
#endif

#endif
