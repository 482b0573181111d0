import ProviderPod

/// The first reported crash: three threads, three providers, a cached value whose deinit
/// resolves through a pod kept in a global, and an `onDiscard` hook that clears a scope.
/// Unfixed, the cached read released the entry before retaining the value, and the value was
/// freed under it.
enum ReentrantDiscard {
  static let report = Report(scenario: "reentrant-discard")
  static let sessions = Ledger("session", exact: false, report: report)
  static let drafts = Ledger("draft", exact: false, report: report)

  /// Kept in a global, as apps keep theirs: the deinit and the hook below reach it that way.
  static let pod = Pod()

  struct SessionScope: ProviderScope {
    var children: [any ProviderScope] { [DraftScope()] }
  }
  struct DraftScope: ProviderScope {}

  struct Config: Sendable { let retries: Int }

  final class Session: Tracked, @unchecked Sendable {
    let config: Config
    init(config: Config) {
      self.config = config
      super.init(sessions)
    }
    // User code re-entering the pod from a deinit, which may run inside the pod's own calls.
    deinit { _ = pod.resolve(configProvider) }
  }

  final class Draft: Tracked, @unchecked Sendable {
    let session: Session
    init(session: Session) {
      self.session = session
      super.init(drafts)
    }
  }

  static let configProvider = Provider(name: "config") { _ in Config(retries: 3) }

  static let sessionProvider = Provider(
    scope: SessionScope(), name: "session",
    onDiscard: { session in
      session.discarded()
      pod.clearCachedInstances(forScope: DraftScope())
    }
  ) { pod in Session(config: pod.resolve(configProvider)) }

  static let draftProvider = Provider(scope: DraftScope(), name: "draft") { pod in
    Draft(session: pod.resolve(sessionProvider))
  }

  static let scenario = Scenario(
    name: "reentrant-discard",
    summary: "cached resolves against a clear whose hook clears again and whose deinit resolves",
    report: report, run: inFreshProcesses("reentrant-discard", report: report, race: run))

  static func run(for duration: Duration) async {
    let deadline = Deadline(after: duration)
    onThreads(3) { index in
      var operations = 0
      while !deadline.hasPassed {
        switch index {
        case 0: _ = pod.resolve(draftProvider)
        case 1: _ = pod.resolve(sessionProvider)
        default: pod.clearCachedInstances(forScope: SessionScope())
        }
        operations += 1
      }
      report.add(operations: operations)
    }
    // The pod is global and stays; its scoped instances must not.
    pod.clearCachedInstances(forScope: SessionScope())
    await settle([sessions, drafts])
  }
}
