#include "CallgrindToggles.h"

#if defined(__GLIBC__) || defined(__linux__)
#include <malloc.h>
#endif

#if defined(__has_include)
#if __has_include(<valgrind/callgrind.h>)
#include <valgrind/callgrind.h>
#define HAVE_CALLGRIND 1
#endif
#endif

void callgrind_toggles_start(void) {
#ifdef HAVE_CALLGRIND
  CALLGRIND_TOGGLE_COLLECT;
#endif
}

void callgrind_toggles_stop(void) {
#ifdef HAVE_CALLGRIND
  CALLGRIND_TOGGLE_COLLECT;
#endif
}

long long heap_bytes_in_use(void) {
#if defined(__GLIBC__) && (__GLIBC__ > 2 || (__GLIBC__ == 2 && __GLIBC_MINOR__ >= 33))
  return (long long)mallinfo2().uordblks;
#else
  return -1;
#endif
}
