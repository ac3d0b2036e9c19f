import Crypto
import CryptoExtras
import Foundation

/// A Web3 Secret Storage v3 keystore (geth, MetaMask, eth-account; docs/protocol.md §5.3): a private key
/// encrypted with AES-128-CTR under a key derived from a passphrase, with a keccak256 MAC.
///
/// Errors are distinct: `wrongPassphrase` (MAC mismatch, nothing else), `malformedKeystore` (damaged
/// or incomplete file), `kdfParametersTooLarge` (refused before any derivation), `unsupportedKeystore`.
public struct Keystore: Sendable, Hashable {
    public var kdf: KeystoreKDF
    public var iv: [UInt8]
    public var ciphertext: [UInt8]
    public var mac: [UInt8]
    public var id: String
    /// The address the file claims, when it has one (geth writes it; the v3 definition does not require it).
    public var address: EthereumAddress?
    /// Herald's wallet name, kept inside the file so that name and key are written in one atomic step.
    public var name: String?

    // MARK: Reading

    /// Parses keystore JSON without deriving anything.
    public init(json bytes: some Collection<UInt8>) throws(HeraldError) {
        let json: JSONValue
        do { json = try JSONParser.parse(bytes) } catch {
            throw HeraldError(.malformedKeystore, "keystore is not JSON: \(error.reason)")
        }
        try self.init(json: json)
    }

    public init(json: JSONValue) throws(HeraldError) {
        guard json.objectMembers != nil else { throw HeraldError(.malformedKeystore, "keystore is not a JSON object") }
        guard case .number("3")? = json["version"] else {
            throw HeraldError(.unsupportedKeystore, "only version 3 keystores are supported")
        }
        // Old geth and MyEtherWallet files spell it "Crypto".
        guard let crypto = json["crypto"] ?? json["Crypto"], crypto.objectMembers != nil else {
            throw HeraldError(.malformedKeystore, "keystore has no crypto object")
        }
        guard crypto["cipher"]?.stringValue == "aes-128-ctr" else {
            throw HeraldError(.unsupportedKeystore, "only the aes-128-ctr cipher is supported")
        }
        iv = try Self.hexField(crypto["cipherparams"]?["iv"], "cipherparams.iv", count: 16)
        ciphertext = try Self.hexField(crypto["ciphertext"], "ciphertext", count: 32)
        mac = try Self.hexField(crypto["mac"], "mac", count: 32)
        guard let params = crypto["kdfparams"], params.objectMembers != nil else {
            throw HeraldError(.malformedKeystore, "keystore has no kdfparams")
        }
        let salt = try Self.hexField(params["salt"], "kdfparams.salt", count: nil)
        switch crypto["kdf"]?.stringValue {
        case "scrypt":
            kdf = .scrypt(
                n: try Self.intField(params["n"], "n"), r: try Self.intField(params["r"], "r"),
                p: try Self.intField(params["p"], "p"), dklen: try Self.intField(params["dklen"], "dklen"), salt: salt)
        case "pbkdf2":
            guard params["prf"]?.stringValue == "hmac-sha256" else {
                throw HeraldError(.unsupportedKeystore, "only the hmac-sha256 prf is supported for pbkdf2")
            }
            kdf = .pbkdf2(
                c: try Self.intField(params["c"], "c"), dklen: try Self.intField(params["dklen"], "dklen"), salt: salt)
        case nil:
            throw HeraldError(.malformedKeystore, "keystore has no kdf")
        default:
            throw HeraldError(.unsupportedKeystore, "only the scrypt and pbkdf2 kdfs are supported")
        }
        try kdf.checkParameters()
        id = json["id"]?.stringValue ?? ""
        if let text = json["address"]?.stringValue {
            do {
                address = try EthereumAddress(parsing: text.hasPrefix("0x") ? text : "0x" + text.lowercased())
            } catch {
                throw HeraldError(.malformedKeystore, "keystore address is not an address")
            }
        }
        name = json["name"]?.stringValue
    }

