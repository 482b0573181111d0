# gdb script for Benchmarks/shared-writes: counts the reference-count writes (retains and
# releases) one operation of the SharedWrites probe makes, between its two markers, on the
# objects still alive when the operation returns: what it shares with every other thread doing
# the same. Objects freed by then are the operation's own; on glibc a freed object's first word
# no longer points at type metadata, which is how they are told apart. Left out: the runtime's
# empty-collection singletons (immortal: their counts are never written), the engine's frames
# and the empty tables new pods copy (each thread has its own).
import gdb
from collections import defaultdict

events = []
WRITES = [
    ("swift_retain", "retain"), ("swift_release", "release"),
    ("swift_retain_n", "retain_n"), ("swift_release_n", "release_n"),
    ("swift_bridgeObjectRetain", "retain"), ("swift_bridgeObjectRelease", "release"),
]


class Write(gdb.Breakpoint):
    def __init__(self, spec, kind):
        super().__init__(spec, internal=True)
        self.kind = kind
        self.enabled = False

    def stop(self):
        caller = gdb.newest_frame().older()
        name = caller.name() if caller is not None and caller.name() else "?"
        events.append((self.kind, int(gdb.parse_and_eval("$rdi")), name))
        return False


writes = [Write(symbol, kind) for symbol, kind in WRITES]


def type_of(address):
    try:
        isa = int(gdb.parse_and_eval("*(unsigned long*)%d" % address))
        found = gdb.execute("info symbol %d" % isa, to_string=True).strip()
    except gdb.error:
        return None
    if found.startswith("No symbol"):
        return None
    return found.split(" in section")[0]


def demangled(symbols):
    """Readable names, through the toolchain's demangler when it is there."""
    import subprocess
    try:
        out = subprocess.run(["swift", "demangle", "--simplified", "--compact"],
                             input="\n".join(symbols), capture_output=True, text=True).stdout
        names = out.splitlines()
        if len(names) == len(symbols):
            return dict(zip(symbols, names))
    except OSError:
        pass
    return {symbol: symbol for symbol in symbols}


def thread_own_tables():
    """The storage of the thread's empty tables, which new pods copy: the thread's own."""
    try:
        tables = int(gdb.parse_and_eval("pp_current_thread_builds->empty_tables"))
        if tables == 0:
            return set()
        # EmptyTables: the object's header (two words), then its two tables.
        return {int(gdb.parse_and_eval("*(unsigned long*)%d" % (tables + offset)))
                for offset in (16, 24)}
    except gdb.error:
        return set()


def report():
    own = thread_own_tables()
    by_object = defaultdict(list)
    for kind, address, caller in events:
        if address > 0:
            by_object[address].append((kind, caller))
    names = demangled(sorted({caller for _, _, caller in events} | {
        type_of(address) or "" for address in by_object}))
    lines = []
    total = 0
    objects = 0
    for address, writes_here in sorted(by_object.items(), key=lambda item: -len(item[1])):
        name = type_of(address)
        if name is None or "Empty" in name or "Frame" in name or address in own:
            continue
        total += len(writes_here)
        objects += 1
        lines.append("%4d  %s" % (len(writes_here), names.get(name, name)))
        callers = defaultdict(int)
        for kind, caller in writes_here:
            callers[(kind, caller)] += 1
        for (kind, caller), count in sorted(callers.items(), key=lambda item: -item[1]):
            lines.append("        %d %s in %s" % (count, kind, names.get(caller, caller)[:110]))
    # On many cores what costs is a line moved between cores, so the objects count as much as
    # the writes: a second write to an object the operation just wrote finds its line here.
    print("shared-writes: %d reference-count writes on objects that outlive the operation,"
          " %d objects" % (total, objects))
    print("\n".join(lines))


class Begins(gdb.Breakpoint):
    def stop(self):
        for write in writes:
            write.enabled = True
        return False


class Ends(gdb.Breakpoint):
    def stop(self):
        for write in writes:
            write.enabled = False
        report()
        return False


Begins(BEGINS, internal=True)
Ends(ENDS, internal=True)
gdb.execute("run")
