#include "CProviderPod.h"

// Zero-initialised, as every static object is: no isolation runs before the first begins.
pp_atomic_counter pp_isolations;
