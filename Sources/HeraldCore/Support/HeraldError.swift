/// The one error type HeraldCore throws.
///
/// Errors compare equal on ``code`` alone, so tests can write
/// `#expect(throws: HeraldError.wrongPassphrase)` while the thrown value still carries a reason.
/// Reasons never contain secret material (keys, passphrases, plaintext).
public struct HeraldError: Error, Sendable, Hashable, CustomStringConvertible {
    public enum Code: String, Sendable, Hashable, CaseIterable {
        case invalidHex
        case invalidPrivateKey
        case invalidPublicKey
        case invalidSignature
        case recoveryFailed
        case invalidAddress
        case invalidTypedData
        case invalidJSON
        case decryptionFailed
        case malformedCiphertext
        case wrongPassphrase
        case malformedKeystore
        case kdfParametersTooLarge
        case unsupportedKeystore
        case ioFailure
        case walletNotFound
        case walletExists
        case invalidWalletName
        case invalidBisqPairing
        case invalidBisqMessage
    }

    public let code: Code
    public let reason: String

    public init(_ code: Code, _ reason: String) {
        self.code = code
        self.reason = reason
    }

    public var description: String { reason }

    public static func == (lhs: HeraldError, rhs: HeraldError) -> Bool { lhs.code == rhs.code }
    public func hash(into hasher: inout Hasher) { hasher.combine(code) }

    // Values to compare against in tests and `catch` clauses; the reason is irrelevant to equality.
    public static let invalidHex = HeraldError(.invalidHex, "invalid hex")
    public static let invalidPrivateKey = HeraldError(.invalidPrivateKey, "invalid private key")
    public static let invalidPublicKey = HeraldError(.invalidPublicKey, "invalid public key")
    public static let invalidSignature = HeraldError(.invalidSignature, "invalid signature")
    public static let recoveryFailed = HeraldError(.recoveryFailed, "no public key recovers from this signature")
    public static let invalidAddress = HeraldError(.invalidAddress, "invalid address")
    public static let invalidTypedData = HeraldError(.invalidTypedData, "invalid typed data")
    public static let invalidJSON = HeraldError(.invalidJSON, "invalid JSON")
    public static let decryptionFailed = HeraldError(.decryptionFailed, "decryption failed")
    public static let malformedCiphertext = HeraldError(.malformedCiphertext, "malformed ciphertext")
    public static let wrongPassphrase = HeraldError(.wrongPassphrase, "wrong passphrase")
    public static let malformedKeystore = HeraldError(.malformedKeystore, "damaged keystore")
    public static let kdfParametersTooLarge = HeraldError(.kdfParametersTooLarge, "keystore KDF parameters too large")
    public static let unsupportedKeystore = HeraldError(.unsupportedKeystore, "unsupported keystore")
}

extension HeraldError {
    public static let ioFailure = HeraldError(.ioFailure, "I/O failure")
    public static let walletNotFound = HeraldError(.walletNotFound, "no such wallet")
    public static let walletExists = HeraldError(.walletExists, "wallet exists")
    public static let invalidWalletName = HeraldError(.invalidWalletName, "invalid wallet name")
    public static let invalidBisqPairing = HeraldError(.invalidBisqPairing, "invalid Bisq pairing token")
    public static let invalidBisqMessage = HeraldError(.invalidBisqMessage, "invalid Bisq message")
}
