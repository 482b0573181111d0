import Dispatch
import ProviderPod
import Swinject

/// What the floor reads: one instance that every thread shares, as a cached singleton is. The
/// compiler emits it as a static object, whose reference count is never written: retaining it
/// writes nothing, so threads reading it share no written cache line.
let sharedInstance = Service(value: 1)

/// A strong reference to the shared instance, as a resolve returns one.
@inline(never)
private func readSharedInstance() -> Service { sharedInstance }

/// The same read of an instance made at run time, as a pod's cached instance is: a strong
/// reference kept and dropped writes the instance's reference count, which all threads share.
let sharedMadeAtRunTime = Service(value: CommandLine.arguments.count)

/// Where each thread keeps the reference it reads, so that the retain cannot be left out.
private final class Holder: @unchecked Sendable {
  var object: Service?
}

/// Retains the shared instance into `holder`, releasing the one it held (the same instance).
@inline(never)
private func holdSharedMadeAtRunTime(in holder: Holder) -> Int {
  holder.object = sharedMadeAtRunTime
  return sharedMadeAtRunTime.value
}

private let threadedSingleton = Provider { _ in Service() }

/// A cached value with no reference in it: copying it out writes no reference count, so a
/// cached resolve of it shows what the pod itself shares between threads.
struct Limits: Sendable {
  let requests: Int
  let ratio: Double
}
private let threadedLimits = Provider { _ in Limits(requests: 100, ratio: 0.5) }
private let threadedAlwaysNew = Provider(scope: AlwaysCreateNewScope()) { _ in Service() }

/// The app's two singletons of workload 11, made at run time and read with no lock at all.
private let unlockedRepository = Service(value: CommandLine.arguments.count)
private let unlockedMailer = Service(value: CommandLine.arguments.count + 1)

/// A request by hand that shares nothing with other requests but the two singletons its
/// handler keeps: their reference counts, written as each handler is made and let go of, are
/// all that other threads' requests write too. What no library that hands out strong
/// references to shared instances can go under.
@inline(never)
private func handleRequestSharingOnlySingletons() -> Int {
  var requestInstances: [ObjectIdentifier: Any] = [:]
  let handler = RequestHandler(unlockedRepository, unlockedMailer)
  requestInstances[ObjectIdentifier(RequestHandler.self)] = handler
  return (requestInstances[ObjectIdentifier(RequestHandler.self)] as! RequestHandler).first.value
}

/// Workload 11's request in Swinject from several threads at once: a child container resolves
/// through the parent's, which Swinject allows only through a synchronized resolver (the lock
/// is the parent's, shared by every child).
@inline(never)
private func synchronizedRequest(app: Container) -> Int {
  let request = Container(parent: app)
  request.register(RequestHandler.self) { r in
    RequestHandler(r.resolve(Repository.self)!.service, r.resolve(Mailer.self)!.service)
  }.inObjectScope(.container)
  return request.synchronize().resolve(RequestHandler.self)!.first.value
}

/// `count` operations of `operation`, summed.
@inline(__always)
private func loop(_ operation: @escaping () -> Int) -> (Int) -> Int {
  { count in
    var total = 0
    for _ in 0..<count { total &+= operation() }
    return total
  }
}

/// `count` operations of an async `operation`, summed, in a task of their own that the
/// thread waits for: a server's requests run in tasks. The task costs each operation a
/// chunk's share of one task's start.
private func asyncLoop(_ operation: @escaping @Sendable () async -> Int) -> (Int) -> Int {
  { count in
    let done = DispatchSemaphore(value: 0)
    let total = UncheckedBox(Counter())
    Task {
      for _ in 0..<count { total.value.sum &+= await operation() }
      done.signal()
    }
    done.wait()
    return total.value.sum
  }
}

/// What an async loop sums, handed back to its thread (ordered by the semaphore).
private final class Counter {
  var sum = 0
}

