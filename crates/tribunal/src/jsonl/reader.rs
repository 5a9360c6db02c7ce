//! The input reader: JSONL lines read into batches of raw records (about a
//! megabyte or 256 lines each, in one buffer), blank lines skipped, a line
//! over the size limit kept only as its start, a read error as the last
//! record; the worker threads parse them.

use std::io::{self, BufRead};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use super::OVERSIZE_PREFIX;

/// One input line as the runner read it, before it is judged (what a resumed
/// run checks its kept results against: [`Resume`](super::Resume)).
#[derive(Debug, Clone, Copy)]
pub struct RawRecord<'a> {
    /// 1-based line number.
    pub line: u64,
    /// Its bytes, or what was kept of it.
    pub body: RawBody<'a>,
}

/// The bytes of one input line.
#[derive(Debug, Clone, Copy)]
pub enum RawBody<'a> {
    /// The line, without its line end (and without a first line's byte order
    /// mark).
    Bytes(&'a [u8]),
    /// The line was longer than the limit; only its start is kept.
    TooLarge {
        /// The line's length in bytes.
        size: usize,
        /// Its first bytes.
        prefix: &'a [u8],
    },
    /// Reading the input failed here: why.
    ReadError(&'a str),
}

#[derive(Debug, Clone)]
enum Slot {
    Bytes {
        start: usize,
        end: usize,
    },
    TooLarge {
        start: usize,
        end: usize,
        size: usize,
    },
    ReadError(String),
}

/// A batch of consecutive input lines sharing one buffer, so that a batch costs
/// two allocations however many records it holds.
#[derive(Debug, Default)]
pub(crate) struct Lines {
    pub(super) data: Vec<u8>,
    records: Vec<(u64, Slot)>,
}

impl Lines {
    pub fn len(&self) -> usize {
        self.records.len()
    }

    pub fn is_empty(&self) -> bool {
        self.records.is_empty()
    }

    /// Drops the first `n` records (their bytes stay until the batch goes).
    pub fn skip(&mut self, n: usize) {
        self.records.drain(..n.min(self.records.len()));
    }

    pub fn records(&self) -> impl Iterator<Item = RawRecord<'_>> {
        self.records.iter().map(|entry| self.raw(entry))
    }

    /// The record at `at` (from 0), if there is one.
    pub fn record(&self, at: usize) -> Option<RawRecord<'_>> {
        self.records.get(at).map(|entry| self.raw(entry))
    }

    fn raw<'a>(&'a self, (line, slot): &'a (u64, Slot)) -> RawRecord<'a> {
        RawRecord {
            line: *line,
            body: match slot {
                Slot::Bytes { start, end } => RawBody::Bytes(&self.data[*start..*end]),
                Slot::TooLarge { start, end, size } => RawBody::TooLarge {
                    size: *size,
                    prefix: &self.data[*start..*end],
                },
                Slot::ReadError(err) => RawBody::ReadError(err),
            },
        }
    }
}

/// Records per batch, and the bytes after which a batch is closed early.
pub(super) const BATCH_RECORDS: usize = 256;
const BATCH_BYTES: usize = 1 << 20;

/// Splits a byte stream into batches of lines without ever holding more than
/// `max` bytes of one line; skips blank lines.
#[derive(Debug)]
pub(crate) struct RecordReader<R> {
    reader: R,
    max: usize,
    line: u64,
    done: bool,
    /// Read no further once set; `stopped` says it was, with input left.
    stop: Option<Arc<AtomicBool>>,
    pub(super) stopped: bool,
    /// The bytes of the last batch: the next one's buffer starts a quarter
    /// larger rather than growing (and copying) its way there.
    last_batch_bytes: usize,
}

impl<R: BufRead> RecordReader<R> {
    pub fn new(reader: R, max: usize) -> Self {
        Self {
            reader,
            max,
            line: 0,
            done: false,
            stop: None,
            stopped: false,
            last_batch_bytes: 0,
        }
    }

    /// Stops reading (at the next batch) once `stop` is set.
    #[must_use]
    pub fn stopping_on(mut self, stop: Option<Arc<AtomicBool>>) -> Self {
        self.stop = stop;
        self
    }

