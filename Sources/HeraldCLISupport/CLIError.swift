package import HeraldCore

/// A failure the CLI reports as one line on stderr, with the exit code of CLI.md.
package struct CLIError: Error {
    package enum ExitCode: Int32 {
        case unexpected = 1
        case wrongPassphrase = 2
        case refused = 3
        case unreachable = 4
        case usage = 64
        case badInput = 65
    }

    package let code: ExitCode
    package let message: String

    package init(_ code: ExitCode, _ message: String) {
        self.code = code
        self.message = message
    }

    package var exitCode: Int32 { code.rawValue }

    /// Maps a library error: only a MAC mismatch is a wrong passphrase; damaged or refused keystores
    /// and bad key material are bad input; a missing wallet is a usage error.
    package init(_ error: HeraldError) {
        switch error.code {
        case .wrongPassphrase:
            self.init(.wrongPassphrase, error.reason)
        case .malformedKeystore, .kdfParametersTooLarge, .unsupportedKeystore, .invalidPrivateKey, .invalidHex,
            .invalidJSON, .invalidTypedData, .malformedCiphertext, .decryptionFailed, .invalidPublicKey,
            .invalidSignature, .invalidAddress, .recoveryFailed, .invalidBisqPairing, .invalidBisqMessage:
            self.init(.badInput, error.reason)
        case .walletNotFound, .walletExists, .invalidWalletName:
            self.init(.usage, error.reason)
        case .ioFailure:
            self.init(.unexpected, error.reason)
        }
    }
}

extension EthereumAddress {
    /// A wallet address typed on the command line; anything else is a usage error (exit 64).
    package static func argument(_ text: String, what: String = "a wallet address") throws -> EthereumAddress {
        do { return try EthereumAddress(parsing: text) } catch { throw CLIError(.usage, "\(text) is not \(what)") }
    }
}
