import Foundation
import Testing

/// `docs/cli.md` names every command and subcommand of `herald` and `herald-dev`, and every option
/// they take, as the argument parser knows them (`--experimental-dump-help`, ArgumentParser's
/// description of the whole command tree): a command added without its documentation fails here.
@Suite struct CLIDocumentationTests {
    static let page = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("docs/cli.md")

    /// Each command's full name (`herald channel add`) with its long options (`--database`).
    static func commands(of executable: String) throws -> [(name: String, options: [String])] {
        let output = try CLIRunner(executable: executable).run(["--experimental-dump-help"])
        #expect(output.status == 0, "\(output.stderr)")
        let root = try #require(
            try JSONSerialization.jsonObject(with: Data(output.stdout.utf8)) as? [String: Any])
        var found: [(name: String, options: [String])] = []
        func walk(_ command: [String: Any], path: [String]) {
            let name = path + [command["commandName"] as? String ?? "?"]
            let arguments = command["arguments"] as? [[String: Any]] ?? []
            let options = arguments.flatMap { argument in
                (argument["names"] as? [[String: Any]] ?? []).compactMap { name -> String? in
                    guard name["kind"] as? String == "long", let text = name["name"] as? String else { return nil }
                    return "--" + text
                }
            }
            if name.last != "help" { found.append((name.joined(separator: " "), options)) }
            for sub in command["subcommands"] as? [[String: Any]] ?? [] { walk(sub, path: name) }
        }
        walk(try #require(root["command"] as? [String: Any]), path: [])
        return found
    }

    @Test(arguments: ["herald", "herald-dev"])
    func everyCommandAndOptionIsInTheCLIPage(executable: String) throws {
        let page = try String(contentsOf: Self.page, encoding: .utf8)
        let commands = try Self.commands(of: executable)
        #expect(commands.count > (executable == "herald" ? 30 : 8), "the command tree was read")
        var missing: [String] = []
        for command in commands {
            if !page.contains(command.name) { missing.append(command.name) }
            for option in command.options where !["--help", "--version"].contains(option) {
                if !page.contains(option) { missing.append("\(command.name) \(option)") }
            }
        }
        #expect(missing.isEmpty, "not in docs/cli.md:\n\(missing.joined(separator: "\n"))")
    }
}
