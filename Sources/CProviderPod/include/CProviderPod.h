// What Swift cannot express portably on the systems ProviderPod supports: a thread-local
// variable that costs a load, and an atomic counter (Swift's own atomics need macOS 15).
// Internal to ProviderPod: nothing here is part of its API.

#ifndef CPROVIDERPOD_H
#define CPROVIDERPOD_H

#include <stdatomic.h>
#include <stdint.h>

#if __has_feature(nullability)
#pragma clang assume_nonnull begin
#endif

/// What a thread knows of the builds it runs: the innermost one (not retained; each build
/// pops itself before it ends) and the idle frames it keeps for its next builds (the first
/// one retained, the rest linked from it).
typedef struct pp_thread_builds {
  void *_Nullable innermost;
  void *_Nullable spare;
  intptr_t spare_count;
  /// The thread's empty tables for new pods to copy (EmptyTables.swift), retained.
  void *_Nullable empty_tables;
} pp_thread_builds;

extern _Thread_local pp_thread_builds *_Nullable pp_current_thread_builds;

/// Makes the current thread's record, which lives until the thread ends; then
/// `release_spares` is called with it to let go of its idle frames.
pp_thread_builds *pp_make_thread_builds(void (*release_spares)(pp_thread_builds *));

/// The current thread's record, made on first use.
static inline pp_thread_builds *pp_thread_builds_current(
    void (*release_spares)(pp_thread_builds *)) {
  pp_thread_builds *builds = pp_current_thread_builds;
  if (__builtin_expect(builds == 0, 0)) builds = pp_make_thread_builds(release_spares);
  return builds;
}

/// The current thread's record, or null before the thread has run a build.
static inline pp_thread_builds *_Nullable pp_thread_builds_existing(void) {
  return pp_current_thread_builds;
}

/// The current thread's innermost build, or null before the thread has run any.
static inline void *_Nullable pp_thread_innermost(void) {
  pp_thread_builds *builds = pp_current_thread_builds;
  return builds ? builds->innermost : 0;
}

/// How many pods' deinits run on this thread, one inside another, letting go of their
/// parents, and the parents put off meanwhile (ParentRelease.swift): a retained Swift object,
/// or null. Plain thread-local words, not the thread's record: a pod may go away on a thread
/// that never ran a build, or as the thread ends, after its record was freed.
extern _Thread_local intptr_t pp_pod_release_depth_word;
extern _Thread_local void *_Nullable pp_put_off_parents_word;

static inline intptr_t pp_pod_release_depth(void) { return pp_pod_release_depth_word; }
static inline void pp_set_pod_release_depth(intptr_t depth) { pp_pod_release_depth_word = depth; }
static inline void *_Nullable pp_put_off_parents(void) { return pp_put_off_parents_word; }
static inline void pp_set_put_off_parents(void *_Nullable parents) {
  pp_put_off_parents_word = parents;
}

/// A counter read without a lock.
typedef struct pp_atomic_counter {
  _Atomic(intptr_t) value;
} pp_atomic_counter;

static inline void pp_atomic_counter_init(pp_atomic_counter *counter, intptr_t value) {
  atomic_init(&counter->value, value);
}

static inline intptr_t pp_atomic_counter_load(pp_atomic_counter *counter) {
  return atomic_load_explicit(&counter->value, memory_order_acquire);
}

static inline void pp_atomic_counter_add(pp_atomic_counter *counter, intptr_t delta) {
  atomic_fetch_add_explicit(&counter->value, delta, memory_order_acq_rel);
}

static inline void pp_atomic_counter_set_bits(pp_atomic_counter *counter, intptr_t bits) {
  atomic_fetch_or_explicit(&counter->value, bits, memory_order_acq_rel);
}

static inline void pp_atomic_counter_clear_bits(pp_atomic_counter *counter, intptr_t bits) {
  atomic_fetch_and_explicit(&counter->value, ~bits, memory_order_acq_rel);
}


/// How many isolations of pods are running in the process (Pod+Isolation.swift). While none
/// is, a resolve skips the task-local lookup that would find one: a relaxed load, since an
/// isolation is begun before the task that uses it runs, and a stale count only costs that
/// lookup, which finds nothing.
extern pp_atomic_counter pp_isolations;

static inline _Bool pp_isolations_running(void) {
  return __builtin_expect(atomic_load_explicit(&pp_isolations.value, memory_order_relaxed) != 0,
                          0);
}

static inline void pp_isolations_begin(void) {
  atomic_fetch_add_explicit(&pp_isolations.value, 1, memory_order_relaxed);
}

static inline void pp_isolations_end(void) {
  atomic_fetch_sub_explicit(&pp_isolations.value, 1, memory_order_relaxed);
}

// Cached instances read without the tree's lock (SharedReads.c). A tree of pods keeps one
// table of the instances it has published, keyed by pod and provider; each bucket holds a
// retained reference, tagged in its lowest bit when it is the value itself rather than its
// box. Only the thread holding the tree's lock writes the table; any thread reads it.
//
// A read announces itself in its thread's reader record (a counter, odd while reading),
// takes a reference to what it found, and announces its end. A writer that takes a reference
// out of the table does not release it at once: it keeps it in its thread's retired list, and
// `pp_reclaim` (after the lock is released) waits until every read that was running when it
// looked has ended, then releases it. So a read never retains a freed object, and a thread
// that only reads writes nothing but its own record.

