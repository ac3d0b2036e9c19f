import Foundation
import Testing

@testable import HeraldServer

/// The documentation cannot rot unseen: every relative link and `#anchor` of the README and `docs/`
/// resolves, and every setting the code knows is in `docs/configuration.md` and in
/// `ops/herald.yaml.sample`, which loads to the defaults. (`docs/cli.md` against the argument parser
/// is checked in HeraldCLITests, which run the built binaries.)
@Suite struct DocumentationTests {
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent()

    static func text(_ path: String) throws -> String {
        try String(contentsOf: root.appendingPathComponent(path), encoding: .utf8)
    }

    /// README.md and every page under docs/.
    static func pages() throws -> [String] {
        let docs = try FileManager.default.contentsOfDirectory(atPath: root.appendingPathComponent("docs").path)
        return ["README.md"] + docs.filter { $0.hasSuffix(".md") }.sorted().map { "docs/" + $0 }
    }

    @Test func everyRelativeLinkAndAnchorResolves() throws {
        var broken: [String] = []
        var checked = 0
        for page in try Self.pages() {
            let folder = (page as NSString).deletingLastPathComponent
            for target in MarkdownLinks.targets(in: try Self.text(page)) {
                guard !target.contains("://"), !target.hasPrefix("mailto:") else { continue }
                checked += 1
                let parts = target.split(separator: "#", maxSplits: 1, omittingEmptySubsequences: false)
                let pathPart = String(parts[0])
                let file = pathPart.isEmpty ? page : MarkdownLinks.normalized(folder, pathPart)
                guard FileManager.default.fileExists(atPath: Self.root.appendingPathComponent(file).path) else {
                    broken.append("\(page): \(target) (no file \(file))")
                    continue
                }
                guard parts.count == 2, file.hasSuffix(".md") else { continue }
                let anchors = MarkdownLinks.anchors(in: try Self.text(file))
                if !anchors.contains(String(parts[1])) { broken.append("\(page): \(target) (no such heading)") }
            }
        }
        #expect(checked > 50, "the pages link to each other")
        #expect(broken.isEmpty, "\(broken.joined(separator: "\n"))")
    }

    @Test func githubAnchorsAreComputedAsGitHubDoes() {
        let anchors = MarkdownLinks.anchors(
            in: "# Herald\n## 4.3 Pushes (APNs, FCM)\n```\n# not a heading\n```\n## Pushes\n## Pushes\n")
        #expect(anchors == ["herald", "43-pushes-apns-fcm", "pushes", "pushes-1"])
    }

    @Test func everySettingIsInTheConfigurationPageWithItsThreeSpellings() throws {
        let page = try Self.text("docs/configuration.md")
        let rows = page.split(separator: "\n").filter { $0.hasPrefix("| `") }
        var missing: [String] = []
        for setting in SettingTable.all {
            let row = "| `\(setting.key)` | `--\(setting.flag)` | `\(setting.environment)` |"
            if !rows.contains(where: { $0.hasPrefix(row) }) { missing.append(row) }
        }
        #expect(missing.isEmpty, "rows missing from docs/configuration.md:\n\(missing.joined(separator: "\n"))")
    }

    @Test func theSampleConfigurationHasEveryKeyAndLoadsToTheDefaults() async throws {
        let sample = try Self.text("ops/herald.yaml.sample")
        let keys = SampleKeys.keys(in: sample)
        let known = Set(SettingTable.all.map(\.key))
        #expect(known.subtracting(keys).sorted() == [], "keys missing from ops/herald.yaml.sample")
        #expect(keys.subtracting(known).sorted() == [], "keys in the sample that herald does not know")
        let loaded = try await ConfigurationLoader.load(
            configFile: Self.root.appendingPathComponent("ops/herald.yaml.sample").path)
        #expect(loaded == HeraldSettings(), "the sample's values are the defaults")
    }
}

