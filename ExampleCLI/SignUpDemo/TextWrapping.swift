// The demo's output must read at an 80-column terminal: a line the terminal wraps breaks
// mid-word and spoils the columns. Lines that can grow with what the user typed (an
// address, a name) or with what the pod holds are broken here, at spaces.

/// The width the demo's output fits.
let terminalColumns = 80

extension String {
  /// The line broken at spaces into lines of at most `width` columns (by display width);
  /// lines after the first start with `indent`. A line that fits, or a single word wider
  /// than a line, stays as it is, runs of spaces (padded columns) included.
  func wrapped(width: Int = terminalColumns, indent: String) -> [String] {
    guard displayWidth > width else { return [self] }
    let lead = String(prefix { $0 == " " })
    var lines: [String] = []
    var current = lead
    var atLineStart = true
    for word in dropFirst(lead.count).split(separator: " ", omittingEmptySubsequences: false) {
      if atLineStart {
        // Spaces that would start a continuation line are dropped.
        guard !word.isEmpty else { continue }
        current += word
        atLineStart = false
      } else if (current + " " + word).displayWidth > width {
        lines.append(current)
        current = indent + word
        atLineStart = word.isEmpty
      } else {
        current += " " + word
      }
    }
    lines.append(current)
    return lines
  }

  /// Each line of the text ``wrapped(width:indent:)``, joined again by newlines.
  func fitted(indent: String) -> String {
    split(separator: "\n", omittingEmptySubsequences: false)
      .flatMap { String($0).wrapped(indent: indent) }
      .joined(separator: "\n")
  }
}
