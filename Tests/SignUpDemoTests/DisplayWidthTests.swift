import Testing

@testable import SignUpDemo

@Suite("Display width")
struct DisplayWidthTests {
  @Test(
    "a character takes the columns a terminal gives it",
    arguments: [
      ("a", 1), ("é", 1), ("e\u{301}", 1), ("\u{301}", 0), ("\u{200D}", 0), ("✓", 1), ("▸", 1),
      ("中", 2), ("한", 2), ("Ａ", 2), ("ｱ", 1), ("👍", 2), ("👍🏽", 2), ("👩‍💻", 2), ("🇫🇷", 2),
      ("❤️", 2), ("❤", 1),
    ] as [(Character, Int)])
  func character(character: Character, width: Int) {
    #expect(character.displayWidth == width)
  }

  @Test("a string's width is the sum of its characters'")
  func string() {
    #expect("[window 1] > ".displayWidth == 13)
    #expect("a中👩‍💻e\u{301}".displayWidth == 6)
    #expect("".displayWidth == 0)
  }

  @Test(
    "a terminal that draws a sequence apart gives each emoji its own cells",
    arguments: [
      ("👍🏽", TerminalWidths.tmux33, [2, 2]), ("👩‍💻", .tmux33, [2]), ("❤️", .tmux33, [1]),
      ("👩‍💻", .xterm, [2, 2]), ("e\u{301}", .xterm, [1]), ("👍🏽", TerminalWidths(), [2]),
    ] as [(Character, TerminalWidths, [Int])])
  func cells(character: Character, widths: TerminalWidths, cells: [Int]) {
    #expect(character.cells(on: widths).map(\.width) == cells)
    #expect(character.cells(on: widths).map(\.text).joined() == String(character))
  }

  @Test("the terminal's answers to the probe say how it draws emoji sequences")
  func probe() {
    let report = Array("\u{1B}[12;5R".utf8)
    #expect(TerminalWidths.column(inReport: report) == 5)
    #expect(TerminalWidths.column(inReport: Array("\u{1B}[D".utf8)) == nil)
    // tmux 3.3: 👍🏽 four columns, 👩‍💻 two, ❤️ one; the cursor starts in column 1.
    #expect(TerminalWidths(probedColumns: [5, 3, 2]) == .tmux33)
    #expect(TerminalWidths(probedColumns: [5, 5, 2]) == .xterm)
    #expect(TerminalWidths(probedColumns: [3, 3, 3]) == TerminalWidths())
    #expect(TerminalWidths(probedColumns: [3]) == nil)
  }
}
