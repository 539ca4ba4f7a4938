//! Lines remembered by their text or by their shape, so that a line seen
//! before is decided without normalising it or trying the families again.
//!
//! A log that repeats one message, or quotes messages in source code, sends
//! the same few lines down the slow path thousands of times, often differing
//! only in their figures (a timestamp, a size, a step number). A line's
//! *shape* is its text with every figure masked: each ASCII digit, and each
//! hex digit of a `0x` number, becomes `0`; the length stays. What the
//! scanner decided for a line is kept under its exact text, or under its
//! shape when the decision did not depend on the figures' values (see
//! [`crate::detect::Family::start_figure_phrases`]). Memory is bounded: at most
//! [`MAX_ENTRIES`] lines of at most [`MAX_REMEMBERED_LINE`] bytes; when full,
//! everything is forgotten and learned again.

use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};

/// A fast hasher for the scanner's maps (FxHash's mixing): the default
/// SipHash cost as much as masking a line. The maps hold what the input
/// says, but a collision only makes a lookup longer, and the maps are small.
#[derive(Default, Clone, Copy)]
pub(super) struct FewBits(u64);

impl Hasher for FewBits {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, bytes: &[u8]) {
        self.write_u64(hash(bytes));
    }
    fn write_u8(&mut self, n: u8) {
        self.write_u64(u64::from(n));
    }
    fn write_u32(&mut self, n: u32) {
        self.write_u64(u64::from(n));
    }
    fn write_usize(&mut self, n: usize) {
        self.write_u64(n as u64);
    }
    fn write_u64(&mut self, n: u64) {
        self.0 = (self.0.rotate_left(5) ^ n).wrapping_mul(0x51_7c_c1_b7_27_22_0a_95);
    }
}

/// A map keyed by hashes and small ids.
pub(super) type FastMap<K, V> = HashMap<K, V, BuildHasherDefault<FewBits>>;

/// Lines longer than this are decided afresh each time.
pub(super) const MAX_REMEMBERED_LINE: usize = 1024;
/// Shapes remembered at most.
const MAX_ENTRIES: usize = 512;
/// Lines remembered by their exact text, at most, per shape (then the
/// oldest makes room).
const MAX_EXACT_PER_SHAPE: usize = 8;

/// Which of a line's keys an entry is stored under.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub(super) enum KeyKind {
    /// The exact text.
    Exact,
    /// The text with its figures masked.
    Shape,
}

/// Identifies a remembered entry for as long as the scan runs: never reused
/// after the entry is forgotten.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub(super) struct EntryId {
    pub(super) kind: KeyKind,
    pub(super) serial: u64,
}

/// What is remembered for one shape: a value for all its lines, or values
/// for some of its lines by their exact text.
enum Slot<V> {
    Shape(u64, V),
    Exact(Vec<(Box<[u8]>, u64, V)>),
}

struct Entry<V> {
    /// The masked text, to rule out a hash collision.
    masked: Box<[u8]>,
    slot: Slot<V>,
}

/// A line's key: the hash of its shape, computed with the masking in one
/// pass, and whether the line can be remembered at all.
pub(super) struct Keys {
    shape: u64,
    /// The line holds a carriage return, an escape sequence introducer
    /// (ESC, or U+009B's first byte) or is too long: normalising it does
    /// more than cut off prefixes.
    pub(super) unusual: bool,
}

/// Remembered lines, by shape and then by exact text.
pub(super) struct ShapeTable<V> {
    entries: FastMap<u64, Entry<V>>,
    next_serial: u64,
    /// The last line's masked text.
    masked: Vec<u8>,
    /// For each byte of the line last given to
    /// [`ShapeTable::find_figures`], what another line of its shape may
    /// hold there: [`FIXED`], [`DIGIT`] or [`HEX`].
    figures: Vec<u8>,
    /// Times the table was emptied because it was full.
    pub(super) resets: u64,
}

impl<V> Default for ShapeTable<V> {
    fn default() -> Self {
        ShapeTable {
            entries: FastMap::default(),
            next_serial: 0,
            masked: Vec::new(),
            figures: Vec::new(),
            resets: 0,
        }
    }
}

