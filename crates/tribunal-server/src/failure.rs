//! Every error the server answers with, as a type: its stable code, its HTTP
//! status and when it is given. docs/server.md's table of errors is generated
//! from [`Failure::ALL`] (`UPDATE_DOCS=1 cargo test -p tribunal-server
//! failures`), so a code cannot be answered without being documented.

use hyper::StatusCode;

macro_rules! failures {
    ($($name:ident = $status:ident $code:literal: $when:literal;)*) => {
        /// An error the server answers with (`{"error": {"code", "message",
        /// "status"}}`).
        #[derive(Debug, Clone, Copy, PartialEq, Eq)]
        pub enum Failure {
            $(
                #[doc = $when]
                $name,
            )*
        }

        impl Failure {
            /// Every failure, in the order docs/server.md lists them.
            #[cfg_attr(not(test), allow(dead_code))]
            pub const ALL: &[Self] = &[$(Self::$name),*];

            /// The stable code (`request.bad-json`): what a caller matches on.
            pub fn code(self) -> &'static str {
                match self {
                    $(Self::$name => $code,)*
                }
            }

            /// The HTTP status it is answered with.
            pub fn status(self) -> StatusCode {
                match self {
                    $(Self::$name => StatusCode::$status,)*
                }
            }

            /// When it is given (docs/server.md).
            #[cfg_attr(not(test), allow(dead_code))]
            pub fn when(self) -> &'static str {
                match self {
                    $(Self::$name => $when,)*
                }
            }
        }
    };
}

failures! {
    BadJson = BAD_REQUEST "request.bad-json": "the body is not JSON (the message gives line and column)";
    InvalidRecord = BAD_REQUEST "request.invalid-record": "JSON, but not a record: not an object, no `output`, `output` not a string";
    NoMessages = BAD_REQUEST "request.no-messages": "`decide`: the body has no `messages` (send the messages, or a record with them)";
    NotUtf8 = BAD_REQUEST "request.not-utf8": "the body is not valid UTF-8 (the message gives the byte, from 1)";
    CutOff = BAD_REQUEST "request.cut-off": "the connection ended before the body did";
    BadQuery = BAD_REQUEST "request.bad-query": "`stream`'s query: an unknown parameter (with a did-you-mean), `expected` or `meta` not JSON";
    AuthMissing = UNAUTHORIZED "auth.missing": "a token is required and was not sent (`WWW-Authenticate: Bearer`)";
    AuthInvalid = UNAUTHORIZED "auth.invalid": "the token sent is not this service's";
    UnknownPack = NOT_FOUND "pack.unknown": "no pack of that name (with a did-you-mean and the names served)";
    NoContract = NOT_FOUND "pack.no-contract": "`prompt` or `schema` of a pack without a contract";
    UnknownRoute = NOT_FOUND "route.unknown": "no such route";
    MethodNotAllowed = METHOD_NOT_ALLOWED "method.not-allowed": "another method than the route takes (`Allow` says which; a `GET` route answers `HEAD` too, without the body)";
    ReadTimeout = REQUEST_TIMEOUT "request.timeout": "the body did not arrive within `--read-timeout-ms` (between chunks) or `--request-timeout-ms`";
    TooLarge = PAYLOAD_TOO_LARGE "request.too-large": "a check body over `--max-body-bytes` (refused from its `Content-Length`, or cut at the limit)";
    ContentType = UNSUPPORTED_MEDIA_TYPE "request.content-type": "`check` takes `application/json`; `eval` NDJSON (`application/x-ndjson`, `application/jsonl`, `application/json-lines`; `application/json` and `text/plain` are taken too). A request without a Content-Type is read as the route's type";
    Fault = INTERNAL_SERVER_ERROR "server.fault": "the judgement ended without a result (a fault of the server, never of the request: please report it)";
    Busy = SERVICE_UNAVAILABLE "server.busy": "`--max-concurrency` requests are being judged; `Retry-After: 1`";
    BundleNotLoaded = SERVICE_UNAVAILABLE "bundle.not-loaded": "`--bundle`: no good bundle installed yet (the message says the last fetch's problem); `Retry-After: 1`";
    Timeout = GATEWAY_TIMEOUT "request.timeout": "the check ran past `--request-timeout-ms`, counted from the request's arrival (time spent waiting for a free check thread included): its steps were stopped there";
}

impl Failure {
    /// The failure of a request the engine refused.
    pub fn of(kind: tribunal::RequestErrorKind) -> Self {
        use tribunal::RequestErrorKind as Kind;
        match kind {
            Kind::UnknownPack => Self::UnknownPack,
            Kind::NotUtf8 => Self::NotUtf8,
            Kind::BadJson => Self::BadJson,
            Kind::NoMessages => Self::NoMessages,
            Kind::TooLarge => Self::TooLarge,
            Kind::Expired => Self::Timeout,
            // `InvalidRecord`, and a kind this server does not know yet:
            // the request's fault, as every kind the engine has is.
            _ => Self::InvalidRecord,
        }
    }

    /// docs/server.md's table of errors.
    #[cfg_attr(not(test), allow(dead_code))]
    pub fn table() -> String {
        use std::fmt::Write as _;
        let mut table = String::from("| status | code | when |\n|---|---|---|\n");
        for failure in Self::ALL {
            let _ = writeln!(
                table,
                "| {} | `{}` | {} |",
                failure.status().as_u16(),
                failure.code(),
                failure.when()
            );
        }
        table
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tribunal::RequestErrorKind as Kind;

    /// A request the engine refuses is answered with the engine's code.
    #[test]
    fn each_request_error_keeps_its_code() {
        for kind in [
            Kind::UnknownPack,
            Kind::NotUtf8,
            Kind::BadJson,
            Kind::InvalidRecord,
            Kind::NoMessages,
            Kind::TooLarge,
            Kind::Expired,
        ] {
            assert_eq!(Failure::of(kind).code(), kind.code(), "{kind:?}");
        }
    }

    /// Codes are `area.kebab-case`, statuses errors, and a code shared by
    /// two failures (`request.timeout`: the body's 408, the check's 504)
    /// has two statuses.
    #[test]
    fn codes_are_stable_names() {
        let mut seen = std::collections::BTreeSet::new();
        for failure in Failure::ALL {
            let code = failure.code();
            let (area, name) = code.split_once('.').expect(code);
            for part in [area, name] {
                assert!(
                    !part.is_empty()
                        && part
                            .bytes()
                            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-'),
                    "{code}"
                );
            }
            assert!(failure.status().is_client_error() || failure.status().is_server_error());
            assert!(seen.insert((code, failure.status())), "{code} twice");
        }
    }

    /// docs/server.md's table is the generated one.
    #[test]
    fn failures_table_in_the_docs() {
        let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../docs/server.md");
        let text = std::fs::read_to_string(path).unwrap();
        let start_marker = "<!-- errors: generated from crates/tribunal-server/src/failure.rs (UPDATE_DOCS=1 cargo test -p tribunal-server failures) -->\n";
        let end_marker = "<!-- end of errors -->";
        let start = text.find(start_marker).expect("the start marker") + start_marker.len();
        let end = start + text[start..].find(end_marker).expect("the end marker");
        let table = Failure::table();
        if std::env::var_os("UPDATE_DOCS").is_some() {
            let updated = format!("{}{table}{}", &text[..start], &text[end..]);
            std::fs::write(path, updated).unwrap();
            return;
        }
        assert_eq!(
            text[start..end],
            table,
            "docs/server.md's errors differ: UPDATE_DOCS=1 cargo test -p tribunal-server failures"
        );
    }
}
