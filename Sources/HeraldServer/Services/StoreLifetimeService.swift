import Logging
import ServiceLifecycle

/// Keeps the store open while the server runs and closes it last, after in-flight requests drained.
struct StoreLifetimeService: Service {
    let state: ServerState

    func run() async throws {
        try? await gracefulShutdown()
        do {
            try await state.store.close()
            state.logger.info("storage closed")
        } catch {
            state.logger.error("closing storage failed: \(error)")
        }
    }
}
