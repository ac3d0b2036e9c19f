#if canImport(Glibc)
import Glibc
#endif

/// glibc keeps freed heap memory for reuse; after a one-off burst (loading the nonce ledger at
/// start) hand it back so the server's resident size reflects what it actually holds.
enum MemoryRelease {
    static func returnFreedMemoryToSystem() {
        #if canImport(Glibc)
        // malloc_trim is glibc's own (malloc.h), not in Swift's Glibc module: look it up instead.
        typealias MallocTrim = @convention(c) (Int) -> Int32
        guard let symbol = dlsym(UnsafeMutableRawPointer(bitPattern: 0), "malloc_trim") else { return }
        _ = unsafeBitCast(symbol, to: MallocTrim.self)(0)
        #endif
    }
}
