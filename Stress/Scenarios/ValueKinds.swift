import ProviderPod

/// Cached reads of every kind of value the pod stores differently (a class without a hook, a
/// class with `onDiscard`, a struct holding a class, an enum with a payload, `nil`, an
/// existential holding a class or a struct, a closure, a tuple, a weakly cached class, a
/// throwing provider's weakly cached success) on several threads, through the pod and through
/// child pods made and released per request (some owning the scope, most sharing the parent's
/// instances), while one thread clears their scope, overrides them with builders and values
/// and removes the overrides. Each value carries a check of its own contents: a read of freed
/// or mistyped storage shows as a broken check (or a crash under ASan).
enum ValueKinds {
  static let report = Report(scenario: "value-kinds")
  static let plain = Ledger("plain-class", exact: false, report: report)
  static let hooked = Ledger("hooked-class", exact: false, report: report)
  static let boxed = Ledger("boxed", exact: false, report: report)
  static let weakly = Ledger("weak-class", exact: false, report: report)

  struct KindScope: ProviderScope {}

  final class Plain: Tracked, @unchecked Sendable {
    let check: Int
    override init(_ ledger: Ledger) {
      check = 0
      super.init(ledger)
    }
    var isIntact: Bool { check == 0 && serial > 0 }
  }

  /// A struct whose copy retains a class and a string buffer.
  struct Pair: Sendable {
    let object: Plain
    let text: String
    let value: Int
    var isIntact: Bool { object.isIntact && text == "pair-\(value)" }
    init(_ value: Int) {
      object = Plain(boxed)
      text = "pair-\(value)"
      self.value = value
    }
  }

  enum Shape: Sendable {
    case empty
    case named(String, Plain)
    case number(Int)
  }

  protocol Intact: Sendable { var isIntact: Bool { get } }
  final class ObjectIntact: Intact, @unchecked Sendable {
    let object = Plain(boxed)
    var isIntact: Bool { object.isIntact }
  }
  struct ValueIntact: Intact {
    let pair: Pair
    var isIntact: Bool { pair.isIntact }
  }

  static let plainProvider = Provider(scope: KindScope(), name: "plain") { _ in Plain(plain) }
  static let hookedProvider = Provider(
    scope: KindScope(), name: "hooked", onDiscard: { $0.discarded() }
  ) { _ in Plain(hooked) }
  static let pairProvider = Provider(scope: KindScope(), name: "pair") { _ in
    Pair(nextSerial())
  }
  static let shapeProvider = Provider<Shape>(scope: KindScope(), name: "shape") { _ in
    let serial = nextSerial()
    return .named("shape-\(serial)", Plain(boxed))
  }
  static let nothingProvider = Provider<Plain?>(scope: KindScope(), name: "nothing") { _ in nil }
  static let objectExistentialProvider = Provider<any Intact>(
    scope: KindScope(), name: "object-existential"
  ) { _ in ObjectIntact() }
  static let valueExistentialProvider = Provider<any Intact>(
    scope: KindScope(), name: "value-existential"
  ) { _ in ValueIntact(pair: Pair(nextSerial())) }
  static let closureProvider = Provider<@Sendable () -> String>(
    scope: KindScope(), name: "closure"
  ) { _ in
    let pair = Pair(nextSerial())
    return { pair.isIntact ? "intact" : "broken" }
  }
  static let tupleProvider = Provider<(Int, String, Plain)>(scope: KindScope(), name: "tuple") {
    _ in
    let serial = nextSerial()
    return (serial, "tuple-\(serial)", Plain(boxed))
  }
  static let weakProvider = Provider(scope: WeakScope(), name: "weak") { _ in Plain(weakly) }
  /// Its entry holds the success's instance weakly, and a read wraps it in a `Result` again.
  static let weakThrowingProvider = ThrowingProvider(scope: WeakScope(), name: "weak-throwing") {
    _ in Plain(weakly)
  }

  static let scenario = Scenario(
    name: "value-kinds",
    summary: "cached reads of every kind of value against clears and overrides",
    report: report, run: { duration, _ in await run(for: duration) })