impl<V> ShapeTable<V> {
    /// Masks `line` (kept for [`ShapeTable::get`] and
    /// [`ShapeTable::insert`]) and computes its key.
    pub(super) fn keys(&mut self, line: &[u8]) -> Keys {
        if line.len() > MAX_REMEMBERED_LINE {
            self.masked.clear();
            return Keys {
                shape: 0,
                unusual: true,
            };
        }
        let unusual = mask_into(line, &mut self.masked);
        Keys {
            shape: hash(&self.masked),
            unusual,
        }
    }

    /// The entry for the line last given to [`ShapeTable::keys`] (whose
    /// key is `keys`): its shape's, or its exact text's.
    pub(super) fn get(&self, line: &[u8], keys: &Keys) -> Option<(EntryId, &V)> {
        let entry = self
            .entries
            .get(&keys.shape)
            .filter(|e| *e.masked == *self.masked)?;
        match &entry.slot {
            Slot::Shape(serial, value) => Some((
                EntryId {
                    kind: KeyKind::Shape,
                    serial: *serial,
                },
                value,
            )),
            Slot::Exact(lines) => {
                lines
                    .iter()
                    .find(|(text, _, _)| **text == *line)
                    .map(|(_, serial, value)| {
                        (
                            EntryId {
                                kind: KeyKind::Exact,
                                serial: *serial,
                            },
                            value,
                        )
                    })
            }
        }
    }

    /// Notes which bytes of `line` are figures: for
    /// [`ShapeTable::might_contain`] and [`ShapeTable::blind_to`], asked
    /// only when a line is decided.
    pub(super) fn find_figures(&mut self, line: &[u8]) {
        self.figures.clear();
        self.figures.extend(
            line.iter()
                .map(|&b| if b.is_ascii_digit() { DIGIT } else { FIXED }),
        );
        for (start, end) in hex_numbers(line) {
            self.figures[start..end].fill(HEX);
        }
    }

    /// Whether some line of the shape of the line last given to
    /// [`ShapeTable::find_figures`] contains `needle`.
    pub(super) fn might_contain(&self, needle: &[u8]) -> bool {
        self.contains_where(needle, false)
    }

    /// Whether a family whose start reads figures only in `phrases` (see
    /// [`crate::detect::Family::start_figure_phrases`]) reads none on any
    /// line of the shape of the line last given to
    /// [`ShapeTable::find_figures`]: no phrase can be on such a line, in
    /// any case.
    pub(super) fn blind_to(&self, phrases: Option<&[&str]>) -> bool {
        phrases.is_some_and(|phrases| {
            !phrases
                .iter()
                .any(|phrase| self.contains_where(phrase.as_bytes(), true))
        })
    }

    /// Whether a figure of the line last given to
    /// [`ShapeTable::find_figures`] follows one of `words` (see
    /// [`crate::detect::Family::start_figure_words`]): before the figure, an
    /// optional sign, then spaces, `=`, `:` or `(` (and any non-ASCII byte:
    /// the families' `\s` is Unicode), then the word's letters in any case.
    pub(super) fn figure_after_word(&self, words: &[&str]) -> bool {
        if words.is_empty() {
            return false;
        }
        let starts = (0..self.figures.len())
            .filter(|&at| self.figures[at] != FIXED && (at == 0 || self.figures[at - 1] == FIXED));
        for start in starts {
            let mut at = start;
            if at > 0 && self.masked[at - 1] == b'-' {
                at -= 1;
            }
            while at > 0 {
                let b = self.masked[at - 1];
                if b.is_ascii_whitespace() || b"=:(".contains(&b) || b >= 0x80 {
                    at -= 1;
                } else {
                    break;
                }
            }
            let before = &self.masked[..at];
            let follows = words.iter().any(|word| {
                before.len() >= word.len()
                    && before[before.len() - word.len()..].eq_ignore_ascii_case(word.as_bytes())
            });
            if follows {
                return true;
            }
        }
        false
    }

