/// The command a mistyped one was most likely meant to be, so that `emial` gets "did you
/// mean 'email'?" rather than only a pointer to the list.
enum CommandSuggestion {
  /// The command nearest to `typed` by edit distance, if it is near enough to be a typo:
  /// one edit for a word of up to four letters, two for a longer one. Ties go to the command
  /// listed first.
  static func nearest(to typed: String, among commands: [String]) -> String? {
    let word = Array(typed.lowercased())
    let allowed = word.count <= 4 ? 1 : 2
    let scored = commands.map { (command: $0, distance: distance(word, Array($0))) }
    guard let best = scored.min(by: { $0.distance < $1.distance }), best.distance <= allowed
    else { return nil }
    return best.command
  }

  /// The optimal string alignment distance: insertions, deletions, substitutions, and
  /// swapping two neighbours (the commonest typo, `emial`) each count one.
  static func distance(_ a: [Character], _ b: [Character]) -> Int {
    guard !a.isEmpty else { return b.count }
    guard !b.isEmpty else { return a.count }
    // d[i][j]: the distance between the first i characters of a and the first j of b.
    var d = [[Int]](repeating: [Int](repeating: 0, count: b.count + 1), count: a.count + 1)
    for i in 0...a.count { d[i][0] = i }
    for j in 0...b.count { d[0][j] = j }
    for i in 1...a.count {
      for j in 1...b.count {
        let cost = a[i - 1] == b[j - 1] ? 0 : 1
        d[i][j] = min(d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + cost)
        if i > 1, j > 1, a[i - 1] == b[j - 2], a[i - 2] == b[j - 1] {
          d[i][j] = min(d[i][j], d[i - 2][j - 2] + 1)
        }
      }
    }
    return d[a.count][b.count]
  }
}
