import GreetingServer
import Hummingbird
import HummingbirdTesting
import ProviderPod

// What a pod per request costs a server: the example's app (a middleware that makes each
// request's pod and gives it the request, a handler built there from two app singletons)
// against the same routes written by hand, both driven through Hummingbird's in-process
// router client, so no network time hides the difference. Alternating rounds, medians.
//   swift run -c release --package-path Examples/HummingbirdServer RequestCost

let requestsPerRound = 20_000
let rounds = 7

func nanosecondsPerRequest(_ app: some ApplicationProtocol) async throws -> Double {
  let clock = ContinuousClock()
  let elapsed = try await app.test(.router) { client in
    let start = clock.now
    for index in 0..<requestsPerRound {
      try await client.execute(uri: "/hello?user=u\(index)", method: .get) { response in
        precondition(response.status == .ok, "RequestCost: the server answered \(response.status)")
      }
    }
    return clock.now - start
  }
  let (seconds, attoseconds) = elapsed.components
  return (Double(seconds) * 1e9 + Double(attoseconds) / 1e9) / Double(requestsPerRound)
}

func median(_ values: [Double]) -> Double { values.sorted()[values.count / 2] }

var withPods: [Double] = []
var byHand: [Double] = []
for _ in 0..<rounds {
  withPods.append(try await nanosecondsPerRequest(buildApplication(app: Pod())))
  byHand.append(try await nanosecondsPerRequest(buildApplicationByHand()))
}
let pods = median(withPods)
let hand = median(byHand)
print("requests per round: \(requestsPerRound), rounds: \(rounds), medians:")
print("  with a pod per request: \(Int(pods)) ns per request")
print("  by hand:                \(Int(hand)) ns per request")
print("  ProviderPod adds \(Int(pods - hand)) ns per request (\(pods / hand)x)")
