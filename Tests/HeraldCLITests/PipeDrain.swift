import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// Reads a child process's pipe to its end with blocking reads, on a thread of its own.
///
/// Not `FileHandle.readabilityHandler`: on Linux the teardown of its read source races libdispatch's
/// epoll bookkeeping and can crash the whole test process in `_dispatch_event_loop_drain`
/// (swift-corelibs-libdispatch#949; CI hit it). A blocking read never registers the descriptor with
/// libdispatch. Not `readDataToEndOfFile` either: it stops the process when a read is interrupted by
/// a signal (EINTR), which this loop retries. And stdout and stderr drained side by side cannot
/// deadlock a child that fills one pipe while the test waits on the other.
final class PipeDrain: @unchecked Sendable {
    private let condition = NSCondition()
    private var data = Data()
    private var ended = false
    private let onChunk: (@Sendable (Data) -> Void)?

    /// `onChunk` takes each chunk as it arrives (for a server whose output is watched while it runs);
    /// then the drain keeps nothing itself, and only waiting for the end is left to it.
    init(_ pipe: Pipe, onChunk: (@Sendable (Data) -> Void)? = nil) {
        self.onChunk = onChunk
        let handle = pipe.fileHandleForReading
        let thread = Thread { [self] in
            // The handle closes its descriptor when released: it must outlive the reads.
            withExtendedLifetime(handle) { self.readToEnd(handle.fileDescriptor) }
        }
        thread.name = "pipe-drain"
        thread.start()
    }

    /// Everything read, once the writing side has closed (the child exited and no copy is left open).
    func waitForEnd() -> Data {
        condition.lock()
        defer { condition.unlock() }
        while !ended { condition.wait() }
        return data
    }

    /// Waits up to `timeout` seconds for the end of the stream; false if it has not come.
    func waitForEnd(timeout: Double) -> Bool {
        let deadline = Date().addingTimeInterval(timeout)
        condition.lock()
        defer { condition.unlock() }
        while !ended {
            if !condition.wait(until: deadline) { return ended }
        }
        return true
    }

    private func readToEnd(_ descriptor: Int32) {
        var buffer = [UInt8](repeating: 0, count: 65_536)
        while true {
            let count = buffer.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, $0.count) }
            if count > 0 {
                let chunk = Data(buffer[0..<count])
                if let onChunk {
                    onChunk(chunk)
                } else {
                    condition.lock()
                    data.append(chunk)
                    condition.unlock()
                }
            } else if count < 0 && errno == EINTR {
                continue
            } else {
                break
            }
        }
        condition.lock()
        ended = true
        condition.broadcast()
        condition.unlock()
    }
}
