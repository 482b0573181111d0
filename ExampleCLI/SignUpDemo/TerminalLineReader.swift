import Foundation

/// Reads lines from a terminal with a ``LineEditor``: the terminal is switched to
/// character-at-a-time input without echo only while a line is read, so commands print
/// with the terminal as it was, and a crash while one runs leaves it usable.
public final class TerminalLineReader {
  private let original: termios
  private var editor = LineEditor()
  private var renderer = LineRenderer()
  /// Whether the terminal was asked how it draws emoji; what was typed meanwhile.
  private var probed = false
  private var typedAhead: [UInt8] = []

  /// A reader for standard input, or nil when it is not a terminal.
  public init?() {
    var settings = termios()
    guard isatty(STDIN_FILENO) == 1, tcgetattr(STDIN_FILENO, &settings) == 0 else { return nil }
    original = settings
  }

  /// Shows `prompt` and reads one line; nil at Ctrl-D on an empty line or the end of input.
  public func readLine(prompt: String) -> String? {
    var raw = original
    // Bytes as they are typed, not echoed; Ctrl-C, Ctrl-D and Return come as bytes too.
    raw.c_lflag &= ~tcflag_t(ICANON | ECHO | ISIG | IEXTEN)
    raw.c_iflag &= ~tcflag_t(ICRNL | IXON)
    withUnsafeMutableBytes(of: &raw.c_cc) { controls in
      controls[Int(VMIN)] = 1
      controls[Int(VTIME)] = 0
    }
    tcsetattr(STDIN_FILENO, TCSADRAIN, &raw)
    defer {
      var original = original
      tcsetattr(STDIN_FILENO, TCSADRAIN, &original)
    }
    if !probed {
      probed = true
      renderer = LineRenderer(widths: probeWidths())
    }
    write(renderer.redraw(prompt: prompt, editor: editor, width: columns))
    while true {
      guard let byte = typedAhead.isEmpty ? readByte() : typedAhead.removeFirst() else {
        return nil
      }
      switch editor.feed(byte) {
      case .editing:
        write(renderer.redraw(prompt: prompt, editor: editor, width: columns))
      case .line(let line):
        write(renderer.leave())
        return line
      case .endOfInput:
        return nil
      case .interrupted:
        write(renderer.leave(mark: "^C"))
        write(renderer.redraw(prompt: prompt, editor: editor, width: columns))
      }
    }
  }

  /// Asks the terminal how it draws the emoji terminals disagree about (see
  /// ``TerminalWidths/probe``); keeps what was typed meanwhile. A terminal that does not
  /// answer within half a second gets the default.
  private func probeWidths() -> TerminalWidths {
    write(TerminalWidths.probe)
    var columns: [Int] = []
    var report: [UInt8] = []
    while columns.count < 3, let byte = readByte(timeoutMilliseconds: 500) {
      if report.isEmpty, byte != 0x1B {
        typedAhead.append(byte)
        continue
      }
      report.append(byte)
      if let column = TerminalWidths.column(inReport: report) {
        columns.append(column)
        report = []
      } else if report.count > 2, !(0x30...0x3B).contains(byte) || report[1] != UInt8(ascii: "[") {
        // Not a report: a key typed meanwhile, such as an arrow.
        typedAhead += report
        report = []
      }
    }
    typedAhead += report
    return TerminalWidths(probedColumns: columns) ?? TerminalWidths()
  }

  /// The next byte of input; nil at its end, or after `timeoutMilliseconds` without one.
  private func readByte(timeoutMilliseconds: Int32? = nil) -> UInt8? {
    while true {
      if let timeoutMilliseconds {
        var ready = pollfd(fd: STDIN_FILENO, events: Int16(POLLIN), revents: 0)
        let count = poll(&ready, 1, timeoutMilliseconds)
        if count < 0, errno == EINTR { continue }
        guard count == 1 else { return nil }
      }
      var byte: UInt8 = 0
      let count = read(STDIN_FILENO, &byte, 1)
      if count < 0, errno == EINTR { continue }
      return count == 1 ? byte : nil
    }
  }

  /// The terminal's width now, asked at every redraw so that a resized window is drawn
  /// for its new width; 80 if the terminal does not say.
  private var columns: Int {
    var size = winsize()
    guard ioctl(STDOUT_FILENO, UInt(TIOCGWINSZ), &size) == 0, size.ws_col > 0 else { return 80 }
    return Int(size.ws_col)
  }

  private func write(_ text: String) {
    FileHandle.standardOutput.write(Data(text.utf8))
  }
}
