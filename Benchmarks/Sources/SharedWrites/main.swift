import ProviderPod

#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

// One operation between two markers, for `Benchmarks/shared-writes`, which counts under gdb
// the reference counts it writes on objects that outlive it: the app's pod, its instances and
// the providers' descriptions, which every thread doing the same operation also writes. On
// many cores each such write moves a cache line from core to core, however little else the
// operation shares. The count is exact on any machine, as instruction counts are.

final class Service: Sendable {
  let value: Int
  init(value: Int) { self.value = value }
}

final class RequestHandler: Sendable {
  let first: Service
  let second: Service
  init(_ first: Service, _ second: Service) {
    self.first = first
    self.second = second
  }
}

/// The benchmarks' request (workload 11): a child pod owning the request scope, a handler
/// in it built from two app singletons, the pod let go of.
struct RequestScope: ProviderScope {}
let repository = Provider { _ in Service(value: 1) }
let mailer = Provider { _ in Service(value: 2) }
let requestHandler = Provider(scope: RequestScope()) { pod in
  RequestHandler(pod.resolve(repository), pod.resolve(mailer))
}

/// The first resolve of a singleton built from two others, in a pod of its own: the path an
/// uncached resolve takes through the library (`Benchmarks/resolve-path`).
let appHandler = Provider { pod in
  RequestHandler(pod.resolve(repository), pod.resolve(mailer))
}

@inline(never)
func firstResolve(in pod: Pod) -> Int {
  pod.resolve(appHandler).first.value
}

@inline(never)
func handleRequest(in app: Pod) -> Int {
  let requestPod = Pod(parent: app, scopes: [RequestScope()])
  return requestPod.resolve(requestHandler).first.value
}

@inline(never)
func cachedResolve(in pod: Pod) -> Int {
  pod.resolve(repository).value
}

/// A cached value with no reference in it.
struct Limits: Sendable {
  let requests: Int
  let ratio: Double
}
let limits = Provider { _ in Limits(requests: 100, ratio: 0.5) }

@inline(never)
func cachedValueResolve(in pod: Pod) -> Int {
  pod.resolve(limits).requests
}

// The markers gdb stops at; they write a global so that the calls stay.
nonisolated(unsafe) var marks = 0
@inline(never) func operationBegins() { marks &+= 1 }
@inline(never) func operationEnds() { marks &+= 2 }

let workload = CommandLine.arguments.dropFirst().first ?? "request"
let app = Pod()
let child = Pod(parent: app)
let operation: () -> Int
switch workload {
case "request": operation = { handleRequest(in: app) }
case "cached": operation = { cachedResolve(in: app) }
case "cached-child": operation = { cachedResolve(in: child) }
case "cached-value": operation = { cachedValueResolve(in: app) }
case "uncached":
  // A pod each, made and kept outside the operation: only the resolve is measured.
  let pods = (0..<4).map { _ in Pod() }
  var next = 0
  operation = {
    defer { next += 1 }
    return firstResolve(in: pods[next])
  }
default:
  print(
    "SharedWrites: no workload \(workload);"
      + " there are request, cached, cached-child, cached-value, uncached")
  exit(2)
}
// Warm: the app's instances, the pods' tables and the thread's spare frames exist already,
// as in a server's steady state.
var sink = 0
for _ in 0..<3 { sink &+= operation() }
operationBegins()
sink &+= operation()
operationEnds()
print("SharedWrites: \(workload) done (\(sink), \(marks))")
