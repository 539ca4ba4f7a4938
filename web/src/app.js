// oomwhy's page: takes a pasted message or dropped files, has the worker
// (worker.js, running oomwhy.wasm) make the report, and lays it out: for
// each finding the answer first (what failed, why, the first fix), then the
// details, which are the text view's own. Every string from a log is set as
// text (textContent), never as HTML.
'use strict';

const UI = {
  en: {
    tagline: 'Why did the GPU run out of memory? Paste the error, or drop the log.',
    pasteLabel: 'Paste an error message or a whole log',
    pastePlaceholder: 'torch.OutOfMemoryError: CUDA out of memory. Tried to allocate …',
    explainButton: 'Explain',
    chooseFiles: 'Choose files…',
    dropHint: 'or drop files anywhere: logs (plain, gzip, bzip2, tar, zip) or a PyTorch memory snapshot',
    privacy: 'Everything runs in this tab: nothing is uploaded or sent anywhere.',
    close: 'Close',
    dropNow: 'Drop to explain',
    why: 'Why:',
    firstFix: 'First fix:',
    details: 'Details',
    whatToDo: 'What to do (most effective first)',
    textView: 'Full explanation',
    copy: 'Copy',
    copied: 'Copied',
    copyText: 'Copy the text',
    downloadJson: 'Download JSON',
    reading: (name, done, total) => `Reading ${name}: ${mib(done)} of ${mib(total)}`,
    explaining: 'Explaining…',
    answeredIn: (s) => `answered in ${s} s`,
    emptyPaste: 'Paste an error message or a log first, or drop a file.',
    failed: (m) => `oomwhy: the page could not finish: ${m}`,
    loading: 'Loading…',
    inEnglish: '',
    line: (input, line) => `${input} line ${line}`,
    codesLabel: 'Explanations:',
  },
  zh: {
    tagline: 'GPU 为什么显存不足？粘贴报错，或拖入日志。',
    pasteLabel: '粘贴报错信息或整个日志',
    pastePlaceholder: 'torch.OutOfMemoryError: CUDA out of memory. Tried to allocate …',
    explainButton: '解释',
    chooseFiles: '选择文件…',
    dropHint: '或把文件拖到页面任意处：日志（纯文本、gzip、bzip2、tar、zip）或 PyTorch 显存快照',
    privacy: '一切都在此标签页内完成：不上传、不发送任何内容。',
    close: '关闭',
    dropNow: '松开即可解释',
    why: '原因：',
    firstFix: '先试：',
    details: '细节',
    whatToDo: '怎么办（最有效的在前）',
    textView: '完整解释',
    copy: '复制',
    copied: '已复制',
    copyText: '复制文本',
    downloadJson: '下载 JSON',
    reading: (name, done, total) => `正在读取 ${name}：${mib(done)} / ${mib(total)}`,
    explaining: '正在解释…',
    answeredIn: (s) => `用时 ${s} 秒`,
    emptyPaste: '请先粘贴报错或日志，或拖入文件。',
    failed: (m) => `oomwhy：页面未能完成：${m}`,
    loading: '正在加载…',
    inEnglish: '（此说明页暂无中文版，以下为英文原文）',
    line: (input, line) => `${input} 第 ${line} 行`,
    codesLabel: '说明页：',
  },
};

function mib(bytes) {
  return `${(bytes / (1024 * 1024)).toFixed(1)} MiB`;
}

const $ = (id) => document.getElementById(id);
const state = {
  lang: initialLang(),
  report: null,
  width: 100,
  // The last input, to say what is being read.
  inputName: '',
};

function initialLang() {
  const saved = safeStorage('get');
  if (saved === 'en' || saved === 'zh') return saved;
  const wanted = navigator.languages && navigator.languages.length ? navigator.languages : [navigator.language || 'en'];
  return String(wanted[0] || 'en').toLowerCase().startsWith('zh') ? 'zh' : 'en';
}

/** localStorage can be unavailable (a private window, a file: URL). */
function safeStorage(op, value) {
  try {
    if (op === 'get') return localStorage.getItem('oomwhy-lang');
    localStorage.setItem('oomwhy-lang', value);
  } catch (_) {
    return null;
  }
  return null;
}

const t = (key, ...args) => {
  const entry = UI[state.lang][key];
  return typeof entry === 'function' ? entry(...args) : entry;
};

// ---- the worker ---------------------------------------------------------

