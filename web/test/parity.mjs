// The browser build gives what the command gives: for every fixtures/*.log,
// the module (run in Node, no browser) must produce the same JSON document
// as `oomwhy --format json FILE` (byte for byte: same findings, verdict
// codes and fixes) and the same text view as `oomwhy FILE`, in English and
// in Chinese.
//
//   node web/test/parity.mjs [--each]   (after web/build.sh and a cargo build)
//
// The command is $OOMWHY_BIN, else target/release/oomwhy, else target/debug/oomwhy.
import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const require = createRequire(import.meta.url);
const repo = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const { OomwhyWasm } = require(join(repo, 'web/src/oomwhy-wasm.js'));

const bin = process.env.OOMWHY_BIN ||
  ['target/release/oomwhy', 'target/debug/oomwhy'].map((p) => join(repo, p)).find(existsSync);
if (!bin) {
  console.error('parity: no oomwhy binary (cargo build first, or set OOMWHY_BIN)');
  process.exit(2);
}
const wasmPath = join(repo, 'web/dist/oomwhy.wasm');
if (!existsSync(wasmPath)) {
  console.error('parity: web/dist/oomwhy.wasm is missing (run web/build.sh first)');
  process.exit(2);
}

function command(args) {
  const run = spawnSync(bin, args, {
    cwd: repo,
    encoding: 'utf8',
    timeout: 60_000,
    env: { ...process.env, COLUMNS: '100', NO_COLOR: '1', LC_ALL: 'C' },
  });
  if (run.error) throw run.error;
  if (run.status === null) throw new Error(`oomwhy ${args.join(' ')} was killed (${run.signal})`);
  return run;
}

const oomwhy = await OomwhyWasm.load(readFileSync(wasmPath));
const fixtures = readdirSync(join(repo, 'fixtures')).filter((f) => f.endsWith('.log')).sort().map((f) => `fixtures/${f}`);
const started = Date.now();

function addAll(names) {
  oomwhy.begin();
  for (const name of names) {
    const bytes = readFileSync(join(repo, name));
    const readError = oomwhy.addFile(name, bytes.length, (offset, length) => bytes.subarray(offset, offset + length));
    if (readError) throw readError;
  }
}

/** What differs between the module's report and the command's, in `lang`. */
function compare(names, lang, report) {
  const json = command(['--lang', lang, '--format', 'json', ...names]);
  const text = command(['--lang', lang, ...names]);
  const problems = [];
  if (report.document_json !== json.stdout) {
    const brief = (doc) => doc.findings.map((f) => ({
      input: f.source.input,
      kind: f.kind,
      codes: f.diagnosis.verdicts.map((v) => v.code),
      fixes: f.diagnosis.fixes.map((x) => x.title),
    }));
    const mine = JSON.stringify(brief(JSON.parse(report.document_json)));
    const theirs = JSON.stringify(brief(JSON.parse(json.stdout)));
    problems.push(mine === theirs ? 'JSON differs (not in findings, codes or fixes)' : `JSON differs: wasm ${mine} vs command ${theirs}`);
  }
  if (report.text !== text.stdout) {
    problems.push(`text differs:\n--- wasm\n${report.text}\n--- command\n${text.stdout}`);
  }
  if (report.status !== text.status) {
    problems.push(`status ${report.status}, the command's ${text.status}`);
  }
  // The answer split out for the page is the text view's opening.
  const flat = (s) => s.replace(/\s+/g, '');
  for (const card of report.findings) {
    for (const part of [card.label, card.headline, card.why, card.first_fix]) {
      if (part && !flat(text.stdout).includes(flat(part))) problems.push(`answer part not in the text view: ${part}`);
    }
  }
  return problems;
}

// All fixtures as one run (`oomwhy FILE...`): one command per language and
// format. Where they differ, or with --each, each fixture alone too, to say which.
addAll(fixtures);
const report = { en: oomwhy.finish('en', 100) };
report.zh = oomwhy.render('zh', 100);
let failures = 0;
for (const lang of ['en', 'zh']) {
  const problems = compare(fixtures, lang, report[lang]);
  if (problems.length) {
    failures++;
    console.log(`FAIL all fixtures together (${lang})\n  ${problems.join('\n  ').slice(0, 4000)}`);
  }
}
if (failures || process.argv.includes('--each')) {
  for (const name of fixtures) {
    addAll([name]);
    for (const lang of ['en', 'zh']) {
      const one = lang === 'en' ? oomwhy.finish('en', 100) : oomwhy.render('zh', 100);
      const problems = compare([name], lang, one);
      if (problems.length) {
        failures++;
        console.log(`FAIL ${name} (${lang})\n  ${problems.join('\n  ')}`);
      }
    }
  }
}
const seconds = ((Date.now() - started) / 1000).toFixed(1);
console.log(`parity: ${fixtures.length} fixtures, ${report.en.findings.length} findings, in English and Chinese: ` +
  `${failures} mismatches against ${bin.replace(repo + '/', '')} (${seconds} s)`);
process.exit(failures ? 1 : 0);
