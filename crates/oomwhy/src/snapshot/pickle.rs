//! A data-only pickle reader.
//!
//! It understands the opcodes that build plain data (None, booleans,
//! integers of any width, floats, strings, bytes, lists, tuples, dicts,
//! sets, memo references) and refuses every opcode that would import or
//! call anything (`GLOBAL`, `STACK_GLOBAL`, `REDUCE`, `BUILD`, `INST`, `OBJ`,
//! `NEWOBJ`, extension codes, persistent ids, out-of-band buffers). Nothing
//! is executed, ever; a refused opcode ends the read with an error.
//!
//! Values live in one arena and refer to each other by index, so a container
//! shared through the memo by thousands of others (PyTorch snapshots share
//! frame lists this way) is stored once, and a container that contains itself
//! needs no special case. Memory is bounded by the input: every value costs
//! at least one input byte, and declared lengths are checked against the
//! bytes actually left before anything is allocated.

use std::collections::HashMap;
use std::fmt;
use std::io::BufRead;

/// Why a pickle could not be read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PickleError {
    /// Byte offset of the opcode that failed.
    pub offset: usize,
    /// What went wrong.
    pub kind: PickleErrorKind,
}

/// The kinds of [`PickleError`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PickleErrorKind {
    /// The data ends inside an opcode or before `STOP`.
    Truncated,
    /// An opcode that imports or calls code (named), refused by design.
    CodeOpcode(&'static str),
    /// A byte that is no pickle opcode this reader knows.
    UnknownOpcode(u8),
    /// A data opcode this reader does not decode (named).
    Unsupported(&'static str),
    /// A protocol number above 5.
    UnsupportedProtocol(u8),
    /// An opcode needed more values on the stack than there were.
    StackUnderflow,
    /// An opcode that needs a mark found none.
    NoMark,
    /// A memo reference to an index never stored.
    MissingMemo(u64),
    /// `APPEND`/`SETITEM`/`ADDITEMS` on a value of the wrong type.
    WrongTarget(&'static str),
    /// A string that is not valid UTF-8, or a malformed text-form argument.
    Malformed(&'static str),
    /// `STOP` left nothing (or more than one value) on the stack.
    BadStop,
    /// Reading the input failed.
    Io(String),
}

impl fmt::Display for PickleError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let at = self.offset;
        match &self.kind {
            PickleErrorKind::Truncated => write!(f, "the pickle is truncated (ends at byte {at})"),
            PickleErrorKind::CodeOpcode(name) => write!(
                f,
                "the pickle asks to run code (opcode {name} at byte {at}); oomwhy reads data only and refuses it"
            ),
            PickleErrorKind::UnknownOpcode(op) => {
                write!(f, "unknown pickle opcode 0x{op:02x} at byte {at}")
            }
            PickleErrorKind::Unsupported(name) => {
                write!(f, "pickle opcode {name} at byte {at} is not supported")
            }
            PickleErrorKind::UnsupportedProtocol(p) => {
                write!(f, "unsupported pickle protocol {p} at byte {at}")
            }
            PickleErrorKind::StackUnderflow => {
                write!(f, "malformed pickle: stack underflow at byte {at}")
            }
            PickleErrorKind::NoMark => write!(f, "malformed pickle: missing mark at byte {at}"),
            PickleErrorKind::MissingMemo(i) => {
                write!(f, "malformed pickle: memo entry {i} used before it was stored (byte {at})")
            }
            PickleErrorKind::WrongTarget(what) => {
                write!(f, "malformed pickle: {what} on the wrong kind of value at byte {at}")
            }
            PickleErrorKind::Malformed(what) => write!(f, "malformed pickle: {what} at byte {at}"),
            PickleErrorKind::Io(e) => write!(f, "cannot read the input at byte {at}: {e}"),
            PickleErrorKind::BadStop => {
                write!(f, "malformed pickle: STOP at byte {at} without exactly one value")
            }
        }
    }
}

impl std::error::Error for PickleError {}

/// One value; containers and strings are indices into the [`Pickle`] arena.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Value {
    /// `None`.
    None,
    /// `True`/`False`.
    Bool(bool),
    /// An integer that fits in 64 bits (signed).
    Int(i64),
    /// An integer beyond `i64` that fits in 128 bits (e.g. 2⁶⁴−1): index into the longs.
    Long(u32),
    /// An integer beyond 128 bits; only its sign is kept (true: negative).
    Huge(bool),
    /// A float.
    Float(f64),
    /// A string: index into the strings.
    Str(u32),
    /// Bytes or bytearray: index into the byte strings.
    Bytes(u32),
    /// A list: index into the containers.
    List(u32),
    /// A tuple: index into the containers.
    Tuple(u32),
    /// A set or frozenset: index into the containers.
    Set(u32),
    /// A dict: index into the containers.
    Dict(u32),
}

/// A value packed into 8 bytes, as the arena stores it: the low 4 bits are
/// the type, the rest the payload (an integer of up to 60 bits, or an index).
/// Snapshots hold tens of millions of values; half the size is half the memory.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Slot(u64);

const T_NONE: u64 = 0;
const T_FALSE: u64 = 1;
const T_TRUE: u64 = 2;
const T_INT: u64 = 3;
const T_LONG: u64 = 4;
const T_HUGE: u64 = 5;
const T_FLOAT: u64 = 6;
const T_STR: u64 = 7;
const T_BYTES: u64 = 8;
const T_LIST: u64 = 9;
const T_TUPLE: u64 = 10;
const T_SET: u64 = 11;
const T_DICT: u64 = 12;
/// Integers in this range are stored inline.
const INLINE_MIN: i64 = -(1 << 59);
const INLINE_MAX: i64 = (1 << 59) - 1;

