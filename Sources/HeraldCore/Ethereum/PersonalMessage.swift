/// EIP-191 version 0x45, `personal_sign`: what wallets sign when asked to sign text.
public enum PersonalMessage {
    /// keccak256("\u{19}Ethereum Signed Message:\n" + decimal byte length + message).
    public static func digest<Bytes: Collection>(_ message: Bytes) -> [UInt8] where Bytes.Element == UInt8 {
        var hasher = Keccak256()
        hasher.update(Array("\u{19}Ethereum Signed Message:\n\(message.count)".utf8))
        hasher.update(message)
        return hasher.finalize()
    }

    /// The digest of UTF-8 text.
    public static func digest(text: String) -> [UInt8] { digest(Array(text.utf8)) }

    /// Signs text as `personal_sign` does.
    public static func sign(text: String, with key: PrivateKey) throws(HeraldError) -> RecoverableSignature {
        try key.sign(digest: digest(text: text))
    }

    /// The address that signed `text`.
    public static func recoverSigner(
        of text: String, signature: RecoverableSignature
    ) throws(HeraldError)
        -> EthereumAddress
    {
        try signature.recoverAddress(digest: digest(text: text))
    }
}
