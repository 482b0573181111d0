import GreetingServer
import Hummingbird
import HummingbirdTesting
import Logging
import ProviderPod

#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

// What a pod per request costs a server: the example's app (a middleware that makes each
// request's pod and gives it the request, a handler built there from two app singletons)
// against the same routes written by hand, both driven through Hummingbird's in-process
// router client, so no network time hides the difference. Alternating rounds, medians.
//   swift run -c release --package-path Examples/HummingbirdServer RequestCost
// Options: --requests N per round (20,000), --rounds N (9), --only pods|hand (both), and
// --direct: ProviderPod's own share, the middleware's and the route's work without Hummingbird:
// a request's pod shut down at the end of the request, as the middleware does, with and
// without its logging observer, against the pod released instead and the handler by hand.
// Wall time on a shared machine moves; for an exact figure, count instructions with
// callgrind for two request counts and divide the difference (Benchmarks/README.md).

var requestsPerRound = 20_000
var rounds = 9
var only: String?
var direct = false
var arguments = CommandLine.arguments.dropFirst()
while let flag = arguments.popFirst() {
  if flag == "--direct" {
    direct = true
    continue
  }
  guard let value = arguments.popFirst() else { fatalError("RequestCost: \(flag) needs a value") }
  switch flag {
  case "--requests": requestsPerRound = Int(value) ?? requestsPerRound
  case "--rounds": rounds = Int(value) ?? rounds
  case "--only": only = value
  default: fatalError("RequestCost: unknown option \(flag)")
  }
}

func nanosecondsPerRequest(_ app: some ApplicationProtocol, requests: Int) async throws -> Double {
  let clock = ContinuousClock()
  let elapsed = try await app.test(.router) { client in
    let start = clock.now
    for index in 0..<requests {
      try await client.execute(uri: "/hello?user=u\(index)", method: .get) { response in
        precondition(response.status == .ok, "RequestCost: the server answered \(response.status)")
      }
    }
    return clock.now - start
  }
  let (seconds, attoseconds) = elapsed.components
  return (Double(seconds) * 1e9 + Double(attoseconds) / 1e9) / Double(requests)
}

func median(_ values: [Double]) -> Double { values.sorted()[values.count / 2] }

/// Nanoseconds per call of `respond`, over `requests` calls.
func nanosecondsPerCall(requests: Int, _ respond: (Int) async throws -> String) async rethrows
  -> Double
{
  let clock = ContinuousClock()
  var length = 0
  let start = clock.now
  for index in 0..<requests { length &+= try await respond(index).utf8.count }
  let (seconds, attoseconds) = (clock.now - start).components
  precondition(length > 0)
  return (Double(seconds) * 1e9 + Double(attoseconds) / 1e9) / Double(requests)
}

/// ProviderPod's own share of a request, without Hummingbird. Not isolated to the main actor,
/// as top-level code is: each call would hop to it and back, and the hops would be measured.
func measureDirect(rounds: Int, requestsPerRound: Int, only: String?) async throws {
  let app = Pod()
  // The middleware's observer, writing to a logger at swift-log's default level (info), where
  // a pod's events (debug and trace) are not written.
  let observer = LoggingObserver(logger: Logger(label: "RequestCost"))
  let byHandResponder = ByHandResponder()
  var shutDown: [Double] = []
  var logged: [Double] = []
  var released: [Double] = []
  var hand: [Double] = []
  for _ in 0..<rounds {
    if only != "hand" {
      shutDown.append(
        try await nanosecondsPerCall(requests: requestsPerRound) { index in
          try await respondThroughRequestPod(app: app, user: "u\(index)")
        })
      logged.append(
        try await nanosecondsPerCall(requests: requestsPerRound) { index in
          try await respondThroughRequestPod(app: app, user: "u\(index)", observer: observer)
        })
      released.append(
        await nanosecondsPerCall(requests: requestsPerRound) { index in
          respondThroughReleasedRequestPod(app: app, user: "u\(index)")
        })
    }
    if only != "pods" {
      hand.append(
        await nanosecondsPerCall(requests: requestsPerRound) { index in
          await byHandResponder.respond(user: "u\(index)")
        })
    }
  }
  print("requests per round: \(requestsPerRound), rounds: \(rounds), medians, without Hummingbird:")
  func row(_ label: String, _ values: [Double]) {
    let padding = String(repeating: " ", count: max(1, 62 - label.count))
    print("  \(label)\(padding)\(Int(median(values))) ns")
  }
  if !shutDown.isEmpty {
    row("a request's pod, given the request, its handler, shut down:", shutDown)
    row("the same with the middleware's logging observer (info):", logged)
    row("the same pod released instead of shut down:", released)
  }
  if !hand.isEmpty { row("the handler by hand, its connection returned:", hand) }
}

if direct {
  try await measureDirect(rounds: rounds, requestsPerRound: requestsPerRound, only: only)
  exit(0)
}

var withPods: [Double] = []
var byHand: [Double] = []
for _ in 0..<rounds {
  if only != "hand" {
    let app = buildApplication(app: Pod())
    withPods.append(try await nanosecondsPerRequest(app, requests: requestsPerRound))
  }
  if only != "pods" {
    let app = buildApplicationByHand()
    byHand.append(try await nanosecondsPerRequest(app, requests: requestsPerRound))
  }
}
print("requests per round: \(requestsPerRound), rounds: \(rounds), medians:")
if !withPods.isEmpty { print("  with a pod per request: \(Int(median(withPods))) ns per request") }
if !byHand.isEmpty { print("  by hand:                \(Int(median(byHand))) ns per request") }
if !withPods.isEmpty, !byHand.isEmpty {
  let pods = median(withPods)
  let hand = median(byHand)
  print("  ProviderPod adds \(Int(pods - hand)) ns per request (\(pods / hand)x)")
}
