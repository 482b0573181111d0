// Cached instances read without the tree's lock: the table, the readers' records and the
// reclamation that keeps a read from retaining a freed object. See CProviderPod.h.
//
// Why a read is safe. A writer takes a reference out of a bucket with a sequentially
// consistent store, and only then, in `pp_reclaim`, reads every reader's counter, also
// sequentially consistently. A read raises its counter to odd with a sequentially consistent
// read-modify-write before it loads the bucket. In the single total order of those operations,
// either the read's load comes after the writer's store (it finds nothing and takes nothing),
// or the read's raise comes before the writer's look at its counter (the writer sees it odd
// and waits until the read has ended, by which time the reader holds its own reference). A
// table replaced by a larger one is retired the same way, so a read still probing it never
// touches freed memory. The release that ends a read pairs with the writer's acquiring load.
// A thread's first read adds its record to the list first, with a sequentially consistent
// read-modify-write, and the writer reads the list's head sequentially consistently after its
// store: so whenever the read's load comes before the writer's store, the writer's look at the
// list comes after the record was added, and finds it.

#include "CProviderPod.h"

#include <pthread.h>
#include <sched.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

// The Swift runtime's reference counting, for releasing what a writer took out of the table.
// A read takes no reference here: the caller copies the value out while its read is open
// (`pp_read_open` to `pp_read_close`), and that copy's retain is the one reference the value
// needs (see `PublishedRead` in SharedReads.swift).
//
// Where Swift interoperates with Objective-C, a published instance may be an Objective-C
// object (any `NSObject` subclass, `URLSession`, a tagged `NSNumber`), which counts its
// references in the Objective-C runtime: `swift_release` would write into its first field. The
// "unknown object" entry points are what Swift itself calls for an `AnyObject` there, and what
// `Unmanaged` used to put the reference in the table.
#if defined(__APPLE__)
extern void swift_unknownObjectRelease(void *object);
#define pp_release_object swift_unknownObjectRelease
#else
extern void swift_release(void *object);
#define pp_release_object swift_release
#endif

// MARK: Readers

/// One per thread that has read: its counter alone on a cache line, so that a read writes
/// nothing another thread reads often.
typedef struct pp_reader {
  _Atomic(uintptr_t) sequence;
  /// The tree whose table the thread reads (or last read): a writer waits only for reads of
  /// its own tree, so a change in one app's pod never waits for another's readers.
  _Atomic(pp_tree_words *_Nullable) tree;
  _Atomic(bool) in_use;
  struct pp_reader *_Nullable next;
  /// The tree whose lock the thread holds shared, null outside a shared section (see
  /// "Shared sections" below).
  _Atomic(pp_tree_words *_Nullable) shared;
  /// Which record this is, for the serials of builds begun in shared sections; never reused.
  uintptr_t number;
  /// Serials this record has handed out; only its thread touches it.
  uintptr_t serials;
} pp_reader;

enum { reader_line = 64 };
_Static_assert(sizeof(pp_reader) <= reader_line, "a reader record fills one cache line");

static _Thread_local pp_reader *_Nullable current_reader = 0;
/// Every reader ever made; never shrinks (a thread that ends leaves its record for the next).
static _Atomic(pp_reader *_Nullable) readers = 0;

/// The records made so far, for numbering them.
static _Atomic(uintptr_t) reader_numbers = 0;

static pthread_key_t reader_end_key;
static pthread_once_t reader_end_key_once = PTHREAD_ONCE_INIT;

static void reader_ended(void *record) {
  pp_reader *reader = record;
  atomic_store_explicit(&reader->in_use, false, memory_order_release);
  current_reader = 0;
}

static void make_reader_end_key(void) {
  if (pthread_key_create(&reader_end_key, reader_ended) != 0) abort();
}