impl Slot {
    fn new(tag: u64, payload: u64) -> Slot {
        Slot((payload << 4) | tag)
    }
    fn tag(self) -> u64 {
        self.0 & 0xf
    }
    fn index(self) -> u32 {
        (self.0 >> 4) as u32
    }
}

/// Where a container's items are: a run of the shared item arena, or (after
/// a second batch arrived when other items already followed the first) a
/// vector of its own.
#[derive(Debug, Clone, Copy)]
enum Span {
    Run { start: u32, len: u32 },
    Own(u32),
}

/// A decoded pickle: the root value and the arena it points into.
#[derive(Debug, Default)]
pub struct Pickle {
    /// The protocol stated by the `PROTO` opcode (0 when absent).
    pub protocol: u8,
    /// The value `STOP` returned.
    pub root: Option<Value>,
    strings: Vec<Box<str>>,
    bytes: Vec<Box<[u8]>>,
    longs: Vec<i128>,
    floats: Vec<f64>,
    /// Every container's span; lists, tuples and sets hold values, dicts
    /// hold keys and values alternately.
    spans: Vec<Span>,
    items: Vec<Slot>,
    own: Vec<Vec<Slot>>,
}

/// The items of a list, tuple or set (see [`Pickle::seq`]).
#[derive(Debug, Clone)]
pub struct Items<'p> {
    p: &'p Pickle,
    slots: std::slice::Iter<'p, Slot>,
}

impl Iterator for Items<'_> {
    type Item = Value;
    fn next(&mut self) -> Option<Value> {
        self.slots.next().map(|s| self.p.unpack(*s))
    }
    fn size_hint(&self) -> (usize, Option<usize>) {
        self.slots.size_hint()
    }
}

impl DoubleEndedIterator for Items<'_> {
    fn next_back(&mut self) -> Option<Value> {
        self.slots.next_back().map(|s| self.p.unpack(*s))
    }
}

impl ExactSizeIterator for Items<'_> {}

/// The entries of a dict, in insertion order (see [`Pickle::dict`]).
#[derive(Debug, Clone)]
pub struct Entries<'p> {
    p: &'p Pickle,
    slots: std::slice::ChunksExact<'p, Slot>,
}

impl Iterator for Entries<'_> {
    type Item = (Value, Value);
    fn next(&mut self) -> Option<(Value, Value)> {
        self.slots
            .next()
            .map(|kv| (self.p.unpack(kv[0]), self.p.unpack(kv[1])))
    }
    fn size_hint(&self) -> (usize, Option<usize>) {
        self.slots.size_hint()
    }
}

impl DoubleEndedIterator for Entries<'_> {
    fn next_back(&mut self) -> Option<(Value, Value)> {
        self.slots
            .next_back()
            .map(|kv| (self.p.unpack(kv[0]), self.p.unpack(kv[1])))
    }
}

impl ExactSizeIterator for Entries<'_> {}

impl Pickle {
    /// The root value (`None` for a pickle whose root is Python `None`).
    pub fn root(&self) -> Value {
        self.root.unwrap_or(Value::None)
    }

    fn unpack(&self, s: Slot) -> Value {
        let i = s.index();
        match s.tag() {
            T_FALSE => Value::Bool(false),
            T_TRUE => Value::Bool(true),
            // Sign-extend the 60-bit payload.
            T_INT => Value::Int((s.0 as i64) >> 4),
            T_LONG => Value::Long(i),
            T_HUGE => Value::Huge(i != 0),
            T_FLOAT => Value::Float(self.floats.get(i as usize).copied().unwrap_or(f64::NAN)),
            T_STR => Value::Str(i),
            T_BYTES => Value::Bytes(i),
            T_LIST => Value::List(i),
            T_TUPLE => Value::Tuple(i),
            T_SET => Value::Set(i),
            T_DICT => Value::Dict(i),
            _ => Value::None,
        }
    }

    fn slots(&self, container: u32) -> &[Slot] {
        match self.spans.get(container as usize) {
            Some(Span::Run { start, len }) => {
                let start = *start as usize;
                self.items.get(start..start + *len as usize).unwrap_or(&[])
            }
            Some(Span::Own(i)) => self.own.get(*i as usize).map_or(&[], |v| &v[..]),
            None => &[],
        }
    }

    /// The text of a string value.
    pub fn str(&self, v: Value) -> Option<&str> {
        match v {
            Value::Str(i) => self.strings.get(i as usize).map(|s| &**s),
            _ => None,
        }
    }

    /// The value as an integer, if it is one that fits in 128 bits (booleans count, as in Python).
    pub fn int(&self, v: Value) -> Option<i128> {
        match v {
            Value::Int(i) => Some(i128::from(i)),
            Value::Long(i) => self.longs.get(i as usize).copied(),
            Value::Bool(b) => Some(i128::from(b)),
            _ => None,
        }
    }

    /// The value as a float (integers convert).
    pub fn float(&self, v: Value) -> Option<f64> {
        match v {
            Value::Float(x) => Some(x),
            _ => self.int(v).map(|i| i as f64),
        }
    }