const worker = new Worker('worker.js');
let nextId = 1;
const pending = new Map();
worker.onmessage = (event) => {
  const message = event.data;
  const waiting = pending.get(message.id);
  if (!waiting) return;
  if (message.type === 'progress') {
    waiting.progress && waiting.progress(message.done, message.total);
    return;
  }
  pending.delete(message.id);
  if (message.type === 'result') waiting.resolve({ result: message.result, ms: message.ms });
  else waiting.reject(new Error(message.message));
};
worker.onerror = (event) => {
  for (const waiting of pending.values()) waiting.reject(new Error(event.message || 'the worker failed'));
  pending.clear();
};

function ask(request, progress) {
  const id = nextId++;
  return new Promise((resolve, reject) => {
    pending.set(id, { resolve, reject, progress });
    worker.postMessage({ ...request, id });
  });
}

// ---- laying out ----------------------------------------------------------

function el(tag, attrs, ...children) {
  const node = document.createElement(tag);
  for (const [key, value] of Object.entries(attrs || {})) {
    if (value === undefined || value === null || value === false) continue;
    if (key === 'class') node.className = value;
    else if (key === 'text') node.textContent = value;
    else if (key.startsWith('on')) node.addEventListener(key.slice(2), value);
    else node.setAttribute(key, value === true ? '' : value);
  }
  for (const child of children.flat()) {
    if (child === undefined || child === null || child === false) continue;
    node.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
  return node;
}

async function copy(text, button) {
  try {
    await navigator.clipboard.writeText(text);
  } catch (_) {
    // Older browsers, or a page not served from localhost/https.
    const area = el('textarea', { readonly: true });
    area.value = text;
    document.body.append(area);
    area.select();
    document.execCommand('copy');
    area.remove();
  }
  button.textContent = t('copied');
  button.dataset.copied = 'true';
  setTimeout(() => {
    button.textContent = t('copy');
    delete button.dataset.copied;
  }, 1500);
}

function howBlock(how) {
  const button = el('button', { type: 'button', class: 'copy', text: t('copy'), 'aria-label': `${t('copy')}: ${how}` });
  button.addEventListener('click', () => copy(how, button));
  return el('div', { class: 'how' }, el('code', { text: how }), button);
}

/** The space after a label, as the text view writes it: none after a full-width colon. */
const gap = (label) => (label.endsWith('：') ? '' : ' ');

function findingCard(card, single) {
  const fixes = card.fixes || [];
  const codes = [...new Set([...(card.explain || []), ...(card.codes || [])])];
  const answer = [
    el('div', { class: 'tag', text: `[${card.id}] ${card.label}` }),
    el('h2', { class: 'headline', text: card.headline }),
  ];
  if (card.why) {
    answer.push(el('p', { class: 'why' }, el('span', { class: 'label', text: t('why') }), gap(t('why')), card.why));
  }
  if (card.first_fix) {
    answer.push(el('p', { class: 'first-fix' }, el('span', { class: 'label', text: t('firstFix') }), gap(t('firstFix')), card.first_fix));
    if (fixes.length && fixes[0].title === card.first_fix) answer.push(howBlock(fixes[0].how));
  }
  answer.push(el('p', { class: 'where', text: t('line', card.input, card.line) }));
  const chips = el('ul', { class: 'codes', 'aria-label': t('codesLabel') },
    codes.map((code) => el('li', {}, el('button', {
      type: 'button', class: 'code', 'data-code': code, text: code, onclick: () => showExplanation(code),
    }))));
  const details = el('details', { class: 'details', open: single },
    el('summary', { text: t('details') }),
    fixes.length ? el('h3', { text: t('whatToDo') }) : null,
    fixes.length ? el('ol', { class: 'fixes' }, fixes.map((fix) => el('li', {},
      el('strong', { text: fix.title }), howBlock(fix.how)))) : null,
    el('h3', { text: t('textView') }),
    el('pre', { class: 'text', text: card.text }));
  return el('article', {
    class: `finding ${card.category}`, 'data-category': card.category, 'data-kind': card.kind,
    'data-codes': (card.codes || []).join(' '),
  }, answer, chips, details);
}

function showReport(report, ms) {
  state.report = report;
  const notices = $('notices');
  notices.replaceChildren(...report.notices.map((notice) => el('p', {
    class: `notice ${notice.kind === 'nothing_found' ? 'info' : 'error'}`,
    role: notice.kind === 'nothing_found' ? 'status' : 'alert',
    'data-kind': notice.kind,
    text: notice.text,
  })));
  const results = $('results');
  const single = report.findings.length === 1;
  const cards = report.findings.map((card) => findingCard(card, single));
  const bar = report.findings.length ? el('div', { class: 'report-bar' },
    el('p', { class: 'summary', text: report.summary_line }),
    el('div', { class: 'actions' },
      el('button', { type: 'button', id: 'copy-text', text: t('copyText'), onclick: (e) => copy(report.text, e.target) }),
      el('button', { type: 'button', id: 'download-json', text: t('downloadJson'), onclick: () => download(report.document_json) }))) : null;
  const timing = ms === undefined ? null : el('p', { class: 'timing', id: 'timing', 'data-ms': Math.round(ms), text: t('answeredIn', (ms / 1000).toFixed(2)) });
  results.replaceChildren(...cards, bar || '', timing || '');
  results.dataset.status = String(report.status);
  results.dataset.ready = 'true';
}

function showFailure(message) {
  $('notices').replaceChildren(el('p', { class: 'notice error', role: 'alert', 'data-kind': 'failure', text: t('failed', message) }));
  $('results').dataset.ready = 'true';
}

function download(json) {
  const url = URL.createObjectURL(new Blob([json], { type: 'application/json' }));
  const link = el('a', { href: url, download: 'oomwhy.json' });
  document.body.append(link);
  link.click();
  link.remove();
  setTimeout(() => URL.revokeObjectURL(url), 1000);
}

/** Renders an explanation page's Markdown: headings, lists, code, paragraphs. */
function markdown(text) {
  const out = [];
  const lines = text.split('\n');
  let paragraph = [];
  let list = null;
  const flush = () => {
    if (paragraph.length) out.push(el('p', {}, inline(paragraph.join(' '))));
    paragraph = [];
    list = null;
  };
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i];
    if (line.startsWith('```')) {
      flush();
      const code = [];
      for (i++; i < lines.length && !lines[i].startsWith('```'); i++) code.push(lines[i]);
      out.push(el('pre', {}, el('code', { text: code.join('\n') })));
      continue;
    }
    const heading = /^(#{1,4})\s+(.*)$/.exec(line);
    const item = /^\s*(?:[-*]|\d+\.)\s+(.*)$/.exec(line);
    if (heading) {
      flush();
      out.push(el(`h${Math.min(heading[1].length + 1, 4)}`, {}, inline(heading[2])));
    } else if (item) {
      if (paragraph.length) flush();
      if (!list) {
        list = el(/^\s*\d+\./.test(line) ? 'ol' : 'ul');
        out.push(list);
      }
      list.append(el('li', {}, inline(item[1])));
    } else if (!line.trim()) {
      flush();
    } else if (list && /^\s+/.test(line)) {
      list.lastChild.append(' ', ...inline(line.trim()));
    } else {
      list = null;
      paragraph.push(line.trim());
    }
  }
  flush();
  return out;
}

