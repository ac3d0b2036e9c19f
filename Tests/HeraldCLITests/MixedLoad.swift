import Foundation
import HeraldCore

/// The load the crash tests drive: wallets that register and subscribe, and notifications to the
/// wallets that followed in earlier rounds, all signed up front so that sending costs no crypto.
enum MixedLoad {
    /// One signed request and what to remember when it is acknowledged.
    struct Post: Sendable {
        let path: String
        let body: String
        let ack: @Sendable (JSONValue) async -> Void
    }

    /// What the clients were told succeeded.
    actor Ledger {
        var bindings: [(EthereumAddress, String)] = []
        var subscriptions: [EthereumAddress] = []
        var sids: [String] = []
        var pushes = 0
        /// Posts acknowledged (one per post: a notification's answer may carry several sids).
        private(set) var acknowledged = 0

        func bound(_ wallet: EthereumAddress, _ token: String) {
            acknowledged += 1
            bindings.append((wallet, token))
        }
        func subscribed(_ wallet: EthereumAddress) {
            acknowledged += 1
            subscriptions.append(wallet)
        }
        func sent(_ answer: JSONValue) {
            acknowledged += 1
            if case .array(let items)? = answer["sid"] { sids += items.compactMap(\.stringValue) }
            if case .number(let text)? = answer["pushes"] { pushes += Int(text) ?? 0 }
        }

        /// Wallets both bound and subscribed: the next rounds' notifications go to them.
        var followers: [EthereumAddress] {
            let bound = Set(bindings.map(\.0))
            return subscriptions.filter { bound.contains($0) }
        }
    }

    /// `wallets` new wallets each register (token unique to the round) and subscribe to `channel`;
    /// `notifications` items go two followers at a time. Shuffled.
    static func round(
        _ round: Int, wallets count: Int, notifications: Int, followers: [EthereumAddress], channel: PrivateKey,
        ledger: Ledger, audience: String = "herald-test"
    ) throws -> [Post] {
        let domain = HeraldDomain(chainId: 1)
        let now = UInt64(Date().timeIntervalSince1970)
        var posts: [Post] = []
        for index in 0..<count {
            let key = PrivateKey.generate()
            let wallet = key.address
            let token = String(format: "%064x", round * 1000 + index)
            let binding = DeviceBinding(
                action: .register, wallet: wallet, platform: .ios, deviceToken: token, audience: audience,
                nonce: UInt256(1), issuedAt: UInt256(now - 5), expiresAt: UInt256(now + 300))
            let subscription = Subscription(
                action: .subscribe, channel: channel.address, subscriber: wallet, audience: audience,
                nonce: UInt256(2), issuedAt: UInt256(now - 5), expiresAt: UInt256(now + 300))
            posts.append(
                Post(
                    path: "/v1/devices", body: try binding.signed(with: key, scheme: .eip712, domain: domain).jsonText,
                    ack: { _ in await ledger.bound(wallet, token) }))
            posts.append(
                Post(
                    path: "/v1/subscriptions",
                    body: try subscription.signed(with: key, scheme: .eip712, domain: domain).jsonText,
                    ack: { _ in await ledger.subscribed(wallet) }))
        }
        for index in 0..<(followers.isEmpty ? 0 : notifications) {
            let payload = NotificationDraft(title: "r\(round) n\(index)", body: "b").targetedPayload(
                to: [followers[index % followers.count], followers[(index * 7 + 3) % followers.count]])
            let notification = NotificationOperation(
                channel: channel.address, payload: payload, audience: audience,
                nonce: UInt256(UInt64(round * 1000 + index + 10)), issuedAt: UInt256(now - 5),
                expiresAt: UInt256(now + 300))
            posts.append(
                Post(
                    path: "/v1/notifications",
                    body: try notification.signed(with: channel, scheme: .eip712, domain: domain).jsonText,
                    ack: { answer in await ledger.sent(answer) }))
        }
        return posts.shuffled()
    }

    /// Sends `posts` with 8 workers, each post to `bases[i % bases.count]`, acknowledging the 200/202s.
    /// A worker stops at its first transport error (its server was killed).
    static func send(_ posts: [Post], to bases: [String]) async {
        await withTaskGroup(of: Void.self) { group in
            for worker in 0..<8 {
                group.addTask {
                    for index in stride(from: worker, to: posts.count, by: 8) {
                        let post = posts[index]
                        guard
                            let (status, body) = try? await HTTP.post(
                                bases[index % bases.count] + post.path, json: post.body)
                        else { return }
                        if status == 200 || status == 202, let answer = try? JSONParser.parse(Array(body)) {
                            await post.ack(answer)
                        }
                    }
                }
            }
        }
    }

    /// Sends `posts` as `send` does and SIGKILLs `victim` once `killAfter` of them are acknowledged.
    /// Returns whether the kill landed mid-load: some posts were left unacknowledged. If fewer than
    /// `killAfter` are ever acknowledged (refusals), the kill comes once every post is answered.
    static func send(
        _ posts: [Post], to bases: [String], ledger: Ledger, killing victim: ServerProcess, after killAfter: Int
    ) async -> Bool {
        let before = await ledger.acknowledged
        await withTaskGroup(of: Void.self) { group in
            group.addTask {
                while await ledger.acknowledged - before < killAfter && !Task.isCancelled {
                    try? await Task.sleep(for: .milliseconds(2))
                }
                victim.kill(SIGKILL)
            }
            await send(posts, to: bases)
            group.cancelAll()
        }
        return await ledger.acknowledged - before < posts.count
    }
}
