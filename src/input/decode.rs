//! Opening an input: sniffing its first bytes, then reading it through the
//! right decompressor, streamed, in bounded memory.

use super::sniff::{sniff, Content, HEAD};
use std::io::{self, Read};

/// The fewest bytes that tell every compression format apart (xz's magic is
/// the longest, at six).
const MAGIC: usize = 6;

/// A reader that replays the bytes already peeked, then reads on; an error
/// met while peeking is returned after those bytes, not before, so that what
/// came before the damage is still scanned.
pub(crate) struct Peeked<R> {
    head: Vec<u8>,
    pos: usize,
    error: Option<io::Error>,
    inner: R,
}

impl<R: Read> Peeked<R> {
    /// Reads up to `max` bytes (stopping early once `min` are in when the
    /// source is slow, e.g. a pipe someone is typing into).
    pub(crate) fn new(mut inner: R, min: usize, max: usize) -> Self {
        let mut head = vec![0u8; max];
        let mut filled = 0;
        let mut error = None;
        while filled < max {
            match inner.read(&mut head[filled..]) {
                Ok(0) => break,
                Ok(n) => {
                    filled += n;
                    if filled >= min {
                        break;
                    }
                }
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(e) => {
                    error = Some(e);
                    break;
                }
            }
        }
        head.truncate(filled);
        Peeked {
            head,
            pos: 0,
            error,
            inner,
        }
    }

    /// The bytes peeked.
    pub(crate) fn head(&self) -> &[u8] {
        &self.head
    }
}

impl<R: Read> Read for Peeked<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        if self.pos < self.head.len() {
            let n = (self.head.len() - self.pos).min(buf.len());
            buf[..n].copy_from_slice(&self.head[self.pos..self.pos + n]);
            self.pos += n;
            if self.pos == self.head.len() {
                // Free the head: it is no longer needed.
                self.head = Vec::new();
                self.pos = 0;
            }
            return Ok(n);
        }
        if let Some(e) = self.error.take() {
            return Err(e);
        }
        self.inner.read(buf)
    }
}

/// Gives a decompressor's errors a message that names the format and says
/// what is wrong with the data, not only what the decoder tripped over.
struct Named<R> {
    inner: R,
    format: &'static str,
}

impl<R: Read> Read for Named<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        self.inner.read(buf).map_err(|e| {
            let what = if e.kind() == io::ErrorKind::UnexpectedEof {
                "ends early (truncated?)".to_string()
            } else {
                format!("is corrupt ({e})")
            };
            io::Error::new(e.kind(), format!("the {} data {what}", self.format))
        })
    }
}

/// An opened input: the reader of its (decompressed) text and what it holds.
pub struct Opened {
    /// The text, decompressed.
    pub reader: Box<dyn Read + Send>,
    /// What the first bytes said; for compressed input, the compression
    /// format (a compressed binary file is [`Content::Binary`]).
    pub content: Content,
}

/// Opens `raw`: sniffs its first bytes and decompresses it if they say so.
///
/// With `check_binary`, the first [`HEAD`] bytes (of the decompressed text,
/// for compressed input) are read at once and a NUL byte among them makes
/// the content [`Content::Binary`]; without it only a few bytes are awaited,
/// so that a pipe is not held up.
pub fn open_reader(raw: Box<dyn Read + Send>, check_binary: bool) -> io::Result<Opened> {
    let min = if check_binary { HEAD } else { MAGIC };
    let peeked = Peeked::new(raw, min, HEAD);
    let content = sniff(peeked.head());
    let reader: Box<dyn Read + Send> = match content {
        Content::Gzip => named(flate2::read::MultiGzDecoder::new(peeked), "gzip"),
        Content::Zstd => named(zstd::stream::read::Decoder::new(peeked)?, "zstd"),
        Content::Xz => named(liblzma::read::XzDecoder::new_multi_decoder(peeked), "xz"),
        Content::Bzip2 => named(bzip2::read::MultiBzDecoder::new(peeked), "bzip2"),
        _ => Box::new(peeked),
    };
    if content.compression().is_none() || !check_binary {
        return Ok(Opened { reader, content });
    }
    let text = Peeked::new(reader, HEAD, HEAD);
    let content = match sniff(text.head()) {
        Content::Binary => Content::Binary,
        _ => content,
    };
    Ok(Opened {
        reader: Box::new(text),
        content,
    })
}

fn named<R: Read + Send + 'static>(inner: R, format: &'static str) -> Box<dyn Read + Send> {
    Box::new(Named { inner, format })
}
