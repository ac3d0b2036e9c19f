import CryptoExtras
import Foundation
import HeraldCore

/// A Google service-account key file (`type: service_account`), as the Firebase console downloads it.
public struct ServiceAccount: Sendable {
    public let projectID: String
    public let clientEmail: String
    public let tokenURI: String
    let key: _RSA.Signing.PrivateKey

    public init(json bytes: [UInt8], source: String = "the service account") throws {
        guard let json = try? JSONParser.parse(bytes) else {
            throw RelayConfigurationError("\(source) is not JSON")
        }
        func field(_ name: String) throws -> String {
            guard let value = json[name]?.stringValue, !value.isEmpty else {
                throw RelayConfigurationError("\(source) has no \(name)")
            }
            return value
        }
        guard json["type"]?.stringValue == "service_account" else {
            throw RelayConfigurationError("\(source) is not a service account key (type must be service_account)")
        }
        projectID = try field("project_id")
        clientEmail = try field("client_email")
        tokenURI = try field("token_uri")
        do { key = try _RSA.Signing.PrivateKey(pemRepresentation: try field("private_key")) } catch let error
            as RelayConfigurationError
        {
            throw error
        } catch {
            throw RelayConfigurationError("\(source) holds a private_key that is not an RSA key in PEM")
        }
    }

    public init(file: String) throws {
        guard let data = FileManager.default.contents(atPath: file) else {
            throw RelayConfigurationError("cannot read the FCM service account file \(file)")
        }
        try self.init(json: Array(data), source: file)
    }

    /// The RS256 assertion of the JWT bearer grant (RFC 7523) for Firebase Cloud Messaging.
    func assertion(audience: String, now: Int64) throws -> String {
        try JWT.rs256(
            header: .object([("alg", .string("RS256")), ("typ", .string("JWT"))]),
            claims: .object([
                ("iss", .string(clientEmail)), ("scope", .string("https://www.googleapis.com/auth/firebase.messaging")),
                ("aud", .string(audience)), ("iat", .number(String(now))), ("exp", .number(String(now + 3600))),
            ]), key: key)
    }
}
