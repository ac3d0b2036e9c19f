/// Marks a wallet's feed items read (docs/protocol.md §10): the items named in `sids` (0 to 100 decimal
/// sids, comma-joined, no spaces, no leading zeros) and every item with `sid ≤ upTo` (`0`: none). Signed by
/// `wallet`. Both forms are checked in step 1 (`bad_request`).
public struct ReadMark: SignedOperation {
    public static let schema = OperationSchema(
        primaryType: "ReadMark",
        fields: [
            .init("wallet", .address), .init("sids", .string), .init("upTo", .uint256, acceptsJSONInteger: true),
            .init("audience", .string), .init("nonce", .uint256),
            .init("issuedAt", .uint256, acceptsJSONInteger: true),
            .init("expiresAt", .uint256, acceptsJSONInteger: true),
        ])

    public static let maximumSids = 100

    public var wallet: EthereumAddress
    public var sids: String
    public var upTo: UInt256
    public var audience: String
    public var nonceValue: UInt256
    public var issuedAt: UInt256
    public var expiresAt: UInt256
    /// `sids` parsed, in the order sent.
    public let sidList: [Int64]
    /// `upTo` as a sid (0: none); sids are positive Int64.
    public let upToSid: Int64

    public init(
        wallet: EthereumAddress, sids: String, upTo: UInt256, audience: String, nonce: UInt256, issuedAt: UInt256,
        expiresAt: UInt256
    ) throws(OperationRejection) {
        self.wallet = wallet
        self.sids = sids
        self.upTo = upTo
        self.audience = audience
        self.nonceValue = nonce
        self.issuedAt = issuedAt
        self.expiresAt = expiresAt
        sidList = try Self.parseSids(sids)
        // A sid is a positive Int64: any larger `upTo` reads as "every item", which is what it says.
        upToSid = upTo.clampedInt64
        guard !sids.isEmpty || upToSid > 0 else {
            throw OperationRejection(.badRequest, "a ReadMark names sids, an upTo, or both")
        }
    }

    public init(decoded: DecodedFields) throws(OperationRejection) {
        try self.init(
            wallet: try decoded.address("wallet"), sids: try decoded.string("sids"), upTo: try decoded.uint256("upTo"),
            audience: try decoded.string("audience"), nonce: try decoded.uint256("nonce"),
            issuedAt: try decoded.uint256("issuedAt"), expiresAt: try decoded.uint256("expiresAt"))
    }

    public var fieldValues: [OperationField] {
        [
            .address(wallet), .string(sids), .uint256(upTo), .string(audience), .uint256(nonceValue),
            .uint256(issuedAt), .uint256(expiresAt),
        ]
    }

    public var claimedSigner: EthereumAddress { wallet }
    public var nonce: UInt256? { nonceValue }

    /// `""`, or 1 to 100 sids joined by `,`: each decimal digits, the first not `0`. A sid too large to be
    /// one Herald issued (past 2^63 − 1) is well-formed and names no item: it is left out, as every sid
    /// that is not the wallet's is ignored.
    public static func parseSids(_ text: String) throws(OperationRejection) -> [Int64] {
        guard !text.isEmpty else { return [] }
        let parts = text.utf8.split(separator: UInt8(ascii: ","), omittingEmptySubsequences: false)
        guard parts.count <= maximumSids else {
            throw OperationRejection(.badRequest, "sids names at most \(maximumSids) items")
        }
        var sids: [Int64] = []
        sids.reserveCapacity(parts.count)
        for part in parts {
            guard let first = part.first, first != UInt8(ascii: "0"), part.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 })
            else {
                throw OperationRejection(
                    .badRequest, "sids must be decimal sids without leading zeros, joined by \",\" without spaces")
            }
            if part.count <= 19, let sid = Int64(Substring(part)) { sids.append(sid) }
        }
        return sids
    }

    /// The `sids` text for a list of sids (clients).
    public static func sidsText(_ sids: [Int64]) -> String { sids.map(String.init).joined(separator: ",") }
}
