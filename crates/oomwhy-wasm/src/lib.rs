//! oomwhy in the browser: the library compiled to WebAssembly
//! (`wasm32-unknown-unknown`) behind a small C ABI, loaded by the static
//! page in `web/` with a hand-written loader (`web/src/oomwhy-wasm.js`), so
//! that building it needs nothing but cargo.
//!
//! A report is made the way `oomwhy FILE...` makes one: each input is
//! sniffed and decompressed (gzip, bzip2; zstd and xz are an error in this
//! build), a tar or zip archive's files are inputs of their own, a memory
//! snapshot is analysed, per-rank files fold, and the findings are explained
//! together. What the page shows is rendered by the library's own renderers:
//! the JSON document is `oomwhy --format json`'s, the text is the text view's.
//!
//! The ABI, in call order (all strings UTF-8, lengths in bytes):
//!
//! * `oomwhy_alloc(len) -> ptr`, `oomwhy_free(ptr, len)`: memory the host
//!   writes a string or bytes into.
//! * `oomwhy_begin()`: starts a new report.
//! * `oomwhy_add_bytes(name, name_len, data, data_len)`: adds an input held
//!   in memory (pasted text).
//! * `oomwhy_add_file(name, name_len, size)`: adds an input of `size` bytes
//!   that the module reads itself, in blocks, through the host's import
//!   `oomwhy_host.read_at(offset, dst, len) -> n` (a Web Worker reads a
//!   `File` slice synchronously): memory stays bounded however large the
//!   log, and the host sees every block go by (the progress bar).
//! * `oomwhy_finish(lang, width) -> len`: explains the report and renders it
//!   (see [`render_report`]); `oomwhy_render(lang, width)` renders it again
//!   in another language or width.
//! * `oomwhy_explain(code, code_len, lang) -> len`: an explanation page.
//!
//! Functions that produce text leave it in an output buffer and return its
//! length (`oomwhy_output_ptr()` says where it is); it stays valid until the
//! next call.

// The C ABI takes raw pointers from the host: this crate alone in the
// workspace uses `unsafe`, only in the exported functions below, each with
// the invariant it relies on.
#![deny(unsafe_op_in_unsafe_fn)]
#![cfg_attr(not(test), deny(clippy::unwrap_used, clippy::expect_used))]

mod report;

pub use report::{explain_page, render_report, Batch, Report};

use oomwhy::i18n::Lang;
use std::cell::RefCell;

thread_local! {
    /// The report being gathered (between `begin` and `finish`).
    static BATCH: RefCell<Batch> = RefCell::new(Batch::default());
    /// The last finished report, kept to render again.
    static REPORT: RefCell<Option<Report>> = const { RefCell::new(None) };
    /// The text the last call produced.
    static OUTPUT: RefCell<Vec<u8>> = const { RefCell::new(Vec::new()) };
}

/// The language a number from the host names: 1 is Chinese, anything else English.
fn lang_of(code: u32) -> Lang {
    if code == 1 {
        Lang::Zh
    } else {
        Lang::En
    }
}

/// Leaves `text` in the output buffer; returns its length.
fn output(text: String) -> usize {
    let len = text.len();
    OUTPUT.with(|out| *out.borrow_mut() = text.into_bytes());
    len
}

/// Reserves `len` bytes for the host to write into; free with [`oomwhy_free`].
#[no_mangle]
pub extern "C" fn oomwhy_alloc(len: usize) -> *mut u8 {
    let mut buffer = Vec::<u8>::with_capacity(len.max(1));
    let ptr = buffer.as_mut_ptr();
    std::mem::forget(buffer);
    ptr
}

/// Frees memory from [`oomwhy_alloc`].
///
/// # Safety
/// `ptr` and `len` are exactly what one call of [`oomwhy_alloc`] was given
/// and returned, and the memory is not used afterwards.
#[no_mangle]
pub unsafe extern "C" fn oomwhy_free(ptr: *mut u8, len: usize) {
    // SAFETY: the caller passes back an allocation of capacity `len.max(1)`
    // made by `oomwhy_alloc`; a length of 0 claims no initialised bytes.
    drop(unsafe { Vec::from_raw_parts(ptr, 0, len.max(1)) });
}

/// Where the output of the last call is.
#[no_mangle]
pub extern "C" fn oomwhy_output_ptr() -> *const u8 {
    OUTPUT.with(|out| out.borrow().as_ptr())
}

/// The bytes at `ptr`, `len` long (a null pointer or zero length is empty).
///
/// # Safety
/// `ptr` points at `len` initialised bytes that stay untouched during the call.
unsafe fn bytes<'a>(ptr: *const u8, len: usize) -> &'a [u8] {
    if ptr.is_null() || len == 0 {
        return &[];
    }
    // SAFETY: guaranteed by the caller (the host wrote `len` bytes there).
    unsafe { std::slice::from_raw_parts(ptr, len) }
}

/// Starts a new report (what an earlier one gathered is dropped).
#[no_mangle]
pub extern "C" fn oomwhy_begin() {
    BATCH.with(|batch| *batch.borrow_mut() = Batch::default());
}

