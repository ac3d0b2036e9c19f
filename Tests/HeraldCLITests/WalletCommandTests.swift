import Foundation
import HeraldCore
import Testing

@Suite struct WalletCommandTests {
    @Test func createListAddressExportRoundTrip() throws {
        let cli = try CLIRunner()
        defer { cli.cleanUp() }
        let created = try cli.run(["wallet", "create", "--light", "--json"])
        #expect(created.status == 0, "\(created.stderr)")
        let row = try JSONSerialization.jsonObject(with: Data(created.stdout.utf8)) as? [String: String]
        let address = try #require(row?["address"])
        #expect(row?["name"] == "default")

        let listed = try cli.run(["--json", "wallet", "list"])
        #expect(listed.status == 0)
        #expect(listed.stdout.contains(address))
        #expect(try cli.run(["wallet", "address"]).stdout == address + "\n")

        let exported = try cli.run(["wallet", "export"])
        let keystore = try Keystore(json: Array(exported.stdout.utf8))
        #expect(try keystore.decrypt(passphrase: "correct horse ✓").address.checksummed == address)
    }

    @Test func keystoreFilesArePrivateAndGethNamed() throws {
        let cli = try CLIRunner()
        defer { cli.cleanUp() }
        #expect(try cli.run(["wallet", "create", "--light", "--name", "alpha"]).status == 0)
        let folder = cli.home.appendingPathComponent("keystore")
        let files = try FileManager.default.contentsOfDirectory(atPath: folder.path).filter { !$0.hasPrefix(".") }
        #expect(files.count == 1)
        let file = try #require(files.first)
        #expect(file.hasPrefix("UTC--") && file.count == "UTC--2026-11-22T01-18-51.399659395Z--".count + 40)
        let fileMode =
            try FileManager.default.attributesOfItem(atPath: folder.appendingPathComponent(file).path)[
                .posixPermissions] as? Int
        let folderMode = try FileManager.default.attributesOfItem(atPath: folder.path)[.posixPermissions] as? Int
        #expect(fileMode == 0o600)
        #expect(folderMode == 0o700)
    }

    @Test func defaultNamesCountUpAndDuplicatesAreRefused() throws {
        let cli = try CLIRunner()
        defer { cli.cleanUp() }
        #expect(try cli.run(["wallet", "create", "--light"]).status == 0)
        #expect(try cli.run(["wallet", "create", "--light"]).stdout.contains("default-2"))
        let duplicate = try cli.run(["wallet", "create", "--light", "--name", "default"])
        #expect(duplicate.status == 64)
        #expect(duplicate.stderr.hasPrefix("error: "))
        let ambiguous = try cli.run(["wallet", "address"])
        #expect(ambiguous.status == 64)
        #expect(try cli.run(["wallet", "address", "default-2"]).status == 0)
        var selected = cli
        selected.environment["HERALD_WALLET"] = "default-2"
        #expect(try selected.run(["wallet", "address"]).status == 0)
    }

    @Test func wrongPassphraseExitsTwoWithOneLine() throws {
        let cli = try CLIRunner()
        defer { cli.cleanUp() }
        #expect(try cli.run(["wallet", "create", "--light"]).status == 0)
        var wrong = cli
        wrong.environment["HERALD_PASSPHRASE"] = "not it"
        let result = try wrong.run(["wallet", "export", "--show-private-key"])
        #expect(result.status == 2)
        #expect(result.stderr.split(separator: "\n").count == 1)
        #expect(result.stdout.isEmpty)
    }

