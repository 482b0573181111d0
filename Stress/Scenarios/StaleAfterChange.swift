import ProviderPod

/// Nothing stale after a change: once a clear, an override or an override's removal has
/// returned, no resolve that starts afterwards may hand out an instance made before it began,
/// nor one built from such an instance. Serials order the instances: the writer raises a
/// floor after each change, and readers check what they get against the floor they read
/// before resolving.
enum StaleAfterChange {
  static let report = Report(scenario: "stale-after-change")
  static let bases = Ledger("base", exact: false, report: report)
  static let overrides = Ledger("overridden-base", exact: false, report: report)
  static let values = Ledger("value-base", exact: false, report: report)
  static let derived = Ledger("derived", exact: false, report: report)
  static let members = Ledger("member", exact: false, report: report)

  struct BaseScope: ProviderScope {}

  final class Base: Tracked, @unchecked Sendable {}

  final class Derived: Tracked, @unchecked Sendable {
    let base: Base
    init(_ ledger: Ledger, base: Base) {
      self.base = base
      super.init(ledger)
    }
  }

  static let baseProvider = Provider(
    scope: BaseScope(), name: "base", onDiscard: { $0.discarded() }
  ) { _ in Base(bases) }

  /// A singleton built from a scoped instance: a change to the base must reach it.
  static let derivedProvider = Provider(name: "derived", onDiscard: { $0.discarded() }) { pod in
    Derived(derived, base: pod.resolve(baseProvider))
  }

  static let memberProvider = ProviderFamily(
    scope: BaseScope(), name: "member", onDiscard: { $0.discarded() }
  ) { (pod, _: Int) in Derived(members, base: pod.resolve(baseProvider)) }

  /// The oldest serial each kind of resolve may hand out.
  struct Floors: Sendable {
    let base = Floor()
    let derived = Floor()
    let member = Floor()

    func raiseAll(to serial: Int, base baseSerial: Int) {
      base.raise(to: baseSerial)
      derived.raise(to: serial)
      member.raise(to: serial)
    }
  }

  static let scenario = Scenario(
    name: "stale-after-change",
    summary: "resolves against clears, overrides added and removed: nothing older than a change",
    report: report, run: { duration, _ in await run(for: duration) })

  static func run(for duration: Duration) async {
    // Once unobserved (the lock-free cached path) and once observed (the general path).
    for observed in [false, true] {
      let pod = observed ? Pod(observer: ObservedClear.QuietObserver()) : Pod()
      race(in: pod, until: Deadline(after: duration / 2))
    }
    await settle([bases, overrides, values, derived, members])
  }

  private static func race(in pod: Pod, until deadline: Deadline) {
    let floors = Floors()
    onThreads(3) { index in
      var operations = 0
      var random = FastRandom(seed: index + 1)
      var change = Changer(pod: pod, floors: floors)
      while !deadline.hasPassed {
        if index == 0 {
          change.any(random.next(6))
        } else {
          read(pod, floors, random.next(3))
        }
        operations += 1
      }
      report.add(operations: operations)
    }
  }

  private static func read(_ pod: Pod, _ floors: Floors, _ which: Int) {
    switch which {
    case 0:
      let floor = floors.base.current
      let base = pod.resolve(baseProvider)
      report.check(
        base.serial >= floor, "base#\(base.serial) handed out after a change at #\(floor)")
    case 1:
      let floor = (floors.derived.current, floors.base.current)
      let value = pod.resolve(derivedProvider)
      check(value, "derived", against: floor)
    default:
      let floor = (floors.member.current, floors.base.current)
      let value = pod.resolve(memberProvider(floor.0 & 3))
      check(value, "member", against: floor)
    }
  }

  private static func check(_ value: Derived, _ name: String, against floor: (Int, Int)) {
    report.check(
      value.serial >= floor.0, "\(name)#\(value.serial) handed out after a change at #\(floor.0)")
    report.check(
      value.base.serial >= floor.1,
      "\(name)#\(value.serial) built from base#\(value.base.serial), "
        + "handed out after a change to the base at #\(floor.1)")
  }

  /// The single writer: it knows what it has installed, so it knows which changes discard.
  private struct Changer {
    let pod: Pod
    let floors: Floors
    /// The base a `withValue:` override resolves to, which survives clears of its scope.
    var installedValue: Base?
    var isOverridden = false

    mutating func any(_ which: Int) {
      let serial = nextSerial()
      switch which {
      case 0:
        pod.clearCachedInstances(forScope: BaseScope())
        floors.raiseAll(to: serial, base: installedValue?.serial ?? serial)
      case 1:
        pod.overrideProvider(baseProvider) { _ in Base(overrides) }
        (installedValue, isOverridden) = (nil, true)
        floors.raiseAll(to: serial, base: serial)
      case 2:
        let value = Base(values)
        pod.overrideProvider(baseProvider, withValue: value)
        (installedValue, isOverridden) = (value, true)
        floors.raiseAll(to: value.serial, base: value.serial)
      case 3:
        pod.removeOverrideProvider(baseProvider)
        // Removing an override that is not there discards nothing.
        if isOverridden { floors.raiseAll(to: serial, base: serial) }
        (installedValue, isOverridden) = (nil, false)
      case 4:
        pod.clearCachedInstance(of: derivedProvider)
        floors.derived.raise(to: serial)
      default:
        pod.clearCachedInstances(of: memberProvider)
        floors.member.raise(to: serial)
      }
    }
  }
}