/// Adds an input held in memory, named `name` in findings.
///
/// # Safety
/// Both pointer and length pairs describe initialised memory of the module.
#[no_mangle]
pub unsafe extern "C" fn oomwhy_add_bytes(
    name: *const u8,
    name_len: usize,
    data: *const u8,
    data_len: usize,
) {
    // SAFETY: forwarded from the caller's guarantee.
    let (name, data) = unsafe { (bytes(name, name_len), bytes(data, data_len)) };
    let name = String::from_utf8_lossy(name);
    BATCH.with(|batch| batch.borrow_mut().add_bytes(&name, data.to_vec()));
}

/// Adds an input of `size` bytes read through the host's `read_at` import.
///
/// # Safety
/// `name` and `name_len` describe initialised memory of the module.
#[cfg(target_arch = "wasm32")]
#[no_mangle]
pub unsafe extern "C" fn oomwhy_add_file(name: *const u8, name_len: usize, size: f64) {
    // SAFETY: forwarded from the caller's guarantee.
    let name = String::from_utf8_lossy(unsafe { bytes(name, name_len) });
    // JavaScript numbers are exact up to 2^53; a negative or fractional
    // size from a confused host reads as what it rounds to.
    let size = if size.is_finite() && size > 0.0 {
        size as u64
    } else {
        0
    };
    BATCH.with(|batch| {
        batch
            .borrow_mut()
            .add_source(&name, || host::HostFile { pos: 0, size })
    });
}

/// Explains the inputs added since `oomwhy_begin` and renders the report
/// (see [`render_report`]) in `lang` (0 English, 1 Chinese), text wrapped
/// to `width` columns. Returns the output's length.
#[no_mangle]
pub extern "C" fn oomwhy_finish(lang: u32, width: u32) -> usize {
    let batch = BATCH.with(|batch| std::mem::take(&mut *batch.borrow_mut()));
    let report = batch.finish();
    let text = render_report(&report, lang_of(lang), width as usize);
    REPORT.with(|slot| *slot.borrow_mut() = Some(report));
    output(text.to_string())
}

/// Renders the last finished report again (another language or width);
/// an empty report if none was finished.
#[no_mangle]
pub extern "C" fn oomwhy_render(lang: u32, width: u32) -> usize {
    let text = REPORT.with(|slot| match &*slot.borrow() {
        Some(report) => render_report(report, lang_of(lang), width as usize),
        None => render_report(&Batch::default().finish(), lang_of(lang), width as usize),
    });
    output(text.to_string())
}

/// The explanation page of a code (as `oomwhy explain CODE`), as JSON:
/// `{"code", "title", "text"}` or `{"error"}`. Returns the output's length.
///
/// # Safety
/// `code` and `code_len` describe initialised memory of the module.
#[no_mangle]
pub unsafe extern "C" fn oomwhy_explain(code: *const u8, code_len: usize, lang: u32) -> usize {
    // SAFETY: forwarded from the caller's guarantee.
    let code = String::from_utf8_lossy(unsafe { bytes(code, code_len) });
    output(explain_page(&code, lang_of(lang)).to_string())
}

/// The library's version, as `oomwhy --version` gives it. Returns the output's length.
#[no_mangle]
pub extern "C" fn oomwhy_version() -> usize {
    output(env!("CARGO_PKG_VERSION").to_string())
}

/// A file the host holds (a `File` in a Web Worker), read on demand.
#[cfg(target_arch = "wasm32")]
mod host {
    use std::io::{self, Read, Seek, SeekFrom};

    #[link(wasm_import_module = "oomwhy_host")]
    extern "C" {
        /// Copies up to `len` bytes of the input being added, starting at
        /// byte `offset`, to `dst`; returns how many (0 at the end), or a
        /// negative number when the file cannot be read.
        fn read_at(offset: f64, dst: *mut u8, len: usize) -> i32;
    }

    /// The most bytes asked of the host at once (the scanner reads blocks of
    /// 256 KiB; the result must fit an `i32`).
    const MAX_READ: usize = 1 << 20;

    /// A position in the host's file.
    pub(crate) struct HostFile {
        pub(crate) pos: u64,
        pub(crate) size: u64,
    }

    impl Read for HostFile {
        fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
            let left = self.size.saturating_sub(self.pos);
            let want = buf
                .len()
                .min(MAX_READ)
                .min(usize::try_from(left).unwrap_or(MAX_READ));
            if want == 0 {
                return Ok(0);
            }
            // SAFETY: `buf` is valid for writes of `want <= buf.len()` bytes
            // for the whole call, and the host writes at most `want` bytes.
            let n = unsafe { read_at(self.pos as f64, buf.as_mut_ptr(), want) };
            let n = usize::try_from(n)
                .map_err(|_| io::Error::other("the browser could not read the file"))?
                .min(want);
            self.pos += n as u64;
            Ok(n)
        }
    }

    impl Seek for HostFile {
        fn seek(&mut self, to: SeekFrom) -> io::Result<u64> {
            let target = match to {
                SeekFrom::Start(n) => Some(n),
                SeekFrom::End(d) => self.size.checked_add_signed(d),
                SeekFrom::Current(d) => self.pos.checked_add_signed(d),
            };
            self.pos = target.ok_or_else(|| {
                io::Error::new(io::ErrorKind::InvalidInput, "seek before the start")
            })?;
            Ok(self.pos)
        }
    }
}