    @Test func importOfAPrivateKeyFileAndAKeystoreGivesTheSameAddress() throws {
        let cli = try CLIRunner()
        defer { cli.cleanUp() }
        let keyFile = cli.home.appendingPathComponent("key.txt")
        try "0x4c0883a69102937d6231471b5dbb6204fe5129617082792ae468d01a3f362318\n".write(
            to: keyFile, atomically: true, encoding: .utf8)
        let imported = try cli.run(["wallet", "import", "--private-key-file", keyFile.path, "--name", "raw", "--light"])
        #expect(imported.status == 0, "\(imported.stderr)")
        #expect(try cli.run(["wallet", "address", "raw"]).stdout == "0x2c7536E3605D9C16a7a3D7b1898e529396a65c23\n")
        // The same key again is refused: one wallet per address.
        #expect(
            try cli.run(["wallet", "import", "--private-key-file", keyFile.path, "--name", "again", "--light"]).status
                == 64)

        // An eth-account keystore from the vectors (password "herald light").
        let other = try CLIRunner(passphrase: "herald light")
        defer { other.cleanUp() }
        let vector =
            #"{"address":"2c7536E3605D9C16a7a3D7b1898e529396a65c23","crypto":{"cipher":"aes-128-ctr","cipherparams":{"iv":"277d5f9864eb7d4c4ec5d9d98c5e88ba"},"ciphertext":"057937858fc2310bae660bc38bf0835ea68a1d4072e19a685a35783ad43a7ff3","kdf":"scrypt","kdfparams":{"dklen":32,"n":4096,"r":8,"p":1,"salt":"81ae6c52c73fc4a630f08c6fc7547759"},"mac":"8386ab28412c23ada245037a77c29e668a716e812c0b7052b2ec49b8743d7caa"},"id":"7f1447b5-5478-4696-a774-bd211b80eef5","version":3}"#
        let vectorFile = other.home.appendingPathComponent("eth-account.json")
        try vector.write(to: vectorFile, atomically: true, encoding: .utf8)
        let fromKeystore = try other.run(["wallet", "import", "--keystore", vectorFile.path, "--light"])
        #expect(fromKeystore.status == 0, "\(fromKeystore.stderr)")
        #expect(try other.run(["wallet", "address"]).stdout == "0x2c7536E3605D9C16a7a3D7b1898e529396a65c23\n")
        #expect(
            try other.run(["wallet", "export", "--show-private-key"]).stdout
                == "0x4c0883a69102937d6231471b5dbb6204fe5129617082792ae468d01a3f362318\n")

        // Damaged and over-limit keystores are bad input (65); the wrong passphrase is 2.
        try String(vector.prefix(100)).write(to: vectorFile, atomically: true, encoding: .utf8)
        #expect(try other.run(["wallet", "import", "--keystore", vectorFile.path, "--name", "b"]).status == 65)
        try vector.replacingOccurrences(of: #""n":4096"#, with: #""n":1073741824"#).write(
            to: vectorFile, atomically: true, encoding: .utf8)
        #expect(try other.run(["wallet", "import", "--keystore", vectorFile.path, "--name", "c"]).status == 65)
        try vector.write(to: vectorFile, atomically: true, encoding: .utf8)
        let wrong = try CLIRunner(passphrase: "nope")
        defer { wrong.cleanUp() }
        let refused = try wrong.run(["wallet", "import", "--keystore", vectorFile.path])
        #expect(refused.status == 2)
        #expect(try wrong.run(["wallet", "list", "--json"]).stdout == "[]\n")
    }

    @Test func aBadPrivateKeyFileIsBadInput() throws {
        let cli = try CLIRunner()
        defer { cli.cleanUp() }
        let keyFile = cli.home.appendingPathComponent("key.txt")
        try String(repeating: "0", count: 64).write(to: keyFile, atomically: true, encoding: .utf8)
        let result = try cli.run(["wallet", "import", "--private-key-file", keyFile.path])
        #expect(result.status == 65)
        #expect(!result.stderr.contains(String(repeating: "0", count: 64)))
    }

    @Test func removeNeedsConfirmationWithoutATerminal() throws {
        let cli = try CLIRunner()
        defer { cli.cleanUp() }
        #expect(try cli.run(["wallet", "create", "--light", "--name", "gone"]).status == 0)
        #expect(try cli.run(["wallet", "remove", "gone"]).status == 64)
        #expect(try cli.run(["wallet", "address", "gone"]).status == 0)
        #expect(try cli.run(["wallet", "remove", "gone", "--yes"]).status == 0)
        #expect(try cli.run(["wallet", "address", "gone"]).status == 64)
    }

    @Test func passphraseFileDropsOneTrailingNewlineOnly() throws {
        let cli = try CLIRunner(passphrase: nil)
        defer { cli.cleanUp() }
        let file = cli.home.appendingPathComponent("pass")
        try "secret\r\n".write(to: file, atomically: true, encoding: .utf8)
        #expect(try cli.run(["wallet", "create", "--light", "--passphrase-file", file.path]).status == 0)
        let exported = try cli.run(["wallet", "export"])
        #expect(try Keystore(json: Array(exported.stdout.utf8)).decrypt(passphrase: "secret").address.bytes.count == 20)
        // No file, no variable and no terminal: refuse rather than guess.
        let noSource = try cli.run(["wallet", "create", "--light", "--name", "other"])
        #expect(noSource.status == 64)
        #expect(noSource.stderr.contains("HERALD_PASSPHRASE"))
    }

    @Test func aStrayFileInTheKeystoreFolderDoesNotHideWallets() throws {
        let cli = try CLIRunner()
        defer { cli.cleanUp() }
        #expect(try cli.run(["wallet", "create", "--light"]).status == 0)
        try "junk".write(to: cli.home.appendingPathComponent("keystore/README"), atomically: true, encoding: .utf8)
        let listed = try cli.run(["wallet", "list"])
        #expect(listed.status == 0)
        #expect(listed.stdout.contains("default"))
        #expect(listed.stderr.contains("skipped"))
    }

    @Test func symlinksOutOfTheFolderAreNotFollowedAndWideModesWarned() throws {
        let cli = try CLIRunner()
        let elsewhere = try CLIRunner()
        defer {
            cli.cleanUp()
            elsewhere.cleanUp()
        }
        #expect(try cli.run(["wallet", "create", "--light", "--name", "mine"]).status == 0)
        #expect(try elsewhere.run(["wallet", "create", "--light", "--name", "outside"]).status == 0)
        let folder = cli.home.appendingPathComponent("keystore")
        let outside = try FileManager.default.contentsOfDirectory(
            atPath: elsewhere.home.appendingPathComponent("keystore").path
        ).filter { !$0.hasPrefix(".") }
        let target = elsewhere.home.appendingPathComponent("keystore/" + (outside.first ?? "")).path
        try FileManager.default.createSymbolicLink(
            atPath: folder.appendingPathComponent("UTC--link").path, withDestinationPath: target)
        // A truncated keystore and a directory pretending to be one are skipped too.
        try "{\"version\":3,\"crypto\":{".write(
            to: folder.appendingPathComponent("UTC--truncated"), atomically: true, encoding: .utf8)
        try FileManager.default.createDirectory(
            at: folder.appendingPathComponent("UTC--dir"), withIntermediateDirectories: true)

        let listed = try cli.run(["wallet", "list"])
        #expect(listed.status == 0)
        #expect(listed.stdout.contains("mine") && !listed.stdout.contains("outside"), "\(listed.stdout)")
        #expect(listed.stderr.contains("UTC--link: a symbolic link out of the keystore folder: not followed"))
        #expect(listed.stderr.contains("UTC--truncated: not a readable v3 keystore"))
        #expect(listed.stderr.contains("UTC--dir: not a regular file"))
        #expect(try cli.run(["wallet", "address", "outside"]).status == 64, "the linked wallet cannot be selected")

        // A keystore others can read still works, with a warning naming the fix.
        let mine = try FileManager.default.contentsOfDirectory(atPath: folder.path).first { $0.hasPrefix("UTC--20") }
        let minePath = folder.appendingPathComponent(mine ?? "").path
        #expect(chmod(minePath, 0o644) == 0)
        let address = try cli.run(["wallet", "address", "mine"])
        #expect(address.status == 0)
        #expect(address.stderr.contains("can be read by others (mode 0644): run chmod 600 on it"), "\(address.stderr)")
    }

    @Test func usageErrorsExit64() throws {
        let cli = try CLIRunner()
        defer { cli.cleanUp() }
        #expect(try cli.run(["wallet", "import"]).status == 64)
        #expect(try cli.run(["wallet", "frobnicate"]).status == 64)
        #expect(try cli.run(["wallet", "address"]).status == 64)
    }

    @Test func globalOptionsWorkBeforeBetweenAndAfterCommandWords() throws {
        let cli = try CLIRunner()
        defer { cli.cleanUp() }
        var elsewhere = cli
        elsewhere.environment.removeValue(forKey: "HERALD_HOME")
        let home = cli.home.path
        #expect(try elsewhere.run(["--home", home, "wallet", "create", "--light"]).status == 0)
        for arguments in [
            ["--home", home, "--json", "wallet", "list"], ["wallet", "--home", home, "--json", "list"],
            ["wallet", "list", "--home", home, "--json"], ["--json", "wallet", "--home=\(home)", "list"],
        ] {
            let listed = try elsewhere.run(arguments)
            #expect(listed.status == 0, "\(arguments): \(listed.stderr)")
            #expect(listed.stdout.hasPrefix("[{"), "\(arguments)")
        }
    }

    @Test func anExportReimportsUnderItsOwnName() throws {
        let source = try CLIRunner()
        defer { source.cleanUp() }
        #expect(try source.run(["wallet", "create", "--light", "--name", "trading"]).status == 0)
        let exported = source.home.appendingPathComponent("trading.json")
        try source.run(["wallet", "export", "trading"]).stdout.write(to: exported, atomically: true, encoding: .utf8)
        let target = try CLIRunner()
        defer { target.cleanUp() }
        let imported = try target.run(["wallet", "import", "--keystore", exported.path, "--light"])
        #expect(imported.status == 0, "\(imported.stderr)")
        #expect(imported.stdout.contains("trading"))
        #expect(try target.run(["wallet", "import", "--keystore", exported.path, "--name", "again"]).status == 64)
    }
}

