#ifndef CALLGRIND_TOGGLES_H
#define CALLGRIND_TOGGLES_H

// Turn callgrind's counting on and off around the measured parts of a workload, so that a run
// under `valgrind --tool=callgrind --collect-atstart=no` counts exactly those instructions.
// Outside valgrind (or where its headers are missing) these do nothing.
void callgrind_toggles_start(void);
void callgrind_toggles_stop(void);

// Heap bytes the allocator has handed out and not had back (glibc's mallinfo2), for bytes per
// cached instance; -1 where glibc's statistics are missing. Swift's Glibc module leaves
// malloc.h out, hence C.
long long heap_bytes_in_use(void);

#endif
