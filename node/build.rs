//! The link settings a Node-API addon needs on this platform.
fn main() {
    napi_build::setup();
}
