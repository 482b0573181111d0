// How many terminal columns text takes, which the line editor needs to put the cursor where
// the terminal shows it and to know where a long line wraps, and the demo's output needs to
// fit 80 columns. A small table rather than a dependency: it covers what people type and
// what the demo prints (Latin, CJK, emoji). Terminals disagree about emoji sequences: by
// default each is one wide emoji; ``TerminalWidths`` describes a terminal that draws them apart.

extension Character {
  /// The columns a terminal gives this character: 2 for East Asian wide and fullwidth
  /// characters and for emoji (with their skin tones, joiners and flags), 0 for a combining
  /// mark or a joiner on its own, 1 otherwise.
  var displayWidth: Int { displayWidth(on: TerminalWidths()) }

  /// The columns `terminal` gives this character: the sum of its ``cells(on:)``.
  func displayWidth(on terminal: TerminalWidths) -> Int {
    cells(on: terminal).reduce(0) { $0 + $1.width }
  }

  /// The pieces of this character that `terminal` draws in cells of their own, with their
  /// columns: the whole character on a terminal that joins it, or its emoji and the skin
  /// tones or joined emoji after them on one that draws them apart. Each piece wraps to the
  /// next row on its own when it does not fit.
  func cells(on terminal: TerminalWidths) -> [(text: String, width: Int)] {
    var pieces: [String.UnicodeScalarView] = []
    var previous: Unicode.Scalar?
    for scalar in unicodeScalars {
      let apart =
        (!terminal.joinsEmojiModifiers && scalar.properties.isEmojiModifier)
        || (!terminal.joinsZeroWidthJoiner && previous == "\u{200D}")
      if pieces.isEmpty || apart { pieces.append(String.UnicodeScalarView()) }
      pieces[pieces.count - 1].append(scalar)
      previous = scalar
    }
    return pieces.map { piece in
      (String(piece), Self.width(of: piece, widensEmojiVariation: terminal.widensEmojiVariation))
    }
  }

  private static func width(of scalars: String.UnicodeScalarView, widensEmojiVariation: Bool)
    -> Int
  {
    guard let first = scalars.first else { return 0 }
    // An emoji, or a text symbol asked to show as one (U+FE0F), is drawn two columns wide;
    // the rest of its cluster (a skin tone, ZWJ and more emoji) draws over the same cells.
    if scalars.contains(where: \.properties.isEmojiPresentation)
      || (widensEmojiVariation && first.properties.isEmoji && scalars.contains("\u{FE0F}"))
    {
      return 2
    }
    return first.displayWidth
  }
}

extension Unicode.Scalar {
  /// The columns of a scalar drawn on its own.
  var displayWidth: Int {
    switch properties.generalCategory {
    case .nonspacingMark, .enclosingMark, .format, .control: return 0
    default: break
    }
    return Self.wideRanges.contains { $0.contains(value) } ? 2 : 1
  }

  /// East Asian Wide and Fullwidth blocks (Unicode's EastAsianWidth.txt, W and F, grouped).
  private static let wideRanges: [ClosedRange<UInt32>] = [
    0x1100...0x115F,  // Hangul Jamo initial consonants
    0x2E80...0x303E,  // CJK radicals, Kangxi, ideographic description, CJK punctuation
    0x3041...0x33FF,  // Hiragana, Katakana, Bopomofo, Hangul compatibility, CJK compatibility
    0x3400...0x4DBF,  // CJK extension A
    0x4E00...0x9FFF,  // CJK unified ideographs
    0xA000...0xA4CF,  // Yi
    0xA960...0xA97F,  // Hangul Jamo extended A
    0xAC00...0xD7A3,  // Hangul syllables
    0xF900...0xFAFF,  // CJK compatibility ideographs
    0xFE10...0xFE19,  // vertical forms
    0xFE30...0xFE6F,  // CJK compatibility forms, small form variants
    0xFF00...0xFF60,  // fullwidth forms (not the halfwidth ones after them)
    0xFFE0...0xFFE6,  // fullwidth signs
    0x1F300...0x1F64F,  // pictographs and emoticons drawn as emoji by default
    0x1F900...0x1F9FF,  // supplemental symbols and pictographs
    0x20000...0x2FFFD,  // CJK extensions B to F
    0x30000...0x3FFFD,  // CJK extension G and later
  ]
}

extension StringProtocol {
  /// The columns the text takes on one row of a terminal.
  var displayWidth: Int { reduce(0) { $0 + $1.displayWidth } }
}