    /// The items of a list, tuple or set.
    pub fn seq(&self, v: Value) -> Option<Items<'_>> {
        match v {
            Value::List(i) | Value::Tuple(i) | Value::Set(i) => Some(Items {
                p: self,
                slots: self.slots(i).iter(),
            }),
            _ => None,
        }
    }

    /// The entries of a dict, in insertion order (a repeated key appears twice).
    pub fn dict(&self, v: Value) -> Option<Entries<'_>> {
        match v {
            Value::Dict(i) => Some(Entries {
                p: self,
                slots: self.slots(i).chunks_exact(2),
            }),
            _ => None,
        }
    }

    /// The value stored under a string key of a dict (the last one, as Python keeps).
    pub fn get(&self, dict: Value, key: &str) -> Option<Value> {
        let Value::Dict(i) = dict else {
            return None;
        };
        self.slots(i)
            .chunks_exact(2)
            .rev()
            .find(|kv| {
                kv[0].tag() == T_STR
                    && self.strings.get(kv[0].index() as usize).map(|s| &**s) == Some(key)
            })
            .map(|kv| self.unpack(kv[1]))
    }

    /// A short name of the value's Python type, for messages.
    pub fn type_name(v: Value) -> &'static str {
        match v {
            Value::None => "None",
            Value::Bool(_) => "bool",
            Value::Int(_) | Value::Long(_) | Value::Huge(_) => "int",
            Value::Float(_) => "float",
            Value::Str(_) => "str",
            Value::Bytes(_) => "bytes",
            Value::List(_) => "list",
            Value::Tuple(_) => "tuple",
            Value::Set(_) => "set",
            Value::Dict(_) => "dict",
        }
    }
}

/// True if `prefix` starts like a pickle of protocol 2 to 5 (`PROTO n`).
pub fn has_header(prefix: &[u8]) -> bool {
    matches!(prefix, [0x80, 2..=5, ..])
}

/// Reads a pickle held in memory. Never executes anything; refuses code opcodes.
pub fn read(data: &[u8]) -> Result<Pickle, PickleError> {
    read_from(data)
}

/// Reads a pickle from a buffered reader, up to its `STOP` opcode, without
/// holding the input in memory. Read errors end it like malformed data.
pub fn read_from<S: BufRead>(source: S) -> Result<Pickle, PickleError> {
    Reader::new(source).run()
}

/// Memo: dense while the pickler numbers entries in order (it always does),
/// sparse for anything else, so a hostile index costs no memory.
#[derive(Default)]
struct Memo {
    dense: Vec<Slot>,
    sparse: HashMap<u64, Slot>,
}

impl Memo {
    fn put(&mut self, index: u64, v: Slot) {
        if index == self.dense.len() as u64 {
            self.dense.push(v);
        } else if let Some(slot) = usize::try_from(index)
            .ok()
            .and_then(|i| self.dense.get_mut(i))
        {
            *slot = v;
        } else {
            self.sparse.insert(index, v);
        }
    }

    fn get(&self, index: u64) -> Option<Slot> {
        usize::try_from(index)
            .ok()
            .and_then(|i| self.dense.get(i))
            .or_else(|| self.sparse.get(&index))
            .copied()
    }

    fn len(&self) -> u64 {
        self.dense.len() as u64 + self.sparse.len() as u64
    }
}

struct Reader<S> {
    source: S,
    /// Bytes consumed so far.
    pos: u64,
    /// A reusable buffer for strings and wide integers.
    scratch: Vec<u8>,
    /// Offset of the opcode being executed, for errors.
    op_at: usize,
    stack: Vec<Slot>,
    marks: Vec<usize>,
    memo: Memo,
    out: Pickle,
}

type R<T> = Result<T, PickleError>;

/// Arena indices are 32 bits wide; the input limit keeps them far below.
fn index(len: usize) -> u64 {
    len as u64
}

impl<S: BufRead> Reader<S> {
    fn new(source: S) -> Self {
        Reader {
            source,
            pos: 0,
            scratch: Vec::new(),
            op_at: 0,
            stack: Vec::new(),
            marks: Vec::new(),
            memo: Memo::default(),
            out: Pickle::default(),
        }
    }

    fn err(&self, kind: PickleErrorKind) -> PickleError {
        PickleError {
            offset: self.op_at,
            kind,
        }
    }

    fn io(&self, e: &std::io::Error) -> PickleError {
        self.err(PickleErrorKind::Io(e.to_string()))
    }

    /// The next `n` bytes, in the reusable buffer (hand it back with
    /// [`Self::give_back`]). The buffer grows only as bytes arrive, so a
    /// hostile declared length costs nothing.
    fn take(&mut self, n: u64) -> R<Vec<u8>> {
        let mut buf = std::mem::take(&mut self.scratch);
        buf.clear();
        let mut left = n;
        while left > 0 {
            let chunk = match self.source.fill_buf() {
                Ok(chunk) => chunk,
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
                Err(e) => return Err(self.io(&e)),
            };
            if chunk.is_empty() {
                return Err(self.err(PickleErrorKind::Truncated));
            }
            let k = chunk.len().min(usize::try_from(left).unwrap_or(usize::MAX));
            buf.extend_from_slice(&chunk[..k]);
            self.source.consume(k);
            self.pos += k as u64;
            left -= k as u64;
        }
        Ok(buf)
    }

    fn give_back(&mut self, buf: Vec<u8>) {
        self.scratch = buf;
    }

    fn u8(&mut self) -> R<u8> {
        loop {
            match self.source.fill_buf() {
                Ok([]) => return Err(self.err(PickleErrorKind::Truncated)),
                Ok(chunk) => {
                    let b = chunk[0];
                    self.source.consume(1);
                    self.pos += 1;
                    return Ok(b);
                }
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
                Err(e) => return Err(self.io(&e)),
            }
        }
    }

    fn le(&mut self, n: usize) -> R<u64> {
        let mut v = 0u64;
        for i in 0..n {
            v |= u64::from(self.u8()?) << (8 * i);
        }
        Ok(v)
    }

