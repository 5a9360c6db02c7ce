//! Every route the service answers, in one table: the router matches requests
//! against it, and the `OpenAPI` document is generated from it
//! ([`crate::openapi`]), so a route cannot be served undocumented or
//! documented unserved.

use hyper::Method;

use crate::metrics::Route;

/// One route: its kind (whose label is its path, `{name}` standing for a
/// pack's name), the method it takes, and its operation's id and summary in
/// the `OpenAPI` document (the rest of its text is in openapi/operations.json).
pub(crate) struct RouteDef {
    pub(crate) route: Route,
    pub(crate) method: Method,
    pub(crate) operation_id: &'static str,
    pub(crate) summary: &'static str,
}

impl RouteDef {
    pub(crate) fn path(&self) -> &'static str {
        self.route.label()
    }

    /// Whether the path names a pack (`{name}`).
    pub(crate) fn names_a_pack(&self) -> bool {
        self.path().contains("{name}")
    }

    /// Whether its path's segments are these: `{name}` matches any one.
    fn matches(&self, segments: &[&str]) -> bool {
        let mut template = self.path().split('/').skip(1);
        let mut given = segments.iter();
        loop {
            match (template.next(), given.next()) {
                (None, None) => return true,
                (Some(want), Some(got)) if want == *got || want == "{name}" => {}
                _ => return false,
            }
        }
    }
}

/// Every route, in the order the `OpenAPI` document lists them.
pub(crate) const ROUTES: [RouteDef; 12] = [
    RouteDef {
        route: Route::Check,
        method: Method::POST,
        operation_id: "check",
        summary: "Judge one record",
    },
    RouteDef {
        route: Route::Eval,
        method: Method::POST,
        operation_id: "eval",
        summary: "Judge a stream of records",
    },
    RouteDef {
        route: Route::Stream,
        method: Method::POST,
        operation_id: "stream",
        summary: "Judge an output while it is being written",
    },
    RouteDef {
        route: Route::Packs,
        method: Method::GET,
        operation_id: "listPacks",
        summary: "The packs served",
    },
    RouteDef {
        route: Route::Pack,
        method: Method::GET,
        operation_id: "getPack",
        summary: "One pack",
    },
    RouteDef {
        route: Route::Prompt,
        method: Method::GET,
        operation_id: "getPrompt",
        summary: "The contract's OUTPUT FORMAT block",
    },
    RouteDef {
        route: Route::Schema,
        method: Method::GET,
        operation_id: "getSchema",
        summary: "The contract's JSON Schema",
    },
    RouteDef {
        route: Route::Healthz,
        method: Method::GET,
        operation_id: "healthz",
        summary: "Liveness",
    },
    RouteDef {
        route: Route::Readyz,
        method: Method::GET,
        operation_id: "readyz",
        summary: "Readiness",
    },
    RouteDef {
        route: Route::Metrics,
        method: Method::GET,
        operation_id: "metrics",
        summary: "Prometheus metrics",
    },
    RouteDef {
        route: Route::Decide,
        method: Method::POST,
        operation_id: "decide",
        summary: "Decide proposed tool calls before they run",
    },
    RouteDef {
        route: Route::OpenApi,
        method: Method::GET,
        operation_id: "openapi",
        summary: "This document",
    },
];

/// The route of a path's segments (after the first `/`, without a trailing one).
pub(crate) fn find(segments: &[&str]) -> Option<&'static RouteDef> {
    ROUTES.iter().find(|def| def.matches(segments))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_route_is_in_the_table_once() {
        for route in Route::ALL {
            let rows = ROUTES.iter().filter(|def| def.route == route).count();
            let want = usize::from(route != Route::Other);
            assert_eq!(rows, want, "{route:?}");
        }
    }

    #[test]
    fn paths_match_their_routes_and_nothing_else() {
        let cases: [(&[&str], Option<Route>); 9] = [
            (&["healthz"], Some(Route::Healthz)),
            (&["openapi.json"], Some(Route::OpenApi)),
            (&["v1", "packs"], Some(Route::Packs)),
            (&["v1", "packs", "ksi"], Some(Route::Pack)),
            (&["v1", "packs", "ksi", "check"], Some(Route::Check)),
            (&["v1", "packs", "ksi", "decide"], Some(Route::Decide)),
            (&["v1", "packs", "ksi", "check", "x"], None),
            (&["v1", "pack", "ksi", "check"], None),
            (&[], None),
        ];
        for (segments, want) in cases {
            assert_eq!(find(segments).map(|def| def.route), want, "{segments:?}");
        }
    }
}
