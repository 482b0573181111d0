import Greeting

/// Runs the `greet` command with the process's arguments.
@main enum Tool {
  static func main() async {
    await Greet.main()
  }
}