    /// A newline-terminated argument of the text opcodes (short by nature).
    fn line(&mut self) -> R<String> {
        let mut line = Vec::new();
        loop {
            match self.u8()? {
                b'\n' => break,
                b if line.len() < 4096 => line.push(b),
                _ => return Err(self.err(PickleErrorKind::Malformed("text argument too long"))),
            }
        }
        String::from_utf8(line)
            .map_err(|_| self.err(PickleErrorKind::Malformed("non-ASCII text argument")))
    }

    fn push(&mut self, v: Slot) {
        self.stack.push(v);
    }

    fn floor(&self) -> usize {
        self.marks.last().copied().unwrap_or(0)
    }

    fn pop(&mut self) -> R<Slot> {
        if self.stack.len() <= self.floor() {
            return Err(self.err(PickleErrorKind::StackUnderflow));
        }
        self.stack
            .pop()
            .ok_or_else(|| self.err(PickleErrorKind::StackUnderflow))
    }

    fn top(&self) -> R<Slot> {
        if self.stack.len() <= self.floor() {
            return Err(self.err(PickleErrorKind::StackUnderflow));
        }
        self.stack
            .last()
            .copied()
            .ok_or_else(|| self.err(PickleErrorKind::StackUnderflow))
    }

    /// The position of the last mark, which is popped; the values above it
    /// stay on the stack for the caller to take.
    fn pop_mark(&mut self) -> R<usize> {
        let mark = self
            .marks
            .pop()
            .ok_or_else(|| self.err(PickleErrorKind::NoMark))?;
        Ok(mark.min(self.stack.len()))
    }

    /// A new container holding `stack[from..]`, which leaves the stack.
    fn container(&mut self, tag: u64, from: usize) -> Slot {
        let start = self.out.items.len();
        self.out.items.extend(self.stack.drain(from..));
        let len = self.out.items.len() - start;
        self.out.spans.push(Span::Run {
            start: start as u32,
            len: len as u32,
        });
        Slot::new(tag, index(self.out.spans.len() - 1))
    }

    /// Appends `stack[from..]` to the container `target` (a list, set or dict).
    fn extend(&mut self, target: Slot, from: usize, what: &'static str) -> R<()> {
        let i = target.index() as usize;
        let Some(span) = self.out.spans.get(i).copied() else {
            return Err(self.err(PickleErrorKind::WrongTarget(what)));
        };
        let added = self.stack.len() - from;
        match span {
            // Still at the end of the arena (or empty): grow in place.
            Span::Run { start, len }
                if len == 0 || start as usize + len as usize == self.out.items.len() =>
            {
                let start = if len == 0 {
                    self.out.items.len() as u32
                } else {
                    start
                };
                self.out.items.extend(self.stack.drain(from..));
                self.out.spans[i] = Span::Run {
                    start,
                    len: len + added as u32,
                };
            }
            // Other items followed: the container moves to a vector of its own.
            Span::Run { start, len } => {
                let start = start as usize;
                let mut own = self.out.items[start..start + len as usize].to_vec();
                own.extend(self.stack.drain(from..));
                self.out.own.push(own);
                self.out.spans[i] = Span::Own((self.out.own.len() - 1) as u32);
            }
            Span::Own(o) => match self.out.own.get_mut(o as usize) {
                Some(own) => own.extend(self.stack.drain(from..)),
                None => return Err(self.err(PickleErrorKind::WrongTarget(what))),
            },
        }
        Ok(())
    }

    fn string(&mut self, bytes: &[u8]) -> R<Slot> {
        let s = std::str::from_utf8(bytes)
            .map_err(|_| self.err(PickleErrorKind::Malformed("string is not UTF-8")))?;
        self.out.strings.push(s.into());
        Ok(Slot::new(T_STR, index(self.out.strings.len() - 1)))
    }

    fn latin1(&mut self, bytes: &[u8]) -> Slot {
        // Python 2 `str`: bytes, shown as Latin-1 text.
        let s: String = bytes.iter().map(|&b| char::from(b)).collect();
        self.out.strings.push(s.into());
        Slot::new(T_STR, index(self.out.strings.len() - 1))
    }

    fn byte_string(&mut self, bytes: &[u8]) -> Slot {
        self.out.bytes.push(bytes.into());
        Slot::new(T_BYTES, index(self.out.bytes.len() - 1))
    }

    fn float(&mut self, x: f64) -> Slot {
        self.out.floats.push(x);
        Slot::new(T_FLOAT, index(self.out.floats.len() - 1))
    }

    /// A two's-complement little-endian integer of any width.
    fn long(&mut self, bytes: &[u8]) -> Slot {
        let negative = bytes.last().is_some_and(|&b| b & 0x80 != 0);
        // Strip sign-extension bytes so that wide encodings of small values fit.
        let fill = if negative { 0xff } else { 0x00 };
        let mut len = bytes.len();
        while len > 1 && bytes[len - 1] == fill && (bytes[len - 2] & 0x80 != 0) == negative {
            len -= 1;
        }
        if len > 16 {
            return Slot::new(T_HUGE, u64::from(negative));
        }
        let mut buf = [fill; 16];
        buf[..len].copy_from_slice(&bytes[..len]);
        self.int128(i128::from_le_bytes(buf))
    }

    fn int128(&mut self, v: i128) -> Slot {
        match i64::try_from(v) {
            Ok(small) if (INLINE_MIN..=INLINE_MAX).contains(&small) => {
                Slot::new(T_INT, (small as u64) & ((1 << 60) - 1))
            }
            _ => {
                self.out.longs.push(v);
                Slot::new(T_LONG, index(self.out.longs.len() - 1))
            }
        }
    }

    fn int(&mut self, v: i64) -> Slot {
        self.int128(i128::from(v))
    }

