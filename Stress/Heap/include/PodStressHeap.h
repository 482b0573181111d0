#ifndef POD_STRESS_HEAP_H
#define POD_STRESS_HEAP_H

#include <stddef.h>

/// The bytes the allocator has handed out and not had back: a sanitizer's allocator when one
/// is linked in (it replaces malloc, so the C library's figures no longer move), otherwise the
/// C library's. 0 where neither can tell.
size_t pod_stress_heap_bytes_in_use(void);

#endif
