//! What a caller says of a request for tracing: its `X-Request-Id` and its
//! W3C Trace Context `traceparent`. Each is kept only when well formed (a
//! request id of at most 200 visible ASCII characters; a `traceparent` as the
//! Trace Context recommendation writes it), then written in the decision log
//! beside the decision and echoed in the response, on every route.

use hyper::header::{HeaderMap, HeaderValue};

/// The longest `X-Request-Id` kept.
const MAX_REQUEST_ID: usize = 200;

/// A request's tracing headers, as given (when well formed), and its span
/// when the service exports traces.
#[derive(Debug, Clone, Default)]
pub struct Trace {
    /// `X-Request-Id`.
    pub request_id: Option<String>,
    /// `traceparent`: `00-TRACE_ID-PARENT_ID-FLAGS`.
    pub traceparent: Option<String>,
    /// The request's span (`--otlp-endpoint`), ended when the last holder
    /// of it lets it go.
    pub span: Option<std::sync::Arc<crate::otlp::Span>>,
}

impl Trace {
    /// The tracing headers of a request.
    pub fn of(headers: &HeaderMap) -> Self {
        let text = |name: &str| headers.get(name).and_then(|v| v.to_str().ok());
        Self {
            request_id: text("x-request-id")
                .map(str::trim)
                .filter(|id| is_request_id(id))
                .map(str::to_owned),
            traceparent: text("traceparent")
                .map(str::trim)
                .filter(|t| is_traceparent(t))
                .map(str::to_owned),
            span: None,
        }
    }

    /// Echoes the headers kept into a response's.
    pub fn echo(&self, headers: &mut HeaderMap) {
        for (name, value) in [
            ("x-request-id", &self.request_id),
            ("traceparent", &self.traceparent),
        ] {
            if let Some(value) = value.as_deref().and_then(|v| HeaderValue::from_str(v).ok()) {
                headers.insert(name, value);
            }
        }
    }

    /// The log line's members: `request_id`, `traceparent` and its
    /// `trace_id`, each when given.
    pub fn log_into(&self, line: &mut serde_json::Map<String, serde_json::Value>) {
        if let Some(id) = &self.request_id {
            line.insert("request_id".into(), id.as_str().into());
        }
        if let Some(parent) = &self.traceparent {
            line.insert("traceparent".into(), parent.as_str().into());
            line.insert("trace_id".into(), parent[3..35].into());
        }
    }
}

fn is_request_id(id: &str) -> bool {
    !id.is_empty() && id.len() <= MAX_REQUEST_ID && id.bytes().all(|b| b.is_ascii_graphic())
}

/// Version `00`'s form (`00-` 32 hex `-` 16 hex `-` 2 hex, lower case), with
/// a trace id and a parent id that are not all zeros. (A later version may
/// add fields after these; its first four are read the same way.)
fn is_traceparent(text: &str) -> bool {
    let parts: Vec<&str> = text.split('-').collect();
    let hex = |part: &str, len: usize| {
        part.len() == len && part.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f'))
    };
    let zero = |part: &str| part.bytes().all(|b| b == b'0');
    let [version, trace, parent, flags, rest @ ..] = parts.as_slice() else {
        return false;
    };
    hex(version, 2)
        && *version != "ff"
        && (rest.is_empty() || *version != "00")
        && hex(trace, 32)
        && !zero(trace)
        && hex(parent, 16)
        && !zero(parent)
        && hex(flags, 2)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_well_formed_headers_are_kept() {
        let good = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";
        assert!(is_traceparent(good));
        for bad in [
            "",
            "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7",
            "00-4BF92F3577B34DA6A3CE929D0E0E4736-00f067aa0ba902b7-01",
            "00-00000000000000000000000000000000-00f067aa0ba902b7-01",
            "00-4bf92f3577b34da6a3ce929d0e0e4736-0000000000000000-01",
            "ff-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",
            "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01-extra",
            "00-4bf92f3577b34da6a3ce929d0e0e473-00f067aa0ba902b7-01",
        ] {
            assert!(!is_traceparent(bad), "{bad}");
        }
        assert!(is_traceparent(
            "01-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01-later"
        ));
        assert!(is_request_id("req-42_a.b/c"));
        for bad in ["", "has space", "line\nbreak", &"x".repeat(201), "é"] {
            assert!(!is_request_id(bad), "{bad:?}");
        }
    }
}
