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