@Suite struct InboxCommandTests {
    @Test func ingestListShowHideCount() throws {
        let cli = try CLIRunner()
        defer { cli.cleanUp() }
        #expect(try cli.run(["wallet", "create", "--light"]).status == 0)
        let push =
            #"{"aps":{"alert":{"title":"t","body":"b"}},"type":"3","sid":"41","epoch":"1763769600123","app":"Trades","amsg":"hello"}"#
        let cached = try cli.run(["inbox", "ingest"], stdin: push)
        #expect(cached.status == 0, "\(cached.stderr)")
        #expect(try cli.run(["inbox", "ingest"], stdin: push).stdout.contains("already cached"))
        #expect(try cli.run(["inbox", "ingest"], stdin: "{}").status == 65)
        let listed = try cli.run(["inbox", "list", "--json"])
        #expect(listed.stdout.contains(#""sid":41"#) && listed.stdout.contains(#""amsg":"hello""#))
        #expect(try cli.run(["inbox", "count"]).stdout == "1\n")
        #expect(try cli.run(["inbox", "show", "1", "--json"]).stdout.contains(#""decrypted":false"#))
        #expect(try cli.run(["inbox", "hide", "--all"]).status == 0)
        #expect(try cli.run(["inbox", "count", "--unread"]).stdout == "0\n")
        #expect(try cli.run(["inbox", "list", "--hidden", "--json"]).stdout.contains(#""hidden":1"#))
        #expect(try cli.run(["inbox", "unhide", "1"]).status == 0)
        #expect(try cli.run(["inbox", "count", "--unread"]).stdout == "1\n")
        #expect(try cli.run(["inbox", "hide"]).status == 64)
    }
}