static pp_reader *make_reader(void) {
  pthread_once(&reader_end_key_once, make_reader_end_key);
  pp_reader *reader = 0;
  // A record a thread that ended left behind, if there is one.
  for (pp_reader *next = atomic_load_explicit(&readers, memory_order_acquire); next;
       next = next->next) {
    bool idle = false;
    if (atomic_compare_exchange_strong(&next->in_use, &idle, true)) {
      reader = next;
      break;
    }
  }
  if (!reader) {
    void *line = 0;
    if (posix_memalign(&line, reader_line, reader_line) != 0) abort();
    memset(line, 0, reader_line);
    reader = line;
    atomic_init(&reader->sequence, 0);
    atomic_init(&reader->in_use, true);
    atomic_init(&reader->shared, 0);
    reader->number = atomic_fetch_add_explicit(&reader_numbers, 1, memory_order_relaxed) + 1;
    pp_reader *head = atomic_load_explicit(&readers, memory_order_relaxed);
    do {
      reader->next = head;
    } while (!atomic_compare_exchange_weak_explicit(&readers, &head, reader, memory_order_seq_cst,
                                                    memory_order_relaxed));
  }
  if (pthread_setspecific(reader_end_key, reader) != 0) abort();
  current_reader = reader;
  return reader;
}

/// A read that was running when the writer looked: its record and the counter it showed.
typedef struct pp_running_read {
  pp_reader *reader;
  uintptr_t seen;
} pp_running_read;

/// Waits until every read running when it looked has ended.
///
/// Every counter is read first, and only then waited on. A read that began after the look
/// needs no wait, and a thread reading in a loop is inside a read most of the time: looking at
/// each record only after waiting for the one before would find many such reads, and wait for
/// each interrupted one in turn, one scheduling period after another (with twelve reading
/// threads on two cores, a clear took up to half a second).
static void wait_for_readers(pp_tree_words *_Nullable tree) {
  enum { on_stack = 32 };
  pp_running_read stack[on_stack];
  pp_running_read *running = stack;
  intptr_t capacity = on_stack;
  intptr_t count = 0;
  for (pp_reader *reader = atomic_load_explicit(&readers, memory_order_seq_cst); reader;
       reader = reader->next) {
    uintptr_t seen = atomic_load_explicit(&reader->sequence, memory_order_seq_cst);
    if ((seen & 1) == 0) continue;
    // A read of another tree's table never saw what this writer retired.
    if (tree && atomic_load_explicit(&reader->tree, memory_order_acquire) != tree) continue;
    if (count == capacity) {
      capacity *= 2;
      pp_running_read *larger = malloc((size_t)capacity * sizeof(pp_running_read));
      if (!larger) abort();
      memcpy(larger, running, (size_t)count * sizeof(pp_running_read));
      if (running != stack) free(running);
      running = larger;
    }
    running[count++] = (pp_running_read){reader, seen};
  }
  for (intptr_t index = 0; index < count; index++) {
    // A read is a few dozen instructions and never blocks; one that is still running was
    // interrupted by the scheduler, so let it run.
    int spins = 0;
    while (atomic_load_explicit(&running[index].reader->sequence, memory_order_acquire) ==
           running[index].seen) {
      if (spins < 64) {
        spins++;
      } else {
        sched_yield();
      }
    }
  }
  if (running != stack) free(running);
}

// MARK: The table

typedef struct pp_bucket {
  _Atomic(uintptr_t) pod;
  _Atomic(uintptr_t) provider;
  _Atomic(uintptr_t) value;
} pp_bucket;

typedef struct pp_table {
  uintptr_t mask;
  /// Buckets with a key, live or emptied (an emptied bucket keeps its key for its pair).
  intptr_t keyed;
  /// Buckets with a reference.
  intptr_t live;
  pp_bucket buckets[];
} pp_table;

static inline uintptr_t bucket_index(uintptr_t pod, uintptr_t provider, uintptr_t mask) {
  uint64_t mixed = (uint64_t)provider ^ ((uint64_t)pod * 0x9E3779B97F4A7C15ull);
  mixed = (mixed ^ (mixed >> 31)) * 0xBF58476D1CE4E5B9ull;
  return (uintptr_t)(mixed ^ (mixed >> 29)) & mask;
}

void *_Nullable pp_read_open(pp_tree_words *words, uintptr_t pod, uintptr_t provider) {
  pp_reader *reader = current_reader;
  if (__builtin_expect(reader == 0, 0)) reader = make_reader();
  // Released, and before the raise: a writer that sees the raise sees this tree, and one that
  // sees a later read's tree has seen this read end.
  atomic_store_explicit(&reader->tree, words, memory_order_release);
  atomic_fetch_add_explicit(&reader->sequence, 1, memory_order_seq_cst);
  pp_table *table = atomic_load_explicit(&words->table, memory_order_seq_cst);
  if (!table) return 0;
  for (uintptr_t index = bucket_index(pod, provider, table->mask);;
       index = (index + 1) & table->mask) {
    pp_bucket *bucket = &table->buckets[index];
    uintptr_t bucket_pod = atomic_load_explicit(&bucket->pod, memory_order_acquire);
    if (bucket_pod == 0) return 0;
    if (bucket_pod != pod ||
        atomic_load_explicit(&bucket->provider, memory_order_relaxed) != provider)
      continue;
    return (void *)atomic_load_explicit(&bucket->value, memory_order_seq_cst);
  }
}

