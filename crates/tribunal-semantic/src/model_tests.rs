//! The `semantic` strategy against the real model (all-MiniLM-L6-v2, installed by
//! `scripts/setup` into models/): token ids and embeddings match
//! sentence-transformers' own (`tests/fixtures/semantic_reference.json`, written by
//! `scripts/semantic_reference.py`), embeddings do not depend on batch composition,
//! and the 0.80 threshold separates paraphrases from unrelated sentences.

use std::path::Path;

use super::model_support::{model_copy, model_dir};
use super::{cosine, Embedder, Models};
use serde_json::Value;

fn root() -> &'static Path {
    crate::files::built_in_repository()
}

fn embedder() -> Embedder {
    Embedder::load(&model_dir()).expect("the model loads")
}

struct Reference {
    text: String,
    ids: Vec<u32>,
    embedding: Vec<f32>,
}

fn reference() -> Vec<Reference> {
    let text = std::fs::read_to_string(root().join("tests/fixtures/semantic_reference.json"))
        .expect("reference file");
    let value: Value = serde_json::from_str(&text).expect("reference JSON");
    value["records"]
        .as_array()
        .expect("records")
        .iter()
        .map(|r| Reference {
            text: r["text"].as_str().unwrap().to_owned(),
            ids: serde_json::from_value(r["ids"].clone()).unwrap(),
            embedding: serde_json::from_value(r["embedding"].clone()).unwrap(),
        })
        .collect()
}

#[test]
fn tokens_match_the_reference_tokenizer() {
    let embedder = embedder();
    let cases = reference();
    assert!(cases.len() >= 20);
    for case in &cases {
        assert_eq!(
            embedder.token_ids(&case.text).unwrap(),
            case.ids,
            "token ids of {:?}",
            case.text
        );
    }
    // The long text is truncated to the model's 256 tokens, as sentence-transformers does.
    assert!(cases.iter().any(|c| c.ids.len() == 256));
}

#[test]
fn embeddings_match_sentence_transformers() {
    let embedder = embedder();
    let cases = reference();
    let texts: Vec<&str> = cases.iter().map(|c| c.text.as_str()).collect();
    let ours = embedder.embed(&texts).unwrap();
    let (mut worst_all, mut lowest_cosine) = (0.0f32, 1.0f64);
    for (case, mine) in cases.iter().zip(&ours) {
        assert_eq!(mine.len(), 384);
        let agreement = cosine(mine, &case.embedding);
        let worst = mine
            .iter()
            .zip(&case.embedding)
            .map(|(a, b)| (a - b).abs())
            .fold(0.0f32, f32::max);
        assert!(
            agreement > 1.0 - 1e-6 && worst < 1e-5,
            "{:?}: cosine with the reference {agreement}, largest difference {worst}",
            case.text
        );
        worst_all = worst_all.max(worst);
        lowest_cosine = lowest_cosine.min(agreement);
    }
    println!(
        "{} texts: largest component difference {worst_all:e}, lowest cosine with the reference {lowest_cosine}",
        cases.len()
    );
}

#[test]
fn embeddings_do_not_depend_on_the_batch() {
    let embedder = embedder();
    let cases = reference();
    let texts: Vec<&str> = cases.iter().map(|c| c.text.as_str()).collect();
    let together = embedder.embed(&texts).unwrap();
    let mut reversed: Vec<&str> = texts.clone();
    reversed.reverse();
    let mut backwards = embedder.embed(&reversed).unwrap();
    backwards.reverse();
    // Many texts of one token length share a forward pass.
    let same_length: Vec<String> = (0..40).map(|i| format!("sentence number {i}")).collect();
    let refs: Vec<&str> = same_length.iter().map(String::as_str).collect();
    let grouped = embedder.embed(&refs).unwrap();
    for (i, text) in texts.iter().enumerate() {
        let alone = embedder.embed(&[text]).unwrap().remove(0);
        assert!(alone == together[i], "{text:?}: alone vs in a batch");
        assert!(alone == backwards[i], "{text:?}: batch order");
    }
    for (i, text) in refs.iter().enumerate().step_by(7) {
        let alone = embedder.embed(&[text]).unwrap().remove(0);
        assert!(
            alone == grouped[i],
            "{text:?}: alone vs among 40 of its length"
        );
    }
    // A pass of 64 long texts (60 tokens each: larger matrices).
    let long: Vec<String> = (0..200)
        .map(|i| {
            format!(
                "{} {i}",
                "the quick brown fox jumps over the lazy dog".repeat(6)
            )
        })
        .collect();
    let mut by_len = std::collections::BTreeMap::<usize, Vec<&str>>::new();
    for text in &long {
        let len = embedder.token_ids(text).unwrap().len();
        by_len.entry(len).or_default().push(text);
    }
    let (len, same) = by_len.into_iter().max_by_key(|(_, v)| v.len()).unwrap();
    assert!(same.len() >= 64, "{} texts of {len} tokens", same.len());
    let together = embedder.embed(&same[..64]).unwrap();
    for i in [0, 31, 63] {
        let alone = embedder.embed(&[same[i]]).unwrap().remove(0);
        assert!(
            alone == together[i],
            "{:?}: alone vs among 64 of {len} tokens",
            same[i]
        );
    }
}