    fn memo_get(&self, index: u64) -> R<Slot> {
        self.memo
            .get(index)
            .ok_or_else(|| self.err(PickleErrorKind::MissingMemo(index)))
    }

    /// The container the values above `from` are added to: the value just below them.
    fn target_below(&self, from: usize) -> R<Slot> {
        if from <= self.floor() || from > self.stack.len() {
            return Err(self.err(PickleErrorKind::StackUnderflow));
        }
        Ok(self.stack[from - 1])
    }

    fn append(&mut self, from: usize) -> R<()> {
        let target = self.target_below(from)?;
        if !matches!(target.tag(), T_LIST | T_SET) {
            return Err(self.err(PickleErrorKind::WrongTarget("APPEND")));
        }
        self.extend(target, from, "APPEND")
    }

    fn set_items(&mut self, from: usize) -> R<()> {
        if (self.stack.len() - from) % 2 != 0 {
            return Err(self.err(PickleErrorKind::Malformed("odd number of dict items")));
        }
        let target = self.target_below(from)?;
        if target.tag() != T_DICT {
            return Err(self.err(PickleErrorKind::WrongTarget("SETITEM")));
        }
        self.extend(target, from, "SETITEM")
    }

    fn run(mut self) -> R<Pickle> {
        loop {
            self.op_at = usize::try_from(self.pos).unwrap_or(usize::MAX);
            let op = self.u8()?;
            match op {
                0x80 => {
                    let proto = self.u8()?;
                    if proto > 5 {
                        return Err(self.err(PickleErrorKind::UnsupportedProtocol(proto)));
                    }
                    self.out.protocol = proto;
                }
                // FRAME: a length hint for buffered readers; the data follows inline.
                0x95 => {
                    self.le(8)?;
                }
                b'.' => {
                    if self.stack.len() != 1 || !self.marks.is_empty() {
                        return Err(self.err(PickleErrorKind::BadStop));
                    }
                    let root = self.stack.pop().map(|s| self.out.unpack(s));
                    self.out.root = root;
                    return Ok(self.out);
                }
                b'(' => self.marks.push(self.stack.len()),
                b'0' => {
                    // POP removes the top value, or a mark if one sits on top.
                    if self.marks.last() == Some(&self.stack.len()) {
                        self.marks.pop();
                    } else {
                        self.pop()?;
                    }
                }
                b'1' => {
                    let from = self.pop_mark()?;
                    self.stack.truncate(from);
                }
                b'2' => {
                    let v = self.top()?;
                    self.push(v);
                }
                b'N' => self.push(Slot::new(T_NONE, 0)),
                0x88 => self.push(Slot::new(T_TRUE, 0)),
                0x89 => self.push(Slot::new(T_FALSE, 0)),
                b'J' => {
                    let v = self.le(4)? as u32 as i32;
                    let s = self.int(i64::from(v));
                    self.push(s);
                }
                b'K' => {
                    let v = self.u8()?;
                    let s = self.int(i64::from(v));
                    self.push(s);
                }
                b'M' => {
                    let v = self.le(2)?;
                    let s = self.int(v as i64);
                    self.push(s);
                }
                0x8a => {
                    let n = self.u8()?;
                    let bytes = self.take(u64::from(n))?;
                    let v = self.long(&bytes);
                    self.give_back(bytes);
                    self.push(v);
                }
                0x8b => {
                    let n = self.le(4)? as u32 as i32;
                    if n < 0 {
                        return Err(self.err(PickleErrorKind::Malformed("negative LONG4 length")));
                    }
                    let bytes = self.take(n as u64)?;
                    let v = self.long(&bytes);
                    self.give_back(bytes);
                    self.push(v);
                }
                b'G' => {
                    let bytes = self.take(8)?;
                    let mut buf = [0u8; 8];
                    buf.copy_from_slice(&bytes);
                    self.give_back(bytes);
                    let v = self.float(f64::from_be_bytes(buf));
                    self.push(v);
                }
                b'I' | b'L' => {
                    let line = self.line()?;
                    let text = line.trim_end_matches('L');
                    let v = match text {
                        "00" => Slot::new(T_FALSE, 0),
                        "01" if op == b'I' => Slot::new(T_TRUE, 0),
                        _ => match text.parse::<i128>() {
                            Ok(v) => self.int128(v),
                            Err(_) => {
                                return Err(self.err(PickleErrorKind::Malformed("text integer")))
                            }
                        },
                    };
                    self.push(v);
                }
                b'F' => {
                    let line = self.line()?;
                    let x: f64 = line
                        .parse()
                        .map_err(|_| self.err(PickleErrorKind::Malformed("text float")))?;
                    let v = self.float(x);
                    self.push(v);
                }
                b'X' => {
                    let n = self.le(4)?;
                    let bytes = self.take(n)?;
                    let v = self.string(&bytes);
                    self.give_back(bytes);
                    self.push(v?);
                }
                0x8c => {
                    let n = self.u8()?;
                    let bytes = self.take(u64::from(n))?;
                    let v = self.string(&bytes);
                    self.give_back(bytes);
                    self.push(v?);
                }
                0x8d => {
                    let n = self.le(8)?;
                    let bytes = self.take(n)?;
                    let v = self.string(&bytes);
                    self.give_back(bytes);
                    self.push(v?);
                }
                b'T' => {
                    let n = self.le(4)? as u32 as i32;
                    if n < 0 {
                        return Err(
                            self.err(PickleErrorKind::Malformed("negative BINSTRING length"))
                        );
                    }
                    let bytes = self.take(n as u64)?;
                    let v = self.latin1(&bytes);
                    self.give_back(bytes);
                    self.push(v);
                }
                b'U' => {
                    let n = self.u8()?;
                    let bytes = self.take(u64::from(n))?;
                    let v = self.latin1(&bytes);
                    self.give_back(bytes);
                    self.push(v);
                }
                b'B' | b'C' | 0x8e | 0x96 => {
                    let width = match op {
                        b'B' => 4,
                        b'C' => 1,
                        _ => 8,
                    };
                    let n = self.le(width)?;
                    let bytes = self.take(n)?;
                    let v = self.byte_string(&bytes);
                    self.give_back(bytes);
                    self.push(v);
                }
                b']' => {
                    let v = self.container(T_LIST, self.stack.len());
                    self.push(v);
                }
                b'l' => {
                    let from = self.pop_mark()?;
                    let v = self.container(T_LIST, from);
                    self.push(v);
                }
                b'a' => {
                    self.top()?;
                    let from = self.stack.len() - 1;
                    self.append(from)?;
                }
                b'e' => {
                    let from = self.pop_mark()?;
                    self.append(from)?;
                }
                b')' => {
                    let v = self.container(T_TUPLE, self.stack.len());
                    self.push(v);
                }
                b't' => {
                    let from = self.pop_mark()?;
                    let v = self.container(T_TUPLE, from);
                    self.push(v);
                }
                0x85..=0x87 => {
                    let n = usize::from(op - 0x84);
                    if self.stack.len() < self.floor() + n {
                        return Err(self.err(PickleErrorKind::StackUnderflow));
                    }
                    let v = self.container(T_TUPLE, self.stack.len() - n);
                    self.push(v);
                }
                b'}' => {
                    let v = self.container(T_DICT, self.stack.len());
                    self.push(v);
                }
                b'd' => {
                    let from = self.pop_mark()?;
                    if (self.stack.len() - from) % 2 != 0 {
                        return Err(
                            self.err(PickleErrorKind::Malformed("odd number of dict items"))
                        );
                    }
                    let v = self.container(T_DICT, from);
                    self.push(v);
                }
                b's' => {
                    if self.stack.len() < self.floor() + 2 {
                        return Err(self.err(PickleErrorKind::StackUnderflow));
                    }
                    let from = self.stack.len() - 2;
                    self.set_items(from)?;
                }
                b'u' => {
                    let from = self.pop_mark()?;
                    self.set_items(from)?;
                }
                0x8f => {
                    let v = self.container(T_SET, self.stack.len());
                    self.push(v);
                }
                0x90 => {
                    let from = self.pop_mark()?;
                    let target = self.target_below(from)?;
                    if target.tag() != T_SET {
                        return Err(self.err(PickleErrorKind::WrongTarget("ADDITEMS")));
                    }
                    self.extend(target, from, "ADDITEMS")?;
                }
                0x91 => {
                    let from = self.pop_mark()?;
                    let v = self.container(T_SET, from);
                    self.push(v);
                }
                b'p' => {
                    let line = self.line()?;
                    let index: u64 = line
                        .parse()
                        .map_err(|_| self.err(PickleErrorKind::Malformed("PUT index")))?;
                    let v = self.top()?;
                    self.memo.put(index, v);
                }
                b'q' => {
                    let index = u64::from(self.u8()?);
                    let v = self.top()?;
                    self.memo.put(index, v);
                }
                b'r' => {
                    let index = self.le(4)?;
                    let v = self.top()?;
                    self.memo.put(index, v);
                }
                0x94 => {
                    let v = self.top()?;
                    let index = self.memo.len();
                    self.memo.put(index, v);
                }
                b'g' => {
                    let line = self.line()?;
                    let index: u64 = line
                        .parse()
                        .map_err(|_| self.err(PickleErrorKind::Malformed("GET index")))?;
                    let v = self.memo_get(index)?;
                    self.push(v);
                }
                b'h' => {
                    let index = u64::from(self.u8()?);
                    let v = self.memo_get(index)?;
                    self.push(v);
                }
                b'j' => {
                    let index = self.le(4)?;
                    let v = self.memo_get(index)?;
                    self.push(v);
                }
                // Text forms of strings (protocol 0) need Python's escape
                // decoding; no snapshot uses them, so they are refused, not guessed.
                b'S' => return Err(self.err(PickleErrorKind::Unsupported("STRING"))),
                b'V' => return Err(self.err(PickleErrorKind::Unsupported("UNICODE"))),
                _ => {
                    return Err(self.err(match code_opcode(op) {
                        Some(name) => PickleErrorKind::CodeOpcode(name),
                        None => PickleErrorKind::UnknownOpcode(op),
                    }))
                }
            }
        }
    }
}