void pp_read_close(void) {
  pp_reader *reader = current_reader;
  // Only this thread writes its sequence: what it last stored is what it reads back.
  uintptr_t sequence = atomic_load_explicit(&reader->sequence, memory_order_relaxed);
  // Released: the caller's retain of what it found is ordered before a writer that sees the
  // read end releases the reference the table held.
  atomic_store_explicit(&reader->sequence, sequence + 1, memory_order_release);
}

// MARK: Retiring (the writer's thread)

_Thread_local bool pp_reclaim_pending = false;

typedef struct pp_retired {
  void *_Nullable *_Nullable items;
  intptr_t count;
  intptr_t capacity;
} pp_retired;

static _Thread_local pp_retired retired_objects = {0, 0, 0};
static _Thread_local pp_retired retired_tables = {0, 0, 0};

/// The tree whose table this thread's retired items came out of; null when they came from
/// more than one (then every reader is waited for).
static _Thread_local pp_tree_words *_Nullable retired_tree = 0;
static _Thread_local bool has_retired_tree = false;

static void note_retired_tree(pp_tree_words *tree) {
  if (!has_retired_tree) {
    retired_tree = tree;
    has_retired_tree = true;
  } else if (retired_tree != tree) {
    retired_tree = 0;
  }
}

static void retire(pp_retired *list, void *item) {
  if (list->count == list->capacity) {
    intptr_t capacity = list->capacity ? list->capacity * 2 : 16;
    void **items = realloc(list->items, (size_t)capacity * sizeof(void *));
    if (!items) abort();
    list->items = items;
    list->capacity = capacity;
  }
  list->items[list->count++] = item;
  pp_reclaim_pending = true;
}

void pp_reclaim(void) {
  // Taken whole first: a release may run a deinit that resolves, and retires more.
  pp_retired objects = retired_objects;
  pp_retired tables = retired_tables;
  pp_tree_words *tree = retired_tree;
  retired_objects = (pp_retired){0, 0, 0};
  retired_tables = (pp_retired){0, 0, 0};
  retired_tree = 0;
  has_retired_tree = false;
  pp_reclaim_pending = false;
  if (objects.count == 0 && tables.count == 0) {
    free(objects.items);
    free(tables.items);
    return;
  }
  wait_for_readers(tree);
  for (intptr_t index = 0; index < tables.count; index++) free(tables.items[index]);
  free(tables.items);
  for (intptr_t index = 0; index < objects.count; index++) {
    pp_release_object(objects.items[index]);
  }
  free(objects.items);
}

// MARK: Writing (under the tree's lock)

static pp_table *make_table(intptr_t capacity) {
  pp_table *table = calloc(1, sizeof(pp_table) + (size_t)capacity * sizeof(pp_bucket));
  if (!table) abort();
  table->mask = (uintptr_t)capacity - 1;
  return table;
}

/// The bucket of the pair, or the empty one where it would go.
static pp_bucket *find(pp_table *table, uintptr_t pod, uintptr_t provider) {
  for (uintptr_t index = bucket_index(pod, provider, table->mask);;
       index = (index + 1) & table->mask) {
    pp_bucket *bucket = &table->buckets[index];
    uintptr_t bucket_pod = atomic_load_explicit(&bucket->pod, memory_order_relaxed);
    if (bucket_pod == 0) return bucket;
    if (bucket_pod == pod &&
        atomic_load_explicit(&bucket->provider, memory_order_relaxed) == provider)
      return bucket;
  }
}

static void fill(pp_bucket *bucket, uintptr_t pod, uintptr_t provider, uintptr_t value) {
  atomic_store_explicit(&bucket->value, value, memory_order_relaxed);
  atomic_store_explicit(&bucket->provider, provider, memory_order_relaxed);
  // Last, releasing: a read that sees the pod sees the rest.
  atomic_store_explicit(&bucket->pod, pod, memory_order_release);
}

