import Crypto
import Foundation
import NIOSSL
import SwiftASN1
import X509

/// A TLS identity made on the spot, for local fakes: a P-256 key and a self-signed certificate for
/// `127.0.0.1` and `localhost`, valid for a day. Clients trust it through its PEM (`--apns-ca-file`).
public struct SelfSignedCertificate: Sendable {
    public let certificatePEM: String
    public let privateKeyPEM: String

    public init(commonName: String = "herald-fake") throws {
        let key = P256.Signing.PrivateKey()
        let name = try DistinguishedName { CommonName(commonName) }
        let now = Date()
        let certificate = try Certificate(
            version: .v3, serialNumber: Certificate.SerialNumber(),
            publicKey: .init(key.publicKey), notValidBefore: now.addingTimeInterval(-300),
            notValidAfter: now.addingTimeInterval(86_400), issuer: name, subject: name,
            signatureAlgorithm: .ecdsaWithSHA256,
            extensions: try Certificate.Extensions {
                Critical(BasicConstraints.isCertificateAuthority(maxPathLength: 0))
                KeyUsage(digitalSignature: true, keyCertSign: true)
                try ExtendedKeyUsage([.serverAuth])
                SubjectAlternativeNames([
                    .dnsName("localhost"), .ipAddress(ASN1OctetString(contentBytes: [127, 0, 0, 1])),
                ])
            },
            issuerPrivateKey: .init(key))
        certificatePEM = try certificate.serializeAsPEM().pemString
        privateKeyPEM = key.pemRepresentation
    }

    /// Server-side TLS configuration offering `protocols` by ALPN.
    func serverConfiguration(protocols: [String]) throws -> TLSConfiguration {
        var configuration = TLSConfiguration.makeServerConfiguration(
            certificateChain: [.certificate(try NIOSSLCertificate(bytes: Array(certificatePEM.utf8), format: .pem))],
            privateKey: .privateKey(try NIOSSLPrivateKey(bytes: Array(privateKeyPEM.utf8), format: .pem)))
        configuration.applicationProtocols = protocols
        return configuration
    }

    /// Writes the certificate to `path`, for a client's extra trusted root.
    public func writeCertificate(to path: String) throws {
        try Data(certificatePEM.utf8).write(to: URL(fileURLWithPath: path))
    }
}