/// The forward pass gives the same bits on one thread or two, and with its
/// kernels built for AVX2 or for the baseline CPU.
#[test]
fn embeddings_do_not_depend_on_threads_or_vector_width() {
    let embedder = embedder();
    let cases = reference();
    let ids: Vec<Vec<u32>> = cases.iter().map(|c| c.ids.clone()).collect();
    let sequences: Vec<&[u32]> = ids
        .iter()
        .filter(|s| !s.is_empty())
        .map(Vec::as_slice)
        .collect();
    let fork = tribunal_semantic_kernels::ThreadPerShare;
    let run = |threads| {
        embedder
            .bert
            .mean_pooled_with(&sequences, threads, &fork)
            .unwrap()
    };
    let one = run(super::bert::Threads::Fixed(1));
    assert_eq!(
        one,
        run(super::bert::Threads::Fixed(2)),
        "one thread vs two"
    );
    // A pass alone spreads its texts over the cores in groups.
    assert_eq!(
        one,
        embedder.bert.mean_pooled(&sequences, &fork).unwrap(),
        "in groups"
    );
    tribunal_semantic_kernels::set_wide(false);
    let narrow = run(super::bert::Threads::Fixed(1));
    tribunal_semantic_kernels::set_wide(true);
    assert_eq!(one, narrow, "AVX2 kernels vs baseline ones");
    assert!(one.iter().all(|e| e.iter().all(|x| x.is_finite())));
}

#[test]
fn the_threshold_separates_paraphrases_from_unrelated_text() {
    let model = Models::default().model(None);
    let similar = [
        ("The cat sits on the mat.", "A cat is sitting on the mat."),
        (
            "How do I reset my password?",
            "How can I change my password?",
        ),
        (
            "The meeting was moved to next Monday.",
            "The meeting has been rescheduled to next Monday.",
        ),
        ("Senior software engineer", "senior software developer"),
        (
            "Customer asked for a refund for a damaged item.",
            "The customer requested a refund because the item was damaged.",
        ),
    ];
    let unrelated = [
        ("The cat sits on the mat.", "Quarterly revenue grew by 12%."),
        (
            "How do I reset my password?",
            "I love hiking in the mountains.",
        ),
        ("Senior software engineer", "Fresh tomatoes and basil"),
        (
            "The meeting was moved to next Monday.",
            "Photosynthesis converts light into chemical energy.",
        ),
    ];
    for (a, b) in similar {
        let s = model.similarity(a, b).unwrap();
        assert!(s >= 0.80, "{a:?} ~ {b:?}: {s}");
    }
    for (a, b) in unrelated {
        let s = model.similarity(a, b).unwrap();
        assert!(s < 0.80, "{a:?} vs {b:?}: {s}");
        assert!((0.0..=1.0).contains(&s));
    }
    // Symmetric, and a text is identical to itself.
    let ab = model.similarity("red apple", "green pear").unwrap();
    let ba = model.similarity("green pear", "red apple").unwrap();
    assert!(ab.to_bits() == ba.to_bits());
    // The model is uncased: texts of the same tokens are 1.0 exactly (a threshold
    // of 1.0 matches them), not the f32 rounding of a vector's norm.
    for (a, b) in [("red apple", "Red apple"), ("Food retail", "food retail")] {
        let s = model.similarity(a, b).unwrap();
        assert!(s.to_bits() == 1.0f64.to_bits(), "{a:?} ~ {b:?}: {s}");
    }
}

