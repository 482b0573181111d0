import Foundation

/// Splits typed text into characters and terminal escape sequences (`ESC [ D` for the left
/// arrow, `ESC O H` for Home, `ESC ] ... BEL` for a title), so that neither a line editor
/// nor the echo of a command lets a sequence through by accident.
struct EscapeSequenceFilter {
  /// What one scalar of input amounts to.
  enum Token: Equatable {
    /// A character of text (which may still be a control character).
    case text(Unicode.Scalar)
    /// Part of a sequence that is not finished yet.
    case pending
    /// A finished sequence without its ESC, such as `[D` or `[3~`.
    case sequence(String)
  }

  private enum State { case text, escape, controlSequence, singleShift, operatingSystemCommand }
  private var state = State.text
  private var sequence = ""

  mutating func feed(_ scalar: Unicode.Scalar) -> Token {
    switch state {
    case .text:
      guard scalar == "\u{1B}" else { return .text(scalar) }
      state = .escape
      sequence = ""
      return .pending
    case .escape:
      sequence.unicodeScalars.append(scalar)
      switch scalar {
      case "[": state = .controlSequence
      case "O": state = .singleShift
      case "]": state = .operatingSystemCommand
      default:
        // ESC and one character: Alt and a key.
        state = .text
        return .sequence(sequence)
      }
      return .pending
    case .controlSequence:
      sequence.unicodeScalars.append(scalar)
      // Parameters and intermediates are 0x20-0x3F; one byte in 0x40-0x7E ends the sequence.
      if (0x20...0x3F).contains(scalar.value) { return .pending }
      state = .text
      return .sequence(sequence)
    case .singleShift:
      sequence.unicodeScalars.append(scalar)
      state = .text
      return .sequence(sequence)
    case .operatingSystemCommand:
      // Ends at BEL, or at ESC (the first half of ESC \, whose backslash is then dropped).
      if scalar == "\u{07}" || scalar == "\u{1B}" {
        state = scalar == "\u{1B}" ? .escape : .text
        sequence = ""
        return scalar == "\u{1B}" ? .pending : .sequence("]")
      }
      return .pending
    }
  }

  /// Whether `scalar` is text rather than part of an escape sequence.
  mutating func accepts(_ scalar: Unicode.Scalar) -> Bool {
    if case .text = feed(scalar) { return true }
    return false
  }
}

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

/// Reads lines from a terminal with a ``LineEditor``: the terminal is switched to
/// character-at-a-time input without echo only while a line is read, so commands print
/// with the terminal as it was, and a crash while one runs leaves it usable.
public final class TerminalLineReader {
  private let original: termios
  private var editor = LineEditor()

  /// A reader for standard input, or nil when it is not a terminal.
  public init?() {
    var settings = termios()
    guard isatty(STDIN_FILENO) == 1, tcgetattr(STDIN_FILENO, &settings) == 0 else { return nil }
    original = settings
  }

  /// Shows `prompt` and reads one line; nil at Ctrl-D on an empty line or the end of input.
  public func readLine(prompt: String) -> String? {
    var raw = original
    // Bytes as they are typed, not echoed; Ctrl-C, Ctrl-D and Return come as bytes too.
    raw.c_lflag &= ~tcflag_t(ICANON | ECHO | ISIG | IEXTEN)
    raw.c_iflag &= ~tcflag_t(ICRNL | IXON)
    withUnsafeMutableBytes(of: &raw.c_cc) { controls in
      controls[Int(VMIN)] = 1
      controls[Int(VTIME)] = 0
    }
    tcsetattr(STDIN_FILENO, TCSADRAIN, &raw)
    defer {
      var original = original
      tcsetattr(STDIN_FILENO, TCSADRAIN, &original)
    }
    write(editor.rendering(prompt: prompt))
    while true {
      var byte: UInt8 = 0
      let count = read(STDIN_FILENO, &byte, 1)
      if count < 0, errno == EINTR { continue }
      guard count == 1 else { return nil }
      switch editor.feed(byte) {
      case .editing:
        write(editor.rendering(prompt: prompt))
      case .line(let line):
        write("\r\n")
        return line
      case .endOfInput:
        return nil
      case .interrupted:
        write("^C\r\n" + editor.rendering(prompt: prompt))
      }
    }
  }

  private func write(_ text: String) {
    FileHandle.standardOutput.write(Data(text.utf8))
  }
}
