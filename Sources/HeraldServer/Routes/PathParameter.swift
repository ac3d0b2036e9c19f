import HeraldCore

/// A wallet-address path parameter in any wallet form (percent-encoded or not).
enum PathParameter {
    static func wallet(_ context: HeraldRequestContext, _ name: String) throws -> EthereumAddress {
        let raw = context.parameters.get(name) ?? ""
        guard let wallet = try? EthereumAddress(parsing: raw.removingPercentEncoding ?? raw) else {
            throw APIError(.invalidWallet, "\(name) is not a wallet address")
        }
        return wallet
    }
}
