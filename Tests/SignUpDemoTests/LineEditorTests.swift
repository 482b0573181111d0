import Testing

@testable import SignUpDemo

@Suite("Line editor")
struct LineEditorTests {
  /// Feeds `input` byte by byte; returns the outcomes that ended or abandoned a line, and
  /// the editor as it was left.
  private func type(_ input: String, into editor: inout LineEditor) -> [LineEditor.Outcome] {
    input.utf8.map { editor.feed($0) }.filter { $0 != .editing }
  }

  private func type(_ input: String) -> (outcomes: [LineEditor.Outcome], editor: LineEditor) {
    var editor = LineEditor()
    let outcomes = type(input, into: &editor)
    return (outcomes, editor)
  }

  @Test(
    "arrow keys, Home, End, Backspace and Delete edit the line",
    arguments: [
      ("stat\u{1B}[D\u{1B}[DX\r", "stXat"),  // left, left, insert
      ("stat\u{1B}OD\u{1B}OCus\r", "status"),  // the application-mode arrows
      ("tatus\u{1B}[Hs\r", "status"),  // Home
      ("sttus\u{01}\u{1B}[C\u{1B}[Ca\u{05}!\r", "status!"),  // Ctrl-A, right, right, Ctrl-E
      ("statux\u{7F}s\r", "status"),  // Backspace
      ("sstatus\u{1B}[H\u{1B}[3~\r", "status"),  // Home, Delete
      ("junk\u{15}status\r", "status"),  // Ctrl-U cuts to the start
      ("status junk\u{1B}[D\u{1B}[D\u{1B}[D\u{1B}[D\u{1B}[D\u{0B}\r", "status"),  // Ctrl-K
      ("st\u{1B}[15~atus\u{1B}[1;5D\u{1B}]0;title\u{07}\r", "status"),  // others dropped whole
      ("Jo\u{E9}\u{1B}[D\u{1B}[D\u{2713}\u{1B}[F\u{7F}s\r", "J\u{2713}os"),  // by character
    ])
  func editing(input: String, line: String) {
    let (outcomes, _) = type(input)
    #expect(outcomes == [.line(line)])
  }

  @Test("the rendering redraws the row and puts the cursor where the editor has it")
  func rendering() {
    let (_, editor) = type("status\u{1B}[D\u{1B}[D")
    #expect(editor.line == "status")
    #expect(editor.cursorPosition == 4)
    var renderer = LineRenderer()
    #expect(
      renderer.redraw(prompt: "> ", editor: editor, width: 80) == "\r> status\u{1B}[J\r\u{1B}[6C")
    let (_, atEnd) = type("status")
    #expect(renderer.redraw(prompt: "> ", editor: atEnd, width: 80) == "\r> status\u{1B}[J")
  }

  @Test("Ctrl-D ends the input on an empty line and deletes under the cursor otherwise")
  func controlD() {
    #expect(type("\u{04}").outcomes == [.endOfInput])
    #expect(type("statusx\u{1B}[D\u{04}\r").outcomes == [.line("status")])
  }

  @Test("Ctrl-C abandons the line and the next one starts empty")
  func controlC() {
    #expect(type("junk\u{03}status\r").outcomes == [.interrupted, .line("status")])
  }

  @Test(
    "Up and Down recall earlier lines",
    arguments: [
      ("\u{1B}[A\r", "status"), ("\u{1B}[A\u{1B}[A\r", "start"),
      ("\u{1B}[A\u{1B}[A\u{1B}[A\r", "start"), ("\u{1B}[A\u{1B}[A\u{1B}[B\r", "status"),
      ("\u{1B}[A\u{1B}[B\r", ""), ("\u{1B}OA\r", "status"),
    ])
  func history(keys: String, line: String) {
    var editor = LineEditor()
    _ = type("start\rstatus\r", into: &editor)
    #expect(type(keys, into: &editor) == [.line(line)])
  }
}
