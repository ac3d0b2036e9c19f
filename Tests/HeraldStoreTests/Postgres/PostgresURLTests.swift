import Testing

@testable import HeraldStorePostgres

@Suite struct PostgresURLTests {
    @Test func aFullURLIsParsedAndDecoded() throws {
        let url = try PostgresURL(
            "postgresql://her%40ld:p%3As%2Fw%25rd@db.example.org:6432/herald%20prod?sslmode=require")
        #expect(url.user == "her@ld" && url.password == "p:s/w%rd")
        #expect(url.host == "db.example.org" && url.port == 6432)
        #expect(url.database == "herald prod" && url.sslMode == .require)
    }

    @Test func defaultsArePort5432AndSSLModePrefer() throws {
        let url = try PostgresURL("postgres://herald@127.0.0.1/herald")
        #expect(url.password == nil && url.port == 5432 && url.sslMode == .prefer)
        #expect(try PostgresURL("postgres://u@h/d?sslmode=disable").sslMode == .disable)
        #expect(try PostgresURL("postgres://u@h/d?sslmode=verify-full").sslMode == .verifyFull)
    }

    @Test func anIPv6HostIsWrittenInBrackets() throws {
        let url = try PostgresURL("postgres://u:pw@[::1]:5433/d")
        #expect(url.host == "::1" && url.port == 5433)
        #expect(url.redacted == "postgres://u:***@[::1]:5433/d?sslmode=prefer")
    }

    /// A password never shows: not in the description, not in the redacted form, not in an error.
    @Test func theRedactedFormHidesThePassword() throws {
        let url = try PostgresURL("postgres://herald:s3cret%21@db:5432/herald?sslmode=disable")
        #expect(url.redacted == "postgres://herald:***@db:5432/herald?sslmode=disable")
        #expect("\(url)" == url.redacted && !"\(url)".contains("s3cret"))
        #expect(url.unredacted == "postgres://herald:s3cret%21@db:5432/herald?sslmode=disable")
        #expect(try PostgresURL(url.unredacted) == url, "the unredacted form parses back")
        #expect(
            try PostgresURL("postgres://herald@db/herald").redacted == "postgres://herald@db:5432/herald?sslmode=prefer"
        )
    }

    @Test(arguments: [
        ("mysql://u:secret@h/d", "scheme"),
        ("postgres//u:secret@h/d", "expected postgres://"),
        ("postgres://secret-host/d", "USER@"),
        ("postgres://:secret@h/d", "user is empty"),
        ("postgres://u:secret@h", "/DATABASE"),
        ("postgres://u:secret@h/", "database name"),
        ("postgres://u:secret@h/a/b", "database name"),
        ("postgres://u:secret@h:99999/d", "port"),
        ("postgres://u:secret@h:port/d", "port"),
        ("postgres://u:secret@/d", "host is empty"),
        ("postgres://u:secret@h/d?sslmode=sometimes", "sslmode must be one of"),
        ("postgres://u:secret@h/d?application_name=x", "unsupported parameter"),
        ("postgres://u:sec%zzret@h/d", "password has a bad percent escape"),
        ("postgres://u:secret@[::1/d", "IPv6"),
        ("postgres://u:se/cret@h/d", "USER@"),
    ])
    func aBadURLIsAClearErrorWithoutThePassword(url: String, reason: String) {
        let error = #expect(throws: PostgresURLError.self) { try PostgresURL(url) }
        #expect(error?.description.contains(reason) == true, "\(error?.description ?? "no error")")
        #expect(error?.description.contains("secret") == false)
        #expect(error?.description.contains("cret") == false)
    }
}
