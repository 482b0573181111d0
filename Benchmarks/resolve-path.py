# gdb script for Benchmarks/resolve-path: follows the calls one uncached resolve of the
# SharedWrites probe makes into the library, between the probe's two markers, and reports which
# source files of `Sources/ProviderPod` it enters and how often: a hop is a call from a function
# in one file to a function in another. Every function of the library gets a breakpoint,
# enabled only between the markers.
import gdb
from collections import Counter, OrderedDict

trace = []
# The last call's function and call site: gdb sets two breakpoints, a few bytes apart, in some
# functions (one per symbol naming it), which stop twice for one call; that call counts once.
last_call = [None]


def file_of(frame):
    try:
        sal = frame.find_sal()
        return sal.symtab.filename if sal and sal.symtab else None
    except (gdb.error, RuntimeError):
        return None


def function_file(frame):
    try:
        function = frame.function()
        return function.symtab.filename if function and function.symtab else None
    except (gdb.error, RuntimeError):
        return None


class Entry(gdb.Breakpoint):
    def stop(self):
        # The breakpoint stops past the prologue, which can be inside code inlined into the
        # function called: gdb's newest frame is then the inlined one, and the frame above it
        # the function itself, which would hide the call (its file seen as its own caller).
        # The callee is the function the call entered, its file the one it is written in.
        frame = gdb.newest_frame()
        while frame.type() == gdb.INLINE_FRAME and frame.older() is not None:
            frame = frame.older()
        older = frame.older()
        call = (frame.name(), older.pc(), int(older.read_register("sp"))) if older else None
        if call is not None and call == last_call[0]:
            return False
        last_call[0] = call
        callee = function_file(frame)
        caller = file_of(frame.older()) if frame.older() else None
        if callee and "Sources/ProviderPod/" in callee:
            trace.append((caller, callee, frame.name()))
        return False


entries = []
with open(SYMBOLS) as names:
    for name in names:
        try:
            entry = Entry("'%s'" % name.strip(), internal=True)
            entry.enabled = False
            entries.append(entry)
        except (gdb.error, RuntimeError):
            pass


class Begins(gdb.Breakpoint):
    def stop(self):
        for entry in entries:
            entry.enabled = True
        return False


def short(path):
    return path.split("Sources/ProviderPod/")[-1] if path else "(outside)"


class Ends(gdb.Breakpoint):
    def stop(self):
        hops = [(short(a), short(b)) for a, b, _ in trace if short(a) != short(b)]
        entered = Counter(b for _, b in hops)
        order = OrderedDict()
        for _, b in hops:
            order.setdefault(b, 0)
        print("resolve-path: %d calls into the library, %d hops between files, %d files"
              % (len(trace), len(hops), len(order)))
        for name in order:
            print("%4d  %s" % (entered[name], name))
        print("sequence: " + " -> ".join(b for _, b in hops))
        for a, b, name in trace:
            print("call: %s -> %s  %s" % (short(a), short(b), name))
        for entry in entries:
            entry.enabled = False
        return False


Begins(BEGINS, internal=True)
Ends(ENDS, internal=True)
gdb.execute("run")