/// A new table with the live references of `old` (its emptied buckets dropped), with room
/// for one more at most half full, published in place of `old`, which is retired.
static pp_table *grow(pp_tree_words *words, pp_table *_Nullable old) {
  intptr_t live = old ? old->live : 0;
  intptr_t capacity = 16;
  while (capacity < 4 * (live + 1)) capacity *= 2;
  pp_table *table = make_table(capacity);
  if (old) {
    for (uintptr_t index = 0; index <= old->mask; index++) {
      pp_bucket *bucket = &old->buckets[index];
      uintptr_t value = atomic_load_explicit(&bucket->value, memory_order_relaxed);
      if (!value) continue;
      uintptr_t pod = atomic_load_explicit(&bucket->pod, memory_order_relaxed);
      uintptr_t provider = atomic_load_explicit(&bucket->provider, memory_order_relaxed);
      fill(find(table, pod, provider), pod, provider, value);
    }
  }
  table->keyed = live;
  table->live = live;
  atomic_store_explicit(&words->table, table, memory_order_seq_cst);
  if (old) {
    note_retired_tree(words);
    retire(&retired_tables, old);
  }
  return table;
}

void pp_publish(pp_tree_words *words, uintptr_t pod, uintptr_t provider, void *value) {
  pp_table *table = atomic_load_explicit(&words->table, memory_order_relaxed);
  if (!table) table = grow(words, 0);
  pp_bucket *bucket = find(table, pod, provider);
  if (atomic_load_explicit(&bucket->pod, memory_order_relaxed) == 0) {
    if (2 * (table->keyed + 1) > (intptr_t)(table->mask + 1)) {
      table = grow(words, table);
      bucket = find(table, pod, provider);
    }
    table->keyed += 1;
    table->live += 1;
    fill(bucket, pod, provider, (uintptr_t)value);
    return;
  }
  uintptr_t old = atomic_exchange_explicit(&bucket->value, (uintptr_t)value, memory_order_seq_cst);
  if (old) {
    note_retired_tree(words);
    retire(&retired_objects, (void *)(old & ~(uintptr_t)1));
  } else {
    table->live += 1;
  }
}

bool pp_unpublish(pp_tree_words *words, uintptr_t pod, uintptr_t provider) {
  pp_table *table = atomic_load_explicit(&words->table, memory_order_relaxed);
  if (!table) return false;
  pp_bucket *bucket = find(table, pod, provider);
  if (atomic_load_explicit(&bucket->pod, memory_order_relaxed) == 0) return false;
  uintptr_t old = atomic_exchange_explicit(&bucket->value, 0, memory_order_seq_cst);
  if (!old) return false;
  table->live -= 1;
  note_retired_tree(words);
  retire(&retired_objects, (void *)(old & ~(uintptr_t)1));
  return true;
}

intptr_t pp_published_count(pp_tree_words *words) {
  pp_table *table = atomic_load_explicit(&words->table, memory_order_relaxed);
  return table ? table->live : 0;
}

void *_Nullable pp_published_value(pp_tree_words *words, uintptr_t pod, uintptr_t provider) {
  pp_table *table = atomic_load_explicit(&words->table, memory_order_relaxed);
  if (!table) return 0;
  pp_bucket *bucket = find(table, pod, provider);
  return (void *)atomic_load_explicit(&bucket->value, memory_order_relaxed);
}

void pp_tree_words_destroy(pp_tree_words *words) {
  pp_table *table = atomic_load_explicit(&words->table, memory_order_relaxed);
  if (!table) return;
  atomic_store_explicit(&words->table, 0, memory_order_relaxed);
  for (uintptr_t index = 0; index <= table->mask; index++) {
    uintptr_t value = atomic_load_explicit(&table->buckets[index].value, memory_order_relaxed);
    if (value) pp_release_object((void *)(value & ~(uintptr_t)1));
  }
  free(table);
}

