import Hummingbird

extension RouterMethods<HeraldRequestContext> {
    /// Adds a handler for a route of ``RouteTable`` (to the router or to a controller's collection).
    @discardableResult
    func on(
        _ route: RouteTable.Route,
        use handler: @escaping @Sendable (Request, HeraldRequestContext) async throws -> Response
    ) -> Self {
        on(RouterPath(route.routerPath), method: route.method, use: handler)
    }
}
