// The page in a real browser: Playwright (playwright-core, no browser
// download) drives the system's Chromium, headless, against web/dist served
// by `python3 -m http.server` on 127.0.0.1.
//
//   web/build.sh && (cd web && npm ci) && node web/test/browser.mjs
//
// Environment: CHROMIUM (default /usr/bin/chromium); OOMWHY_REAL_SNAPSHOTS
// (a folder of real PyTorch memory snapshots; else ../shared/data/snapshots
// beside the checkout, skipped when absent); OOMWHY_WEB_BIG_MIB (size of the
// large log timed in the page, default 100; 0 skips it). Screenshots go to
// web/test-output/.
import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { gzipSync } from 'node:zlib';
import { chromium } from 'playwright-core';

const repo = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const dist = join(repo, 'web/dist');
const output = join(repo, 'web/test-output');
const executablePath = process.env.CHROMIUM || '/usr/bin/chromium';
const bigMiB = Number(process.env.OOMWHY_WEB_BIG_MIB ?? 100);
// Every wait is bounded: a hang fails the test instead of holding CI.
const WAIT_MS = 30_000;

if (!existsSync(join(dist, 'oomwhy.wasm'))) {
  console.error('browser: web/dist is missing (run web/build.sh first)');
  process.exit(2);
}
if (!existsSync(executablePath)) {
  console.error(`browser: no Chromium at ${executablePath} (apt-get install -y chromium, or set CHROMIUM)`);
  process.exit(2);
}
mkdirSync(output, { recursive: true });
const scratch = mkdtempSync(join(tmpdir(), 'oomwhy-web-'));

let failures = 0;
let server;
let context;

function check(condition, what) {
  if (condition) {
    console.log(`  ok: ${what}`);
  } else {
    failures++;
    console.log(`  FAIL: ${what}`);
  }
}

async function freePort() {
  return new Promise((resolve, reject) => {
    const probe = createServer();
    probe.once('error', reject);
    probe.listen(0, '127.0.0.1', () => {
      const { port } = probe.address();
      probe.close(() => resolve(port));
    });
  });
}

