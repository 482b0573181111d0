/// Draws a ``LineEditor``'s line after its prompt on a terminal, however long it is.
///
/// A line wider than the terminal wraps onto the rows below, so redrawing it from `\r` would
/// start on the row the cursor is in, which is not the prompt's once the line has wrapped:
/// each keystroke would leave one more prompt on screen. The renderer remembers which row of
/// the line it left the cursor in, goes back up to the prompt's row, redraws prompt and line,
/// erases what a longer line left below, and puts the cursor where the editor has it. Rows
/// come from the terminal's width and each character's display width, as the terminal
/// counts them: wide characters take two columns, and one that does not fit in the last
/// column starts the next row.
public struct LineRenderer {
  /// Where the line ends and where the cursor is, relative to the start of the prompt.
  private struct Position: Equatable {
    var row = 0
    var column = 0
  }

  /// Where the last redraw left the terminal's cursor and the end of the line.
  private var cursor = Position()
  private var end = Position()

  /// How the terminal draws the emoji terminals disagree about.
  public let widths: TerminalWidths

  /// Nothing drawn yet: the terminal's cursor is at the start of an empty row. `widths` says
  /// how the terminal draws emoji sequences: ``TerminalLineReader`` asks it.
  public init(widths: TerminalWidths = TerminalWidths()) { self.widths = widths }

  /// What to write to draw `prompt` and the editor's line on a terminal `width` columns wide,
  /// in place of what the last redraw drew.
  public mutating func redraw(prompt: String, editor: LineEditor, width: Int) -> String {
    let characters = Array(prompt) + Array(editor.line)
    let (starts, text) = Self.layout(characters, width: max(1, width), widths: widths)
    let end = starts.last!
    let target = starts[prompt.count + editor.cursorPosition]
    var output = cursor.row > 0 ? "\u{1B}[\(cursor.row)A" : ""
    output += "\r" + text
    // A line that ends in the last column leaves the terminal's cursor there, waiting to
    // wrap; where the next character would go is the start of the next row, so go there
    // (and an erase from the last column would take the last character with it).
    if end.column == 0, end.row > 0 { output += "\r\n" }
    // Erases the rest of the row and every row below: what a longer line left.
    output += "\u{1B}[J"
    if target != end {
      if end.row > target.row { output += "\u{1B}[\(end.row - target.row)A" }
      output += "\r" + (target.column > 0 ? "\u{1B}[\(target.column)C" : "")
    }
    cursor = target
    self.end = end
    return output
  }

  /// What to write to leave the line for good (Return, Ctrl-C): the cursor goes below its
  /// end, after `mark` (`^C`), so that what comes next starts on a row of its own.
  public mutating func leave(mark: String = "") -> String {
    var output = end.row > cursor.row ? "\u{1B}[\(end.row - cursor.row)B" : ""
    output += end.column > 0 ? "\r\u{1B}[\(end.column)C" : "\r"
    // A line that filled its last row already moved the cursor to a new one.
    output += mark + (end.column == 0 && end.row > 0 && mark.isEmpty ? "" : "\r\n")
    self = LineRenderer(widths: widths)
    return output
  }

  /// Where each character starts, and then where the next one would (the end), as a terminal
  /// `width` columns wide that draws emoji as `widths` says lays them out; and the text to
  /// write. A wide character that does not fit in the last column leaves it as it was, so
  /// the text erases the rest of the row before it: an earlier redraw may have drawn there.
  private static func layout(
    _ characters: [Character], width: Int, widths: TerminalWidths
  ) -> (starts: [Position], text: String) {
    var position = Position()
    var starts: [Position] = []
    var text = ""
    starts.reserveCapacity(characters.count + 1)
    for character in characters {
      var start: Position?
      // A terminal that draws a skin tone or a joined emoji apart wraps each on its own.
      for cell in character.cells(on: widths) {
        if position.column + cell.width > width {
          if position.column < width { text += "\u{1B}[K" }
          position = Position(row: position.row + 1, column: 0)
        }
        if start == nil { start = position }
        position.column += cell.width
        text += cell.text
      }
      starts.append(start ?? position)
    }
    if position.column >= width { position = Position(row: position.row + 1, column: 0) }
    starts.append(position)
    return (starts, text)
  }
}