/// A model whose tokenizer adds no special tokens (no `post_processor`) turns a
/// text the normaliser empties into no tokens at all: its embedding is the zero
/// vector (sentence-transformers' mean over no tokens), not a panic.
#[test]
fn a_text_of_no_tokens_embeds_to_zero() {
    let dir = tempfile::tempdir().unwrap();
    let copy = model_copy(dir.path());
    let tokenizer = copy.join("tokenizer.json");
    let mut json: Value =
        serde_json::from_str(&std::fs::read_to_string(&tokenizer).unwrap()).unwrap();
    json["post_processor"] = Value::Null;
    std::fs::remove_file(&tokenizer).unwrap();
    std::fs::write(&tokenizer, json.to_string()).unwrap();
    let embedder = Embedder::load(&copy).expect("loads");
    assert!(embedder.token_ids("\u{200b}").unwrap().is_empty());
    let out = embedder.embed(&["\u{200b}", "a cat"]).unwrap();
    assert!(out[0].iter().all(|&x| x == 0.0) && out[0].len() == 384);
    assert!(out[1].iter().any(|&x| x != 0.0));
    let model = Models::default().model(Some(copy));
    assert!(model.similarity("", "a cat").unwrap().to_bits() == 0.0f64.to_bits());
}

/// A model folder whose weights are not there (a Git LFS pointer, a truncated
/// copy) fails each comparison with the folder and how to get a working model.
#[test]
fn a_damaged_model_says_where_and_how_to_reinstall() {
    let dir = tempfile::tempdir().unwrap();
    let copy = model_copy(dir.path());
    let weights = copy.join("model.safetensors");
    std::fs::remove_file(&weights).unwrap();
    std::fs::write(
        &weights,
        "version https://git-lfs.github.com/spec/v1\noid sha256:0\nsize 90868376\n",
    )
    .unwrap();
    let err = Models::default()
        .model(Some(copy.clone()))
        .similarity("a", "b")
        .unwrap_err();
    assert!(matches!(err, super::ModelError::Load(_)));
    let err = err.to_string();
    assert!(err.contains(&copy.display().to_string()), "{err}");
    assert!(err.contains("model.safetensors"), "{err}");
    assert!(err.contains("scripts/setup"), "{err}");
}

#[test]
fn one_model_folder_reached_by_two_routes_is_loaded_once() {
    // A pack naming the default folder in `model:` and a pack relying on the default
    // on one runtime share one loaded model and one cache, not two copies in memory.
    let models = Models::default();
    let by_path = models.model(Some(model_dir().join("..").join("all-MiniLM-L6-v2")));
    let by_default = models.model(None);
    let (a, b) = (
        by_path.embedder().expect("loads"),
        by_default.embedder().expect("loads"),
    );
    assert!(std::ptr::eq(a, b), "the model was loaded twice");
    // A folder of its own (the same files, linked) is a model of its own.
    let dir = tempfile::tempdir().unwrap();
    let other = models.model(Some(model_copy(dir.path())));
    assert!(!std::ptr::eq(a, other.embedder().expect("loads")));
    // Another runtime's models are its own.
    let elsewhere = Models::default().model(None);
    assert!(!std::ptr::eq(a, elsewhere.embedder().expect("loads")));
}

#[test]
fn long_texts_are_cut_before_tokenizing_without_changing_their_ids() {
    // The embedder tokenizes only as many words as can reach the model; the ids
    // must be exactly those of the whole text, truncated as the model truncates.
    let embedder = embedder();
    let mut whole = tokenizers::Tokenizer::from_file(model_dir().join("tokenizer.json")).unwrap();
    whole
        .with_truncation(Some(tokenizers::TruncationParams {
            max_length: 256,
            ..tokenizers::TruncationParams::default()
        }))
        .unwrap();
    whole.with_padding(None);
    let words = [
        "Hello,",
        "world!",
        "naïve",
        "café",
        "x\u{b}y",
        "東京タワー",
        "😀",
        "...",
        "--",
        "\u{200b}",
        "e-mail:",
        "a@b.io",
        "ΣΊΣΥΦΟΣ",
        "ǅemal",
        "\u{301}",
        "İstanbul",
        &"supercalifragilistic".repeat(8),
        "1,299.00",
        "(x)",
        "don't",
    ];
    let separators = [
        " ", "  ", "\n", "\t", "\u{a0}", "\u{3000}", "\u{b}", "\u{85}", "\u{2028}", "",
    ];
    for seed in 0..40usize {
        let mut text = String::new();
        let count = 50 + seed * 37;
        for i in 0..count {
            text.push_str(words[(i * 7 + seed * 3) % words.len()]);
            text.push_str(separators[(i * 5 + seed) % separators.len()]);
        }
        let expected = whole
            .encode(text.as_str(), true)
            .unwrap()
            .get_ids()
            .to_vec();
        assert_eq!(
            embedder.token_ids(&text).unwrap(),
            expected,
            "seed {seed}: {text:?}"
        );
    }
    assert_eq!(super::cut_after_words("a b c d", 2), "a b");
    assert_eq!(super::cut_after_words("a ... b", 2), "a ... b");
    assert_eq!(super::cut_after_words("a\u{b}b c", 2), "a\u{b}b c");
}
