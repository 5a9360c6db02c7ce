//! Tribunal's JSON layer: the value every record is read into and every
//! component sees ([`json::Json`]), read in one pass exactly as `serde_json`
//! reads it ([`json_read`]), written byte for byte as `serde_json` writes it
//! ([`json_write`]), and numbers compared as the exact decimals their texts
//! say ([`decimal`]). The engine (the `tribunal` crate) is built on it and
//! names these modules as its own; nothing here knows of packs or records.
//!
//! Its `unsafe`, each with its reason beside it: the writer's SSE2 scan of a
//! string for what needs escaping and its writes into a buffer's spare
//! capacity (`json_write::Room`), and the reader's unescaped string taken as
//! UTF-8 without a second check.

pub mod decimal;
pub mod json;
pub mod json_read;
pub mod json_write;
