//! Tribunal: a rules engine that validates and scores what language models emit.
pub mod extract;
