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
  // Large blocks (a table of 100,000 entries) are mapped apart from the heap and counted in
  // hblkhd, not uordblks: both, or a large table would count as nothing.
  struct mallinfo2 info = mallinfo2();
  return (long long)(info.uordblks + info.hblkhd);
#else
  return -1;
#endif
}