function inline(text) {
  return text.split(/(`[^`]+`)/).filter(Boolean).map((part) =>
    part.startsWith('`') && part.endsWith('`') ? el('code', { text: part.slice(1, -1) }) : document.createTextNode(part.replace(/\*\*/g, '')));
}

async function showExplanation(code) {
  const dialog = $('explain-dialog');
  $('explain-title').textContent = code;
  $('explain-body').replaceChildren(el('p', { text: t('loading') }));
  if (!dialog.open) dialog.showModal();
  try {
    const { result } = await ask({ type: 'explain', code, lang: state.lang });
    if (result.error) {
      $('explain-body').replaceChildren(el('p', { class: 'notice error', text: result.error }));
      return;
    }
    $('explain-title').textContent = `${result.code}: ${result.title}`;
    $('explain-body').replaceChildren(
      result.in_english ? el('p', { class: 'hint', text: t('inEnglish') }) : '',
      ...markdown(result.text));
  } catch (err) {
    $('explain-body').replaceChildren(el('p', { class: 'notice error', text: t('failed', err.message) }));
  }
}

// ---- input ----------------------------------------------------------------

/** Columns of the text view that fit the results' width (40 to 100). */
function textWidth() {
  const measure = $('measure');
  const charWidth = measure.getBoundingClientRect().width / 10 || 7.5;
  const available = ($('results').clientWidth || document.body.clientWidth) - 2 * 16 - 24;
  return Math.max(40, Math.min(100, Math.floor(available / charWidth)));
}

function setBusy(busy) {
  $('explain').disabled = busy;
  $('results').dataset.ready = busy ? 'false' : 'true';
  if (busy) $('results').dataset.busy = 'true';
  else delete $('results').dataset.busy;
}

function showProgress(done, total, name) {
  const box = $('progress');
  box.hidden = false;
  const bar = box.querySelector('progress');
  bar.max = total || 1;
  bar.value = done;
  $('progress-text').textContent = done >= total ? t('explaining') : t('reading', name, done, total);
}

async function run(request, name) {
  setBusy(true);
  state.inputName = name;
  state.width = textWidth();
  const started = performance.now();
  try {
    const { result } = await ask({ ...request, lang: state.lang, width: state.width },
      (done, total) => showProgress(done, total, name));
    showReport(result, performance.now() - started);
  } catch (err) {
    showFailure(err.message);
  } finally {
    $('progress').hidden = true;
    setBusy(false);
  }
}

function explainPaste() {
  const text = $('paste').value;
  if (!text.trim()) {
    $('notices').replaceChildren(el('p', { class: 'notice info', role: 'status', text: t('emptyPaste') }));
    return;
  }
  run({ type: 'paste', text, name: '<stdin>' }, '<stdin>');
}

function explainFiles(fileList) {
  const files = Array.from(fileList || []).filter((f) => f.size >= 0);
  if (!files.length) return;
  const name = files.length === 1 ? files[0].name : `${files.length} files`;
  showProgress(0, files.reduce((s, f) => s + f.size, 0), name);
  run({ type: 'files', files }, name);
}

function setLang(lang) {
  state.lang = lang;
  safeStorage('set', lang);
  document.documentElement.lang = lang === 'zh' ? 'zh-CN' : 'en';
  for (const node of document.querySelectorAll('[data-i18n]')) node.textContent = t(node.dataset.i18n);
  for (const node of document.querySelectorAll('[data-i18n-placeholder]')) node.placeholder = t(node.dataset.i18nPlaceholder);
  for (const button of document.querySelectorAll('.lang button')) {
    button.setAttribute('aria-pressed', String(button.dataset.lang === lang));
  }
  if (state.report) rerender();
}

async function rerender() {
  state.width = textWidth();
  try {
    const { result } = await ask({ type: 'render', lang: state.lang, width: state.width });
    const timing = $('timing');
    showReport(result, timing ? Number(timing.dataset.ms) : undefined);
  } catch (err) {
    showFailure(err.message);
  }
}

$('explain').addEventListener('click', explainPaste);
$('paste').addEventListener('keydown', (event) => {
  if (event.key === 'Enter' && (event.ctrlKey || event.metaKey)) explainPaste();
});
$('file').addEventListener('change', (event) => {
  explainFiles(event.target.files);
  event.target.value = '';
});
for (const button of document.querySelectorAll('.lang button')) {
  button.addEventListener('click', () => setLang(button.dataset.lang));
}

// Drop anywhere on the page; a drop on the text box is a file too.
let dragDepth = 0;
const hasFiles = (event) => Array.from(event.dataTransfer ? event.dataTransfer.types : []).includes('Files');
document.addEventListener('dragenter', (event) => {
  if (!hasFiles(event)) return;
  dragDepth++;
  $('drop-overlay').hidden = false;
});
document.addEventListener('dragleave', () => {
  dragDepth = Math.max(0, dragDepth - 1);
  if (!dragDepth) $('drop-overlay').hidden = true;
});
document.addEventListener('dragover', (event) => {
  if (hasFiles(event)) event.preventDefault();
});
document.addEventListener('drop', (event) => {
  if (!hasFiles(event)) return;
  event.preventDefault();
  dragDepth = 0;
  $('drop-overlay').hidden = true;
  explainFiles(event.dataTransfer.files);
});

// The text view is wrapped to the page: lay it out again when the width
// changes enough to change the columns.
let resizeTimer = 0;
window.addEventListener('resize', () => {
  clearTimeout(resizeTimer);
  resizeTimer = setTimeout(() => {
    if (state.report && textWidth() !== state.width) rerender();
  }, 250);
});

setLang(state.lang);
