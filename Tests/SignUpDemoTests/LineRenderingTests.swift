import Testing

@testable import SignUpDemo

/// What the editor draws, checked on a ``VirtualTerminal``: a line longer than the terminal
/// is wide wraps onto more rows, and every redraw must start from the prompt's row.
@Suite("Line editor on a terminal")
struct LineRenderingTests {
  private static let prompt = "[window 1] > "

  /// An editor and a renderer drawing into a terminal `width` columns wide, as the line
  /// reader does: one redraw after every byte.
  private struct Session {
    var editor = LineEditor()
    var renderer: LineRenderer
    var terminal: VirtualTerminal
    let width: Int

    init(width: Int, widths: TerminalWidths = TerminalWidths()) {
      self.width = width
      renderer = LineRenderer(widths: widths)
      terminal = VirtualTerminal(width: width, widths: widths)
      terminal.write(renderer.redraw(prompt: prompt, editor: editor, width: width))
    }

    mutating func type(_ input: String) {
      for byte in input.utf8 {
        _ = editor.feed(byte)
        terminal.write(renderer.redraw(prompt: prompt, editor: editor, width: width))
      }
    }

    /// How many rows show the prompt.
    var prompts: Int { terminal.rows.filter { $0.contains("[window 1] >") }.count }
  }

  /// 308 characters, none repeated for a while, so a misplaced row shows.
  private static let long = String((0..<308).map { Character(UnicodeScalar(0x61 + $0 % 26)!) })

  @Test("a long line leaves one prompt on screen at 80 and at 120 columns", arguments: [80, 120])
  func longLine(width: Int) {
    var session = Session(width: width)
    session.type(Self.long)
    #expect(session.prompts == 1)
    #expect(session.terminal.text == Self.prompt + Self.long)
    let end = (Self.prompt.count + Self.long.count)
    #expect(session.terminal.row == end / width)
    #expect(session.terminal.column == end % width)
  }

  @Test("editing inside a wrapped line redraws it in place, the cursor where the editor has it")
  func editWrapped() {
    var session = Session(width: 80)
    session.type(Self.long)
    session.type(String(repeating: "\u{1B}[D", count: 200) + "XYZ")
    var expected = Self.long
    expected.insert(contentsOf: "XYZ", at: expected.index(expected.startIndex, offsetBy: 108))
    #expect(session.editor.line == expected)
    #expect(session.prompts == 1)
    #expect(session.terminal.text == Self.prompt + expected)
    let cursor = Self.prompt.count + 111
    #expect(session.terminal.row == cursor / 80)
    #expect(session.terminal.column == cursor % 80)
    // Backspacing back onto one row leaves no stale rows below.
    session.type("\u{05}" + String(repeating: "\u{7F}", count: 311))
    #expect(session.terminal.rows == ["[window 1] >"])
  }

  @Test("a line that ends exactly at the right margin puts the cursor on the next row")
  func exactMargin() {
    var session = Session(width: 20)
    session.type(String(repeating: "x", count: 20 - Self.prompt.count))
    #expect(session.terminal.row == 1)
    #expect(session.terminal.column == 0)
    session.type("y")
    #expect(session.terminal.text == Self.prompt + String(repeating: "x", count: 7) + "y")
    #expect(session.prompts == 1)
  }

  @Test("wide characters count two columns; the cursor lands after what the editor has")
  func wideCharacters() {
    var session = Session(width: 80)
    session.type("a👩‍💻b中")
    #expect(session.terminal.column == Self.prompt.count + 6)
    session.type("\u{1B}[D\u{1B}[D")
    #expect(session.terminal.column == Self.prompt.count + 3)
    session.type("\u{1B}[D")
    #expect(session.terminal.column == Self.prompt.count + 1)
    #expect(session.terminal.text == Self.prompt + "a👩‍💻b中")
  }

  @Test("a wide character that does not fit in the last column goes to the next row")
  func wideAtMargin() {
    var session = Session(width: 16)
    session.type("ab中d")
    // "[window 1] > ab" fills 15 columns; 中 needs two, so the terminal wraps it.
    #expect(session.terminal.rows == [Self.prompt + "ab", "中d"])
    #expect(session.terminal.row == 1 && session.terminal.column == 3)
    session.type("\u{1B}[D\u{1B}[D")
    #expect(session.terminal.row == 1 && session.terminal.column == 0)
  }

  @Test("a wide character that wraps early leaves nothing behind in the last column")
  func wideWrapErasesMargin() {
    var session = Session(width: 16)
    // The x drawn in the last column must not stay there once 中 takes its place and wraps.
    session.type("abx\u{1B}[D中")
    #expect(session.terminal.rows == [Self.prompt + "ab", "中x"])
    #expect(session.prompts == 1)
  }

  @Test("Return and Ctrl-C leave the cursor below the whole line, not inside it")
  func leaving() {
    var session = Session(width: 20)
    session.type("abcdefghijkl\u{01}")
    #expect(session.terminal.row == 0)
    session.terminal.write(session.renderer.leave())
    #expect(session.terminal.row == 2 && session.terminal.column == 0)
    session.terminal.write("next")
    #expect(session.terminal.rows.last == "next")
    #expect(session.prompts == 1)
  }

  @Test(
    "emoji the terminal draws apart still leave one prompt, the cursor after the text",
    arguments: [TerminalWidths.tmux33, .xterm, TerminalWidths()])
  func emojiDrawnApart(widths: TerminalWidths) {
    var session = Session(width: 80, widths: widths)
    let line = "email " + String(repeating: "ab👍🏽é❤️👩‍💻", count: 30)
    session.type(line)
    #expect(session.prompts == 1)
    #expect(session.terminal.text == Self.prompt + line)
    session.type("\u{01}Z\u{05}" + String(repeating: "\u{1B}[D", count: 3) + "Y")
    #expect(session.prompts == 1)
    // The cursor is where the terminal drew what comes before it.
    var before = VirtualTerminal(width: 80, widths: widths)
    let line2 = session.editor.line
    before.write(Self.prompt + String(line2.prefix(session.editor.cursorPosition)))
    #expect(session.terminal.row == before.row && session.terminal.column == before.column)
    // A short line: the cursor does not pass its end.
    var short = Session(width: 80, widths: widths)
    short.type("a❤️b👍🏽")
    var drawn = VirtualTerminal(width: 80, widths: widths)
    drawn.write(Self.prompt + "a❤️b👍🏽")
    #expect(short.terminal.column == drawn.column)
  }
}