    /// Appends the next line to `data`; returns its slot, or `None` at the end.
    /// A reader that has nothing for now may say so with `WouldBlock` (a
    /// request body that trickles in): before a line starts, that is
    /// passed on (`WouldBlock`), so that the batch read so far is judged and
    /// answered without waiting for more (an empty batch then, when there is
    /// none: the thread that writes gets to write what other threads
    /// finished); within a line, it is read on.
    fn read_line(&mut self, data: &mut Vec<u8>) -> io::Result<Option<Slot>> {
        let start = data.len();
        let mut size = 0usize;
        let mut saw_any = false;
        loop {
            let buffer = match self.reader.fill_buf() {
                Err(err) if err.kind() == io::ErrorKind::WouldBlock => {
                    if saw_any {
                        continue;
                    }
                    return Err(io::ErrorKind::WouldBlock.into());
                }
                other => other?,
            };
            if buffer.is_empty() {
                if !saw_any {
                    return Ok(None);
                }
                break;
            }
            saw_any = true;
            let (chunk, found_newline) = match memchr::memchr(b'\n', buffer) {
                Some(pos) => (&buffer[..pos], true),
                None => (buffer, false),
            };
            let room = self
                .max
                .saturating_add(1)
                .saturating_sub(data.len() - start);
            data.extend_from_slice(&chunk[..chunk.len().min(room)]);
            size += chunk.len();
            let consumed = chunk.len() + usize::from(found_newline);
            self.reader.consume(consumed);
            if found_newline {
                break;
            }
        }
        if data.len() > start && data.last() == Some(&b'\r') && size <= self.max + 1 {
            data.pop();
            size -= 1;
        }
        if size > self.max {
            data.truncate(start + OVERSIZE_PREFIX.min(data.len() - start));
            return Ok(Some(Slot::TooLarge {
                start,
                end: data.len(),
                size,
            }));
        }
        Ok(Some(Slot::Bytes {
            start,
            end: data.len(),
        }))
    }
}

impl<R: BufRead> Iterator for RecordReader<R> {
    type Item = Lines;

    fn next(&mut self) -> Option<Lines> {
        if !self.done
            && self
                .stop
                .as_ref()
                .is_some_and(|s| s.load(Ordering::Relaxed))
        {
            self.done = true;
            self.stopped = true;
        }
        let mut batch = Lines::default();
        // With a quarter more: a batch as long as the last in records is as
        // often longer as shorter, and growing it copies all of it.
        batch
            .data
            .reserve((self.last_batch_bytes + self.last_batch_bytes / 4).min(2 * BATCH_BYTES));
        let mut paused = false;
        while !self.done && batch.records.len() < BATCH_RECORDS && batch.data.len() < BATCH_BYTES {
            self.line += 1;
            match self.read_line(&mut batch.data) {
                Ok(None) => self.done = true,
                Err(err) if err.kind() == io::ErrorKind::WouldBlock => {
                    // The batch so far (maybe none: then the caller gets to
                    // hand on results other threads finished meanwhile).
                    self.line -= 1;
                    paused = true;
                    break;
                }
                Ok(Some(Slot::Bytes { start, end }))
                    if batch.data[start..end].iter().all(u8::is_ascii_whitespace) =>
                {
                    batch.data.truncate(start);
                }
                Ok(Some(mut slot)) => {
                    if self.line == 1 {
                        strip_byte_order_mark(&mut batch.data, &mut slot);
                    }
                    batch.records.push((self.line, slot));
                }
                Err(err) => {
                    self.done = true;
                    batch
                        .records
                        .push((self.line, Slot::ReadError(err.to_string())));
                }
            }
        }
        self.last_batch_bytes = batch.data.len();
        (!batch.is_empty() || paused).then_some(batch)
    }
}

/// Drops a UTF-8 byte-order mark at the start of the first line (editors and
/// Windows tools write one; it is not part of the first record).
fn strip_byte_order_mark(data: &mut Vec<u8>, slot: &mut Slot) {
    const BOM: &[u8] = b"\xEF\xBB\xBF";
    if let Slot::Bytes { start, end } | Slot::TooLarge { start, end, .. } = slot {
        if data[*start..*end].starts_with(BOM) {
            data.drain(*start..*start + BOM.len());
            *end -= BOM.len();
        }
    }
}