    /// Derives the key, checks the MAC in constant time, and decrypts.
    public func decrypt(passphrase: String) throws(HeraldError) -> PrivateKey {
        try kdf.checkParameters()
        let derived = try kdf.derive(passphrase: Array(passphrase.utf8))
        let expectedMAC = Keccak256.hash(derived[16..<32] + ciphertext)
        guard constantTimeEquals(expectedMAC, mac) else {
            throw HeraldError(.wrongPassphrase, "wrong passphrase for this keystore")
        }
        let raw: [UInt8]
        do {
            raw = Array(
                try AES._CTR.decrypt(
                    ciphertext, using: SymmetricKey(data: derived[0..<16]), nonce: AES._CTR.Nonce(nonceBytes: iv)))
        } catch {
            throw HeraldError(.malformedKeystore, "AES-CTR decryption failed")
        }
        let key: PrivateKey
        do { key = try PrivateKey(bytes: raw) } catch {
            throw HeraldError(.malformedKeystore, "the decrypted key is not a valid secp256k1 key")
        }
        if let address, address != key.address {
            throw HeraldError(.malformedKeystore, "the decrypted key does not match the keystore's address")
        }
        return key
    }

    // MARK: Writing

    /// Encrypts `key` under `passphrase`. `kdf` defaults to the standard scrypt setting; `iv` and `id`
    /// are for reproducible tests only.
    public init(
        encrypting key: PrivateKey, passphrase: String, kdf: KeystoreKDF = .standardScrypt(), iv: [UInt8]? = nil,
        id: String? = nil, name: String? = nil
    ) throws(HeraldError) {
        try kdf.checkParameters()
        let ivBytes = iv ?? SecureRandom.bytes(16)
        guard ivBytes.count == 16 else { throw HeraldError(.malformedKeystore, "an IV is 16 bytes") }
        let derived = try kdf.derive(passphrase: Array(passphrase.utf8))
        do {
            ciphertext = Array(
                try AES._CTR.encrypt(
                    key.rawBytes, using: SymmetricKey(data: derived[0..<16]), nonce: AES._CTR.Nonce(nonceBytes: ivBytes)
                ))
        } catch {
            throw HeraldError(.malformedKeystore, "AES-CTR encryption failed")
        }
        self.kdf = kdf
        self.iv = ivBytes
        self.mac = Keccak256.hash(derived[16..<32] + ciphertext)
        self.id = id ?? UUID().uuidString.lowercased()
        self.address = key.address
        self.name = name
    }

    /// The file's JSON, in geth's layout (address as lowercase hex without `0x`).
    public var json: JSONValue {
        let (kdfName, kdfParams) = kdf.json
        var members: [(key: String, value: JSONValue)] = []
        if let address { members.append(("address", .string(Hex.encode(address.bytes)))) }
        members.append(
            (
                "crypto",
                .object([
                    ("cipher", .string("aes-128-ctr")),
                    ("cipherparams", .object([("iv", .string(Hex.encode(iv)))])),
                    ("ciphertext", .string(Hex.encode(ciphertext))),
                    ("kdf", .string(kdfName)),
                    ("kdfparams", kdfParams),
                    ("mac", .string(Hex.encode(mac))),
                ])
            ))
        members.append(("id", .string(id)))
        if let name { members.append(("name", .string(name))) }
        members.append(("version", .number("3")))
        return .object(members)
    }

    public var jsonText: String { json.jsonText }

    // MARK: Field readers

    private static func hexField(_ value: JSONValue?, _ name: String, count: Int?) throws(HeraldError) -> [UInt8] {
        guard let text = value?.stringValue, let bytes = try? Hex.decode(text) else {
            throw HeraldError(.malformedKeystore, "keystore \(name) is missing or not hex")
        }
        if let count, bytes.count != count {
            throw HeraldError(.malformedKeystore, "keystore \(name) must be \(count) bytes")
        }
        return bytes
    }

    /// A non-negative JSON integer. Too many digits to fit is "too large", not "damaged".
    private static func intField(_ value: JSONValue?, _ name: String) throws(HeraldError) -> Int {
        guard case .number(let text)? = value, !text.isEmpty, text.utf8.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }) else {
            throw HeraldError(.malformedKeystore, "keystore kdfparams.\(name) must be a non-negative integer")
        }
        guard let number = Int(text), number <= 1 << 40 else {
            throw HeraldError(.kdfParametersTooLarge, "keystore kdfparams.\(name) is too large")
        }
        return number
    }
}
