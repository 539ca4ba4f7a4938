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

/// An opened input: the reader of its (decompressed) text and what it holds.
pub struct Opened<'a> {
    /// The text, decompressed.
    pub reader: Box<dyn Read + Send + 'a>,
    /// What the first bytes said; for compressed input, the compression
    /// format (a compressed binary file is [`Content::Binary`]).
    pub content: Content,
    /// The (decompressed) input is an archive of files: a tar archive
    /// ([`super::scan_archive`] reads it from the stream) or a zip archive
    /// ([`super::scan_zip`] reads it from its file).
    pub archive: Option<Archive>,
}

/// The archive formats whose files are read as inputs of their own.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Archive {
    /// tar, read as a stream.
    Tar,
    /// zip, read from its file: its directory is at the end.
    Zip,
}

impl Archive {
    fn of(content: Content) -> Option<Archive> {
        match content {
            Content::Tar => Some(Archive::Tar),
            Content::Zip => Some(Archive::Zip),
            _ => None,
        }
    }
}

/// Opens `raw`: sniffs its first bytes and decompresses it if they say so.
///
/// With `check_binary`, the first [`HEAD`] bytes (of the decompressed text,
/// for compressed input) are read at once and a NUL byte among them makes
/// the content [`Content::Binary`]; without it only a few bytes are awaited,
/// so that a pipe is not held up. A compressed tar archive is told by the
/// first header of its decompressed bytes.
pub fn open_reader<'a>(
    raw: Box<dyn Read + Send + 'a>,
    check_binary: bool,
) -> io::Result<Opened<'a>> {
    let min = if check_binary { HEAD } else { MAGIC };
    let peeked = Peeked::new(raw, min, HEAD);
    let content = sniff(peeked.head());
    let reader: Box<dyn Read + Send + 'a> = Box::new(decompress(content, peeked)?);
    if content.compression().is_none() {
        return Ok(Opened {
            reader,
            content,
            archive: Archive::of(content),
        });
    }
    let min = if check_binary { HEAD } else { TAR_HEADER };
    let text = Peeked::new(reader, min, HEAD);
    let inner = sniff(text.head());
    let content = match inner {
        Content::Binary if check_binary => Content::Binary,
        _ => content,
    };
    Ok(Opened {
        reader: Box::new(text),
        content,
        archive: Archive::of(inner),
    })
}

/// The size of a tar header: enough decompressed bytes to tell an archive.
const TAR_HEADER: usize = 512;

/// `reader` through the decompressor `content` names, or as it is.
pub(crate) fn decompress<R: Read>(content: Content, reader: R) -> io::Result<Decoded<R>> {
    let decoder = match content {
        Content::Gzip => Decoder::Gzip(flate2::read::MultiGzDecoder::new(reader)),
        #[cfg(feature = "native")]
        Content::Zstd => Decoder::Zstd(zstd::stream::read::Decoder::new(reader)?),
        #[cfg(feature = "native")]
        Content::Xz => Decoder::Xz(liblzma::read::XzDecoder::new_multi_decoder(reader)),
        // Without the `native` feature (the browser build) the zstd and xz
        // decoders, C libraries, are not compiled in: such input is an error
        // that says so, never a panic and never read as text.
        #[cfg(not(feature = "native"))]
        Content::Zstd | Content::Xz => return Err(not_in_this_build(content)),
        Content::Bzip2 => Decoder::Bzip2(bzip2::read::MultiBzDecoder::new(reader)),
        _ => Decoder::Plain(reader),
    };
    Ok(Decoded {
        decoder,
        format: content.compression(),
    })
}

/// The error for a compression format whose decoder this build leaves out
/// (see the `native` feature).
#[cfg(not(feature = "native"))]
fn not_in_this_build(content: Content) -> io::Error {
    let format = content.compression().unwrap_or("this compression");
    io::Error::new(
        io::ErrorKind::Unsupported,
        format!(
            "{format} is not supported in the browser build: decompress the file first, \
             or use the oomwhy command"
        ),
    )
}

/// A decompressing reader (or a plain one); `Send` when its source is, so
/// that one type serves files (read by two threads) and the files inside an
/// archive (read where the archive is).
pub(crate) struct Decoded<R: Read> {
    decoder: Decoder<R>,
    /// The compression format, for error messages.
    format: Option<&'static str>,
}

enum Decoder<R: Read> {
    Plain(R),
    Gzip(flate2::read::MultiGzDecoder<R>),
    #[cfg(feature = "native")]
    Zstd(zstd::stream::read::Decoder<'static, io::BufReader<R>>),
    #[cfg(feature = "native")]
    Xz(liblzma::read::XzDecoder<R>),
    Bzip2(bzip2::read::MultiBzDecoder<R>),
}

impl<R: Read> Read for Decoded<R> {
    /// Gives a decompressor's errors a message that names the format and
    /// says what is wrong with the data, not only what the decoder tripped
    /// over.
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let read = match &mut self.decoder {
            Decoder::Plain(r) => r.read(buf),
            Decoder::Gzip(r) => r.read(buf),
            #[cfg(feature = "native")]
            Decoder::Zstd(r) => r.read(buf),
            #[cfg(feature = "native")]
            Decoder::Xz(r) => r.read(buf),
            Decoder::Bzip2(r) => r.read(buf),
        };
        let Some(format) = self.format else {
            return read;
        };
        read.map_err(|e| {
            let what = if e.kind() == io::ErrorKind::UnexpectedEof {
                "ends early (truncated?)".to_string()
            } else {
                format!("is corrupt ({e})")
            };
            io::Error::new(e.kind(), format!("the {format} data {what}"))
        })
    }
}
