// The page's worker: loads oomwhy.wasm once and makes reports, off the page's
// thread, so that a 100 MiB log scans while the page stays responsive.
//
// Messages in:  {id, type: 'paste', text, lang, width}
//               {id, type: 'files', files: [File], lang, width}
//               {id, type: 'render', lang, width}
//               {id, type: 'explain', code, lang}
// Messages out: {id, type: 'progress', done, total}
//               {id, type: 'result', report | page}
//               {id, type: 'failure', message}
// Nothing is sent anywhere: the only request this worker makes is for
// oomwhy.wasm, from the page's own server.
'use strict';
importScripts('oomwhy-wasm.js');

let modulePromise = null;
let oomwhy = null;

async function ready() {
  if (!modulePromise) {
    modulePromise = fetch('oomwhy.wasm')
      .then((response) => {
        if (!response.ok) throw new Error(`oomwhy.wasm: HTTP ${response.status}`);
        return response.arrayBuffer();
      })
      .then((bytes) => WebAssembly.compile(bytes));
    // A failed load is tried again at the next request.
    modulePromise.catch(() => {
      modulePromise = null;
    });
  }
  if (!oomwhy) oomwhy = await OomwhyWasm.load(await modulePromise);
  return oomwhy;
}

// Loaded as soon as the page opens, so that the first answer does not wait
// for it; an error here is reported with the first request instead.
ready().catch(() => {});

/** Reads `file` for the module, block by block, reporting progress. */
function fileReader(file, progress) {
  const sync = new FileReaderSync();
  return (offset, length) => {
    const end = Math.min(offset + length, file.size);
    const chunk = new Uint8Array(sync.readAsArrayBuffer(file.slice(offset, end)));
    progress(end);
    return chunk;
  };
}

async function handle(message) {
  const { id } = message;
  const wasm = await ready();
  switch (message.type) {
    case 'paste': {
      wasm.begin();
      wasm.addBytes(message.name || 'pasted text', message.text);
      return wasm.finish(message.lang, message.width);
    }
    case 'files': {
      const total = message.files.reduce((sum, f) => sum + f.size, 0);
      let before = 0;
      let lastPost = 0;
      const post = (done, force) => {
        const now = Date.now();
        if (force || now - lastPost > 80) {
          lastPost = now;
          postMessage({ id, type: 'progress', done, total });
        }
      };
      wasm.begin();
      for (const file of message.files) {
        const readError = wasm.addFile(file.name, file.size, fileReader(file, (end) => post(before + end)));
        if (readError) console.warn(`oomwhy: ${file.name}: ${readError}`);
        before += file.size;
      }
      post(total, true);
      return wasm.finish(message.lang, message.width);
    }
    case 'render':
      return wasm.render(message.lang, message.width);
    case 'explain':
      return wasm.explain(message.code, message.lang);
    default:
      throw new Error(`unknown request ${message.type}`);
  }
}

self.onmessage = async (event) => {
  const { id } = event.data;
  const started = performance.now();
  try {
    const result = await handle(event.data);
    postMessage({ id, type: 'result', result, ms: performance.now() - started });
  } catch (err) {
    // A trap (a bug, or memory exhausted) leaves the instance unusable: the
    // next request gets a fresh one from the compiled module.
    oomwhy = null;
    postMessage({ id, type: 'failure', message: String((err && err.message) || err) });
  }
};
