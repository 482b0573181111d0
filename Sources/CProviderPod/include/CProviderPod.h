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

#if __has_feature(nullability)
#pragma clang assume_nonnull end
#endif

#endif
