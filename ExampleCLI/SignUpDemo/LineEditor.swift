/// A small line editor for the interactive mode at a terminal: typing inserts at the cursor;
/// Left and Right (or Ctrl-B, Ctrl-F) move; Home and End (or Ctrl-A, Ctrl-E) jump; Backspace
/// and Delete erase; Ctrl-U and Ctrl-K cut to the start or the end; Up and Down recall
/// earlier lines. Other escape sequences are dropped whole. Ctrl-D on an empty line ends the
/// input; Ctrl-C abandons the line.
///
/// It only models the line: feed it bytes, and draw ``rendering(prompt:)`` after each.
/// ``TerminalLineReader`` connects it to a terminal.
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

  private var text: [Unicode.Scalar] = []
  private var cursor = 0
  private var filter = EscapeSequenceFilter()
  private var utf8: [UInt8] = []
  private var history: [String] = []
  private var historyPosition = 0

  /// An empty line, with no history.
  public init() {}

  /// The line as typed so far.
  public var line: String { String(String.UnicodeScalarView(text)) }

  /// Where the cursor is, in characters from the start of the line.
  public var cursorPosition: Int { cursor }

  /// Handles one byte from the terminal.
  public mutating func feed(_ byte: UInt8) -> Outcome {
    guard let scalar = decode(byte) else { return .editing }
    switch filter.feed(scalar) {
    case .pending: return .editing
    case .sequence(let sequence): return apply(sequence: sequence)
    case .text(let scalar): return apply(scalar)
    }
  }

  /// What to write to redraw the line: back to the start of the row, the prompt and the
  /// line, the rest of the row erased, and the cursor moved back to where it is in the line.
  public func rendering(prompt: String) -> String {
    let back = text.count - cursor
    return "\r" + prompt + line + "\u{1B}[K" + (back > 0 ? "\u{1B}[\(back)D" : "")
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
      historyPosition = history.count
      replace(with: [])
      return .line(finished)
    case 0x04:
      if text.isEmpty { return .endOfInput }
      deleteForward()
    case 0x03:
      replace(with: [])
      historyPosition = history.count
      return .interrupted
    case 0x7F, 0x08:
      if cursor > 0 {
        text.remove(at: cursor - 1)
        cursor -= 1
      }
    case 0x01: cursor = 0
    case 0x05: cursor = text.count
    case 0x02: cursor = max(0, cursor - 1)
    case 0x06: cursor = min(text.count, cursor + 1)
    case 0x15:
      text.removeFirst(cursor)
      cursor = 0
    case 0x0B: text.removeLast(text.count - cursor)
    case 0x09: insert(" ")
    case ..<0x20: break
    default: insert(scalar)
    }
    return .editing
  }

  private mutating func apply(sequence: String) -> Outcome {
    switch sequence {
    case "[D", "OD": cursor = max(0, cursor - 1)
    case "[C", "OC": cursor = min(text.count, cursor + 1)
    case "[H", "OH", "[1~", "[7~": cursor = 0
    case "[F", "OF", "[4~", "[8~": cursor = text.count
    case "[3~": deleteForward()
    case "[A", "OA":
      if historyPosition > 0 {
        historyPosition -= 1
        replace(with: Array(history[historyPosition].unicodeScalars))
      }
    case "[B", "OB":
      if historyPosition < history.count {
        historyPosition += 1
        replace(
          with: historyPosition < history.count
            ? Array(history[historyPosition].unicodeScalars) : [])
      }
    default: break
    }
    return .editing
  }

  private mutating func insert(_ scalar: Unicode.Scalar) {
    text.insert(scalar, at: cursor)
    cursor += 1
  }

  private mutating func deleteForward() {
    if cursor < text.count { text.remove(at: cursor) }
  }

  private mutating func replace(with scalars: [Unicode.Scalar]) {
    text = scalars
    cursor = scalars.count
  }
}