/// The sample's keys, commented out or not. Each key's line follows its `# --flag, HERALD_…` line; a
/// section is a top-level `name:` (or `# name:`) with no value.
enum SampleKeys {
    static func keys(in text: String) -> Set<String> {
        var keys = Set<String>()
        var section: String?
        var previous = ""
        for line in text.split(separator: "\n", omittingEmptySubsequences: false) {
            defer { previous = line.trimmingCharacters(in: .whitespaces) }
            let indented = line.hasPrefix("  ")
            var body = line.trimmingCharacters(in: .whitespaces)
            if body.hasPrefix("# ") { body.removeFirst(2) }
            guard let colon = body.firstIndex(of: ":") else { continue }
            let name = String(body[..<colon])
            guard !name.isEmpty, name.allSatisfy({ $0.isLetter || $0.isNumber }) else { continue }
            let value = body[body.index(after: colon)...].trimmingCharacters(in: .whitespaces)
            if !indented && (value.isEmpty || value.hasPrefix("#")) {
                section = name
            } else if previous.hasPrefix("# --") {
                keys.insert(indented ? (section ?? "") + "." + name : name)
                if !indented { section = nil }
            }
        }
        return keys
    }
}

/// Links and headings of a Markdown page as GitHub renders them: fenced code and code spans hold none.
enum MarkdownLinks {
    /// The targets of `[text](target)` links outside code.
    static func targets(in text: String) -> [String] {
        var targets: [String] = []
        for line in proseLines(text) {
            let chars = Array(stripCodeSpans(line))
            var index = 0
            while index < chars.count {
                if chars[index] == "]", index + 1 < chars.count, chars[index + 1] == "(",
                    let close = chars[(index + 2)...].firstIndex(of: ")")
                {
                    let target = String(chars[(index + 2)..<close]).split(separator: " ").first.map(String.init) ?? ""
                    if !target.isEmpty { targets.append(target) }
                    index = close
                }
                index += 1
            }
        }
        return targets
    }

    /// Every heading's anchor, in order, with GitHub's `-1`, `-2` for repeats.
    static func anchors(in text: String) -> [String] {
        var seen: [String: Int] = [:]
        var anchors: [String] = []
        for line in proseLines(text) where line.hasPrefix("#") {
            let title = line.drop { $0 == "#" }
            guard title.hasPrefix(" ") else { continue }
            let slug = slug(String(title))
            let count = seen[slug, default: 0]
            seen[slug] = count + 1
            anchors.append(count == 0 ? slug : "\(slug)-\(count)")
        }
        return anchors
    }

    /// GitHub's: lowercase, letters, digits, `-` and `_` kept, spaces to `-`, everything else dropped.
    static func slug(_ title: String) -> String {
        let trimmed = title.trimmingCharacters(in: .whitespaces)
        var out = ""
        for character in trimmed.lowercased() {
            if character == " " {
                out.append("-")
            } else if character.isLetter || character.isNumber || character == "-" || character == "_" {
                out.append(character)
            }
        }
        return out
    }

    /// `folder/path` with `.` and `..` resolved, relative to the repository.
    static func normalized(_ folder: String, _ path: String) -> String {
        var parts = folder.isEmpty ? [] : folder.split(separator: "/").map(String.init)
        for part in path.split(separator: "/").map(String.init) {
            if part == ".." { if !parts.isEmpty { parts.removeLast() } } else if part != "." { parts.append(part) }
        }
        return parts.joined(separator: "/")
    }

    /// The lines outside fenced code blocks.
    private static func proseLines(_ text: String) -> [String] {
        var inFence = false
        var lines: [String] = []
        for line in text.split(separator: "\n", omittingEmptySubsequences: false) {
            if line.trimmingCharacters(in: .whitespaces).hasPrefix("```") {
                inFence.toggle()
                continue
            }
            if !inFence { lines.append(String(line)) }
        }
        return lines
    }

    private static func stripCodeSpans(_ line: String) -> String {
        var out = ""
        var inCode = false
        for character in line {
            if character == "`" {
                inCode.toggle()
            } else if !inCode {
                out.append(character)
            }
        }
        return out
    }
}
