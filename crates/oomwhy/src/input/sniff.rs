//! What an input holds, told by its first bytes rather than its name: a log
//! renamed `.txt` or a compressed log without an extension is still read.
//!
//! Every content check of the input path lives in [`sniff`], so that a new
//! format is one more variant and one more arm.

/// Bytes to look at: enough for every magic number, and for the binary check
/// (ripgrep's first-buffer heuristic looks at a similar amount).
pub const HEAD: usize = 8 * 1024;

/// What the first bytes of an input say it is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum Content {
    /// Text (possibly with stray invalid UTF-8): scanned as it is.
    Text,
    /// gzip (RFC 1952), one member or several concatenated.
    Gzip,
    /// Zstandard (RFC 8878), one frame or several.
    Zstd,
    /// xz (the .xz container of LZMA2), one stream or several.
    Xz,
    /// bzip2, one stream or several.
    Bzip2,
    /// A pickle (protocol 2 or later): a PyTorch memory snapshot or another
    /// pickle, which the snapshot reader tells apart.
    Snapshot,
    /// A tar archive (its first header's `ustar` magic): each file in it is
    /// read as an input of its own.
    Tar,
    /// A zip archive (a local file header's `PK\x03\x04`): each file in it
    /// is read as an input of its own.
    Zip,
    /// Not text: a NUL byte in the first [`HEAD`] bytes.
    Binary,
}

impl Content {
    /// The compression format's name, for error messages; `None` for
    /// content that is not compressed.
    pub fn compression(self) -> Option<&'static str> {
        match self {
            Content::Gzip => Some("gzip"),
            Content::Zstd => Some("zstd"),
            Content::Xz => Some("xz"),
            Content::Bzip2 => Some("bzip2"),
            Content::Text | Content::Snapshot | Content::Tar | Content::Zip | Content::Binary => {
                None
            }
        }
    }
}

/// Tells what `head`, the first bytes of an input (up to [`HEAD`] of them,
/// fewer only at the end of the input), holds.
///
/// ```
/// use oomwhy::input::{sniff, Content};
/// assert_eq!(sniff(b"\x1f\x8b\x08\x00"), Content::Gzip);
/// assert_eq!(sniff(b"RuntimeError: CUDA out of memory."), Content::Text);
/// assert_eq!(sniff(b"\x7fELF\x02\x01\x01\x00\x00"), Content::Binary);
/// ```
pub fn sniff(head: &[u8]) -> Content {
    // Magic numbers: gzip RFC 1952 §2.3.1; zstd RFC 8878 §3.1.1; xz file
    // format §2.1.1.1; bzip2 "BZh" and a block size digit.
    if head.starts_with(&[0x1f, 0x8b]) {
        Content::Gzip
    } else if head.starts_with(&[0x28, 0xb5, 0x2f, 0xfd]) {
        Content::Zstd
    } else if head.starts_with(&[0xfd, b'7', b'z', b'X', b'Z', 0x00]) {
        Content::Xz
    } else if head.len() >= 4 && head.starts_with(b"BZh") && (b'1'..=b'9').contains(&head[3]) {
        Content::Bzip2
    } else if crate::snapshot::sniff(head) {
        Content::Snapshot
    } else if is_tar(head) {
        Content::Tar
    } else if head.starts_with(b"PK\x03\x04") {
        // APPNOTE.TXT 4.3.7: a zip archive starts with a local file header.
        Content::Zip
    } else if memchr::memchr(0, head).is_some() {
        // ripgrep's rule: a NUL byte means binary.
        Content::Binary
    } else {
        Content::Text
    }
}

/// Whether `head` starts with a tar header: the magic `ustar` at offset 257
/// (POSIX.1-1988 `ustar\0` and GNU tar's `ustar  \0`), in a header that holds
/// a NUL as every tar header does (text cannot pass for one).
pub fn is_tar(head: &[u8]) -> bool {
    head.len() >= 512 && &head[257..262] == b"ustar" && memchr::memchr(0, &head[..512]).is_some()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tells_formats_by_magic_not_name() {
        assert_eq!(sniff(&[0x28, 0xb5, 0x2f, 0xfd, 0x24]), Content::Zstd);
        assert_eq!(sniff(b"\xfd7zXZ\x00\x00\x04"), Content::Xz);
        assert_eq!(sniff(b"BZh91AY&SY"), Content::Bzip2);
        let mut tar = vec![0u8; 512];
        tar[..9].copy_from_slice(b"rank0.log");
        tar[257..263].copy_from_slice(b"ustar\0");
        assert_eq!(sniff(&tar), Content::Tar);
        assert_eq!(sniff(b"PK\x03\x04\x14\x00\x08\x00"), Content::Zip);
        // The same bytes as text, without a NUL, are text.
        let text: Vec<u8> = tar.iter().map(|&b| if b == 0 { b' ' } else { b }).collect();
        assert_eq!(sniff(&text), Content::Text);
        // "BZh" followed by no block size digit is text.
        assert_eq!(sniff(b"BZhello"), Content::Text);
        assert_eq!(sniff(b""), Content::Text);
        assert_eq!(sniff(b"\x1f"), Content::Text);
        assert_eq!(
            sniff(b"ok\n\xff\xfe invalid UTF-8 is still text"),
            Content::Text
        );
    }
}
