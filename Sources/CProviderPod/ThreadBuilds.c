#include "CProviderPod.h"

#include <pthread.h>
#include <stdlib.h>

_Thread_local pp_thread_builds *pp_current_thread_builds = 0;
_Thread_local intptr_t pp_pod_release_depth_word = 0;
_Thread_local void *pp_put_off_parents_word = 0;

static pthread_key_t thread_end_key;
static pthread_once_t thread_end_key_once = PTHREAD_ONCE_INIT;
static _Atomic(void (*)(pp_thread_builds *)) release_spares_at_thread_end = 0;

// Given the record itself rather than reading the thread-local variable: on some systems
// thread-local storage is torn down by another key's destructor, in no set order.
static void thread_ended(void *record) {
  pp_thread_builds *builds = record;
  void (*release_spares)(pp_thread_builds *) = atomic_load(&release_spares_at_thread_end);
  if (release_spares) release_spares(builds);
  // A later destructor that resolves makes a new record rather than reading a freed one.
  // glibc and musl keep thread-local storage until every destructor has run; where it may be
  // gone already (Darwin), writing it costs at most a fresh copy that is freed in turn.
  pp_current_thread_builds = 0;
  free(builds);
}

static void make_thread_end_key(void) {
  if (pthread_key_create(&thread_end_key, thread_ended) != 0) abort();
}

pp_thread_builds *pp_make_thread_builds(void (*release_spares)(pp_thread_builds *)) {
  pp_thread_builds *builds = calloc(1, sizeof(pp_thread_builds));
  if (!builds) abort();
  atomic_store(&release_spares_at_thread_end, release_spares);
  pthread_once(&thread_end_key_once, make_thread_end_key);
  if (pthread_setspecific(thread_end_key, builds) != 0) abort();
  pp_current_thread_builds = builds;
  return builds;
}