// MARK: Shared sections of the tree's lock
//
// A tree's lock has two sides. The exclusive side is the mutex every locked operation takes;
// while it holds the mutex, `pp_exclusive_enter` raises the tree's writer flag and waits until
// no thread is inside a shared section of the tree. A shared section is for a request pod's
// own work beside other requests': it stores the tree in its thread's record, then reads the
// writer flag; if a writer is there, it withdraws and the caller takes the exclusive side
// instead. Both sides use sequentially consistent operations, so of a section's store and a
// writer's store, the one that comes second in their single total order sees the other: either
// the writer sees the record and waits, or the section sees the flag and withdraws. A section
// that ends stores null with release semantics, which the writer's load acquires: what the
// section wrote is visible to the exclusive section that follows it, and what an exclusive
// section wrote is visible to a shared section that loads the flag after its release. Shared
// sections never block on the mutex, and a writer never waits for anything but shared
// sections, which run no user code: neither side can wait for the other in a cycle.
//
// A tree that never had a shared section skips the look at every record: a section stores
// `shared_used` (sequentially consistently) before it announces itself, and the writer loads it
// after its own store, so a writer that reads zero there comes before every section's load of
// the flag in the total order, and each of those sections sees the flag.

bool pp_shared_enter(pp_tree_words *words) {
  pp_reader *reader = current_reader;
  if (__builtin_expect(reader == 0, 0)) reader = make_reader();
  if (atomic_load_explicit(&words->shared_used, memory_order_seq_cst) == 0)
    atomic_store_explicit(&words->shared_used, 1, memory_order_seq_cst);
  atomic_store_explicit(&reader->shared, words, memory_order_seq_cst);
  if (__builtin_expect(atomic_load_explicit(&words->writer, memory_order_seq_cst) == 0, 1))
    return true;
  atomic_store_explicit(&reader->shared, 0, memory_order_release);
  return false;
}

void pp_shared_exit(void) {
  atomic_store_explicit(&current_reader->shared, 0, memory_order_release);
}

static inline void pause_briefly(void) {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#elif defined(__aarch64__) || defined(__arm__)
  __asm__ __volatile__("yield");
#endif
}

void pp_exclusive_enter(pp_tree_words *words) {
  atomic_store_explicit(&words->writer, 1, memory_order_seq_cst);
  if (atomic_load_explicit(&words->shared_used, memory_order_seq_cst) == 0) return;
  for (pp_reader *reader = atomic_load_explicit(&readers, memory_order_seq_cst); reader;
       reader = reader->next) {
    // A shared section is a few hundred instructions and never blocks for long; one still
    // running was interrupted by the scheduler, or waits for another's spin lock.
    int spins = 0;
    while (atomic_load_explicit(&reader->shared, memory_order_seq_cst) == words) {
      if (spins < 128) {
        spins++;
        pause_briefly();
      } else {
        sched_yield();
      }
    }
  }
}

void pp_exclusive_exit(pp_tree_words *words) {
  atomic_store_explicit(&words->writer, 0, memory_order_release);
}

intptr_t pp_shared_serial(void) {
  pp_reader *reader = current_reader;
  reader->serials += 1;
  return -(intptr_t)((reader->number << 40) | reader->serials);
}

static void spin_lock(_Atomic(intptr_t) *word) {
  int spins = 0;
  while (atomic_exchange_explicit(word, 1, memory_order_acquire) != 0) {
    while (atomic_load_explicit(word, memory_order_relaxed) != 0) {
      if (spins < 128) {
        spins++;
        pause_briefly();
      } else {
        sched_yield();
      }
    }
  }
}

static void spin_unlock(_Atomic(intptr_t) *word) {
  atomic_store_explicit(word, 0, memory_order_release);
}

void pp_crossing_lock(pp_tree_words *words) { spin_lock(&words->crossing); }

void pp_crossing_unlock(pp_tree_words *words) { spin_unlock(&words->crossing); }

/// The locks of pods' shared sections, striped by the pod's address: no pod allocates one, and
/// two pods that share a stripe only take turns. A thread holds at most one at a time.
typedef struct pp_stripe {
  _Alignas(64) _Atomic(intptr_t) word;
} pp_stripe;

static pp_stripe stripes[pp_stripe_count];

static inline _Atomic(intptr_t) *stripe_of(uintptr_t pod) {
  return &stripes[pp_pod_stripe(pod)].word;
}

void pp_pod_lock(uintptr_t pod) { spin_lock(stripe_of(pod)); }

void pp_pod_unlock(uintptr_t pod) { spin_unlock(stripe_of(pod)); }