async function startServer() {
  const port = await freePort();
  const child = spawn('python3', ['-m', 'http.server', String(port), '--bind', '127.0.0.1', '--directory', dist], {
    stdio: ['ignore', 'ignore', 'pipe'],
    detached: true,
  });
  const origin = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + WAIT_MS;
  while (Date.now() < deadline) {
    try {
      const response = await fetch(`${origin}/index.html`);
      if (response.ok) return { child, origin };
    } catch (_) {
      // not listening yet
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error('the HTTP server did not start');
}

function stopServer() {
  if (!server) return;
  try {
    process.kill(-server.child.pid, 'SIGTERM');
  } catch (_) {
    // already gone
  }
}

/** Waits until the page has shown the answer to the latest request. */
async function answer(page) {
  await page.waitForSelector('#results[data-ready="true"]:not([data-busy])', { timeout: WAIT_MS });
}

/** Drops `files` ({name, bytes}) on the page as a user's drag and drop does. */
async function drop(page, files) {
  const payload = files.map((f) => ({ name: f.name, data: Buffer.from(f.bytes).toString('base64') }));
  await page.evaluate((payload) => {
    const transfer = new DataTransfer();
    for (const f of payload) {
      const bytes = Uint8Array.from(atob(f.data), (c) => c.charCodeAt(0));
      transfer.items.add(new File([bytes], f.name));
    }
    document.getElementById('results').dataset.ready = 'false';
    for (const type of ['dragenter', 'dragover', 'drop']) {
      document.body.dispatchEvent(new DragEvent(type, { bubbles: true, cancelable: true, dataTransfer: transfer }));
    }
  }, payload);
  await answer(page);
}

async function findings(page) {
  return page.$$eval('#results .finding', (cards) => cards.map((c) => ({
    category: c.dataset.category,
    kind: c.dataset.kind,
    codes: c.dataset.codes.split(' ').filter(Boolean),
    tag: c.querySelector('.tag').textContent,
    headline: c.querySelector('.headline').textContent,
    why: c.querySelector('.why')?.textContent ?? '',
    firstFix: c.querySelector('.first-fix')?.textContent ?? '',
    text: c.querySelector('pre.text').textContent,
    copyButtons: c.querySelectorAll('button.copy').length,
  })));
}

async function notices(page) {
  return page.$$eval('#notices .notice', (ns) => ns.map((n) => ({ kind: n.dataset.kind, text: n.textContent })));
}

function realSnapshotDir() {
  const candidates = [process.env.OOMWHY_REAL_SNAPSHOTS, join(repo, '..', 'shared/data/snapshots')];
  return candidates.find((dir) => dir && existsSync(dir));
}

/** A log of about `mib` MiB: training noise, one OOM two-thirds in. */
function bigLog(path, mib) {
  const noise = [];
  for (let i = 0; i < 2000; i++) {
    noise.push(`2026-01-01 12:00:${String(i % 60).padStart(2, '0')} INFO step ${i} loss ${(2 + Math.sin(i)).toFixed(4)} lr 3.0e-4 tokens/s 51234 grad_norm 0.${i % 97}`);
  }
  const block = Buffer.from(noise.join('\n') + '\n');
  const seed = readFileSync(join(repo, 'fixtures/torch_reserved_era_seed.log'));
  const blocks = Math.ceil((mib * 1024 * 1024) / block.length);
  const parts = [];
  for (let i = 0; i < blocks; i++) {
    parts.push(block);
    if (i === Math.floor((blocks * 2) / 3)) parts.push(seed);
  }
  writeFileSync(path, Buffer.concat(parts));
  return statSync(path).size;
}

async function main() {
  server = await startServer();
  const { origin } = server;
  console.log(`browser: ${executablePath}, page at ${origin}`);
  const userDataDir = join(scratch, 'profile');
  context = await chromium.launchPersistentContext(userDataDir, {
    executablePath,
    headless: true,
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
      '--disable-background-networking', '--disable-component-update', '--disable-sync'],
    viewport: { width: 1100, height: 900 },
    locale: 'en-US',
    timeout: WAIT_MS,
  });
  context.setDefaultTimeout(WAIT_MS);
  const foreign = [];
  context.on('request', (request) => {
    const url = request.url();
    if (!url.startsWith(origin) && !url.startsWith('data:') && !url.startsWith('blob:')) foreign.push(url);
  });
  const page = context.pages()[0] || (await context.newPage());
  const consoleErrors = [];
  page.on('pageerror', (err) => consoleErrors.push(String(err)));
  page.on('console', (message) => {
    if (message.type() === 'error') consoleErrors.push(message.text());
  });
  await page.goto(`${origin}/index.html`, { waitUntil: 'load' });

  console.log('paste the seed message (fixtures/torch_reserved_era_seed.log)');
  const seed = readFileSync(join(repo, 'fixtures/torch_reserved_era_seed.log'), 'utf8');
  await page.fill('#paste', seed);
  await page.click('#explain');
  await answer(page);
  const pasteMs = Number(await page.getAttribute('#timing', 'data-ms'));
  console.log(`  answered in ${pasteMs} ms (the first request: the module is fetched and compiled too)`);
  let cards = await findings(page);
  check(cards.length === 1, `one finding (got ${cards.length})`);
  const golden = JSON.parse(readFileSync(join(repo, 'fixtures/torch_reserved_era_seed.json'), 'utf8'));
  const goldenCodes = golden.findings[0].diagnosis.verdicts.map((v) => v.code);
  check(JSON.stringify(cards[0]?.codes) === JSON.stringify(goldenCodes), `verdict codes ${cards[0]?.codes} = the golden's ${goldenCodes}`);
  check(cards[0]?.tag === '[1] OUT OF MEMORY', `tag "${cards[0]?.tag}"`);
  check(cards[0]?.headline === 'PyTorch could not allocate 2.00 GiB on GPU 0', `headline "${cards[0]?.headline}"`);
  check(cards[0]?.why.startsWith('Why: The numbers in this message cannot all be true'), `why "${cards[0]?.why.slice(0, 60)}…"`);
  check(cards[0]?.firstFix === `First fix: ${golden.findings[0].diagnosis.fixes[0].title}`, `first fix "${cards[0]?.firstFix}"`);
  check(cards[0]?.copyButtons === golden.findings[0].diagnosis.fixes.length + 1, `a copy button per fix, and one for the first (${cards[0]?.copyButtons})`);
  // The answer comes before the details in the page.
  const order = await page.$eval('#results .finding', (card) => {
    const headline = card.querySelector('.headline');
    const details = card.querySelector('details');
    return Boolean(headline.compareDocumentPosition(details) & Node.DOCUMENT_POSITION_FOLLOWING);
  });
  check(order, 'the answer comes before the details');
  await page.screenshot({ path: join(output, 'seed-en.png'), fullPage: false });

  console.log('explanation page of a code');
  await page.click('#results .codes button[data-code="inconsistent_numbers"]');
  await page.waitForFunction(() => document.getElementById('explain-title').textContent.includes(':'), null, { timeout: WAIT_MS });
  const explainTitle = await page.textContent('#explain-title');
  check(explainTitle.startsWith('inconsistent_numbers: '), `explanation "${explainTitle}"`);
  await page.click('#explain-dialog button[type="submit"]');

  console.log('switch to Chinese');
  await page.click('.lang button[data-lang="zh"]');
  await page.waitForFunction(() => document.querySelector('#results .finding .tag')?.textContent.includes('显存不足'), null, { timeout: WAIT_MS });
  cards = await findings(page);
  check(cards[0]?.tag === '[1] 显存不足', `Chinese tag "${cards[0]?.tag}"`);
  check(cards[0]?.why.startsWith('原因：'), `Chinese why "${cards[0]?.why.slice(0, 30)}…"`);
  check(JSON.stringify(cards[0]?.codes) === JSON.stringify(goldenCodes), 'codes unchanged in Chinese');
  check((await page.textContent('#explain')) === '解释', 'the page\'s own words are Chinese');
  check((await page.getAttribute('html', 'lang')) === 'zh-CN', 'html lang is zh-CN');
  await page.screenshot({ path: join(output, 'seed-zh.png'), fullPage: false });
  await page.click('.lang button[data-lang="en"]');
  await page.waitForFunction(() => document.querySelector('#results .finding .tag')?.textContent.includes('OUT OF MEMORY'), null, { timeout: WAIT_MS });

  console.log('drop a gzip log with two ranks');
  const rankLines = seed.split('\n').filter(Boolean);
  const twoRanks = ['step 1 loss 2.3', ...[0, 1].flatMap((rank) => rankLines.map((l) => `[rank${rank}]: ${l}`)), 'step done', ''].join('\n');
  await drop(page, [{ name: 'ranks.log.gz', bytes: gzipSync(Buffer.from(twoRanks)) }]);
  cards = await findings(page);
  check(cards.length === 1, `the two ranks' copies fold into one finding (got ${cards.length})`);
  check(/ranks 0, 1/.test(cards[0]?.text || '') && /seen 2 times/.test(cards[0]?.text || ''), 'the finding says ranks 0, 1, seen 2 times');

  console.log('drop the fragmentation snapshot (tests/snapshots/fragmentation_v2_1.pickle)');
  const fragmentation = readFileSync(join(repo, 'tests/snapshots/fragmentation_v2_1.pickle'));
  await drop(page, [{ name: 'fragmentation_v2_1.pickle', bytes: fragmentation }]);
  cards = await findings(page);
  check(cards.some((c) => c.codes.includes('snapshot_fragmentation')), `verdict snapshot_fragmentation (${cards.map((c) => c.codes).join('; ')})`);

  const realDir = realSnapshotDir();
  const preferred = ['v2_10_user_metadata_windows.pickle', 'v2_1_frames_trace.pickle', 'v2_5_near_full_gpu.pickle'];
  const real = realDir && preferred.map((f) => join(realDir, f)).find(existsSync);
  if (real) {
    console.log(`drop a real snapshot (${real.split('/').pop()})`);
    await drop(page, [{ name: real.split('/').pop(), bytes: readFileSync(real) }]);
    cards = await findings(page);
    check(cards.length >= 1 && cards[0].category === 'memory_state', `a memory-state finding (${cards[0]?.category})`);
    check(/free in holes \(largest /.test(cards[0]?.text || ''), 'the fragmentation figure: free in holes, largest hole');
    await page.screenshot({ path: join(output, 'snapshot.png'), fullPage: false });
  } else {
    console.log('SKIPPED: real snapshots (no OOMWHY_REAL_SNAPSHOTS and no ../shared/data/snapshots)');
  }

  console.log('a binary file gives an error, not a hang');
  const binary = Buffer.alloc(1 << 20);
  for (let i = 0; i < binary.length; i++) binary[i] = (i * 2654435761) >>> 24;
  binary.set([0x7f, 0x45, 0x4c, 0x46, 2, 1, 1, 0], 0);
  const started = Date.now();
  await drop(page, [{ name: 'model.bin', bytes: binary }]);
  let shown = await notices(page);
  check(shown.some((n) => n.kind === 'binary' && n.text === 'oomwhy: model.bin: binary file, skipped'), `binary notice ${JSON.stringify(shown)} in ${Date.now() - started} ms`);
  check((await findings(page)).length === 0, 'no finding for a binary file');

  console.log('hostile inputs: a cut gzip, a zstd file, a pickle that asks to run code');
  const cut = gzipSync(Buffer.from(seed.repeat(50)));
  await drop(page, [{ name: 'cut.log.gz', bytes: cut.subarray(0, cut.length >> 1) }]);
  shown = await notices(page);
  check(shown.some((n) => n.kind === 'error' && /cut\.log\.gz: the gzip data ends early/.test(n.text)), `cut gzip: ${JSON.stringify(shown)}`);
  await drop(page, [{ name: 'train.log.zst', bytes: Buffer.from([0x28, 0xb5, 0x2f, 0xfd, 0x24, 0x05, 0x29, 0x00, 0x00, 0x68, 0x69, 0x0a]) }]);
  shown = await notices(page);
  check(shown.some((n) => n.kind === 'error' && /zstd is not supported in the browser build/.test(n.text)), `zstd: ${JSON.stringify(shown)}`);
  const evil = Buffer.concat([Buffer.from([0x80, 0x04, 0x95, 0x20, 0, 0, 0, 0, 0, 0, 0, 0x8c, 2]), Buffer.from('os'), Buffer.from([0x8c, 6]), Buffer.from('system'), Buffer.from([0x93, 0x8c, 2]), Buffer.from('id'), Buffer.from([0x85, 0x52, 0x2e])]);
  await drop(page, [{ name: 'evil.pkl', bytes: evil }]);
  shown = await notices(page);
  check(shown.some((n) => n.kind === 'error' && /asks to run code/.test(n.text)), `code-running pickle refused: ${JSON.stringify(shown)}`);

  console.log('phone width, dark theme');
  await page.setViewportSize({ width: 390, height: 844 });
  await page.emulateMedia({ colorScheme: 'dark' });
  await page.fill('#paste', seed);
  await page.click('#explain');
  await answer(page);
  const overflow = await page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth);
  check(overflow <= 0, `no sideways scrolling at 390 px (overflow ${overflow} px)`);
  const columns = await page.$eval('#results pre.text', (pre) => Math.max(...pre.textContent.split('\n').map((l) => l.length)));
  check(columns <= 60, `the text view is wrapped for the phone (${columns} columns)`);
  await page.screenshot({ path: join(output, 'phone-dark.png'), fullPage: false });
  await page.emulateMedia({ colorScheme: 'light' });
  await page.setViewportSize({ width: 1100, height: 900 });

  if (bigMiB > 0) {
    console.log(`a ${bigMiB} MiB log, timed from choosing the file to the answer`);
    const path = join(scratch, 'big.log');
    const size = bigLog(path, bigMiB);
    const progressSeen = page.waitForFunction(() => {
      const bar = document.querySelector('#progress progress');
      return !document.getElementById('progress').hidden && bar.value > 0 && bar.value < bar.max;
    }, null, { timeout: 60_000 }).then(() => true, () => false);
    const t0 = Date.now();
    await page.evaluate(() => { document.getElementById('results').dataset.ready = 'false'; });
    await page.setInputFiles('#file', path);
    await page.waitForSelector('#results[data-ready="true"]:not([data-busy])', { timeout: 300_000 });
    const wall = Date.now() - t0;
    const ms = Number(await page.getAttribute('#timing', 'data-ms'));
    cards = await findings(page);
    check(cards.length === 1 && cards[0].codes.includes('inconsistent_numbers'), `the OOM in the ${bigMiB} MiB log is found`);
    check(await progressSeen, 'the progress bar moved while reading');
    console.log(`  ${bigMiB} MiB log (${size} bytes): answered in ${(ms / 1000).toFixed(2)} s in the page ` +
      `(${(size / 1048576 / (ms / 1000)).toFixed(0)} MiB/s), ${(wall / 1000).toFixed(2)} s from setting the file`);
    rmSync(path, { force: true });
  }

  check(foreign.length === 0, `no request left the page's origin (${foreign.join(', ') || 'none'})`);
  check(consoleErrors.length === 0, `no errors in the page's console (${consoleErrors.join(' | ') || 'none'})`);
}

const killTimer = setTimeout(() => {
  console.error('browser: the test took more than 10 minutes');
  stopServer();
  process.exit(1);
}, 600_000);
try {
  await main();
} catch (err) {
  failures++;
  console.log(`FAIL: ${err.stack || err}`);
} finally {
  clearTimeout(killTimer);
  if (context) await context.close().catch(() => {});
  stopServer();
  rmSync(scratch, { recursive: true, force: true });
}
console.log(failures ? `browser: ${failures} check(s) failed` : `browser: all checks passed; screenshots in web/test-output/ (${readdirSync(output).join(', ')})`);
process.exit(failures ? 1 : 0);
