// What the DocC article GettingStarted.md uses without showing it (see Scripts/check-readme).
import ProviderPod

struct Database {
  enum Role { case primary, replica }
  let role: Role
  init(_ role: Role) { self.role = role }
}