  static func run(for duration: Duration) async {
    do {
      let pod = Pod()
      let deadline = Deadline(after: duration)
      onThreads(4) { index in
        var operations = 0
        var random = FastRandom(seed: index + 11)
        var request: Pod?
        while !deadline.hasPassed {
          if index == 0 {
            change(pod, random.next(8))
          } else if index == 3 {
            // A request: a child pod made, read through a few times and released.
            if request == nil || random.next(16) == 0 {
              let owned: [any ProviderScope] = random.next(4) == 0 ? [KindScope()] : []
              request = Pod(parent: pod, scopes: owned)
            }
            read(request!, random.next(11))
          } else {
            read(pod, random.next(11))
          }
          operations += 1
        }
        request = nil
        report.add(operations: operations)
      }
      for kind in 0..<8 { change(pod, kind) }
      pod.clearCachedInstances(forScope: KindScope())
    }
    await settle([plain, hooked, boxed, weakly])
  }

  private static func read(_ pod: Pod, _ which: Int) {
    switch which {
    case 0:
      report.check(pod.resolve(plainProvider).isIntact, "plain class read broken")
    case 1:
      report.check(pod.resolve(hookedProvider).isIntact, "hooked class read broken")
    case 2:
      report.check(pod.resolve(pairProvider).isIntact, "struct read broken")
    case 3:
      switch pod.resolve(shapeProvider) {
      case .named(let name, let object):
        report.check(name.hasPrefix("shape-") && object.isIntact, "enum payload broken: \(name)")
      case .number(let number):
        report.check(number == 7, "enum number override broken: \(number)")
      case .empty: break
      }
    case 4:
      let nothing = pod.resolve(nothingProvider)
      report.check(nothing == nil || nothing!.isIntact, "Optional read broken")
    case 5:
      report.check(pod.resolve(objectExistentialProvider).isIntact, "existential (class) broken")
    case 6:
      report.check(pod.resolve(valueExistentialProvider).isIntact, "existential (struct) broken")
    case 7:
      let said = pod.resolve(closureProvider)()
      report.check(said == "intact" || said == "override", "closure read broken: \(said)")
    case 8:
      let (number, text, object) = pod.resolve(tupleProvider)
      report.check(text == "tuple-\(number)" && object.isIntact, "tuple read broken: \(text)")
    case 9:
      // Dropped at once: the weak entry's instance goes while others read it.
      report.check(pod.resolve(weakProvider).isIntact, "weak class read broken")
    default:
      let read = try? pod.resolve(weakThrowingProvider)
      report.check(read?.isIntact == true, "weak throwing provider's read broken")
    }
  }

  private static func change(_ pod: Pod, _ which: Int) {
    switch which {
    case 0, 1:
      pod.clearCachedInstances(forScope: KindScope())
    case 2:
      pod.overrideProvider(shapeProvider, withValue: .number(7))
      pod.overrideProvider(closureProvider, withValue: { "override" })
      pod.overrideProvider(nothingProvider, withValue: Plain(boxed))
    case 3:
      pod.removeOverrideProvider(shapeProvider)
      pod.removeOverrideProvider(closureProvider)
      pod.removeOverrideProvider(nothingProvider)
    case 4:
      pod.overrideProvider(pairProvider) { _ in Pair(-1 - nextSerial()) }
      pod.overrideProvider(hookedProvider) { _ in Plain(hooked) }
      pod.overrideProvider(plainProvider, withValue: Plain(plain))
    case 5:
      pod.removeOverrideProvider(pairProvider)
      pod.removeOverrideProvider(hookedProvider)
      pod.removeOverrideProvider(plainProvider)
    case 6:
      pod.overrideProvider(valueExistentialProvider, withValue: ObjectIntact())
      pod.overrideProvider(tupleProvider) { _ in (1, "tuple-1", Plain(boxed)) }
    default:
      pod.removeOverrideProvider(valueExistentialProvider)
      pod.removeOverrideProvider(tupleProvider)
    }
  }
}
