import HeraldCore
import Testing

@Suite struct AddressTests {
    @Test func eip55ExamplesChecksum() throws {
        let items = try Vectors.cases("addresses", "eip55")
        #expect(items.count == 4)
        for item in items {
            let expected = try item.string("checksummed")
            let parsed = try EthereumAddress(parsing: try item.string("lower"))
            #expect(parsed.checksummed == expected)
            #expect(try EthereumAddress(parsing: expected) == parsed)
            #expect(try EthereumAddress(parsing: "0x" + expected.dropFirst(2).uppercased()) == parsed)
        }
    }

    @Test func keysDeriveTheirPublicKeyAndAddress() throws {
        let items = try Vectors.cases("addresses", "keys")
        #expect(items.count == 5)
        for item in items {
            let key = try PrivateKey(hex: try item.string("privateKey"))
            #expect(key.publicKey.hex == (try item.string("publicKey")))
            #expect(key.address.checksummed == (try item.string("address")))
            #expect(try PublicKey(hex: try item.string("publicKey")).address == key.address)
        }
    }

    @Test func everyWalletInputFormParses() throws {
        let expected = try EthereumAddress(parsing: "0x3f243FdacE01Cfd9719f7359c94BA11361f32471")
        for form in [
            "0x3f243fdace01cfd9719f7359c94ba11361f32471",
            "0x3F243FDACE01CFD9719F7359C94BA11361F32471",
            "eip155:1:0x3f243FdacE01Cfd9719f7359c94BA11361f32471",
            "eip155:137:0x3f243fdace01cfd9719f7359c94ba11361f32471",
            "eip155:0x3f243FdacE01Cfd9719f7359c94BA11361f32471",
        ] {
            #expect(try EthereumAddress(parsing: form) == expected, "\(form)")
        }
    }

    @Test(arguments: [
        "", "0x", "3f243FdacE01Cfd9719f7359c94BA11361f32471", "0X3f243fdace01cfd9719f7359c94ba11361f32471",
        "0x3f243FdacE01Cfd9719f7359c94BA11361f32472", "0x3F243fdace01cfd9719f7359c94ba11361f32471",
        "0x3f243fdace01cfd9719f7359c94ba11361f3247", "0x3f243fdace01cfd9719f7359c94ba11361f324711",
        "0x3g243fdace01cfd9719f7359c94ba11361f32471", "eip155::0x3f243fdace01cfd9719f7359c94ba11361f32471",
        "eip155:abc:0x3f243fdace01cfd9719f7359c94ba11361f32471", "eip156:1:0x3f243fdace01cfd9719f7359c94ba11361f32471",
        " 0x3f243fdace01cfd9719f7359c94ba11361f32471",
    ])
    func malformedAddressesAreRefused(_ text: String) {
        #expect(throws: HeraldError.invalidAddress) { try EthereumAddress(parsing: text) }
    }
}
