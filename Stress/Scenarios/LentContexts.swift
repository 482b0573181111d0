import ProviderPod

/// Contexts that always-new builders (lock-free thread builds, nested in each other) keep past
/// their build or hand to other threads, used there for always-new chains and cached resolves
/// while the thread that made them goes on building with frames of its own, while the root's
/// overrides flip (closing and opening the lock-free path) and a scope is cleared. Some
/// contexts are used while their builder still runs: the builder waits for the other thread.
enum LentContexts {
  static let report = Report(scenario: "lent-contexts")
  static let configs = Ledger("config", exact: false, report: report)
  static let kept = Ledger("keeper", exact: false, report: report)

  struct ConfigScope: ProviderScope {}

  final class Config: Tracked, @unchecked Sendable {}

  /// An instance that keeps its builder's context, as a lazily resolving view model does.
  final class Keeper: Tracked, @unchecked Sendable {
    let context: BuildContext
    init(_ context: BuildContext) {
      self.context = context
      super.init(kept)
    }
  }

  /// Contexts handed from the building threads to the using ones.
  static let lent = Locked<[BuildContext]>([])
  /// Contexts whose builder waits until another thread has used them: the count of uses.
  static let borrowed = Locked<[(BuildContext, Locked<Int>)]>([])
  /// Instances holding their builder's context, made on one thread and dropped on another.
  static let keepers = Locked<[Keeper]>([])

  static let config = Provider(
    scope: ConfigScope(), name: "config", onDiscard: { $0.discarded() }
  ) { _ in Config(configs) }
  static let leaf = Provider(scope: AlwaysCreateNewScope(), name: "leaf") { _ in 1 }
  static let middle = Provider(scope: AlwaysCreateNewScope(), name: "middle") { context in
    let value = context.resolve(leaf) + 10
    lend(context)
    return value
  }
  static let top = Provider(scope: AlwaysCreateNewScope(), name: "top") { context in
    _ = context.resolve(config)
    lend(context)
    return context.resolve(middle) + 100
  }
  static let keeper = Provider(scope: AlwaysCreateNewScope(), name: "keeper") { context in
    Keeper(context)
  }
  /// A builder that waits (briefly) for another thread to resolve through its context.
  static let patient = Provider(scope: AlwaysCreateNewScope(), name: "patient") { context in
    let uses = Locked(0)
    borrowed.withLock { $0.append((context, uses)) }
    var spins = 0
    while uses.value == 0, spins < 2000 { spins += 1 }
    return context.resolve(middle)
  }

  static func lend(_ context: BuildContext) {
    lent.withLock { if $0.count < 64 { $0.append(context) } }
  }

  static let scenario = Scenario(
    name: "lent-contexts",
    summary: "contexts of lock-free builds used on other threads, against override flips",
    report: report, run: { duration, _ in await run(for: duration) })

  static func run(for duration: Duration) async {
    do {
      let pod = Pod()
      let deadline = Deadline(after: duration)
      onThreads(5) { index in
        var operations = 0
        var random = FastRandom(seed: index + 31)
        while !deadline.hasPassed {
          switch index {
          case 0:
            switch random.next(4) {
            case 0: pod.overrideProvider(leaf) { _ in 1 }
            case 1: pod.removeOverrideProvider(leaf)
            default: pod.clearCachedInstances(forScope: ConfigScope())
            }
          case 1, 2:
            build(pod, random.next(4))
          default:
            use(random.next(4))
          }
          operations += 1
        }
        report.add(operations: operations)
      }
      lent.withLock { $0.removeAll() }
      borrowed.withLock { $0.removeAll() }
      keepers.withLock { $0.removeAll() }
      pod.clearCachedInstances(forScope: ConfigScope())
    }
    await settle([configs, kept])
  }

  private static func build(_ pod: Pod, _ which: Int) {
    switch which {
    case 0, 1:
      let value = pod.resolve(top)
      report.check(value == 111, "top resolved to \(value), not 111")
    case 2:
      let made = pod.resolve(keeper)
      keepers.withLock { if $0.count < 16 { $0.append(made) } }
    default:
      let value = pod.resolve(patient)
      report.check(value == 11, "patient resolved to \(value), not 11")
    }
  }

  private static func use(_ which: Int) {
    switch which {
    case 0:
      guard let context = lent.withLock({ $0.popLast() }) else { return }
      let value = context.resolve(top)
      report.check(value == 111, "top through a lent context: \(value), not 111")
      _ = context.resolve(config)
    case 1:
      guard let (context, uses) = borrowed.withLock({ $0.popLast() }) else { return }
      let value = context.resolve(middle)
      uses.withLock { $0 += 1 }
      report.check(value == 11, "middle through a borrowed context: \(value), not 11")
    case 2:
      // A kept context from another thread's keeper, used here.
      guard let context = lent.withLock({ $0.first }) else { return }
      let value = context.resolve(middle)
      report.check(value == 11, "middle through a shared context: \(value), not 11")
    default:
      // The last reference to the keeper, and so to its context, goes here.
      guard let taken = keepers.withLock({ $0.popLast() }) else { return }
      _ = taken.context.resolve(config)
      let value = taken.context.resolve(top)
      report.check(value == 111, "top through a kept context: \(value), not 111")
    }
  }
}