/// The words a tree of pods shares without its lock: the gate of its always-new builds
/// (ThreadRecord.swift) and its table of published instances.
typedef struct pp_tree_words {
  pp_atomic_counter gate;
  _Atomic(void *_Nullable) table;
  char gap_before_writer[112];
  /// Whether an exclusive section of the tree's lock runs (see `pp_shared_enter`). Written by
  /// every exclusive section: a cache line away from what cached reads load, whatever the
  /// alignment of the allocation.
  _Atomic(intptr_t) writer;
  /// Whether the tree ever had a shared section.
  _Atomic(intptr_t) shared_used;
  char gap_before_crossing[112];
  /// The spin lock of what shared sections write in the tree's root pod.
  _Atomic(intptr_t) crossing;
  char gap_after_crossing[56];
} pp_tree_words;

static inline void pp_tree_words_init(pp_tree_words *words) {
  atomic_init(&words->gate.value, 0);
  atomic_init(&words->table, 0);
  atomic_init(&words->writer, 0);
  atomic_init(&words->shared_used, 0);
  atomic_init(&words->crossing, 0);
}

static inline pp_atomic_counter *pp_tree_gate(pp_tree_words *words) { return &words->gate; }

/// Opens a read of the published reference of `provider` in `pod`, and returns it (tagged, not
/// retained) or null. Any thread, without the lock. The reference stays valid until
/// `pp_read_close`, which must follow on the same thread, with nothing in between but taking a
/// reference of the caller's own: a writer waits for every open read before releasing what it
/// took out of the table.
void *_Nullable pp_read_open(pp_tree_words *words, uintptr_t pod, uintptr_t provider);
/// Ends this thread's open read.
void pp_read_close(void);

/// Publishes `value` (tagged, retained: the table takes the reference) for `provider` in
/// `pod`. Only under the tree's lock; replaces and retires any reference published before.
void pp_publish(pp_tree_words *words, uintptr_t pod, uintptr_t provider, void *value);

/// Takes what is published for `provider` in `pod` out of the table, retiring its reference;
/// returns whether there was one. Only under the tree's lock.
_Bool pp_unpublish(pp_tree_words *words, uintptr_t pod, uintptr_t provider);

/// Frees the table and releases every reference still in it, when nothing can read it any
/// more (the tree is gone).
void pp_tree_words_destroy(pp_tree_words *words);

extern _Thread_local _Bool pp_reclaim_pending;

/// Whether this thread has retired references or tables to reclaim.
static inline _Bool pp_needs_reclaim(void) { return pp_reclaim_pending; }

/// Waits until every read running now has ended, then releases what this thread retired.
/// Call it after releasing the lock: a release may run a deinit.
void pp_reclaim(void);

/// How many published references the table holds (for the invariant checks; under the lock).
intptr_t pp_published_count(pp_tree_words *words);

/// What is published for `provider` in `pod`, tagged, not retained (for the invariant checks;
/// under the lock).
void *_Nullable pp_published_value(pp_tree_words *words, uintptr_t pod, uintptr_t provider);

// Shared sections of a tree's lock (SharedReads.c, where their argument is). The exclusive
// side is the tree's mutex plus `pp_exclusive_enter`/`_exit`; a shared section holds no mutex,
// writes only its own thread's record to enter, and gives way to any exclusive one.

/// Enters a shared section of the tree's lock; false, entering nothing, while an exclusive
/// section runs (the caller then takes the exclusive side).
_Bool pp_shared_enter(pp_tree_words *words);

/// Ends the current thread's shared section.
void pp_shared_exit(void);

/// Waits, holding the tree's mutex, until no shared section of the tree runs, and keeps new
/// ones out until `pp_exclusive_exit`.
void pp_exclusive_enter(pp_tree_words *words);

void pp_exclusive_exit(pp_tree_words *words);

/// A serial for a build begun in a shared section: negative, unique in the process, never
/// equal to an exclusive section's (which are positive). Only inside a shared section.
intptr_t pp_shared_serial(void);

/// The lock of what shared sections of the tree write in its root pod; held for a few
/// instructions, with no other lock taken inside.
void pp_crossing_lock(pp_tree_words *words);
void pp_crossing_unlock(pp_tree_words *words);

/// How many locks the pods' shared sections share (`pp_pod_stripe`).
enum { pp_stripe_count = 256 };

/// The stripe of a pod's shared sections' lock, chosen by its address: pods with the same
/// stripe take turns. The root lists its children by it, so that a child joins and leaves that
/// list under the lock it already holds.
static inline uint32_t pp_pod_stripe(uintptr_t pod) {
  return (uint32_t)((((uint64_t)pod >> 4) * 0x9E3779B97F4A7C15ull) >> 56);
}

/// The lock of a pod's shared sections (its stripe's). Taken before the crossing lock, never
/// with another pod's.
void pp_pod_lock(uintptr_t pod);
void pp_pod_unlock(uintptr_t pod);

#if __has_feature(nullability)
#pragma clang assume_nonnull end
#endif

#endif