    /// Whether some line of the shape holds `needle` somewhere, comparing
    /// the bytes that are not figures exactly or, with `any_case`, in any
    /// ASCII case. Asked for dozens of phrases each time a line is decided:
    /// where the needle has a byte that no figure can be (not a hex digit),
    /// only the places where the masked text has that byte are compared (a
    /// figure is masked as `0`, so no other place can match there).
    fn contains_where(&self, needle: &[u8], any_case: bool) -> bool {
        // The last place a needle can start; none when it is longer.
        let Some(last) = self.masked.len().checked_sub(needle.len()) else {
            return false;
        };
        let matches_at = |at: usize| {
            self.masked[at..at + needle.len()]
                .iter()
                .zip(needle)
                .enumerate()
                .all(|(i, (&have, &want))| match self.figures.get(at + i) {
                    Some(&DIGIT) => want.is_ascii_digit(),
                    Some(&HEX) => want.is_ascii_hexdigit(),
                    _ if any_case => have.eq_ignore_ascii_case(&want),
                    _ => have == want,
                })
        };
        let Some(anchor) = needle.iter().position(|b| !b.is_ascii_hexdigit()) else {
            return (0..=last).any(matches_at);
        };
        let byte = needle[anchor];
        let (lower, upper) = if any_case {
            (byte.to_ascii_lowercase(), byte.to_ascii_uppercase())
        } else {
            (byte, byte)
        };
        memchr::memchr2_iter(lower, upper, &self.masked)
            .filter_map(|at| at.checked_sub(anchor))
            .filter(|&at| at <= last)
            .any(matches_at)
    }

    /// Remembers `value` for the line last given to [`ShapeTable::keys`]
    /// (whose key is `keys`), for its whole shape or for its exact text.
    /// Returns the entry's id, and whether the table was emptied first to
    /// make room.
    pub(super) fn insert(
        &mut self,
        line: &[u8],
        keys: &Keys,
        kind: KeyKind,
        value: V,
    ) -> (EntryId, bool) {
        let emptied = self.entries.len() >= MAX_ENTRIES && !self.entries.contains_key(&keys.shape);
        if emptied {
            self.entries.clear();
            self.resets += 1;
        }
        let serial = self.next_serial;
        self.next_serial += 1;
        let entry = self.entries.entry(keys.shape).or_insert_with(|| Entry {
            masked: self.masked.as_slice().into(),
            slot: Slot::Exact(Vec::new()),
        });
        if *entry.masked != *self.masked {
            // Another shape with the same hash: this one takes its place.
            entry.masked = self.masked.as_slice().into();
            entry.slot = Slot::Exact(Vec::new());
        }
        match (kind, &mut entry.slot) {
            (KeyKind::Shape, slot) => *slot = Slot::Shape(serial, value),
            (KeyKind::Exact, Slot::Exact(lines)) => {
                if lines.len() >= MAX_EXACT_PER_SHAPE {
                    lines.remove(0);
                }
                lines.push((line.into(), serial, value));
            }
            // A line of a shape remembered whole is never looked up by its
            // text.
            (KeyKind::Exact, Slot::Shape(..)) => {}
        }
        (EntryId { kind, serial }, emptied)
    }
}

/// What a line of a shape holds at a byte of the masked text.
const FIXED: u8 = 0;
/// Any digit.
const DIGIT: u8 = 1;
/// Any hex digit (inside a `0x` number).
const HEX: u8 = 2;

/// Writes `line` into `out` with its figures masked: every ASCII digit, and
/// every hex digit of a `0x` number, becomes `0`. Returns whether the line
/// holds a carriage return, an ESC or the first byte of U+009B (in the same
/// pass: these lines are not remembered).
pub(super) fn mask_into(line: &[u8], out: &mut Vec<u8>) -> bool {
    out.clear();
    out.resize(line.len(), 0);
    // Branch-free, so that the compiler does it many bytes at a time.
    for (o, &b) in out.iter_mut().zip(line) {
        *o = if b.wrapping_sub(b'0') < 10 { b'0' } else { b };
    }
    if memchr::memchr2(b'x', b'X', line).is_some() {
        for (start, end) in hex_numbers(line) {
            out[start..end].fill(b'0');
        }
    }
    // 0xC2 starts many characters; only U+009B makes the line unusual.
    memchr::memchr3_iter(b'\r', 0x1b, 0xc2, line)
        .any(|at| line[at] != 0xc2 || line.get(at + 1) == Some(&0x9b))
}

/// The hex digits of each `0x` number in `line`: `0x` at the start of a
/// word, then hex digits to the end of the word (`0xcafe` is a number,
/// `0xcaller` is not).
fn hex_numbers(line: &[u8]) -> impl Iterator<Item = (usize, usize)> + '_ {
    let mut from = 0;
    std::iter::from_fn(move || loop {
        let x = from + memchr::memchr2(b'x', b'X', line.get(from..)?)?;
        from = x + 1;
        let starts_word =
            x >= 1 && line[x - 1] == b'0' && (x == 1 || !line[x - 2].is_ascii_alphanumeric());
        let end = (x + 1..line.len())
            .find(|&j| !line[j].is_ascii_hexdigit())
            .unwrap_or(line.len());
        let whole = end > x + 1
            && !line
                .get(end)
                .is_some_and(|b| b.is_ascii_alphanumeric() || *b == b'_');
        if starts_word && whole {
            from = end;
            return Some((x + 1, end));
        }
    })
}

