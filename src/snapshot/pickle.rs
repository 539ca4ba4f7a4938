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
    /// A list: index into the sequences.
    List(u32),
    /// A tuple: index into the sequences.
    Tuple(u32),
    /// A set or frozenset: index into the sequences.
    Set(u32),
    /// A dict: index into the dicts.
    Dict(u32),
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
    seqs: Vec<Vec<Value>>,
    dicts: Vec<Vec<(Value, Value)>>,
}

impl Pickle {
    /// The root value (`None` for a pickle whose root is Python `None`).
    pub fn root(&self) -> Value {
        self.root.unwrap_or(Value::None)
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
    pub fn seq(&self, v: Value) -> Option<&[Value]> {
        match v {
            Value::List(i) | Value::Tuple(i) | Value::Set(i) => {
                self.seqs.get(i as usize).map(|s| &s[..])
            }
            _ => None,
        }
    }

    /// The entries of a dict, in insertion order (a repeated key appears twice).
    pub fn dict(&self, v: Value) -> Option<&[(Value, Value)]> {
        match v {
            Value::Dict(i) => self.dicts.get(i as usize).map(|d| &d[..]),
            _ => None,
        }
    }

    /// The value stored under a string key of a dict (the last one, as Python keeps).
    pub fn get(&self, dict: Value, key: &str) -> Option<Value> {
        self.dict(dict)?
            .iter()
            .rev()
            .find(|(k, _)| self.str(*k) == Some(key))
            .map(|(_, v)| *v)
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
    Reader::new(data).run()
}

/// Memo: dense while the pickler numbers entries in order (it always does),
/// sparse for anything else, so a hostile index costs no memory.
#[derive(Default)]
struct Memo {
    dense: Vec<Value>,
    sparse: HashMap<u64, Value>,
}

impl Memo {
    fn put(&mut self, index: u64, v: Value) {
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

    fn get(&self, index: u64) -> Option<Value> {
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

struct Reader<'a> {
    data: &'a [u8],
    pos: usize,
    /// Offset of the opcode being executed, for errors.
    op_at: usize,
    stack: Vec<Value>,
    marks: Vec<usize>,
    memo: Memo,
    out: Pickle,
}

type R<T> = Result<T, PickleError>;

impl<'a> Reader<'a> {
    fn new(data: &'a [u8]) -> Self {
        Reader {
            data,
            pos: 0,
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

    fn take(&mut self, n: u64) -> R<&'a [u8]> {
        let left = (self.data.len() - self.pos) as u64;
        if n > left {
            return Err(self.err(PickleErrorKind::Truncated));
        }
        let start = self.pos;
        self.pos += n as usize;
        Ok(&self.data[start..self.pos])
    }

    fn u8(&mut self) -> R<u8> {
        Ok(self.take(1)?[0])
    }

    fn le(&mut self, n: usize) -> R<u64> {
        let bytes = self.take(n as u64)?;
        Ok(bytes
            .iter()
            .rev()
            .fold(0u64, |acc, &b| (acc << 8) | u64::from(b)))
    }

    /// A newline-terminated argument of the text opcodes.
    fn line(&mut self) -> R<&'a str> {
        let rest = &self.data[self.pos..];
        let end =
            memchr::memchr(b'\n', rest).ok_or_else(|| self.err(PickleErrorKind::Truncated))?;
        self.pos += end + 1;
        std::str::from_utf8(&rest[..end])
            .map_err(|_| self.err(PickleErrorKind::Malformed("non-ASCII text argument")))
    }

    fn push(&mut self, v: Value) {
        self.stack.push(v);
    }

    fn pop(&mut self) -> R<Value> {
        let floor = self.marks.last().copied().unwrap_or(0);
        if self.stack.len() <= floor {
            return Err(self.err(PickleErrorKind::StackUnderflow));
        }
        self.stack
            .pop()
            .ok_or_else(|| self.err(PickleErrorKind::StackUnderflow))
    }

    fn top(&self) -> R<Value> {
        let floor = self.marks.last().copied().unwrap_or(0);
        if self.stack.len() <= floor {
            return Err(self.err(PickleErrorKind::StackUnderflow));
        }
        self.stack
            .last()
            .copied()
            .ok_or_else(|| self.err(PickleErrorKind::StackUnderflow))
    }

    /// Pops everything above the last mark, and the mark.
    fn pop_mark(&mut self) -> R<Vec<Value>> {
        let mark = self
            .marks
            .pop()
            .ok_or_else(|| self.err(PickleErrorKind::NoMark))?;
        Ok(self.stack.split_off(mark.min(self.stack.len())))
    }

    fn new_seq(&mut self, items: Vec<Value>) -> u32 {
        self.out.seqs.push(items);
        (self.out.seqs.len() - 1) as u32
    }

    fn new_dict(&mut self, items: Vec<(Value, Value)>) -> u32 {
        self.out.dicts.push(items);
        (self.out.dicts.len() - 1) as u32
    }

    fn string(&mut self, bytes: &[u8]) -> R<Value> {
        let s = std::str::from_utf8(bytes)
            .map_err(|_| self.err(PickleErrorKind::Malformed("string is not UTF-8")))?;
        self.out.strings.push(s.into());
        Ok(Value::Str((self.out.strings.len() - 1) as u32))
    }

    fn latin1(&mut self, bytes: &[u8]) -> Value {
        // Python 2 `str`: bytes, shown as Latin-1 text.
        let s: String = bytes.iter().map(|&b| char::from(b)).collect();
        self.out.strings.push(s.into());
        Value::Str((self.out.strings.len() - 1) as u32)
    }

    fn byte_string(&mut self, bytes: &[u8]) -> Value {
        self.out.bytes.push(bytes.into());
        Value::Bytes((self.out.bytes.len() - 1) as u32)
    }

    /// A two's-complement little-endian integer of any width.
    fn long(&mut self, bytes: &[u8]) -> Value {
        let negative = bytes.last().is_some_and(|&b| b & 0x80 != 0);
        // Strip sign-extension bytes so that wide encodings of small values fit.
        let fill = if negative { 0xff } else { 0x00 };
        let mut len = bytes.len();
        while len > 1 && bytes[len - 1] == fill && (bytes[len - 2] & 0x80 != 0) == negative {
            len -= 1;
        }
        if len > 16 {
            return Value::Huge(negative);
        }
        let mut buf = [fill; 16];
        buf[..len].copy_from_slice(&bytes[..len]);
        let v = i128::from_le_bytes(buf);
        self.int128(v)
    }

    fn int128(&mut self, v: i128) -> Value {
        match i64::try_from(v) {
            Ok(small) => Value::Int(small),
            Err(_) => {
                self.out.longs.push(v);
                Value::Long((self.out.longs.len() - 1) as u32)
            }
        }
    }

    fn memo_get(&self, index: u64) -> R<Value> {
        self.memo
            .get(index)
            .ok_or_else(|| self.err(PickleErrorKind::MissingMemo(index)))
    }

    fn append(&mut self, target: Value, items: Vec<Value>) -> R<()> {
        let idx = match target {
            Value::List(i) | Value::Set(i) => i as usize,
            _ => return Err(self.err(PickleErrorKind::WrongTarget("APPEND"))),
        };
        match self.out.seqs.get_mut(idx) {
            Some(seq) => {
                seq.extend(items);
                Ok(())
            }
            None => Err(self.err(PickleErrorKind::WrongTarget("APPEND"))),
        }
    }

    fn set_items(&mut self, target: Value, items: Vec<Value>) -> R<()> {
        if items.len() % 2 != 0 {
            return Err(self.err(PickleErrorKind::Malformed("odd number of dict items")));
        }
        let Value::Dict(idx) = target else {
            return Err(self.err(PickleErrorKind::WrongTarget("SETITEM")));
        };
        let pairs = items.chunks_exact(2).map(|kv| (kv[0], kv[1]));
        match self.out.dicts.get_mut(idx as usize) {
            Some(dict) => {
                dict.extend(pairs);
                Ok(())
            }
            None => Err(self.err(PickleErrorKind::WrongTarget("SETITEM"))),
        }
    }

    fn run(mut self) -> R<Pickle> {
        loop {
            self.op_at = self.pos;
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
                    self.out.root = self.stack.pop();
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
                    self.pop_mark()?;
                }
                b'2' => {
                    let v = self.top()?;
                    self.push(v);
                }
                b'N' => self.push(Value::None),
                0x88 => self.push(Value::Bool(true)),
                0x89 => self.push(Value::Bool(false)),
                b'J' => {
                    let v = self.le(4)? as u32 as i32;
                    self.push(Value::Int(i64::from(v)));
                }
                b'K' => {
                    let v = self.u8()?;
                    self.push(Value::Int(i64::from(v)));
                }
                b'M' => {
                    let v = self.le(2)?;
                    self.push(Value::Int(v as i64));
                }
                0x8a => {
                    let n = self.u8()?;
                    let bytes = self.take(u64::from(n))?;
                    let v = self.long(bytes);
                    self.push(v);
                }
                0x8b => {
                    let n = self.le(4)? as u32 as i32;
                    if n < 0 {
                        return Err(self.err(PickleErrorKind::Malformed("negative LONG4 length")));
                    }
                    let bytes = self.take(n as u64)?;
                    let v = self.long(bytes);
                    self.push(v);
                }
                b'G' => {
                    let bytes = self.take(8)?;
                    let mut buf = [0u8; 8];
                    buf.copy_from_slice(bytes);
                    self.push(Value::Float(f64::from_be_bytes(buf)));
                }
                b'I' | b'L' => {
                    let line = self.line()?;
                    let text = line.trim_end_matches('L');
                    let v = match text {
                        "00" => Value::Bool(false),
                        "01" if op == b'I' => Value::Bool(true),
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
                    let v: f64 = line
                        .parse()
                        .map_err(|_| self.err(PickleErrorKind::Malformed("text float")))?;
                    self.push(Value::Float(v));
                }
                b'X' => {
                    let n = self.le(4)?;
                    let bytes = self.take(n)?;
                    let v = self.string(bytes)?;
                    self.push(v);
                }
                0x8c => {
                    let n = self.u8()?;
                    let bytes = self.take(u64::from(n))?;
                    let v = self.string(bytes)?;
                    self.push(v);
                }
                0x8d => {
                    let n = self.le(8)?;
                    let bytes = self.take(n)?;
                    let v = self.string(bytes)?;
                    self.push(v);
                }
                b'T' => {
                    let n = self.le(4)? as u32 as i32;
                    if n < 0 {
                        return Err(
                            self.err(PickleErrorKind::Malformed("negative BINSTRING length"))
                        );
                    }
                    let bytes = self.take(n as u64)?;
                    let v = self.latin1(bytes);
                    self.push(v);
                }
                b'U' => {
                    let n = self.u8()?;
                    let bytes = self.take(u64::from(n))?;
                    let v = self.latin1(bytes);
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
                    let v = self.byte_string(bytes);
                    self.push(v);
                }
                b']' => {
                    let i = self.new_seq(Vec::new());
                    self.push(Value::List(i));
                }
                b'l' => {
                    let items = self.pop_mark()?;
                    let i = self.new_seq(items);
                    self.push(Value::List(i));
                }
                b'a' => {
                    let item = self.pop()?;
                    let target = self.top()?;
                    self.append(target, vec![item])?;
                }
                b'e' => {
                    let items = self.pop_mark()?;
                    let target = self.top()?;
                    self.append(target, items)?;
                }
                b')' => {
                    let i = self.new_seq(Vec::new());
                    self.push(Value::Tuple(i));
                }
                b't' => {
                    let items = self.pop_mark()?;
                    let i = self.new_seq(items);
                    self.push(Value::Tuple(i));
                }
                0x85..=0x87 => {
                    let n = usize::from(op - 0x84);
                    let mut items = vec![Value::None; n];
                    for slot in items.iter_mut().rev() {
                        *slot = self.pop()?;
                    }
                    let i = self.new_seq(items);
                    self.push(Value::Tuple(i));
                }
                b'}' => {
                    let i = self.new_dict(Vec::new());
                    self.push(Value::Dict(i));
                }
                b'd' => {
                    let items = self.pop_mark()?;
                    let i = self.new_dict(Vec::new());
                    self.set_items(Value::Dict(i), items)?;
                    self.push(Value::Dict(i));
                }
                b's' => {
                    let value = self.pop()?;
                    let key = self.pop()?;
                    let target = self.top()?;
                    self.set_items(target, vec![key, value])?;
                }
                b'u' => {
                    let items = self.pop_mark()?;
                    let target = self.top()?;
                    self.set_items(target, items)?;
                }
                0x8f => {
                    let i = self.new_seq(Vec::new());
                    self.push(Value::Set(i));
                }
                0x90 => {
                    let items = self.pop_mark()?;
                    let target = self.top()?;
                    if !matches!(target, Value::Set(_)) {
                        return Err(self.err(PickleErrorKind::WrongTarget("ADDITEMS")));
                    }
                    self.append(target, items)?;
                }
                0x91 => {
                    let items = self.pop_mark()?;
                    let i = self.new_seq(items);
                    self.push(Value::Set(i));
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
        let items = p.seq(a).unwrap();
        assert_eq!(items.len(), 2);
        // Both entries are the same memoised list, stored once.
        assert_eq!(items[0], items[1]);
        let ints: Vec<i128> = p
            .seq(items[0])
            .unwrap()
            .iter()
            .map(|v| p.int(*v).unwrap())
            .collect();
        assert_eq!(ints, [1, 2]);
        let b = p.seq(p.get(root, "b").unwrap()).unwrap();
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
        let b = p.seq(p.get(p.root(), "b").unwrap()).unwrap();
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
        assert_eq!(p.seq(p.root()).unwrap().len(), 2);
        let p = read(b"\x80\x04(K\x01K\x02K\x03K\x04t\x94.").unwrap();
        assert_eq!(p.seq(p.root()).unwrap().len(), 4);
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
        let items = p.seq(p.root()).unwrap();
        assert_eq!(items[0], items[1]);
        assert_eq!(p.str(items[1]), Some("abc"));
        // DUP then POP; LONG_BINPUT/LONG_BINGET with a large sparse index.
        let p = read(b"\x80\x02K\x072\x30r\xff\xff\xff\x7fj\xff\xff\xff\x7f\x86.").unwrap();
        assert_eq!(p.seq(p.root()).unwrap().len(), 2);
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
        let items = p.seq(p.root()).unwrap();
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
