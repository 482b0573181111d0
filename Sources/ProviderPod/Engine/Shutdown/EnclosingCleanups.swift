/// The cleanups the current task is part of: shutdowns (their `ShutdownProgress` and
/// `Completion`) and discards' cleanup tasks (their `Completion`). A shutdown called from
/// inside one of them cannot wait for it, which waits for the hook that called it.
enum EnclosingCleanups {
  @TaskLocal static var current: [AnyObject & Sendable] = []

  /// Whether the current task runs inside `cleanup`.
  static func contain(_ cleanup: AnyObject & Sendable) -> Bool {
    current.contains { $0 === cleanup }
  }

  /// Runs `body` as part of `cleanups`, besides those the task is already part of.
  static func within<Result: Sendable>(
    _ cleanups: [AnyObject & Sendable], _ body: () async -> Result
  ) async -> Result {
    await $current.withValue(current + cleanups) { await body() }
  }
}
