/// How the terminal at hand draws the emoji that terminals disagree about, which the line
/// renderer must know to count the rows a long line takes and to put the cursor after what
/// is on screen. Terminals that cluster graphemes (kitty, WezTerm, iTerm2, Ghostty) draw a
/// skin-toned emoji, a ZWJ sequence and a symbol with U+FE0F as one 2-column emoji, the
/// default here; tmux 3.3 draws `👍🏽` as two emoji (4 columns) and `❤️` in 1 column, and xterm
/// also draws `👩‍💻` as two. ``TerminalLineReader`` asks the terminal with ``probe``.
public struct TerminalWidths: Equatable, Sendable {
  /// `👍🏽` is one emoji, not a thumb and then a colour swatch.
  public var joinsEmojiModifiers = true
  /// `👩‍💻` is one emoji, not a woman and then a laptop.
  public var joinsZeroWidthJoiner = true
  /// `❤️` (U+2764 U+FE0F) takes two columns, not the one of `❤`.
  public var widensEmojiVariation = true

  /// A terminal that draws every emoji sequence as one wide emoji.
  public init() {}

  /// Draws each emoji that terminals disagree about at the start of the row and asks where
  /// the cursor went (DSR, `ESC [ 6 n`), then erases it. The terminal answers `ESC [ row ;
  /// column R` for each; give the columns to ``init(probedColumns:)``.
  public static let probe =
    ["👍🏽", "👩‍💻", "❤️"].map { "\r" + $0 + "\u{1B}[6n" }.joined() + "\r\u{1B}[K"

  /// What the terminal's answers to ``probe`` say, given their 1-based columns in order; nil
  /// unless there are all three.
  public init?(probedColumns columns: [Int]) {
    guard columns.count == 3 else { return nil }
    joinsEmojiModifiers = columns[0] - 1 <= 2
    joinsZeroWidthJoiner = columns[1] - 1 <= 2
    widensEmojiVariation = columns[2] - 1 >= 2
  }

  /// The column in a cursor position report, `ESC [ row ; column R`, or nil if `bytes` are
  /// not one.
  public static func column(inReport bytes: [UInt8]) -> Int? {
    guard bytes.count >= 6, bytes.starts(with: [0x1B, UInt8(ascii: "[")]),
      bytes.last == UInt8(ascii: "R")
    else { return nil }
    let fields = bytes.dropFirst(2).dropLast().split(separator: UInt8(ascii: ";"))
    guard fields.count == 2, Int(String(decoding: fields[0], as: UTF8.self)) != nil else {
      return nil
    }
    return Int(String(decoding: fields[1], as: UTF8.self))
  }
}
