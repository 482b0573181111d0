/// A small line editor for the interactive mode at a terminal: typing inserts at the cursor;
/// Left and Right (or Ctrl-B, Ctrl-F) move; Home and End (or Ctrl-A, Ctrl-E) jump; Backspace
/// and Delete erase; Ctrl-U and Ctrl-K cut to the start or the end; Up and Down recall
/// earlier lines. Other escape sequences are dropped whole. Ctrl-D on an empty line ends the
/// input; Ctrl-C abandons the line.
///
/// Left, Right, Backspace and Delete act on a whole `Character`: an emoji with its skin tone
/// or joiners, a letter with its accents. Up keeps the line being typed; Down past the
/// newest line brings it back.
///
/// It only models the line: feed it bytes, and draw it with a ``LineRenderer`` after each.
/// ``TerminalLineReader`` connects both to a terminal.
public struct LineEditor {
  /// What a byte did.
  public enum Outcome: Equatable, Sendable {
    /// The line changed, or not: redraw it.
    case editing
    /// Return was pressed: the finished line.
    case line(String)
    /// Ctrl-D on an empty line.
    case endOfInput
    /// Ctrl-C: the line was abandoned.
    case interrupted
  }

  /// The line's scalars; `cursor` counts scalars too, and is always at the boundary of a
  /// `Character`, so that no edit splits an emoji or a letter from its accent.
  private var text: [Unicode.Scalar] = []
  private var cursor = 0
  private var filter = EscapeSequenceFilter()
  private var utf8: [UInt8] = []
  private var history: [String] = []
  private var historyPosition = 0
  /// The line being typed when Up first left it, given back when Down returns past the newest
  /// line of the history, as shells do.
  private var draft: [Unicode.Scalar] = []

  /// An empty line, with no history.
  public init() {}

  /// The line as typed so far.
  public var line: String { String(String.UnicodeScalarView(text)) }

  /// Where the cursor is, in characters from the start of the line.
  public var cursorPosition: Int { boundaries.firstIndex(of: cursor) ?? 0 }

  /// Handles one byte from the terminal.
  public mutating func feed(_ byte: UInt8) -> Outcome {
    guard let scalar = decode(byte) else { return .editing }
    switch filter.feed(scalar) {
    case .pending: return .editing
    case .sequence(let sequence): return apply(sequence: sequence)
    case .text(let scalar): return apply(scalar)
    }
  }

  /// Collects a UTF-8 sequence; returns its scalar once complete.
  private mutating func decode(_ byte: UInt8) -> Unicode.Scalar? {
    utf8.append(byte)
    let expected =
      switch utf8[0] {
      case 0xF0...: 4
      case 0xE0...: 3
      case 0xC0...: 2
      default: 1
      }
    guard utf8.count >= expected else { return nil }
    defer { utf8 = [] }
    return String(decoding: utf8, as: UTF8.self).unicodeScalars.first
  }

  private mutating func apply(_ scalar: Unicode.Scalar) -> Outcome {
    switch scalar.value {
    case 0x0D, 0x0A:
      let finished = line
      if !finished.allSatisfy(\.isWhitespace) { history.append(finished) }
      startOver()
      return .line(finished)
    case 0x04:
      if text.isEmpty { return .endOfInput }
      deleteForward()
    case 0x03:
      startOver()
      return .interrupted
    case 0x7F, 0x08:
      let start = previousBoundary
      text.removeSubrange(start..<cursor)
      cursor = start
    case 0x01: cursor = 0
    case 0x05: cursor = text.count
    case 0x02: cursor = previousBoundary
    case 0x06: cursor = nextBoundary
    case 0x15:
      text.removeFirst(cursor)
      cursor = 0
    case 0x0B: text.removeLast(text.count - cursor)
    case 0x09: insert(" ")
    // C0 and C1 controls: a terminal would act on them rather than show them.
    case ..<0x20, 0x80...0x9F: break
    default: insert(scalar)
    }
    return .editing
  }

  private mutating func apply(sequence: String) -> Outcome {
    switch sequence {
    case "[D", "OD": cursor = previousBoundary
    case "[C", "OC": cursor = nextBoundary
    case "[H", "OH", "[1~", "[7~": cursor = 0
    case "[F", "OF", "[4~", "[8~": cursor = text.count
    case "[3~": deleteForward()
    case "[A", "OA":
      guard historyPosition > 0 else { break }
      if historyPosition == history.count { draft = text }
      historyPosition -= 1
      replace(with: Array(history[historyPosition].unicodeScalars))
    case "[B", "OB":
      guard historyPosition < history.count else { break }
      historyPosition += 1
      replace(
        with: historyPosition < history.count
          ? Array(history[historyPosition].unicodeScalars) : draft)
    default: break
    }
    return .editing
  }

  /// Where each `Character` of the line starts, in scalars, and the end of the line.
  private var boundaries: [Int] {
    var offsets = [0]
    for character in line { offsets.append(offsets.last! + character.unicodeScalars.count) }
    return offsets
  }

  private var previousBoundary: Int { boundaries.last { $0 < cursor } ?? 0 }
  private var nextBoundary: Int { boundaries.first { $0 > cursor } ?? text.count }

  /// Inserts at the cursor. A scalar that joins the character after it (a letter typed
  /// before a lone accent) makes one character of both: the cursor goes after the whole.
  private mutating func insert(_ scalar: Unicode.Scalar) {
    text.insert(scalar, at: cursor)
    cursor += 1
    let boundaries = boundaries
    if !boundaries.contains(cursor) { cursor = boundaries.first { $0 > cursor } ?? text.count }
  }

  private mutating func deleteForward() {
    text.removeSubrange(cursor..<nextBoundary)
  }

  private mutating func replace(with scalars: [Unicode.Scalar]) {
    text = scalars
    cursor = scalars.count
  }

  /// An empty line after Return or Ctrl-C: Up starts again from the newest line.
  private mutating func startOver() {
    replace(with: [])
    historyPosition = history.count
    draft = []
  }
}
