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
}
