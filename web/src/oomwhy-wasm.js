// The loader of oomwhy.wasm (crates/oomwhy-wasm): a small wrapper over its
// C ABI, with no build step and no dependency. It runs in the page's Web
// Worker (importScripts) and in Node (require), for the tests.
//
//   const oomwhy = await OomwhyWasm.load(bytesOfTheWasmFile);
//   oomwhy.begin();
//   oomwhy.addBytes('pasted text', utf8Bytes);            // text in memory
//   oomwhy.addFile('train.log', file.size, (offset, length) => chunk);
//   const report = oomwhy.finish('en', 100);               // see report.rs
//
// addFile reads the input through `readAt`, called synchronously for each
// block the scanner wants (a Web Worker reads a File with FileReaderSync):
// the log is never held whole, and each call is a point of progress.
'use strict';

(function (root) {
  const LANGS = { en: 0, zh: 1 };
  const encoder = new TextEncoder();
  const decoder = new TextDecoder('utf-8');

  class OomwhyWasm {
    /** Compiles and instantiates the module from its bytes (or a compiled Module). */
    static async load(source) {
      const module = source instanceof WebAssembly.Module ? source : await WebAssembly.compile(source);
      const wrapper = new OomwhyWasm();
      const imports = {
        oomwhy_host: {
          read_at: (offset, dst, len) => wrapper._readAt(offset, dst, len),
        },
      };
      // The zip reader depends on a random-number crate that, on this
      // target, declares wasm-bindgen's glue imports. Nothing on the reading
      // path calls them (randomness is for writing encrypted archives), and
      // no wasm-bindgen tool runs on the module: each gets a function that
      // fails loudly should it ever be called.
      for (const wanted of WebAssembly.Module.imports(module)) {
        if (wanted.module === 'oomwhy_host' || wanted.kind !== 'function') continue;
        imports[wanted.module] = imports[wanted.module] || {};
        imports[wanted.module][wanted.name] = () => {
          throw new Error(`oomwhy.wasm called ${wanted.module}.${wanted.name}, which this build does not provide`);
        };
      }
      wrapper.instance = await WebAssembly.instantiate(module, imports);
      wrapper.module = module;
      wrapper.exports = wrapper.instance.exports;
      return wrapper;
    }

    constructor() {
      this.reader = null;
      this.readError = null;
    }

    _readAt(offset, dst, len) {
      try {
        const chunk = this.reader(offset, len);
        if (!chunk) return -1;
        const n = Math.min(chunk.length, len);
        // A fresh view each time: the memory's buffer changes when it grows.
        new Uint8Array(this.exports.memory.buffer, dst, n).set(chunk.subarray(0, n));
        return n;
      } catch (err) {
        // An exception must not unwind through the module's frames: the
        // read fails instead, and the module reports it like any read error.
        this.readError = err;
        return -1;
      }
    }

    /** Copies bytes into the module's memory; returns [ptr, len]; free with _free. */
    _put(bytes) {
      const len = bytes.length;
      const ptr = this.exports.oomwhy_alloc(len);
      new Uint8Array(this.exports.memory.buffer, ptr, len).set(bytes);
      return [ptr, len];
    }

    _free([ptr, len]) {
      this.exports.oomwhy_free(ptr, len);
    }

    _output(len) {
      const ptr = this.exports.oomwhy_output_ptr();
      return decoder.decode(new Uint8Array(this.exports.memory.buffer, ptr, len));
    }

    _json(len) {
      return JSON.parse(this._output(len));
    }

    /** Starts a new report. */
    begin() {
      this.exports.oomwhy_begin();
    }

    /** Adds an input held in memory (a Uint8Array, or a string as UTF-8). */
    addBytes(name, data) {
      const nameBuf = this._put(encoder.encode(name));
      const dataBuf = this._put(typeof data === 'string' ? encoder.encode(data) : data);
      try {
        this.exports.oomwhy_add_bytes(nameBuf[0], nameBuf[1], dataBuf[0], dataBuf[1]);
      } finally {
        this._free(dataBuf);
        this._free(nameBuf);
      }
    }

    /**
     * Adds an input of `size` bytes read through `readAt(offset, length)`,
     * which returns a Uint8Array of at most `length` bytes (fewer only at the
     * end), or null when the file cannot be read.
     */
    addFile(name, size, readAt) {
      const nameBuf = this._put(encoder.encode(name));
      this.reader = readAt;
      this.readError = null;
      try {
        this.exports.oomwhy_add_file(nameBuf[0], nameBuf[1], size);
      } finally {
        this.reader = null;
        this._free(nameBuf);
      }
      return this.readError;
    }

    /** Explains what was added and renders the report (see crates/oomwhy-wasm/src/report.rs). */
    finish(lang, width) {
      return this._json(this.exports.oomwhy_finish(LANGS[lang] || 0, width || 100));
    }

    /** Renders the last report again, in another language or width. */
    render(lang, width) {
      return this._json(this.exports.oomwhy_render(LANGS[lang] || 0, width || 100));
    }

    /** The explanation page of a code: {code, title, text, in_english} or {error}. */
    explain(code, lang) {
      const codeBuf = this._put(encoder.encode(code));
      try {
        return this._json(this.exports.oomwhy_explain(codeBuf[0], codeBuf[1], LANGS[lang] || 0));
      } finally {
        this._free(codeBuf);
      }
    }

    version() {
      return this._output(this.exports.oomwhy_version());
    }
  }

  if (typeof module !== 'undefined' && module.exports) {
    module.exports = { OomwhyWasm };
  } else {
    root.OomwhyWasm = OomwhyWasm;
  }
})(typeof self !== 'undefined' ? self : this);
