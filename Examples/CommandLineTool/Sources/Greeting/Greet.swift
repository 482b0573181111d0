import ArgumentParser
import ProviderPod

/// `greet NAME`: greets someone as the hour of the day asks.
public struct Greet: AsyncParsableCommand {
  /// The command's name and help.
  public static let configuration = CommandConfiguration(
    commandName: "greet", abstract: "Greets someone as the hour of the day asks.")

  @Argument(help: "Who to greet.")
  var name: String

  /// Made by ArgumentParser, from the command line.
  public init() {}

  /// Greets, through the app's pod.
  public func run() async throws {
    let greeter = appPod.resolve(greeterProvider)
    appPod.resolve(outputProvider).write(greeter.greet(name))
  }
}
