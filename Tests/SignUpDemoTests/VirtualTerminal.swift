@testable import SignUpDemo

/// Just enough of a terminal to check what the line editor draws: it interprets the bytes a
/// real one would (text that wraps at the right margin, wide characters that do not fit moving
/// to the next row, `\r`, `\n`, cursor moves, erasing) into a grid, so a test can ask what is
/// on screen after many redraws rather than compare escape sequences one by one.
///
/// Like xterm and tmux, a character written in the last column leaves the cursor there with
/// a wrap pending; the next character wraps, while a cursor move or an erase acts on the
/// last column. The screen grows downwards without limit: scrolling changes nothing here.
struct VirtualTerminal {
  let width: Int
  private var grid: [[String]] = [[]]
  private(set) var row = 0
  /// The cursor's column; `width` means a wrap is pending.
  private(set) var column = 0

  /// How this terminal draws emoji sequences: ``TerminalWidths/tmux33`` splits some.
  let widths: TerminalWidths

  init(width: Int, widths: TerminalWidths = TerminalWidths()) {
    self.width = width
    self.widths = widths
  }

  /// The rows, blanks at their end trimmed, empty rows at the bottom dropped.
  var rows: [String] {
    var rows = grid.map { $0.joined().trimmingTrailingSpaces }
    while rows.last == "" { rows.removeLast() }
    return rows
  }

  /// What a user sees: the rows joined, as if the wrapped line were one.
  var text: String { rows.joined() }

  mutating func write(_ output: String) {
    var characters = output[...]
    while let character = characters.popFirst() {
      guard character == "\u{1B}" else {
        put(character)
        continue
      }
      guard characters.popFirst() == "[" else { continue }
      let digits = characters.prefix { $0.isNumber }
      characters = characters.dropFirst(digits.count)
      let count = Int(digits) ?? 1
      switch characters.popFirst() {
      case "A": moveTo(row: max(0, row - count), column: min(column, width - 1))
      case "B": moveTo(row: row + count, column: min(column, width - 1))
      case "C": moveTo(row: row, column: min(width - 1, column + count))
      case "D": moveTo(row: row, column: max(0, min(column, width - 1) - count))
      case "K": erase(row: row, from: min(column, width - 1))
      case "J":
        erase(row: row, from: min(column, width - 1))
        grid.removeSubrange(min(grid.count, row + 1)...)
      default: break
      }
    }
  }

  private mutating func put(_ character: Character) {
    switch character {
    case "\r": column = 0
    case "\n", "\r\n":
      // Like a terminal with ONLCR set (the line reader leaves output processing on).
      moveTo(row: row + 1, column: 0)
    default:
      for cell in character.cells(on: widths) { put(cell.text, width: cell.width) }
    }
  }

  /// Puts what the terminal draws in one cell (or two, for a wide one) at the cursor.
  private mutating func put(_ text: String, width characterWidth: Int) {
    guard characterWidth > 0 else {
      // A combining mark joins the cell before it.
      let previous = max(0, min(column, width) - 1)
      ensure(row: row, column: previous)
      grid[row][previous] += text
      return
    }
    if column + characterWidth > width { moveTo(row: row + 1, column: 0) }
    ensure(row: row, column: column + characterWidth - 1)
    grid[row][column] = text
    // The second cell of a wide character shows nothing of its own.
    if characterWidth == 2 { grid[row][column + 1] = "" }
    column += characterWidth
  }

  private mutating func moveTo(row: Int, column: Int) {
    self.row = row
    self.column = column
    ensure(row: row, column: -1)
  }

  private mutating func ensure(row: Int, column: Int) {
    while grid.count <= row { grid.append([]) }
    while grid[row].count <= column { grid[row].append(" ") }
  }

  private mutating func erase(row: Int, from column: Int) {
    guard row < grid.count, column < grid[row].count else { return }
    grid[row].removeSubrange(column...)
  }
}

extension TerminalWidths {
  /// How tmux 3.3 draws them: a skin tone apart from its emoji, U+FE0F ignored.
  static let tmux33 = {
    var widths = TerminalWidths()
    widths.joinsEmojiModifiers = false
    widths.widensEmojiVariation = false
    return widths
  }()
  /// How xterm draws them: every emoji of a sequence apart, U+FE0F ignored.
  static let xterm = {
    var widths = TerminalWidths.tmux33
    widths.joinsZeroWidthJoiner = false
    return widths
  }()
}

extension String {
  fileprivate var trimmingTrailingSpaces: String {
    String(reversed().drop { $0 == " " }.reversed())
  }
}
