/// Empty tables with room for a few entries, for a pod's first entries to copy.
///
/// Making a table allocates its storage through the standard library's unspecialised code,
/// which looks the table's generic type up at run time (`Dictionary(minimumCapacity:)` and a
/// first insert into an empty table cost about 700 and 540 instructions). Copying a table
/// that already has storage runs code specialised here, with the type at hand, as a request's
/// pod does for its slot table.
///
/// One set per thread, kept in the thread's record (`ThreadRecord.emptyTables`), made by its
/// first pod: a copy retains the template's storage and the copy releases it, and a template
/// shared by every thread was a cache line that every request on every core wrote. Never
/// written otherwise: a pod's first insert into a table finds the storage shared and copies
/// it (a slot table's second slot, the first going inline: see `SlotTable`).
final class EmptyTables {
  let slots = [ProviderKey: Slot](minimumCapacity: 4)
  let scopeMembers = [ScopeKey: [Slot]](minimumCapacity: 2)
}