/// The workloads of the thread-scaling section, each with its shared state made and warmed.
func threadScalingCases() -> [ThreadCase] {
  let app = Pod()
  _ = app.resolve(threadedSingleton)
  _ = handleRequest(in: app)
  _ = handleSelfContainedRequest(in: app)

  let dictionary = MutexContainer()
  let key = ObjectIdentifier(Key.self)
  _ = dictionary.resolve(key) { Service() }
  let byHandApp = MutexContainer()
  _ = handleRequest(app: byHandApp)

  let swinject = Container()
  swinject.register(Service.self) { _ in Service() }.inObjectScope(.container)
  let synchronized = UncheckedBox(swinject.synchronize())
  _ = synchronized.value.resolve(Service.self)
  let swinjectApp = UncheckedBox(SwinjectWorkloads().requestApp())
  _ = synchronizedRequest(app: swinjectApp.value)

  return [
    ThreadCase(
      title: "reading one shared reference (no lock: the floor)", library: "floor", chunk: 1024
    ) {
      loop { readSharedInstance().value }
    },
    ThreadCase(
      title: "reading one shared reference made at run time, retained and released",
      library: "floor", chunk: 1024
    ) {
      let holder = Holder()
      return loop { holdSharedMadeAtRunTime(in: holder) }
    },
    ThreadCase(
      title: "a `Mutex`-guarded dictionary lookup", library: "Mutex dictionary", chunk: 256
    ) {
      loop { dictionary.resolve(key) { Service() }.value }
    },
    ThreadCase(
      title: "ProviderPod, always-new resolve", library: "ProviderPod", chunk: 256
    ) {
      loop { app.resolve(threadedAlwaysNew).value }
    },
    ThreadCase(
      title: "ProviderPod, cached resolve through the app's pod", library: "ProviderPod",
      chunk: 256
    ) {
      loop { app.resolve(threadedSingleton).value }
    },
    ThreadCase(
      title: "ProviderPod, cached resolve of a struct with no reference in it, app's pod",
      library: "ProviderPod", chunk: 256
    ) {
      loop { app.resolve(threadedLimits).requests }
    },
    ThreadCase(
      title: "ProviderPod, cached resolve through a per-thread child pod",
      library: "ProviderPod", chunk: 256
    ) {
      let child = Pod(parent: app)
      _ = child.resolve(threadedSingleton)
      return loop { child.resolve(threadedSingleton).value }
    },
    ThreadCase(
      title:
        "ProviderPod, a child pod per request (owns the request scope, a handler built from two app singletons, released)",
      library: "ProviderPod", chunk: 16
    ) {
      loop { handleRequest(in: app) }
    },
    ThreadCase(
      title:
        "ProviderPod, a child pod per request, its handler built from nothing of the app's (three trips through the lock, nothing recorded in the app's slots)",
      library: "ProviderPod", chunk: 16
    ) {
      loop { handleSelfContainedRequest(in: app) }
    },
    ThreadCase(
      title:
        "ProviderPod, a child pod per request as the server guide makes it (given the request's data, observed, a connection with a cleanup hook, `await shutdown()`), in a task",
      library: "ProviderPod", chunk: 64
    ) {
      asyncLoop { await handleGuidedRequest(in: app, user: 1) }
    },
    ThreadCase(
      title: "ProviderPod, a child pod per request, each thread its own app pod (no tree shared)",
      library: "ProviderPod", chunk: 16
    ) {
      let ownApp = Pod()
      _ = handleRequest(in: ownApp)
      return loop { handleRequest(in: ownApp) }
    },
    ThreadCase(
      title: "a request by hand (a dictionary per request, the app's in a `Mutex` dictionary)",
      library: "Mutex dictionary", chunk: 64
    ) {
      loop { handleRequest(app: byHandApp) }
    },
    ThreadCase(
      title:
        "a request by hand sharing only the two app singletons its handler keeps (no lock: the floor)",
      library: "floor", chunk: 64
    ) {
      loop { handleRequestSharingOnlySingletons() }
    },
    ThreadCase(title: "Swinject, cached, synchronized", library: "Swinject", chunk: 64) {
      loop { synchronized.value.resolve(Service.self)!.value }
    },
    ThreadCase(
      title: "Swinject, a child container per request (synchronized)", library: "Swinject",
      chunk: 16
    ) {
      loop { synchronizedRequest(app: swinjectApp.value) }
    },
  ]
}