/// A fast non-cryptographic hash (FxHash's mixing, eight bytes at a time);
/// the table compares the text too, so a collision only costs a miss.
pub(super) fn hash(bytes: &[u8]) -> u64 {
    const K: u64 = 0x51_7c_c1_b7_27_22_0a_95;
    let mut h = bytes.len() as u64;
    let mut chunks = bytes.chunks_exact(8);
    for chunk in &mut chunks {
        let mut word = [0u8; 8];
        word.copy_from_slice(chunk);
        h = (h.rotate_left(5) ^ u64::from_le_bytes(word)).wrapping_mul(K);
    }
    let mut last = [0u8; 8];
    let rest = chunks.remainder();
    last[..rest.len()].copy_from_slice(rest);
    (h.rotate_left(5) ^ u64::from_le_bytes(last)).wrapping_mul(K)
}

/// Digit runs of `bytes`: (start, end) of each.
pub(super) fn digit_runs(bytes: &[u8]) -> impl Iterator<Item = (usize, usize)> + '_ {
    let mut i = 0;
    std::iter::from_fn(move || {
        while i < bytes.len() && !bytes[i].is_ascii_digit() {
            i += 1;
        }
        if i >= bytes.len() {
            return None;
        }
        let start = i;
        while i < bytes.len() && bytes[i].is_ascii_digit() {
            i += 1;
        }
        Some((start, i))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn masked(line: &str) -> String {
        let mut out = Vec::new();
        mask_into(line.as_bytes(), &mut out);
        String::from_utf8(out).unwrap()
    }

    #[test]
    fn knows_what_other_lines_of_a_shape_may_hold() {
        let mut table: ShapeTable<()> = ShapeTable::default();
        let line = b"code 0xD0000409 id=-2073740791";
        table.keys(line);
        table.find_figures(line);
        // Other lines of this shape hold 0xC0000409 and -1073740791.
        assert!(table.might_contain(b"C0000"));
        assert!(table.might_contain(b"-107374"));
        assert!(!table.might_contain(b"result=2"));
        table.keys(b"result=7");
        table.find_figures(b"result=7");
        assert!(table.might_contain(b"result=2"));
        assert!(!table.might_contain(b"resulx=2"));
    }

    /// The anchored search answers as comparing at every place does.
    #[test]
    fn anchored_search_agrees_with_every_place() {
        let lines: &[&[u8]] = &[
            b"CUDA error 35 at step 0x1f: rror 2, exit code -9",
            b"W bfc_allocator.cc:296] Allocator (GPU_0_bfc) ran out of memory",
            b"    # torch.OutOfMemoryError: CUDA out of memory. Tried 20.00 MiB",
            b"result=7 RESULT=70 Exit Status 137 c0000409 0XC0000409",
            b"",
        ];
        let needles: &[&[u8]] = &[
            b"rror 2,",
            b"result=2",
            b"exit code",
            b"EXIT STATUS 1",
            b"C0000",
            b"-107374",
            b"0x",
            b"ran out",
            b"GPU_0",
            b"died due to signal 9",
            b"Tried 1",
            b"a",
        ];
        for line in lines {
            let mut table: ShapeTable<()> = ShapeTable::default();
            table.keys(line);
            table.find_figures(line);
            for needle in needles {
                for any_case in [false, true] {
                    let everywhere = table.masked.len() >= needle.len()
                        && (0..=table.masked.len() - needle.len()).any(|at| {
                            needle.iter().enumerate().all(|(i, &want)| {
                                let have = table.masked[at + i];
                                match table.figures[at + i] {
                                    DIGIT => want.is_ascii_digit(),
                                    HEX => want.is_ascii_hexdigit(),
                                    _ if any_case => have.eq_ignore_ascii_case(&want),
                                    _ => have == want,
                                }
                            })
                        });
                    assert_eq!(
                        table.contains_where(needle, any_case),
                        everywhere,
                        "{:?} in {:?}",
                        String::from_utf8_lossy(needle),
                        String::from_utf8_lossy(line)
                    );
                }
            }
        }
    }

    #[test]
    fn finds_figures_after_words() {
        let words = &["error", "returned", "code"];
        let after = |line: &[u8]| {
            let mut table: ShapeTable<()> = ShapeTable::default();
            table.keys(line);
            table.find_figures(line);
            table.figure_after_word(words)
        };
        assert!(after(b"CUDA error 35 at x"));
        assert!(after(b"CUDA Error=-2"));
        assert!(after(b"cudaMalloc returned  (  35"));
        assert!(after(b"failed with error code 2"));
        assert!(after(b"CUDA error:\xc2\xa02"));
        assert!(!after(
            b"logger.warning(\"CUDA error: out of memory %d\", 12)"
        ));
        assert!(!after(b"executor.cc:1197] [/device:CPU:0] errors 5"));
        assert!(!after(b"no figures after error: here"));
        let mut table: ShapeTable<()> = ShapeTable::default();
        table.keys(b"error 1");
        table.find_figures(b"error 1");
        assert!(!table.figure_after_word(&[]));
    }

    #[test]
    fn masks_digits_and_hex_numbers_only() {
        assert_eq!(
            masked("2023-10-02 16:36:14.402881: step 12 at 0x7f3aBC, 0xZ, face"),
            "0000-00-00 00:00:00.000000: step 00 at 0x000000, 0xZ, face"
        );
        assert_eq!(masked("x0x"), "x0x");
        assert_eq!(masked("10xface a0xface"), "00xface a0xface");
        assert_eq!(masked("0xcaller 0xca_"), "0xcaller 0xca_");
        assert_eq!(masked("GPU_0_bfc 2.14GiB"), "GPU_0_bfc 0.00GiB");
    }

    #[test]
    fn finds_lines_by_text_then_by_shape() {
        let mut table: ShapeTable<u32> = ShapeTable::default();
        let a = b"step 12 loss 0.5";
        let keys = table.keys(a);
        assert!(table.get(a, &keys).is_none());
        let (exact, _) = table.insert(a, &keys, KeyKind::Exact, 1);
        let keys = table.keys(a);
        assert_eq!(
            table.get(a, &keys).map(|(id, v)| (id, *v)),
            Some((exact, 1))
        );
        // Same shape, other figures: not found by its text.
        let b = b"step 99 loss 0.7";
        let keys = table.keys(b);
        assert!(table.get(b, &keys).is_none());
        // Remembered for the whole shape: found for any figures.
        let (shape, _) = table.insert(b, &keys, KeyKind::Shape, 2);
        for c in [&b"step 31 loss 0.1"[..], a] {
            let keys = table.keys(c);
            assert_eq!(
                table.get(c, &keys).map(|(id, v)| (id, *v)),
                Some((shape, 2))
            );
        }
        assert_ne!(exact, shape);
        // Another shape.
        let d = b"step 310 loss 0.1";
        let keys = table.keys(d);
        assert!(table.get(d, &keys).is_none());
        // Lines that normalising rewrites are marked.
        assert!(table.keys(b"a\rb").unusual);
        assert!(table.keys("a\u{9b}1mb".as_bytes()).unusual);
        assert!(!table.keys("déjà 1".as_bytes()).unusual);
    }

    #[test]
    fn stays_bounded() {
        let mut table: ShapeTable<()> = ShapeTable::default();
        for i in 0..3 * MAX_ENTRIES {
            // A word of letters only: a shape of its own for each line.
            let word: String = format!("{i:x}")
                .bytes()
                .map(|b| match b {
                    b'0'..=b'9' => char::from(b'g' + (b - b'0')),
                    _ => char::from(b'q' + (b - b'a')),
                })
                .collect();
            let line = format!("line {word}");
            let keys = table.keys(line.as_bytes());
            table.insert(line.as_bytes(), &keys, KeyKind::Exact, ());
            assert!(table.entries.len() <= MAX_ENTRIES);
            assert!(table.entries.values().all(|e| match &e.slot {
                Slot::Exact(lines) => lines.len() <= MAX_EXACT_PER_SHAPE,
                Slot::Shape(..) => true,
            }));
        }
        assert!(table.resets >= 2);
    }

    #[test]
    fn lists_digit_runs() {
        let runs: Vec<_> = digit_runs(b"[rank12]: a 3 b45").collect();
        assert_eq!(runs, [(5, 7), (12, 13), (15, 17)]);
    }
}
