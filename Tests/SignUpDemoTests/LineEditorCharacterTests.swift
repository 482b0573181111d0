import Testing

@testable import SignUpDemo

/// The editor moves and erases by `Character`, what a reader sees as one letter or emoji,
/// never by the Unicode scalars it is made of; and it keeps the line being typed while Up
/// and Down browse the history.
@Suite("Line editor: characters and the draft")
struct LineEditorCharacterTests {
  private func type(_ input: String, into editor: inout LineEditor) -> [LineEditor.Outcome] {
    input.utf8.map { editor.feed($0) }.filter { $0 != .editing }
  }

  private func finished(_ input: String) -> [LineEditor.Outcome] {
    var editor = LineEditor()
    return type(input, into: &editor)
  }

  private static let left = "\u{1B}[D"
  private static let right = "\u{1B}[C"

  @Test(
    "Left, Right, Backspace and Delete step over a whole character",
    arguments: [
      // A ZWJ sequence: woman, ZWJ, laptop.
      ("a👩‍💻b" + left + left + "X\r", "aX👩‍💻b"),
      ("a👩‍💻b" + left + "\u{7F}\r", "ab"),
      // An emoji and its skin tone.
      ("👍🏽" + left + "X\r", "X👍🏽"),
      ("x👍🏽\u{7F}\r", "x"),
      ("👍🏽y\u{01}\u{1B}[3~\r", "y"),
      // A decomposed é: e and a combining acute accent.
      ("cafe\u{301}" + left + "X\r", "cafXe\u{301}"),
      ("e\u{301}x" + left + left + right + "Y\r", "e\u{301}Yx"),
      // A flag: two regional indicators.
      ("🇫🇷!" + left + left + "X\r", "X🇫🇷!"),
    ])
  func graphemes(input: String, line: String) {
    let outcomes = finished(input)
    #expect(outcomes == [.line(line)])
    if case .line(let typed) = outcomes.first {
      // Canonical equivalence would hide a scalar in the wrong place.
      #expect(Array(typed.unicodeScalars) == Array(line.unicodeScalars))
    }
  }

  @Test("the cursor counts characters and never passes the end of the line")
  func cursorInCharacters() {
    var editor = LineEditor()
    _ = type("a👩‍💻b👍🏽" + Self.right + Self.right, into: &editor)
    #expect(editor.cursorPosition == 4)
    _ = type(Self.left + Self.left, into: &editor)
    #expect(editor.cursorPosition == 2)
  }

  @Test(
    "Up then Down brings back the line being typed, as shells do",
    arguments: [
      ("sta\u{1B}[A\u{1B}[B\r", "sta"),
      ("sta\u{1B}[A\u{1B}[A\u{1B}[B\u{1B}[B\r", "sta"),
      ("sta\u{1B}[A\u{1B}[B\u{1B}[B\r", "sta"),
      ("sta\u{1B}[A\r", "status"),
    ])
  func draft(keys: String, line: String) {
    var editor = LineEditor()
    _ = type("start\rstatus\r", into: &editor)
    #expect(type(keys, into: &editor) == [.line(line)])
  }
}
