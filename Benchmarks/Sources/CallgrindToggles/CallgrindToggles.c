#include "CallgrindToggles.h"

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