/// The name of an opcode that imports or calls code, refused by design.
fn code_opcode(op: u8) -> Option<&'static str> {
    Some(match op {
        b'c' => "GLOBAL",
        0x93 => "STACK_GLOBAL",
        b'R' => "REDUCE",
        b'b' => "BUILD",
        b'i' => "INST",
        b'o' => "OBJ",
        0x81 => "NEWOBJ",
        0x92 => "NEWOBJ_EX",
        0x82 => "EXT1",
        0x83 => "EXT2",
        0x84 => "EXT4",
        b'P' => "PERSID",
        b'Q' => "BINPERSID",
        0x97 => "NEXT_BUFFER",
        0x98 => "READONLY_BUFFER",
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn items(p: &Pickle, v: Value) -> Vec<Value> {
        p.seq(v).expect("a sequence").collect()
    }

    /// `{'a': [shared, shared], 'b': (None, True, False, 1.5, -7, 300, 70000,
    /// 2**64-1, -2**70, 'é')}` with `shared = [1, 2]`, as CPython 3.11
    /// pickles it with protocol 2 (BINPUT memo, no FRAME).
    const PROTO2: &[u8] = b"\x80\x02}q\x00(X\x01\x00\x00\x00aq\x01]q\x02(]q\x03(K\x01K\x02eh\x03eX\x01\x00\x00\x00bq\x04(N\x88\x89G?\xf8\x00\x00\x00\x00\x00\x00J\xf9\xff\xff\xffM,\x01Jp\x11\x01\x00\x8a\t\xff\xff\xff\xff\xff\xff\xff\xff\x00\x8a\t\x00\x00\x00\x00\x00\x00\x00\x00\xc0X\x02\x00\x00\x00\xc3\xa9q\x05tq\x06u.";
    /// The same dict plus `b'xy'` in the tuple, protocol 4 (FRAME, MEMOIZE,
    /// SHORT_BINUNICODE, SHORT_BINBYTES).
    const PROTO4: &[u8] = b"\x80\x04\x95W\x00\x00\x00\x00\x00\x00\x00}\x94(\x8c\x01a\x94]\x94(]\x94(K\x01K\x02eh\x03e\x8c\x01b\x94(N\x88\x89G?\xf8\x00\x00\x00\x00\x00\x00J\xf9\xff\xff\xffM,\x01Jp\x11\x01\x00\x8a\t\xff\xff\xff\xff\xff\xff\xff\xff\x00\x8a\t\x00\x00\x00\x00\x00\x00\x00\x00\xc0\x8c\x02\xc3\xa9\x94C\x02xy\x94t\x94u.";

    fn check_common(p: &Pickle) {
        let root = p.root();
        let a = p.get(root, "a").unwrap();
        let list = items(p, a);
        assert_eq!(list.len(), 2);
        // Both entries are the same memoised list, stored once.
        assert_eq!(list[0], list[1]);
        let ints: Vec<i128> = items(p, list[0])
            .iter()
            .map(|v| p.int(*v).unwrap())
            .collect();
        assert_eq!(ints, [1, 2]);
        let b = items(p, p.get(root, "b").unwrap());
        assert_eq!(b[0], Value::None);
        assert_eq!(b[1], Value::Bool(true));
        assert_eq!(b[2], Value::Bool(false));
        assert_eq!(p.float(b[3]), Some(1.5));
        assert_eq!(p.int(b[4]), Some(-7));
        assert_eq!(p.int(b[5]), Some(300));
        assert_eq!(p.int(b[6]), Some(70000));
        assert_eq!(p.int(b[7]), Some(i128::from(u64::MAX)));
        assert_eq!(p.int(b[8]), Some(-(1i128 << 70)));
        assert_eq!(p.str(b[9]), Some("é"));
    }

    #[test]
    fn reads_protocol_2() {
        let p = read(PROTO2).unwrap();
        assert_eq!(p.protocol, 2);
        check_common(&p);
    }

    #[test]
    fn reads_protocols_4_and_5() {
        let p = read(PROTO4).unwrap();
        assert_eq!(p.protocol, 4);
        check_common(&p);
        let b = items(&p, p.get(p.root(), "b").unwrap());
        assert!(matches!(b[10], Value::Bytes(_)));
        let mut five = PROTO4.to_vec();
        five[1] = 5;
        assert_eq!(read(&five).unwrap().protocol, 5);
        assert!(has_header(&five) && has_header(PROTO2));
        assert!(
            !has_header(b"\x80\x01") && !has_header(b"\x80\x06") && !has_header(b"RuntimeError")
        );
    }

    #[test]
    fn reads_sets_tuples_and_wide_ints() {
        let p = read(b"\x80\x04\x95\x06\x00\x00\x00\x00\x00\x00\x00(K\x01\x91\x94.").unwrap();
        assert!(matches!(p.root(), Value::Set(_)));
        let p =
            read(b"\x80\x04\x95\t\x00\x00\x00\x00\x00\x00\x00\x8f\x94(K\x01K\x02\x90.").unwrap();
        assert_eq!(items(&p, p.root()).len(), 2);
        let p = read(b"\x80\x04(K\x01K\x02K\x03K\x04t\x94.").unwrap();
        assert_eq!(items(&p, p.root()).len(), 4);
        // TUPLE1..3
        let p = read(b"\x80\x02K\x01K\x02\x86.").unwrap();
        assert!(matches!(p.root(), Value::Tuple(_)));
        // 2**200: beyond 128 bits, kept as a sign only.
        let mut huge = b"\x80\x04\x8a\x1a".to_vec();
        huge.extend([0u8; 25]);
        huge.extend(b"\x01.");
        let p = read(&huge).unwrap();
        assert_eq!(p.root(), Value::Huge(false));
        assert_eq!(p.int(p.root()), None);
        // LONG1 with a needless sign byte still fits i64; -1 as one byte.
        assert_eq!(
            read(b"\x80\x02\x8a\x02\x05\x00.").unwrap().root(),
            Value::Int(5)
        );
        assert_eq!(
            read(b"\x80\x02\x8a\x01\xff.").unwrap().root(),
            Value::Int(-1)
        );
        assert_eq!(read(b"\x80\x02\x8a\x00.").unwrap().root(), Value::Int(0));
        // LONG4 and text INT/LONG.
        assert_eq!(
            read(b"\x80\x02\x8b\x02\x00\x00\x00\x00\x01.")
                .unwrap()
                .root(),
            Value::Int(256)
        );
        assert_eq!(read(b"I-12\n.").unwrap().root(), Value::Int(-12));
        assert_eq!(
            read(b"L18446744073709551615L\n.")
                .map(|p| p.int(p.root()))
                .unwrap(),
            Some(i128::from(u64::MAX))
        );
    }

    #[test]
    fn memo_get_put_dup_pop() {
        // [x, x] where x = 'abc' stored with PUT 7 / fetched with GET 7.
        let p = read(b"(X\x03\x00\x00\x00abcp7\ng7\nl.").unwrap();
        let list = items(&p, p.root());
        assert_eq!(list[0], list[1]);
        assert_eq!(p.str(list[1]), Some("abc"));
        // DUP then POP; LONG_BINPUT/LONG_BINGET with a large sparse index.
        let p = read(b"\x80\x02K\x072\x30r\xff\xff\xff\x7fj\xff\xff\xff\x7f\x86.").unwrap();
        assert_eq!(items(&p, p.root()).len(), 2);
    }

    #[test]
    fn refuses_code_opcodes() {
        let cases: &[(&[u8], &str)] = &[
            (b"\x80\x02cos\nsystem\n.", "GLOBAL"),
            (b"\x80\x04\x8c\x02os\x8c\x06system\x93.", "STACK_GLOBAL"),
            (b"\x80\x02)R.", "REDUCE"),
            (b"\x80\x02}}b.", "BUILD"),
            (b"\x80\x02(ios\nsystem\n.", "INST"),
            (b"\x80\x02(o.", "OBJ"),
            (b"\x80\x02))\x81.", "NEWOBJ"),
            (b"\x80\x04)))\x92.", "NEWOBJ_EX"),
            (b"\x80\x02\x82\x01.", "EXT1"),
            (b"\x80\x02Pid\n.", "PERSID"),
            (b"\x80\x02N\x51.", "BINPERSID"),
            (b"\x80\x05\x97.", "NEXT_BUFFER"),
        ];
        for (data, name) in cases {
            let err = read(data).unwrap_err();
            assert_eq!(err.kind, PickleErrorKind::CodeOpcode(name), "{name}");
            assert!(err.to_string().contains("refuses"), "{err}");
        }
        // A protocol-2 pickle of bytes needs `_codecs.encode`: refused too.
        assert!(matches!(
            read(b"\x80\x02c_codecs\nencode\nq\x00.").unwrap_err().kind,
            PickleErrorKind::CodeOpcode("GLOBAL")
        ));
    }

    #[test]
    fn truncation_is_an_error_at_every_length() {
        for n in 0..PROTO4.len() {
            let err = read(&PROTO4[..n]).unwrap_err();
            assert!(
                matches!(
                    err.kind,
                    PickleErrorKind::Truncated | PickleErrorKind::BadStop
                ),
                "{n}: {err}"
            );
        }
    }

    #[test]
    fn hostile_lengths_allocate_nothing() {
        // BINUNICODE8 / BINBYTES8 / LONG4 declaring far more than is there.
        for data in [
            &b"\x80\x04\x8d\xff\xff\xff\xff\xff\xff\xff\x7fabc."[..],
            &b"\x80\x04\x8e\xff\xff\xff\xff\xff\xff\xff\xffabc."[..],
            &b"\x80\x04\x8b\xff\xff\xff\x7fabc."[..],
            &b"\x80\x04X\xff\xff\xff\xffabc."[..],
            &b"\x80\x04\x95\xff\xff\xff\xff\xff\xff\xff\xff."[..],
        ] {
            let err = read(data).unwrap_err();
            assert!(
                matches!(
                    err.kind,
                    PickleErrorKind::Truncated | PickleErrorKind::BadStop
                ),
                "{err}"
            );
        }
        assert!(matches!(
            read(b"\x80\x04\x8b\xff\xff\xff\xff.").unwrap_err().kind,
            PickleErrorKind::Malformed(_)
        ));
    }

    #[test]
    fn deep_nesting_needs_no_recursion() {
        // 200,000 nested lists built with EMPTY_LIST + APPEND.
        let depth = 200_000;
        let mut data = b"\x80\x04".to_vec();
        data.extend(std::iter::repeat_n(b']', depth));
        data.extend(std::iter::repeat_n(b'a', depth - 1));
        data.push(b'.');
        let p = read(&data).unwrap();
        assert!(matches!(p.root(), Value::List(_)));
        // And 200,000 unclosed marks are an error, not a crash.
        let mut marks = b"\x80\x04".to_vec();
        marks.extend(std::iter::repeat_n(b'(', depth));
        marks.push(b'.');
        assert_eq!(read(&marks).unwrap_err().kind, PickleErrorKind::BadStop);
    }

    #[test]
    fn a_list_can_contain_itself() {
        // l = []; l.append(l)
        let p = read(b"\x80\x04]\x94h\x00a.").unwrap();
        let items = items(&p, p.root());
        assert_eq!(items[0], p.root());
    }

    #[test]
    fn malformed_input_is_an_error() {
        let cases: &[&[u8]] = &[
            b"\x80\x07.",                      // protocol 7
            b"\x80\x02a.",                     // APPEND on an empty stack
            b"\x80\x02K\x01K\x02a.",           // APPEND to an int
            b"\x80\x02h\x05.",                 // memo entry never stored
            b"\x80\x02e.",                     // APPENDS without a mark
            b"\x80\x02}(K\x01u.",              // odd number of dict items
            b"\x80\x02X\x01\x00\x00\x00\xff.", // not UTF-8
            b"\x80\x02\xff.",                  // unknown opcode
            b"\x80\x02K\x01K\x02.",            // two values at STOP
            b"\x80\x02S'a'\n.",                // protocol-0 text string
            b"\x80\x02(K\x01\x30.", // POP below the mark's floor leaves a mark: STOP fails
        ];
        for data in cases {
            assert!(read(data).is_err(), "{data:?}");
        }
    }
}
