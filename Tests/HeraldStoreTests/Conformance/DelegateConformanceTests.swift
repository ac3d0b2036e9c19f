import HeraldCore
import HeraldStore
import Testing

/// docs/protocol.md §11.1 on every backend: a channel's delegates, what a delegate's send is (the
/// channel's in every respect, the nonce the delegate's), and what a refusal leaves (nothing).
@Suite struct DelegateConformanceTests {
    static let bot = Fixtures.subscriber(40)

    @Test(arguments: StoreBackend.available)
    func addingAndRemovingAnswerWhatChanged(_ backend: StoreBackend) async throws {
        try await backend.withStore { store in
            try await Fixtures.seed(store, subscribers: 0)
            let bot = Self.bot.address
            #expect(try await store.apply(Fixtures.delegate(.add, bot, nonce: 10)) == .applied(.added))
            #expect(try await store.apply(Fixtures.delegate(.add, bot, nonce: 11)) == .applied(.added))
            #expect(try await store.delegates(of: Fixtures.other.address) == [bot])
            #expect(try await store.apply(Fixtures.delegate(.add, bot, nonce: 11)) == .replayed)
            #expect(try await store.apply(Fixtures.delegate(.remove, bot, nonce: 12)) == .applied(.removed))
            #expect(try await store.apply(Fixtures.delegate(.remove, bot, nonce: 13)) == .applied(.absent))
            #expect(try await store.delegates(of: Fixtures.other.address) == [])
        }
    }

    /// An unknown channel and a 21st delegate are refused, and spend no nonce.
    @Test(arguments: StoreBackend.available)
    func refusalsSpendNothing(_ backend: StoreBackend) async throws {
        try await backend.withStore { store in
            try await Fixtures.seed(store, subscribers: 0)
            let stranger = Fixtures.subscriber(41)
            #expect(
                try await store.apply(Fixtures.delegate(.add, Self.bot.address, channel: stranger, nonce: 1))
                    == .unknownChannel)
            var added: [EthereumAddress] = []
            for index in 0..<DelegatePlanner.limit {
                let delegate = Fixtures.subscriber(100 + index).address
                #expect(
                    try await store.apply(Fixtures.delegate(.add, delegate, nonce: UInt64(20 + index)))
                        == .applied(.added))
                added.append(delegate)
            }
            #expect(try await store.apply(Fixtures.delegate(.add, Self.bot.address, nonce: 50)) == .tooMany)
            #expect(
                try await store.delegates(of: Fixtures.other.address)
                    == added.sorted { $0.bytes.lexicographicallyPrecedes($1.bytes) })
            // Nonce 50 was not spent: a removal may take it, and then the add fits.
            #expect(try await store.apply(Fixtures.delegate(.remove, added[0], nonce: 50)) == .applied(.removed))
            #expect(try await store.apply(Fixtures.delegate(.add, Self.bot.address, nonce: 51)) == .applied(.added))
        }
    }

    /// A delegate's send is the channel's (sender, pushes), spends the delegate's nonce and names it as
    /// signer; a stranger's, or one after the removal, is refused and spends nothing.
    @Test(arguments: StoreBackend.available)
    func aDelegateSendsAsTheChannelUntilItIsRemoved(_ backend: StoreBackend) async throws {
        try await backend.withStore { store in
            try await Fixtures.seed(store, subscribers: 2)
            let payload = NotificationDraft(title: "t", body: "b").broadcastPayload()
            let stranger = Fixtures.subscriber(41)
            #expect(try await store.submit(Fixtures.submission(payload, signedBy: stranger, nonce: 1)) == .notDelegate)
            #expect(try await store.apply(Fixtures.delegate(.add, Self.bot.address, nonce: 10)) == .applied(.added))
            guard
                case .accepted(let receipt) = try await store.submit(
                    Fixtures.submission(payload, signedBy: Self.bot, nonce: 1))
            else { throw StoreError("the delegate's send was not accepted") }
            #expect(receipt.sids.count == 2 && receipt.pushes == 2)
            let feed = try await store.feed(of: Fixtures.subscriber(0).address, spam: false, limit: 10, offset: 0)
            #expect(feed.entries.map(\.sender) == [Fixtures.other.address])
            let report = try await store.pushReport(sid: receipt.sids[0])
            #expect(report?.channel == Fixtures.other.address && report?.signer == Self.bot.address)
            // The nonce is the delegate's: the channel's own nonce 1 is still free, the delegate's is spent.
            #expect(try await store.submit(Fixtures.submission(payload, signedBy: Self.bot, nonce: 1)) == .replayed)
            guard case .accepted(let own) = try await store.submit(Fixtures.submission(payload, nonce: 1)) else {
                throw StoreError("the channel's own nonce 1 was taken")
            }
            #expect(try await store.pushReport(sid: own.sids[0])?.signer == Fixtures.other.address)
            // The delegate's key is known, as any signer's.
            #expect(try await store.publicKey(of: Self.bot.address) == Self.bot.publicKey)
            #expect(
                try await store.apply(Fixtures.delegate(.remove, Self.bot.address, nonce: 11)) == .applied(.removed))
            #expect(try await store.submit(Fixtures.submission(payload, signedBy: Self.bot, nonce: 2)) == .notDelegate)
            // Refused: nonce 2 unspent, so it works once the delegate is back.
            #expect(try await store.apply(Fixtures.delegate(.add, Self.bot.address, nonce: 12)) == .applied(.added))
            guard case .accepted = try await store.submit(Fixtures.submission(payload, signedBy: Self.bot, nonce: 2))
            else {
                throw StoreError("nonce 2 was spent by a refused send")
            }
        }
    }
}
