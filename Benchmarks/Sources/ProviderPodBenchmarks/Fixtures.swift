/// The small final class every workload builds.
final class Service: @unchecked Sendable {
  let value: Int
  init(value: Int = 1) { self.value = value }
}

/// The start of a chain; each link holds the previous one.
final class ChainRoot: @unchecked Sendable {}
final class Link<Previous>: @unchecked Sendable {
  let previous: Previous
  init(_ previous: Previous) { self.previous = previous }
}

// A chain of 10: the root and nine links, each a distinct type.
typealias L1 = Link<ChainRoot>
typealias L2 = Link<L1>
typealias L3 = Link<L2>
typealias L4 = Link<L3>
typealias L5 = Link<L4>
typealias L6 = Link<L5>
typealias L7 = Link<L6>
typealias L8 = Link<L7>
typealias L9 = Link<L8>

/// What the root of workload 6 builds from its 100 dependencies.
final class Root100: @unchecked Sendable {
  let services: [Service]
  init(_ services: [Service]) { self.services = services }
}

/// A node of the 10,000-deep chain: it holds the node below it (nil at the bottom).
final class Node: @unchecked Sendable {
  let below: Node?
  init(_ below: Node?) { self.below = below }
}

/// What a request of workload 11 builds: a request-scoped handler from two app singletons.
final class RequestHandler: @unchecked Sendable {
  let first: Service
  let second: Service
  init(_ first: Service, _ second: Service) {
    self.first = first
    self.second = second
  }
}

/// Two distinct singleton types for workload 11, for libraries (and baselines) keyed by type.
final class Repository: @unchecked Sendable {
  let service = Service(value: 1)
}
final class Mailer: @unchecked Sendable {
  let service = Service(value: 2)
}
