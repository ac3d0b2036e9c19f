import Foundation
import HeraldCLISupport
import HeraldCore

/// What every signed client command does first: pick the wallet, read and pin the server's identity,
/// unlock the key.
struct SigningSession {
    let client: HeraldHTTPClient
    let info: HeraldHTTPClient.ServerInfo
    let key: PrivateKey
    let walletName: String

    /// How long a signed operation stays valid: short, so a leaked one is soon useless.
    static let lifetime: Int64 = 300

    /// `wallet` names the keystore wallet when the command has its own option for it (`send
    /// --channel-wallet`); otherwise `--wallet`, `HERALD_WALLET` or the only wallet.
    static func open(
        global: GlobalOptions, server: String, acceptAudience: String?, wallet selector: String? = nil
    ) async throws -> SigningSession {
        let wallet = try global.selectWallet(selector)
        let client = try HeraldHTTPClient(server: server)
        let info = try await client.info()
        try ServerTrust(home: global.homePath).check(server: client.server, info: info, acceptAudience: acceptAudience)
        let passphrase = try PassphraseSource(options: global).unlock(prompt: "Passphrase for \(wallet.name): ")
        let key = try wallet.keystore.decrypt(passphrase: passphrase)
        return SigningSession(client: client, info: info, key: key, walletName: wallet.name)
    }

    var domain: HeraldDomain { HeraldDomain(chainId: info.chainId) }

    /// (issuedAt, expiresAt) for an operation signed now.
    var window: (UInt256, UInt256) {
        let now = UInt64(Date().timeIntervalSince1970)
        return (UInt256(now), UInt256(now + UInt64(min(Self.lifetime, info.maxValiditySeconds))))
    }

    /// Signs, turning an unrenderable EIP-191 field into a bad-input error.
    func sign<Operation: SignedOperation>(
        _ operation: Operation, scheme: SignatureScheme
    ) throws -> SignedEnvelope<Operation> {
        do {
            return try operation.signed(with: key, scheme: scheme, domain: domain)
        } catch let rejection as OperationRejection {
            throw CLIError(.badInput, rejection.message)
        }
    }

    /// The `Authorization` header value for this wallet's private reads.
    func feedAccessHeader() throws -> String {
        let (issuedAt, expiresAt) = window
        let access = FeedAccess(wallet: key.address, audience: info.audience, issuedAt: issuedAt, expiresAt: expiresAt)
        return try sign(access, scheme: .eip712).authorizationHeader
    }
}
