// The stress client's one piece of C: Swift's Glibc module leaves malloc.h out, so
// mallinfo2 cannot be called from Swift.
#include "PodStressHeap.h"

#include <dlfcn.h>

#if defined(__APPLE__)
#include <malloc/malloc.h>
#elif defined(__GLIBC__)
#include <malloc.h>
#endif

typedef size_t (*AllocatedBytes)(void);

size_t pod_stress_heap_bytes_in_use(void) {
  // Looked up on each call (a scenario measures twice): present only when a sanitizer's
  // runtime is in the process.
  AllocatedBytes sanitizer =
      (AllocatedBytes)dlsym(RTLD_DEFAULT, "__sanitizer_get_current_allocated_bytes");
  if (sanitizer) return sanitizer();
#if defined(__APPLE__)
  malloc_statistics_t statistics;
  malloc_zone_statistics(NULL, &statistics);
  return statistics.size_in_use;
#elif defined(__GLIBC__) && __GLIBC_PREREQ(2, 33)
  // Summed over every arena, and blocks mapped on their own.
  struct mallinfo2 info = mallinfo2();
  return info.uordblks + info.hblkhd;
#elif defined(__GLIBC__)
  // Before glibc 2.33, in ints that wrap past 2 GiB: differences of a few megabytes are right.
  struct mallinfo info = mallinfo();
  return (size_t)(unsigned)info.uordblks + (size_t)(unsigned)info.hblkhd;
#else
  return 0;
#endif
}
