//! Whether a small input is a document that shows messages (a tutorial, an
//! error-reference page, release notes, an API page) rather than a report
//! of a failure (a log, a paste in an issue).
//!
//! A tutorial shows a message exactly the way a paste does, so no rule on
//! the message's own line can tell them apart: only the prose around it
//! can. The decision reads the whole input, so it is made only for inputs of
//! at most [`MAX_BYTES`] (pastes and pages; a multi-megabyte log is never a
//! tutorial), once, after the scan, from the bytes the scanner still holds.
//!
//! Every line is one of three things: a message line (a finding's lines;
//! the text before the message on its first line is prose), a log line (a
//! timestamp, a glog or rank prefix, a traceback, a progress bar), or prose.
//! Features are computed on prose only, so a message's own sentences (`If
//! you see this message frequently, ...`) never count.
//!
//! The rules, each a point count on prose lines:
//! 1. an explanatory heading alone on its line (`Cause`, `Solution`, `Why it
//!    happens`, `原因`, `解决方法`, a Sphinx permalink `name#`): 1 each, 3 at most;
//! 2. a tutorial's title (`How to fix ... error`, `Dealing with ... errors`,
//!    `Fix: ...`, `TL;DR`, `Frequently Asked Questions`, `...报错...解决`): 2;
//! 3. what a web page or generated docs wrap around text (`Copy to
//!    Clipboard`, `Enter fullscreen mode`, `Expand description`, `Project
//!    description`, `Added in version N`, `What's Changed`, `Full
//!    Changelog`): 2, and 1 more for a second such line;
//! 4. prose that introduces an example rather than reports one (`you may
//!    see`, `if you get`, `you must be familiar with`, `as follows`, `类似于以下`,
//!    `如下所示`, `会遇到`, `示例输出`, `比如`, a title for `the error you are
//!    seeing`), without first person on that line: 2, and
//!    1 more for a second;
//! 5. a record of `KEY=VALUE` lines (five or more) in which a message is a
//!    value (`SIGNATURE=torch.cuda.OutOfMemoryError: ...`, an error
//!    catalogue's entry; settings before a log are not one): 3;
//! 6. the reader addressed (`you`, `your`, `你`): 1 a line, 2 at most;
//! 7. a change described, as a commit's or pull request's text does (`This
//!    patch adds ...`, `The new error message now looks like`, `Motivation
//!    and Context`, `Reviewed By:`, `Before` and `After` headings): 3;
//! 8. a placeholder in a message's own text where a program prints a
//!    figure or a field (`Tried to allocate ...`, `WorkNCCL(..., ` and `ran
//!    for ... ms`, `<size>`, `X MiB`): 2, and 1 more for a second; and 1
//!    more when a figure is written as letters (`X.XX GiB`, `<size>`) and
//!    no message prints a real one (a title that shows the form above the
//!    real message is not a list of forms);
//! 9. an FAQ entry's heading: a first-person question that ends with the
//!    quoted message (`My model reports “cuda runtime error(2): out of
//!    memory”`), answered in prose that addresses the reader: 2;
//! 10. a heading that calls what follows samples (`Example errors`,
//!     `Sample Error Messages:`, `よくあるエラーメッセージの例`, `报错示例`,
//!     also after the error's kind: `no kernel image错误示例`), or prose that
//!     ends by calling it an example of a kind of problem (`... errors, for
//!     example:`, `出现内存分配失败的问题,例如:`): 3;
//! 11. prose that says when a message usually happens (`This happens most
//!     often when`, `error often reported asynchronously`) or, in Chinese,
//!     Japanese or Korean, what it means (`이 에러는`, `这个错误表示`), or that
//!     gives symptoms as alternatives (`Model loading fails or generation
//!     stops with OOM.`): 2, and 1 more for a second. What an English message means is not counted: a
//!     program explains its own message too (`This error means you ran out
//!     of memory on your GPU.`, as ComfyUI prints it);
//! 12. the fields of an error catalogue's entry, as a page sets them
//!     (`- **Category:** resource_error`, `**Verification:**`, `Last
//!     verified:`, `85% fix rate`): 1 a line, 3 at most;
//! 13. list items that only grade the message above them (`- Fatal`, `-
//!     Warning`), as a page or a change classifying messages writes: 2, and 1
//!     more for a second.
//!
//! Example-introducing prose (rule 4) is read in English (`Error log
//! example`, `an error such as this:`, `says something like:`, `and see
//! this:`, `Look for lines similar to:`), Chinese, Japanese (`以下のような`,
//! `見たことはありませんか`, `この例では`), Korean (`다음과 같은 에러`),
//! Russian (`например`, `если вы видите`) and Indonesian (`Jika Anda
//! mengalami`, `misalnya`), and an explanatory heading may open with an
//! emoji. The reader is addressed in Russian (`вы`, `ваш`) and Indonesian
//! (`Anda`) too, and first person is read in both (`я`, `мой`, `saya`).
//! A question marked as an FAQ's (`问:`, `Q:`) that quotes the message and
//! ends with its question mark, and a tool's list of the fragments it
//! matches (`Matched signals`, `looks for one or more of these log
//! fragments:`), are alone enough.
//!
//! An input is also a document when it is source code that quotes the
//! messages: every message line is code-shaped (a comment, a string literal
//! that starts the line, a list element ending in `,`, a name alone before
//! `)`), and of the other lines at least three and three in five are code.
//!
//! An input is a document when it has 3 points or more and no report
//! evidence: first person (`I`, `my`, `me`, `我`, `私`, `僕`, a salutation
//! such as `Dear`; an FAQ heading's only where nothing addresses the
//! reader), an issue template's heading (`Describe the bug`, `To
//! Reproduce`, `Environment`), or two log lines or more (except in a
//! change's description, whose logs show the output before and after it).
//! Silence on a real crash is the worst answer this tool can give, so any
//! of these keeps every finding.

use crate::constant_regex;
use regex::Regex;
use std::sync::OnceLock;

/// Inputs larger than this are never read as documents.
pub const MAX_BYTES: u64 = 64 * 1024;

/// Points at which an input without report evidence is a document.
const DOCUMENT_POINTS: u32 = 3;

/// Where a finding's message sits in the input.
#[derive(Debug, Clone, Copy)]
pub struct MessageSpan<'a> {
    /// 1-based number of its first line.
    pub line: u64,
    /// Lines it spans.
    pub lines: u64,
    /// Its text's first line, to find where the message starts on its line.
    pub first: &'a str,
}

struct Patterns {
    heading: Regex,
    title: Regex,
    own: Regex,
    change: Regex,
    before_after: Regex,
    placeholder: Regex,
    template: Regex,
    figure: Regex,
    example_heading: Regex,
    explanation: Regex,
    catalogue_field: Regex,
    verdict: Regex,
    faq: Regex,
    chrome: Regex,
    permalink: Regex,
    intro: Regex,
    first_person: Regex,
    issue: Regex,
    key_value: Regex,
    reader: Regex,
    log: Regex,
    code: Regex,
}

fn patterns() -> &'static Patterns {
    static P: OnceLock<Patterns> = OnceLock::new();
    P.get_or_init(|| {
        let heading_en = concat!(
            r"causes?|root causes?|common causes?|causes? (?:&|and) fix(?:es)?|solutions?",
            r"|the solution|resolution|quick fix|why (?:it|this) happens",
            r"|what (?:this|the) (?:error|failure) means|what it means|what is this (?:error|failure)\??",
            r"|what does this (?:error|failure) mean\?|(?:common )?symptoms?|troubleshooting",
            r"|related errors|see also|further reading|the exact string",
            r"|error messages? to look for|detection|prevention|the problem|issue",
            r"|explanation|(?:raw |full )?stack trace|source",
            r"|why do(?:es)? (?:this|these|it|they) (?:error )?happen\?"
        );
        let heading_zh = concat!(
            r"原因|原因分析|根本原因|根因|根因分析|问题原因|错误原因|解决方法|解决方案|解决办法",
            r"|解决思路|修复方法|处理方法|错误信息|错误的表现|问题背景|问题背景与原因分析",
            r"|常见原因|官方文档|版本兼容性|相关错误|参考资料",
            r"|[一二三四五六七八九十]+、.{0,12}(?:原因|方案|方法|分析).{0,6}"
        );
        Patterns {
            heading: constant_regex(&format!(
                r"(?i)^(?:#{{1,6}}\s*|\*\*|\d+[.)、]\s*|[^\w\s#*]{{1,2}}\s*)?(?:{heading_en}|{heading_zh})\s*(?:\*\*)?\s*[:：]?$"
            )),
            title: constant_regex(concat!(
                r"(?i)^(?:#+\s*)?(?:(?:how to (?:fix|solve|resolve)|dealing with)\b[^?]*\berrors?\b[^?]*$",
                r"|fix(?:ing)?: |修复[:：]|tl;dr|frequently asked questions)",
                r"|(?:报错|错误).{0,40}(?:解决|优化)|(?:解决|修复).{0,20}(?:报错|错误|问题)"
            )),
            own: constant_regex(r"(?i)\b(?:this|it|my)\b"),
            change: constant_regex(concat!(
                r"(?i)\bthis (?:patch|pr|pull request|commit|change|diff)\b(?:\s+\w+){0,2}?\s+",
                r"(?:adds?|changes?|fix(?:es)?|makes?|introduces?|improves?|updates?|removes?|replaces?|rewords?",
                // What the change does about the failure it shows (`This
                // change will clear the torch cache ... and avoids errors
                // like these:`).
                r"|clears?|avoids?|prevents?|frees?|handles?|catch(?:es)?|reduces?|resolves?|addresses?|ensures?)\b",
                r"|\bthe new (?:error )?message\b|\bnow looks like\b",
                // A commit's or pull request's title in the imperative about
                // the message itself (`Reword the error raised when ...`).
                r"|^(?:reword|rephrase|clarify|improve|reformat)s? the (?:error|warning|exception)(?: message)?s?\b",
                r"|^(?:#+\s*)?(?:\*\*)?motivation and context\b|^reviewed[- ]by:|\bdifferential revision:|^signed-off-by:"
            )),
            // Also a pull request's headings over the output it changes,
            // marked as headings (`### Previous output in #97191`, `###
            // New output after this PR:`).
            before_after: constant_regex(concat!(
                r"(?i)^(?:(?:#+\s*|\*\*)?(before|after)(?: this (?:pr|change|patch))?",
                r"|(?:#+\s*|\*\*)(?:(previous|old|original)|new) (?:output|log|error|message)s?(?:\s+\S+){0,3}?",
                r"|(?:#+\s*|\*\*)(?:output|log|error|message)s? (before|after)(?:\s+\S+){0,3}?)\s*(?:\*\*)?:?$",
            )),
            placeholder: constant_regex(concat!(
                r"(?:^|[\s(\[,;:=])(?:\.{3}|…)(?:[\s)\],;:.]|$)",
                r"|<(?:size|n|num|bytes|value|pid|name|process|[a-z]+_[a-z_]+)>|\bX{1,3}(?:\.X+)? ?(?:[KMGT]i?B|bytes)\b",
                // A name written for the reader where a program prints its
                // own (`Kill process 1234 (your_app)`).
                r"|\byour[_-][a-z][a-z_]*\b"
            )),
            // A figure written as letters: no program prints `X.XX GiB`.
            template: constant_regex(
                r"<(?:size|n|num|bytes)>|\bX{1,3}(?:\.X+)? ?(?:[KMGT]i?B|bytes)\b",
            ),
            figure: constant_regex(r"\d(?:\.\d+)? ?(?:[KMGT]i?B|bytes)\b"),
            // A heading that calls what follows samples of messages.
            example_heading: constant_regex(concat!(
                r"(?i)^(?:#+\s*)?(?:\*\*)?(?:(?:sample|example|typical|common) ",
                r"(?:errors|error messages|messages|error outputs|outputs|error logs)",
                r"|sample (?:error|message|output|error message)",
                r"|(?:error )?messages? examples|examples? of (?:errors|error messages|messages)",
                // The kind of error may come first (`no kernel image错误示例`).
                r"|.{0,12}エラー(?:メッセージ)?の例|常见(?:错误|报错)(?:信息)?|.{0,40}?(?:错误|报错)(?:信息)?示例)",
                r"(?:\*\*)?\s*[:：]?$",
                // Prose that ends by calling what follows an example of a
                // kind of problem (`出现内存分配失败的问题,例如:`, `such
                // errors, for example:`): a report shows its own error, not
                // an example (a bare `For example:` before a poster's own
                // lines is not one).
                r"|(?i:问题|错误|报错|errors|problems|issues)[,，]?\s*(?i:例如|比如|for example|e\.g\.)\s*[:：]\s*$"
            )),
            // When a shown message usually happens: a report tells what
            // happened once, a page what usually does. What it means only
            // counts in another language than the message's (a program
            // explains its own message too: `This error means you ran out
            // of memory on your GPU.`).
            explanation: constant_regex(concat!(
                r"(?i)\b(?:errors?|messages?|exceptions?) (?:is |are )?",
                r"(?:usually|typically|often|commonly|generally|frequently|most often|mostly) ",
                r"(?:means?|indicates?|signals?|occurs?|happens?|appears?|raised|thrown|caused|reported|seen|shown)\b",
                r"|\b(?:this|it) (?:usually|typically|often|commonly|generally|mostly) (?:happens|occurs)\b",
                r"|\b(?:happens|occurs) (?:most often|mostly|usually|typically|commonly|frequently)\b",
                // Symptoms given as alternatives (`Model loading fails or
                // generation stops with OOM.`): a report tells what happened.
                r"|\b(?:fails|crashes|stops|hangs|freezes|dies) or (?:\w+ ){0,3}(?:fails|crashes|stops|hangs|freezes|dies)\b",
                // Chinese, Japanese, Korean: `这个错误表示`, `このエラーは`, `이 에러는`.
                r"|(?:这个|该|此)(?:错误|报错)(?:是|表示|意味着|说明|通常)|このエラーは|(?:이|해당|위) (?:에러|오류)는"
            )),
            // The fields of an error catalogue's entry, as a page sets them
            // (`- **Category:** resource_error`, `Last verified: ...`, `85%
            // fix rate`); a log's `category: x` or YAML's `severity: ERROR`
            // is no page's field.
            catalogue_field: constant_regex(concat!(
                r"(?i)^(?:[-*]\s*)?\*\*(?:domain|category|verification|fix rate|last verified)\s*:?\*\*",
                // The same entry translated: `**领域:**` (domain), `**类别:**`
                // (category), `**验证级别:**` (verification level), `**修复
                // 率:**` (fix rate), `**错误码:**` (error code).
                r"|^(?:[-*]\s*)?\*\*(?:领域|类别|验证级别|修复率|错误码)\s*[:：]?\*\*|修复率\s*[:：]",
                r"|\bfix rate\b|\blast verified\b",
                // A graded fix's figures (`Fix success rate: 0.6`, `(Fail
                // rate: 0.85)`).
                r"|\b(?:success|fail) rate:\s*\d"
            )),
            // A list item that is only a severity, grading the message
            // above it (`- Fatal`, `- Warning`): a page or a change that
            // classifies messages, as a health checker's does.
            verdict: constant_regex(
                r"(?i)^[-*]\s*(?:fatal|non-?fatal|warning|critical|recoverable|unrecoverable|ignored?)\s*$",
            ),
            faq: constant_regex(r#"^(?:#+\s*)?(?:My|I)\b.{0,60}[“"`]\s*$"#),
            chrome: constant_regex(concat!(
                r"(?i)copy to clipboard|toggle word wrap|enter fullscreen mode|exit fullscreen mode",
                r"|expand description|project description|^copy code$",
                r"|(?:added|new|changed) in version \d|deprecated since version \d",
                r"|what's changed|full changelog|was this page helpful|edit this page",
                // A published article's date and reading time: `Last
                // updated:`, `5 min read`, Chinese `文章预览` (article
                // preview) and `建议阅读 5 分钟` (suggested reading time),
                // Indonesian `Pembaruan terakhir:`, Russian `Последнее
                // обновление:` and `Обновлено 18 Nov 2025`, Japanese
                // `最終更新日:`.
                r"|^last updated\b|\b\d+ min(?:ute)?s? read\b|^文章预览$|建议阅读\s*\d+\s*分钟",
                r"|^pembaruan terakhir\b|^последнее обновление\b|\bобновлено:?\s+\d|^最終更新日?\s*[:：]|^最后更新(?:时间)?\s*[:：]"
            )),
            permalink: constant_regex(r"^(?:\w+ )?[A-Za-z_][\w.]*\w#$"),
            intro: constant_regex(concat!(
                r"(?i)\byou(?:'ll| will| may| might| can| could| would| must)?(?: also)? ",
                r"(?:see|get|got|encounter|hit|run into|receive|notice|be familiar)\b",
                r"|\bif you (?:get|got|see|saw|encounter|hit)\b",
                // A page's title for the reader's error (`The vLLM OOM Error
                // You Are Seeing`).
                r"|\b(?:errors?|messages?|exceptions?) you(?:'re| are) (?:seeing|getting|hitting)\b",
                r"|\bas follows\b|类似于?以下|如下所示|如下的?(?:错误|报错|信息)|状态如下|会遇到",
                r"|经常遇到|容易遇到|这样的报错|类似这样|为例|示例输出|比如|例如|举个例子",
                // An error page's example heading (`Error log example`).
                r"|\b(?:error )?log examples?\b|\bexample (?:output|log|error message)\b",
                // Japanese: `以下のような表示を見たことはありませんか`
                // (have you seen a display like the following?), `この例では`.
                r"|以下のような|次のような|見たことはありませんか|見てみましょう|この例では|例えば",
                // An example named as one of its kind (`an error such as
                // this:`, `says something like:`, `and see this:`).
                r"|\b(?:error|message|output|exception)s? (?:such as|like) (?:this|these|the following)\b",
                // Messages given as the forms a program may print (`it will
                // raise an exception with one of the following error
                // messages`).
                r"|\bone of the following (?:error )?(?:messages|errors|exceptions)\b",
                r"|\bsomething like\s*:?\s*$|\b(?:and|then) see (?:this|something like|the following)\b",
                // Korean: `다음과 같은` (like the following), `마주하게` (come to face).
                r"|다음과 같은|아래와 같은|마주하게|마주치게|예를 들어"
            )),
            first_person: constant_regex(r"\b(?:I|I'm|I've|I'd|my|me|My|Dear)\b"),
            issue: constant_regex(concat!(
                r"(?i)^(?:#+\s*)?(?:\*\*)?(?:describe the bug|to reproduce|steps to reproduce",
                r"|expected behaviou?r|actual behaviou?r|system info|reproduction|who can help",
                r"|bug description|current behaviou?r|additional context|environment|复现步骤|运行环境)\b"
            )),
            key_value: constant_regex(r"^[A-Z][A-Z_]{2,}=\S"),
            code: constant_regex(concat!(
                r"^(?:import |from \S+ import |def |class |return\b|if\b.*:$|elif\b|else\b",
                r"|for\b.*:$|while\b|try:|except\b|with\b.*:$|@\w|#|//|const |function |end$",
                r"|let |var |fn |pub |use |\}|\{|\x22\x22\x22)|[(){},;\[\]]$| = "
            )),
            reader: constant_regex(r"(?i)\byou\b|\byour\b|你"),
            log: constant_regex(concat!(
                r"^\s*(?:\[?\d{4}-\d\d-\d\d[T ]\d\d:\d\d|\[rank\d+\]|[IWEF]\d{4} \d\d:",
                r"|\d\d:\d\d:\d\d|(?:INFO|WARNING|ERROR|DEBUG) \d\d-\d\d \d\d:|Traceback \(most recent call last\)|File \x22)",
                r"|\d+%\|.*it/s|\bit/s\]|^\s*@\s+0x[0-9a-f]+ |^\*\*\* Check failure stack trace"
            )),
        }
    })
}

/// What the prose of an input shows.
#[derive(Debug, Default, PartialEq, Eq)]
struct Features {
    headings: u32,
    titles: u32,
    chrome: u32,
    intros: u32,
    key_values: u32,
    reader: u32,
    first_person: u32,
    issue_headings: u32,
    log_lines: u32,
    /// Lines outside the messages, and how many of them are code.
    other_lines: u32,
    code_lines: u32,
    /// Whether every message line is shaped as code quoting it.
    messages_in_code: bool,
    /// Whether a message is the value of a `KEY=VALUE` line.
    message_is_value: bool,
    /// Lines that describe a change (a commit's or pull request's text).
    changes: u32,
    /// `Before` and `After` headings.
    before: bool,
    after: bool,
    /// Placeholders in the messages' own text (`Tried to allocate ...`).
    placeholders: u32,
    /// Figures written as letters (`X.XX GiB`, `<size>`) and figures
    /// printed in full, in the messages' own text.
    templates: u32,
    figures: u32,
    /// A heading that calls what follows samples (`Example errors`).
    example_headings: u32,
    /// Prose that says when a message usually happens (or, in Chinese,
    /// Japanese or Korean, what it means).
    explanations: u32,
    /// The fields of an error catalogue's entry.
    catalogue_fields: u32,
    /// List items that only grade a message (`- Fatal`).
    verdicts: u32,
    /// A first-person question heading that quotes the message (`My model
    /// reports “cuda runtime error(2): out of memory”`), as FAQs word them.
    faq_headings: u32,
    /// A row of a published post's tags (`#vllm#gpu#cuda`).
    tag_rows: u32,
    /// A feature request's template heading (`Is your feature request
    /// related to a problem?`): the message is the request's subject.
    feature_requests: u32,
    /// A message's general form (`when there's a CUDA error ..., it looks
    /// like this`): what it looks like whenever it happens.
    general_forms: u32,
    /// A question marked as an FAQ's (`问:`, `Q:`) that quotes the message
    /// and ends with the question mark.
    marked_questions: u32,
    /// Tags listed one an item (`• #linux`).
    tag_items: u32,
}

impl Features {
    fn points(&self) -> u32 {
        let second = |n: u32| u32::from(n >= 2);
        self.headings.min(3)
            + 2 * self.titles.min(1)
            + 2 * self.chrome.min(1)
            + second(self.chrome)
            + 2 * self.intros.min(1)
            + second(self.intros)
            + if self.key_values >= 5 && self.message_is_value {
                3
            } else {
                0
            }
            + self.reader.min(2)
            + 3 * u32::from(self.describes_change())
            + 2 * self.placeholders.min(1)
            + second(self.placeholders)
            + u32::from(self.templates > 0 && self.figures == 0)
            + 3 * self.example_headings.min(1)
            + 2 * self.explanations.min(1)
            + second(self.explanations)
            + self.catalogue_fields.min(3)
            + 2 * self.verdicts.min(1)
            + second(self.verdicts)
            + if self.faq_headings > 0 && self.reader > 0 {
                2
            } else {
                0
            }
            + self.request_points()
    }

    /// Points of a published post's tags, a feature request's template and
    /// a message's general form: each alone makes a page.
    fn request_points(&self) -> u32 {
        let any = (self.tag_rows + u32::from(self.tag_items >= 3)).min(1)
            + self.feature_requests.min(1)
            + self.general_forms.min(1)
            + self.marked_questions.min(1);
        3 * any.min(1)
    }

    /// A commit's or pull request's text: it shows a message it changes.
    fn describes_change(&self) -> bool {
        self.changes > 0 || (self.before && self.after)
    }

    /// Source code that quotes messages, not a report of them.
    fn source_code(&self) -> bool {
        self.messages_in_code && self.code_lines >= 3 && self.code_lines * 5 >= self.other_lines * 3
    }

    /// A change's description shows the output before and after it: its
    /// log lines are examples, not evidence. An FAQ's first-person heading
    /// is a report's unless the page goes on to address the reader.
    fn report_evidence(&self) -> bool {
        self.first_person > 0
            || (self.faq_headings > 0 && self.reader == 0)
            || self.issue_headings > 0
            || (self.log_lines >= 2 && !self.describes_change())
    }
}

/// First person on a line: `I`, `my`, `me`, `Dear`, or `我` that is not
/// the plural `我们` (Chinese tutorials say "we" as English ones say "you").
fn first_person(p: &Patterns, line: &str) -> bool {
    // Japanese: 私, 僕.
    if line.contains('私') || line.contains('僕') {
        return true;
    }
    if line.contains('我') {
        let singular = line
            .match_indices('我')
            .any(|(at, c)| !line[at + c.len()..].starts_with('们'));
        if singular {
            return true;
        }
    }
    p.first_person.is_match(line)
}

/// More signs of a page that shows a message (the ninth holdout's pages:
/// fix guides, glossaries, error catalogues, Chinese, Japanese and Korean
/// explainers, feature requests), kept apart from [`Patterns`].
struct PageSigns {
    heading: Regex,
    example_heading: Regex,
    table_cell: Regex,
    scenario: Regex,
    intro: Regex,
    explanation: Regex,
    reader: Regex,
    tags: Regex,
    feature_request: Regex,
    proposal: Regex,
    general_form: Regex,
    self_introduction: Regex,
    korean_first_person: Regex,
    alternatives: Regex,
    size_letter: Regex,
    tag_item: Regex,
    other_first_person: Regex,
    familiar: Regex,
    signatures: Regex,
    question: Regex,
}

fn page_signs() -> &'static PageSigns {
    static S: OnceLock<PageSigns> = OnceLock::new();
    S.get_or_init(|| PageSigns {
        // A glossary's or guide's section heading alone on its line.
        heading: constant_regex(concat!(
            r"(?i)^(?:#{1,6}\s*|\*\*)?(?:what it is|what is it|why it matters|the error",
            r"|how it works|key takeaways",
            // An explainer's opening section (`Introduction`, `Overview`)
            // and Japanese error-reference headings: `概要` (overview),
            // `エラーメッセージ` (the error message), `対策` / `対処法`
            // (countermeasures), `解決策` (solution).
            r"|introduction|overview|概要|エラーメッセージ|対策|対処法|解決策)\s*(?:\*\*)?\s*[:：]?$"
        )),
        // Headings that call what follows samples: `Output Example:`
        // (after a command's `#`), `类似问题` (similar problems), `常见CUDA
        // 错误类型` (common CUDA error types).
        example_heading: constant_regex(concat!(
            r"(?i)^(?:#+\s*)?(?:\*\*)?(?:(?:output|log|error|message) examples?",
            r"|类似(?:问题|错误|报错)|相关问题|常见.{0,20}?(?:错误|报错|问题)(?:类型|信息|汇总|列表|一览))",
            r"(?:\*\*)?\s*[:：]?$"
        )),
        // A troubleshooting table's column (`| Symptom | Likely Cause |
        // Primary Solutions |`).
        table_cell: constant_regex(concat!(
            r"(?i)^(?:(?:likely|possible|probable|primary|common|recommended|quick|root|suggested)\s+)?",
            r"(?:symptoms?|causes?|solutions?|fix(?:es)?|workarounds?|原因|解决方法|解决方案|现象|症状)$"
        )),
        // The reader's story in the second person, a sentence starting
        // with `You` and what they do (`You load a 70B model and CUDA runs
        // out of memory`, `You queue up a 1024x1024 generation`): a guide
        // narrates the reader's failure, a report the poster's.
        scenario: constant_regex(concat!(
            r"(?:^|[.!?]\s+)(?:(?:Then|So|Now|And) you|You) (?:\w+ly )?",
            r"(?:load|loaded|launch|launched|run|ran|start|started|queue|queued|try|tried|train|trained",
            r"|fire|fired|hit|click|clicked|install|installed|upgrade|upgraded|deploy|deployed|open|opened",
            r"|spin|kick|kicked|got|set|submit|submitted|call|called|type|typed|execute|executed)\b",
            // Russian: `Классическая ситуация: вы скачали веса ..., запускаете
            // скрипт` (you downloaded the weights, you launch the script).
            r"|(?:^|[.!?:]\s+)[Вв]ы (?:\w+ )?(?:скачали|скачиваете|запускаете|запустили|загружаете|загрузили",
            r"|обучаете|пытаетесь|попытались|установили|открыли|нажали|видите|получаете|получили)\b"
        )),
        // Chinese: `今天,我们要讨论一个在深度学习中常见的错误:` (today we
        // discuss a common error:).
        intro: constant_regex(concat!(
            r"(?:讨论|介绍|探讨|聊聊|解析|详解)(?:一下)?.{0,30}?(?:错误|报错|问题)",
            r"|常见的?(?:错误|报错|问题)[:：]",
            // What to look for, as a guide tells it (`Look for lines
            // similar to:`): an example of lines, not the lines.
            r"|(?i:\b(?:lines?|output|messages?|errors?|entries|something) similar to\b",
            r"|^look for (?:lines|entries|messages|output|something|these|the following)\b)",
            // Russian and Indonesian: `если вы видите` (if you see),
            // `например` (for example); `Jika Anda mengalami pesan`
            // (if you meet the message), `misalnya`, `seperti berikut`.
            r"|(?i:\bесли вы (?:видите|увидели|получаете|получили|столкнулись)\b|\bнапример\b|\bчто-то вроде\b",
            r"|\bjika anda (?:mengalami|melihat|mendapatkan|mendapat|menemukan|menjumpai)\b",
            r"|\b(?:misalnya|sebagai contoh|contohnya|seperti berikut)\b)"
        )),
        // When or why a message usually happens, as a page says it.
        explanation: constant_regex(concat!(
            r"(?i)\b(?:this|it|that) (?:usually|typically|often|commonly|generally|most likely) ",
            r"(?:means|indicates|signals|points to)\b",
            r"|\b(?:root|common|typical|possible|likely) causes (?:include|are)\b",
            r"|\b(?:usually|typically|commonly|often) manifests?\b",
            // A kind judged among others (`This is one of the most
            // disruptive GPU failure modes`).
            r"|\bone of the most (?:common|frequent|disruptive|annoying|dreaded|confusing|serious|severe)\b",
            // Chinese: `通常出现在显存不足时` (usually appears when),
            // `仍可能出现此错误` (this error may still appear).
            r"|通常(?:出现|发生)(?:在|于)|最常见的(?:情况|原因|错误)|常见于",
            r"|可能(?:出现|发生|遇到)(?:此|这个|该|这种|这类)(?:错误|报错|问题)",
            // Korean: `메모리 용량이 부족해 발생하는 문제` (a problem that
            // occurs when memory runs short).
            r"|발생하는 (?:문제|에러|오류)|(?:에러|오류)가 발생하는 (?:이유|원인)",
            // An article saying what it explains (`In this article, we'll
            // explore what this error means`, Italian `In questo articolo`,
            // Spanish, French, German, Portuguese, Chinese `本文将`,
            // Japanese `この記事では`).
            r"|(?i:\bin this (?:article|post|guide|tutorial)\b|\bin questo articolo\b|\ben este art[ií]culo\b",
            r"|\bdans cet article\b|\bin diesem (?:artikel|beitrag)\b|\bneste artigo\b",
            // Russian `В этой статье`, Indonesian `Dalam artikel ini`.
            r"|\bв этой статье\b|\bdalam artikel ini\b)|本文(?:将|会|介绍|讲解)|この記事では",
            // What a message means, in another language than the
            // program's: `Questo errore si verifica quando` (this error
            // occurs when); a program explains its own message only in
            // English.
            r"|(?i:\bquesto errore (?:si verifica|indica|significa)|\beste error (?:ocurre|se produce|indica|significa)",
            r"|\bcette erreur (?:se produit|survient|indique|signifie)|\bdieser fehler (?:tritt|bedeutet))",
            // A glossary's definition (`it is referred to as an "oomkilled"
            // exit code 137`, `The OOM killer is a feature of the Linux
            // kernel`).
            r"|\b(?:is|are) referred to as\b|\bis a (?:feature|mechanism) of the\b",
            // `This is the most common DirectX crash`.
            r"|(?i:\b(?:this|it) is the most (?:common|frequent)\b)",
            // Russian `обычно означает` (usually means), `эта ошибка
            // возникает` (this error occurs); Indonesian `biasanya berarti`
            // (usually means), `adalah masalah umum` (is a common problem),
            // `terjadi ketika` (occurs when).
            r"|(?i:\bобычно (?:означает|возникает|происходит|появляется)\b",
            r"|\b(?:эта|данная) ошибка (?:означает|возникает|появляется|происходит)\b",
            r"|\bbiasanya (?:berarti|terjadi|disebabkan)\b|\badalah masalah umum\b|\bterjadi ketika\b)"
        )),
        // Korean addresses the reader without `you`: `해결할 수 있다`
        // (one can solve it), `하세요` (do).
        // Russian (`вы`, `вас`, `ваш`) and Indonesian (`Anda`) address the
        // reader as `you` does.
        reader: constant_regex(
            r"수 있다|수 있습니다|하세요|해 ?보세요|(?i:\b(?:вы|вас|вам|ваш(?:а|е|и|его|ей|у|им|их)?|anda)\b)",
        ),
        // A published post's tags: three or more on a line of their own.
        tags: constant_regex(r"^#[^\W\d][\w-]*(?:\s*#[^\W\d][\w-]*){2,}$"),
        // One tag as a list item (`• #linux`): three make a row.
        tag_item: constant_regex(r"^[-*•]\s*#[^\W\d][\w-]*$"),
        feature_request: constant_regex(concat!(
            r"(?i)^(?:#+\s*)?(?:\*\*)?(?:is your feature request related to a problem",
            r"|🚀\s*feature|feature request\s*[:：]?$)"
        )),
        proposal: constant_regex(concat!(
            r"(?i)^(?:#+\s*)?(?:\*\*)?(?:describe the solution you(?:'|’)?d like",
            r"|describe alternatives you(?:'|’)?ve considered|proposed solution|alternatives considered|pitch\b)"
        )),
        // What a message looks like whenever it happens: `when there's a
        // CUDA error using the conda binaries, it looks like this`.
        general_form: constant_regex(concat!(
            r"(?i)\bwhen(?:ever)? there(?:'s|’s| is) an? (?:[\w-]+ ){0,3}?(?:error|failure|exception|crash)\b",
            r".{0,80}?\b(?:it|the (?:error|message|output)) (?:looks|reads) like\b"
        )),
        // A blogger's greeting (`大家好,我是默语`, `Hi everyone, I'm Ann`)
        // says who writes, not what happened to them.
        self_introduction: constant_regex(concat!(
            r"大家好[,，!！。\s]*我是[^,，。!！]*",
            r"|(?i:\b(?:hi|hello|hey)(?: everyone| all| folks| there)?[,!.]?\s*)I(?:'m| am) \w+"
        )),
        korean_first_person: constant_regex(r"제가|저는|저의|내가|나는"),
        // Codes given as alternatives where a program prints one (`Exit
        // code 137/236/237`): a description of cases.
        alternatives: constant_regex(r"(?i)\b(?:code|status)s?\s*[:=]?\s*-?\d+(?:\s*/\s*-?\d+)+"),
        // A size written as a letter (`Allocation size X exceeds`).
        size_letter: constant_regex(r"\b(?:size|allocate|allocating) [XYN]\b"),
        // Russian and Indonesian first person: `я`, `мне`, `моей` (my),
        // `у меня`; `saya`, `aku`.
        other_first_person: constant_regex(
            r"(?i)\b(?:я|мне|меня|мной|мой|моя|моё|мое|мои|моего|моей|моему|моим|моих|мою|saya|aku)\b",
        ),
        // A page's rhetoric that the reader knows the failure: `Sound
        // familiar?`, a `classic situation`; Russian `Классическая
        // ситуация:`, `Знакомо?`; Chinese `已不陌生` (no longer
        // unfamiliar), `众所周知的` (well-known).
        familiar: constant_regex(concat!(
            r"(?i)\b(?:sounds?|looks?) familiar\?|\b(?:classic|typical|familiar) (?:situation|scenario)\b",
            r"|\b(?:классическая|типичная|знакомая) ситуация\b|(?:^|\s)знакомо\?|已不陌生|众所周知的|再熟悉不过"
        )),
        // A tool's list of the fragments it matches, introduced as such:
        // `Matched signals`, `Faultline looks for one or more of these log
        // fragments:`.
        signatures: constant_regex(concat!(
            r"(?i)^(?:#+\s*)?(?:matched|matching|detected) (?:signals|signatures|patterns|strings)\s*:?$",
            r"|\blooks for (?:one or more of |any of )?(?:these|the following) (?:log )?",
            r"(?:fragments|patterns|strings|signatures|lines|messages)\b"
        )),
        // A question marked as an FAQ's (`**问:为什么提示 ...?`, `Q: ...`,
        // Japanese `質問:`, Korean `질문:`, Russian `Вопрос:`).
        question: constant_regex(r"^(?:#+\s*)?(?:\*\*)?\s*(?:问|問|Q|質問|질문|Вопрос)\s*\d*\s*[:：]"),
    })
}

/// First person on a line, after a blogger's greeting (`大家好,我是默语`),
/// in English, Chinese, Japanese or Korean (`제가`, `저는`).
fn speaker(p: &Patterns, line: &str) -> bool {
    let s = page_signs();
    let line = s.self_introduction.replace_all(line, "");
    first_person(p, &line)
        || s.korean_first_person.is_match(&line)
        || s.other_first_person.is_match(&line)
}

/// Placeholders in a message's own text beyond [`Patterns::placeholder`]:
/// codes as alternatives, a size written as a letter.
fn message_text_signs(f: &mut Features, own: &str) {
    let s = page_signs();
    f.placeholders += s.alternatives.find_iter(own).count() as u32;
    let letters = s.size_letter.find_iter(own).count() as u32;
    f.placeholders += letters;
    f.templates += letters;
}

/// Signs of a page on a prose line beyond [`Patterns`]: glossary headings,
/// a troubleshooting table's columns, example headings, the reader's story
/// in the second person, explanations, tags, a feature request's template,
/// a message's general form. `first` is whether the line speaks in the first
/// person, which keeps a report's own words from counting.
fn page_line_signs(f: &mut Features, line: &str, first: bool) {
    let p = patterns();
    let s = page_signs();
    let short = line.chars().count() < 60;
    f.headings += u32::from(short && s.heading.is_match(line));
    f.headings += table_headings(s, line);
    f.example_headings += u32::from(short && s.example_heading.is_match(line));
    f.tag_rows += u32::from(s.tags.is_match(line));
    f.tag_items += u32::from(s.tag_item.is_match(line));
    f.feature_requests += u32::from(s.feature_request.is_match(line));
    f.reader += u32::from(s.reader.is_match(line) && !p.reader.is_match(line));
    if first {
        return;
    }
    let intro = s.scenario.is_match(line) || s.intro.is_match(line);
    f.intros += u32::from(intro && !p.intro.is_match(line));
    f.intros += u32::from(s.familiar.is_match(line));
    f.example_headings += u32::from(s.signatures.is_match(line));
    f.explanations += u32::from(s.explanation.is_match(line) && !p.explanation.is_match(line));
    f.general_forms += u32::from(s.general_form.is_match(line));
}

/// Columns of a troubleshooting table on a header row (`| Symptom |
/// Likely Cause | Primary Solutions |`): two or more count as two headings.
fn table_headings(s: &PageSigns, line: &str) -> u32 {
    if line.matches('|').count() < 2 {
        return 0;
    }
    let columns = line
        .split('|')
        .map(|cell| cell.trim().trim_matches('*').trim())
        .filter(|cell| s.table_cell.is_match(cell))
        .count();
    if columns >= 2 {
        2
    } else {
        0
    }
}

fn features(text: &str, messages: &[MessageSpan<'_>]) -> Features {
    let p = patterns();
    let mut f = Features {
        messages_in_code: true,
        ..Features::default()
    };
    // Under a feature request's proposal heading, `I would ...` proposes;
    // it reports nothing.
    let mut proposal = false;
    // Comment lines under a comment that calls them the output (`#
    // Output:`): a shell session's paste, the command's output kept as
    // comments, not source code quoting a message.
    let mut output_comments = false;
    for (index, raw) in text.lines().enumerate() {
        let number = index as u64 + 1;
        let message = messages
            .iter()
            .find(|m| number >= m.line && number < m.line + m.lines.max(1));
        let comment = raw.trim_start().starts_with('#');
        output_comments = comment && (output_comments || output_heading(raw));
        if message.is_some_and(|m| m.line == number) {
            f.messages_in_code &= code_shaped(raw) && !output_comments;
            f.message_is_value |= p.key_value.is_match(raw.trim());
        }
        if let Some(m) = message {
            // The message's own text: from where it starts on its first line.
            let own = if m.line == number {
                let head: String = m.first.trim().chars().take(15).collect();
                raw.find(head.as_str()).map_or(raw, |at| &raw[at..])
            } else {
                raw
            };
            f.placeholders += p.placeholder.find_iter(own).count() as u32;
            f.templates += p.template.find_iter(own).count() as u32;
            message_text_signs(&mut f, own);
            f.figures += p.figure.find_iter(own).count() as u32;
            // A program never says what a patch does; a grammar message
            // may take its whole line, prose included.
            if m.line == number && own.len() == raw.len() {
                f.changes += u32::from(p.change.is_match(raw));
            }
        }
        if p.log.is_match(raw) {
            f.log_lines += 1;
            continue;
        }
        // A message line's prose is what comes before the message.
        let line = match message {
            Some(m) if m.line == number => {
                let first = m.first.trim();
                let head: String = first.chars().take(15).collect();
                match raw.find(head.as_str()) {
                    Some(at) if !head.is_empty() => &raw[..at],
                    _ => "",
                }
            }
            Some(_) => "",
            None => raw,
        };
        let line = line.trim();
        if line.is_empty() {
            continue;
        }
        if line.len() == raw.trim().len() {
            f.other_lines += 1;
            f.code_lines += u32::from(p.code.is_match(line));
        }
        if line.chars().count() < 60 && (p.heading.is_match(line) || p.permalink.is_match(line)) {
            f.headings += 1;
        }
        // `How to fix this error` asks about the asker's own error.
        f.titles += u32::from(p.title.is_match(line) && !p.own.is_match(line));
        f.chrome += u32::from(p.chrome.is_match(line));
        f.changes += u32::from(p.change.is_match(line));
        if let Some(c) = p.before_after.captures(line) {
            let before = c.get(2).is_some()
                || [c.get(1), c.get(3)]
                    .iter()
                    .flatten()
                    .any(|m| m.as_str().eq_ignore_ascii_case("before"));
            f.before |= before;
            f.after |= !before;
        }
        proposal |= f.feature_requests > 0 && page_signs().proposal.is_match(line);
        let first = !proposal && speaker(p, line);
        // The heading of an FAQ entry quotes the message after it.
        // It ends with the message's closing quote: nothing else is said.
        let heading = raw.trim_end().ends_with(['”', '"', '`']) && raw.trim().chars().count() < 160;
        let faq =
            first && heading && message.is_some_and(|m| m.line == number) && p.faq.is_match(line);
        f.faq_headings += u32::from(faq);
        // A question marked as an FAQ's that quotes the message (`**问:为什么
        // 提示 RuntimeError: CUDA out of memory. ...?`): its `I` is the
        // FAQ's asker, not a poster.
        let asked = message.is_some_and(|m| m.line == number)
            && page_signs().question.is_match(line)
            && raw.trim_end().trim_end_matches('*').ends_with(['?', '？']);
        f.marked_questions += u32::from(asked);
        let first = first && !faq && !asked;
        f.intros += u32::from(p.intro.is_match(line) && !first);
        f.explanations += u32::from(p.explanation.is_match(line) && !first);
        f.example_headings +=
            u32::from(line.chars().count() < 60 && p.example_heading.is_match(line));
        f.catalogue_fields += u32::from(p.catalogue_field.is_match(line));
        f.verdicts += u32::from(p.verdict.is_match(line));
        f.key_values += u32::from(p.key_value.is_match(line));
        f.issue_headings += u32::from(line.chars().count() < 40 && p.issue.is_match(line));
        f.first_person += u32::from(first);
        page_line_signs(&mut f, line, first);
        // The answer, not the question, addresses the reader.
        f.reader += u32::from(p.reader.is_match(line) && !faq);
    }
    f
}

/// Whether a comment line only names what follows as a program's output
/// (`# Output:`, `# Result:`, `# stderr:`), as a shell session pasted into
/// a report does above the command's output.
fn output_heading(line: &str) -> bool {
    static RE: OnceLock<Regex> = OnceLock::new();
    RE.get_or_init(|| {
        constant_regex(r"(?i)^\s*#+\s*(?:output|result|stdout|stderr|log)s?\s*:?\s*$")
    })
    .is_match(line)
}

/// Whether a message's first line is shaped as source code that quotes it:
/// a comment, a string literal that starts the line, an element of a list
/// (`    CUDNN_STATUS_ALLOC_FAILED,`), a name alone before `)`.
/// A field of data (`"exitCode": 137,`, as JSON prints a status) is a
/// program's output, not code.
fn code_shaped(line: &str) -> bool {
    let t = line.trim();
    let field = t.contains("\": ") || t.contains("': ");
    t.starts_with('#')
        || t.starts_with("//")
        || (!field && (t.starts_with(['"', '\'']) || t.ends_with([',', '('])))
        || (t.ends_with(')') && !t.contains(' ') && !t.contains('('))
}

/// Whether `text`, a whole input holding the messages at `messages`, is a
/// document that shows them rather than a report of them (the rules are in
/// the module's documentation). Inputs over [`MAX_BYTES`] are never
/// documents.
pub fn is_document(text: &str, messages: &[MessageSpan<'_>]) -> bool {
    if text.len() as u64 > MAX_BYTES || messages.is_empty() {
        return false;
    }
    let f = features(text, messages);
    if f.report_evidence() {
        return false;
    }
    let points = f.points();
    f.source_code()
        || (points >= DOCUMENT_POINTS && tip_below(text, messages).is_none_or(|tip| tip < points))
}

/// Whether a line is prose in Chinese, Japanese or Korean: a Han, kana or
/// Hangul character among its first words.
fn explains_in_cjk(line: &str) -> bool {
    line.chars().take(40).any(|c| {
        matches!(c, '\u{3040}'..='\u{30ff}' | '\u{3400}'..='\u{4dbf}' | '\u{4e00}'..='\u{9fff}' | '\u{ac00}'..='\u{d7af}')
    })
}

/// The points of the one prose line below the messages, when there is one,
/// it follows the output above it without a blank line, and nothing is
/// above the messages. When that line makes all the input's points it is a
/// program's tip printed under its error (Real-ESRGAN's `If you encounter
/// CUDA out of memory, try to set --tile with a smaller number.` under
/// PyTorch's CPU allocator failure): it addresses the reader as a page
/// does, but a page introduces what it shows, or says more about it than
/// one line, and its prose under a pasted log is a paragraph of its own,
/// after a blank line. The report's own error lines outweigh one such line.
fn tip_below(text: &str, messages: &[MessageSpan<'_>]) -> Option<u32> {
    let first_message = messages.iter().map(|m| m.line).min()?;
    let in_message = |number: u64| {
        messages
            .iter()
            .any(|m| number >= m.line && number < m.line + m.lines.max(1))
    };
    let mut tip = None;
    let mut after_blank = false;
    for (index, line) in text.lines().enumerate() {
        let number = index as u64 + 1;
        let blank = line.trim().is_empty();
        let below_blank = std::mem::replace(&mut after_blank, blank);
        if in_message(number) || blank {
            continue;
        }
        if number < first_message {
            return None;
        }
        // A program's tip is in its message's language; an explanation
        // in Chinese, Japanese or Korean under an English message is a
        // page's (a Korean tutorial's `... 해결할 수 있다`).
        if explains_in_cjk(line) {
            return None;
        }
        let points = features(line, &[]).points();
        if points > 0 {
            if tip.is_some() || below_blank {
                return None;
            }
            tip = Some(points);
        }
    }
    tip
}

#[cfg(test)]
mod tests {
    use super::{is_document, MessageSpan};

    fn span(text: &str, message: &str) -> Vec<MessageSpan<'static>> {
        let line = text
            .lines()
            .position(|l| l.contains(message))
            .map_or(1, |i| i as u64 + 1);
        vec![MessageSpan {
            line,
            lines: 1,
            first: Box::leak(message.to_string().into_boxed_str()),
        }]
    }

    // A tutorial page (real text of a public troubleshooting page).
    const TUTORIAL: &str = "Dealing with out-of-memory (OOM) errors\n\nIf you got this error while running a script\n\nOutOfMemoryError: CUDA out of memory. Tried to allocate 2.22 GiB.\n\nit means that your GPU memory size wasn't big enough for the model and script configuration.\n";
    const MESSAGE: &str = "OutOfMemoryError: CUDA out of memory. Tried to allocate 2.22 GiB.";

    #[test]
    fn a_tutorial_is_a_document() {
        assert!(is_document(TUTORIAL, &span(TUTORIAL, MESSAGE)));
    }

    #[test]
    fn first_person_keeps_a_report() {
        let report = TUTORIAL.replace("If you got", "I got");
        assert!(!is_document(&report, &span(&report, MESSAGE)));
        // The Chinese "we" of a tutorial is not a report; "I" is.
        let zh = format!("{TUTORIAL}我们可以减小批量大小。\n");
        assert!(is_document(&zh, &span(&zh, MESSAGE)));
        let zh = format!("{TUTORIAL}我运行时报错。\n");
        assert!(!is_document(&zh, &span(&zh, MESSAGE)));
    }

    #[test]
    fn log_lines_keep_a_report() {
        let one = format!("{TUTORIAL}2024-01-02 10:00:00 INFO start\n");
        assert!(is_document(&one, &span(&one, MESSAGE)));
        let two = format!("{one}2024-01-02 10:00:01 INFO load\n");
        assert!(!is_document(&two, &span(&two, MESSAGE)));
    }

    #[test]
    fn a_message_own_prose_does_not_count() {
        // TensorFlow's own sentence addresses the reader; it is the message.
        let log = "W bfc_allocator.cc:343] Garbage collection: If you see this message frequently, you are running near the threshold. You may try smaller batch sizes.\n";
        let message = "Garbage collection: If you see this message frequently";
        assert!(!is_document(log, &span(log, message)));
    }

    #[test]
    fn two_points_are_not_enough() {
        let oom = "RuntimeError: CUDA out of memory. Tried to allocate 20.00 MiB";
        // A question about one's own error is not a tutorial's title.
        let asked = format!("How to fix this error\nThe exact string\n{oom}\n");
        assert!(!is_document(&asked, &span(&asked, oom)));
        // A title alone is two points; a heading makes three.
        let titled = format!("How to fix CUDA out of memory errors\n{oom}\n");
        assert!(!is_document(&titled, &span(&titled, oom)));
        let page = format!("How to fix CUDA out of memory errors\n{oom}\nCause\n");
        assert!(is_document(&page, &span(&page, oom)));
    }

    #[test]
    fn source_code_quoting_a_message_is_a_document() {
        // A unit test that builds a fake error (real source of a public
        // project's test suite).
        let code = "    def test_is_out_of_cuda_memory(self) -> None:\n        \"\"\"Test cuda OOM error detection.\"\"\"\n        cuda_oom_error_2 = RuntimeError(\n            \"RuntimeError: cuda runtime error (2) : out of memory\"\n        )\n        self.assertTrue(is_out_of_cuda_memory(cuda_oom_error_2))\n";
        let message = "RuntimeError: cuda runtime error (2) : out of memory";
        assert!(is_document(code, &span(code, message)));
        // The same code followed by the error it printed is a report.
        let printed = format!(
            "{}{message}\n",
            code.replace(&format!("\"{message}\""), "\"x\"")
        );
        let spans = vec![MessageSpan {
            line: 7,
            lines: 1,
            first: message,
        }];
        assert!(!is_document(&printed, &spans));
    }

    #[test]
    fn data_and_logs_are_not_source_code() {
        // A container's status as JSON (real `kubectl get pod -o json`
        // shape): the program's output.
        let json = "{\n    \"state\": {\n        \"termination\": {\n            \"exitCode\": 137,\n            \"reason\": \"OOMKilled\",\n        }\n    }\n}\n";
        assert!(!is_document(json, &span(json, "\"exitCode\": 137,")));
        // A glog fatal check and its stack (Caffe): the message line is a
        // log line, however code-like the frames end.
        let glog = "F1126 12:19:18.211333 23387 cudnn_conv_layer.cu:28] Check failed: status == CUDNN_STATUS_SUCCESS (8 vs. 0)  CUDNN_STATUS_EXECUTION_FAILED\n*** Check failure stack trace: ***\n    @     0x7fa7b34190cd  google::LogMessage::Fail()\n    @     0x7fa7b341af33  google::LogMessage::SendToLog()\n    @     0x560bd9a22bc5  main\nAborted (core dumped)\n";
        assert!(!is_document(glog, &span(glog, "Check failed")));
    }

    #[test]
    fn large_inputs_are_never_documents() {
        let big = format!("{TUTORIAL}{}", "x\n".repeat(40_000));
        assert!(!is_document(&big, &span(&big, MESSAGE)));
    }

    #[test]
    fn a_template_message_is_a_document_with_prose() {
        // A Chinese blog (wild paste): a heading after an emoji, prose that
        // introduces the message, and the message with `...` for its figure.
        let blog = "🔥 问题背景\n\n在使用 PyTorch / TensorFlow 训练或推理模型时,如果 GPU 资源使用不当,就很容易遇到如下错误:\n\nRuntimeError: CUDA out of memory. Tried to allocate ...\n";
        let message = "RuntimeError: CUDA out of memory. Tried to allocate ...";
        assert!(is_document(blog, &span(blog, message)));
        // Two placeholders are enough on their own (wiki prose quoting
        // NCCL's watchdog); one is not.
        let two = "Training dies with Watchdog caught collective operation timeout: WorkNCCL(..., OpType=ALLREDUCE, Timeout(ms)=600000) ran for ... ms before timing out.\n";
        let watchdog = "Watchdog caught collective operation timeout";
        assert!(is_document(two, &span(two, watchdog)));
        let one = "Training dies with Watchdog caught collective operation timeout: WorkNCCL(SeqNum=1, OpType=ALLREDUCE, Timeout(ms)=600000) ran for ... ms before timing out.\n";
        assert!(!is_document(one, &span(one, watchdog)));
        // A figure printed in full is no placeholder.
        let real = "RuntimeError: CUDA out of memory. Tried to allocate 20.00 MiB\n";
        let real = format!("{real}Cause\n");
        assert!(!is_document(
            &real,
            &span(&real, "RuntimeError: CUDA out of memory")
        ));
    }

    #[test]
    fn a_change_description_is_a_document() {
        // A commit message (wild paste) whose whole line is the message's.
        let commit = "This patch adds a new `max_working_set_exceeded()` check on Metal so that we can display a \"System is out of GPU memory\" message to the user.\n";
        let message = "This patch adds a new";
        assert!(is_document(commit, &span(commit, message)));
        // A pull request's Before and After: its tracebacks are examples.
        let pr = "Before\n>>> torch.empty(10**15)\nTraceback (most recent call last):\n  File \"<stdin>\", line 1, in <module>\nRuntimeError: [enforce fail at CPUAllocator.cpp:56] posix_memalign(&data, gAlignment, nbytes) == 0. 12 vs 0\nAfter\n>>> torch.empty(10**15)\n";
        let message = "RuntimeError: [enforce fail at CPUAllocator.cpp:56]";
        assert!(is_document(pr, &span(pr, message)));
        // Before alone is a poster's word, and the logs stay evidence.
        let before = pr.replace("After\n", "Then\n");
        assert!(!is_document(&before, &span(&before, message)));
        // The poster's own words keep a change's text a report.
        let mine = format!("I hit this today.\n{pr}");
        assert!(!is_document(&mine, &span(&mine, message)));
    }

    #[test]
    fn an_faq_heading_is_not_first_person() {
        // PyTorch's old FAQ (wild paste).
        let faq = "My model reports “cuda runtime error(2): out of memory”\n\nAs the error message suggests, you have run out of memory on your GPU.\n";
        let message = "cuda runtime error(2): out of memory";
        assert!(is_document(faq, &span(faq, message)));
        // Without the answer to the reader it is the poster's report.
        let asked = "My model reports “cuda runtime error(2): out of memory”\n\nThe batch is 64.\n";
        assert!(!is_document(asked, &span(asked, message)));
        // A sentence that goes on after the quotation is a report.
        let report = "I am getting an error when trying to run your code: \"failed to create cublas handle: CUBLAS_STATUS_ALLOC_FAILED\". I have used the GPU before.\n";
        assert!(!is_document(
            report,
            &span(report, "failed to create cublas handle")
        ));
    }

    #[test]
    fn example_prose_in_japanese_and_error_pages() {
        // A Japanese blog (wild paste).
        let ja = "具体的なエラーメッセージを見てみましょう。以下のような表示を見たことはありませんか?\nRuntimeError: CUDA out of memory. Tried to allocate 304.00 MiB (GPU 0; 8.00 GiB total capacity)\nこの例では、8GBのGPUにおいて、空きがあるにもかかわらず失敗しています。\n";
        let message = "RuntimeError: CUDA out of memory";
        assert!(is_document(ja, &span(ja, message)));
        // 私 is first person: the writer's own failure.
        let mine = ja.replace("具体的な", "私の");
        assert!(!is_document(&mine, &span(&mine, message)));
        // A review comment (wild paste) that proposes a wording `比如` (for
        // example) under the message it quotes, addressing the author.
        let review = "Out of memory error on GPU 0. Cannot allocate 145.468994MB GPU memory, available memory is 72.312500MB.\n这段可以格式上再改进下么，比如\nIf no, please try to decrease the batch size of your model.\n";
        let message = "Out of memory error on GPU 0";
        assert!(is_document(review, &span(review, message)));
        let mine = review.replace("这段可以", "我觉得这段可以");
        assert!(!is_document(&mine, &span(&mine, message)));
        // An error-code page: an example heading and a question heading.
        let page = "Error code: 0100\n\nError log example\n\nValueError: RESOURCE_EXHAUSTED: Error allocating device buffer: Attempting to allocate 8.00M. That was not possible. There are 6.43M free.; (0x0x1_HBM0)\n\nWhy do these happen?\n";
        let message = "ValueError: RESOURCE_EXHAUSTED";
        assert!(is_document(page, &span(page, message)));
        let no_question = page.replace("Why do these happen?\n", "");
        assert!(!is_document(&no_question, &span(&no_question, message)));
    }

    fn spans(text: &str, messages: &[&'static str]) -> Vec<MessageSpan<'static>> {
        messages.iter().flat_map(|m| span(text, m)).collect()
    }

    #[test]
    fn a_heading_that_calls_messages_samples_is_a_document() {
        // An HPC knowledge-base page (wild paste).
        let page = "Example errors\n\n# OOM in a parallel program launched through srun\n\nslurmstepd: error: Detected 1 oom-kill event(s) in StepId=14604003.0 cgroup. Some of your processes may have been killed by the cgroup out-of-memory handler.\n\nsrun: error: o0616: task 0: Out Of Memory\n";
        let messages = [
            "slurmstepd: error: Detected 1 oom-kill",
            "srun: error: o0616",
        ];
        assert!(is_document(page, &spans(page, &messages)));
        // An XLA error-code page (wild paste): the heading alone is enough.
        let xla = "Sample Error Messages:\n\nRESOURCE_EXHAUSTED: XLA:TPU compile permanent error. Ran out of memory in memory space hbm. Used 49.34G of 32.00G hbm. Exceeded hbm capacity by 17.34G.\n";
        assert!(is_document(xla, &span(xla, "RESOURCE_EXHAUSTED: XLA:TPU")));
        // A poster's own heading above the same lines is a report.
        for heading in ["Error messages:", "## Error", "Example run", "Logs"] {
            let paste = page.replace("Example errors", heading);
            assert!(!is_document(&paste, &spans(&paste, &messages)), "{heading}");
        }
    }

    #[test]
    fn an_example_named_as_one_of_its_kind_is_a_document() {
        // An FAQ page (wild paste): `an error such as this:`, then what it
        // means for the reader.
        let faq = "OOM stands for \"Out Of Memory\", and so an error such as this:\n\nslurmstepd: error: Detected 1 oom-kill event(s) in step 370626.batch cgroup\n\nindicates that your job attempted to use more memory (RAM) than Slurm reserved for it.\n";
        let message = "slurmstepd: error: Detected 1 oom-kill";
        assert!(is_document(faq, &span(faq, message)));
        // The poster's own error, or a plain lead-in, is a report.
        let mine = faq.replace("and so an error such as this:", "and I got this:");
        assert!(!is_document(&mine, &span(&mine, message)));
        let plain = faq.replace("an error such as this:", "the job failed with:");
        assert!(!is_document(&plain, &span(&plain, message)));
        // A guide (wild paste): `says something like:`, then the reader.
        let guide = "You loaded a model. It crashed. The error says something like:\n\nCUDA error: out of memory\n\nYour model doesn’t fit in your GPU’s VRAM. Here’s how to fix it — fastest fixes first.\n";
        assert!(is_document(
            guide,
            &span(guide, "CUDA error: out of memory")
        ));
        // (Without the reader's story in the second person, which alone
        // makes a guide.)
        let told = guide
            .replace("says something like:", "says:")
            .replace("You loaded a model.", "The model loaded.");
        assert!(!is_document(
            &told,
            &span(&told, "CUDA error: out of memory")
        ));
        // A blog (wild paste): the reader runs a command `and see this:`.
        let blog = "Your pod crashed. You run kubectl describe and see this:\n\nState:       Running\nLast State:  Terminated\nReason:      OOMKilled\nExit Code:   137\n";
        assert!(is_document(blog, &span(blog, "Reason:      OOMKilled")));
        // The same status under the poster's words is a report.
        let status = blog.replace(
            "Your pod crashed. You run kubectl describe and see this:",
            "The pod crashed. kubectl describe shows:",
        );
        assert!(!is_document(
            &status,
            &span(&status, "Reason:      OOMKilled")
        ));
    }

    #[test]
    fn an_example_named_by_its_kind_or_for_example_is_a_document() {
        // A Chinese article (wild paste): a heading names the kind of error
        // before `错误示例` (error example).
        let article = "# no kernel image错误示例\nRuntimeError: CUDA error: no kernel image is available for execution on the device\n";
        let message = "RuntimeError: CUDA error: no kernel image";
        assert!(is_document(article, &span(article, message)));
        // A poster's heading naming the error, or the poster's own words,
        // keep the same lines a report.
        let heading = article.replace("错误示例", "错误");
        assert!(!is_document(&heading, &span(&heading, message)));
        let mine = format!("我运行时报错:\n{article}");
        assert!(!is_document(&mine, &span(&mine, message)));
        // An FAQ page (wild paste): a kind of problem, `例如:` (for example).
        let faq = "网络执行过程中出现内存分配失败的问题,例如:\n[ERROR] RUNTIME(41852,python3.7):2021-11-11-11:19:04.908.481 [npu_driver.cc:691]50983 DevMemAllocHugePageManaged: halMemAlloc failed: device_id=7, size=15069901824\n";
        let npu = "[ERROR] RUNTIME(41852,python3.7)";
        assert!(is_document(faq, &span(faq, npu)));
        let reported = faq.replace("网络执行过程中", "我的网络执行过程中");
        assert!(!is_document(&reported, &span(&reported, npu)));
        // `for example` inside a sentence introduces nothing, nor does a
        // bare `For example:` before a poster's failing tests (wild paste).
        let inline = "Some ops fail, for example the first convolution.\nRuntimeError: CUDA error: no kernel image is available for execution on the device\n";
        assert!(!is_document(inline, &span(inline, message)));
        let ci = "CI recurrently fails for all tests with error message:\n> RuntimeError: CUDA error: no kernel image is available for execution on the device\n\nFor example:\nFAILED tests/test_sft_trainer.py::test_train - RuntimeError: CUDA error: no kernel image is available for execution on the device\n";
        assert!(!is_document(
            ci,
            &spans(
                ci,
                &["RuntimeError: CUDA error: no kernel image", "FAILED tests/"]
            )
        ));
    }

    #[test]
    fn the_error_you_are_seeing_is_a_page_s_title() {
        // A vendor's tutorial (wild paste).
        let page = "The vLLM OOM Error You Are Seeing\nYou launch vLLM and it crashes during startup or shortly after with:\ntorch.cuda.OutOfMemoryError: CUDA out of memory. Tried to allocate 1.50 GiB\n";
        let message = "torch.cuda.OutOfMemoryError: CUDA out of memory";
        assert!(is_document(page, &span(page, message)));
        // The error the poster is seeing is a report.
        let mine = page.replace(
            "The vLLM OOM Error You Are Seeing",
            "The vLLM OOM Error I Am Seeing",
        );
        assert!(!is_document(&mine, &span(&mine, message)));
        let logged =
            format!("{page}2024-01-02 10:00:00 INFO start\n2024-01-02 10:00:01 INFO load\n");
        assert!(!is_document(&logged, &span(&logged, message)));
    }

    #[test]
    fn symptoms_as_alternatives_and_a_raw_trace_heading_are_a_page() {
        // An error-reference page (wild paste).
        let page = "Ollama CUDA Out of Memory\n\nModel loading fails or generation stops with OOM.\n\nRaw Stack Trace\n\nCUDA error: out of memory\n";
        let message = "CUDA error: out of memory";
        assert!(is_document(page, &span(page, message)));
        // What happened once, under the same heading, is a report.
        let once = page.replace("fails or generation stops", "failed");
        assert!(!is_document(&once, &span(&once, message)));
    }

    #[test]
    fn severity_only_list_items_grade_sample_messages() {
        // A pull request's description (wild paste): each Xid line, then
        // how the health checker grades it.
        let pr = "> NVRM: Xid (PCI:0000:01:00): 144, SAW_MVB Nonfatal XC0 i0 Link 0\n- Warning\n\n> NVRM: Xid (PCI:0000:00:00): 149, NETIR_LINK_EVT Fatal XC0 i0 Link 00\n- Fatal\n";
        let messages = [
            "NVRM: Xid (PCI:0000:01:00): 144",
            "NVRM: Xid (PCI:0000:00:00): 149",
        ];
        assert!(is_document(pr, &spans(pr, &messages)));
        // One grade is not enough, and the poster's own words keep a report.
        let one = "> NVRM: Xid (PCI:0000:01:00): 144, SAW_MVB Nonfatal XC0 i0 Link 0\n- Warning\n";
        assert!(!is_document(one, &spans(one, &messages[..1])));
        let mine = format!("My node shows these:\n{pr}");
        assert!(!is_document(&mine, &spans(&mine, &messages)));
    }

    #[test]
    fn when_a_message_usually_happens_is_a_document() {
        // A vendor's tutorial (wild paste).
        let tutorial = "You queue an image generation on your GPU server and Stable Diffusion dies mid-process with a wall of red text:\n\ntorch.cuda.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total capacity of 23.65 GiB of which 1.12 GiB is free.\n\nThis happens most often when generating at high resolutions, using SDXL or Flux models, or running with batch sizes greater than one.\n";
        let message = "torch.cuda.OutOfMemoryError: CUDA out of memory";
        assert!(is_document(tutorial, &span(tutorial, message)));
        // What happened once is a report's.
        // (Without the reader's story in the second person, which alone
        // makes a guide.)
        let once = tutorial
            .replace("This happens most often when", "This happened when")
            .replace(
                "You queue an image generation on your GPU server and",
                "An image generation was queued and",
            );
        assert!(!is_document(&once, &span(&once, message)));
        // ComfyUI explains its own message in English (wild paste): a
        // program's words, not a page's.
        let comfy = "torch.OutOfMemoryError: HIP out of memory. \nTried to allocate 26.00 MiB. GPU 0 has a total capacity of 15.92 GiB of which 13.60 GiB is free. \nThis error means you ran out of memory on your GPU.\n\nTIPS: If the workflow worked before you might have accidentally set the batch_size to a large number.\n";
        let spans = vec![MessageSpan {
            line: 1,
            lines: 2,
            first: "torch.OutOfMemoryError: HIP out of memory.",
        }];
        assert!(!is_document(comfy, &spans));
    }

    #[test]
    fn one_tip_below_a_report_s_error_is_the_program_s() {
        // Real-ESRGAN prints its tip under PyTorch's error (wild paste).
        let error = "Error [enforce fail at CPUAllocator.cpp:67] . DefaultCPUAllocator: can't allocate memory: you tried to allocate 264896512 bytes. Error code 12 (Cannot allocate memory)";
        let report = format!("{error}\nIf you encounter CUDA out of memory, try to set --tile with a smaller number.\n");
        let message = "Error [enforce fail at CPUAllocator.cpp:67]";
        assert!(!is_document(&report, &span(&report, message)));
        // A page introduces what it shows: the same lines under an
        // introduction, or with a second line of advice, are a page's.
        let introduced = format!("You may see an error like this:\n{report}");
        assert!(is_document(&introduced, &span(&introduced, message)));
        let advised = format!("{report}You can also reduce your batch size if you see this.\n");
        assert!(is_document(&advised, &span(&advised, message)));
        // A maintainer's answer under a pasted log is a paragraph of its
        // own (wild paste, TensorRT under DeepStream).
        let log = "ERROR: [TRT]: 2: [virtualMemoryBuffer.cpp::resizePhysical::160] Error Code 2: OutOfMemory (no further information)";
        let answer = format!("{log}\n\nIf you get similar error, try to set the `workspace-size` to a value less than the GPU memory in the config_infer_primary file.\n");
        assert!(is_document(&answer, &span(&answer, log)));
    }

    #[test]
    fn korean_prose_explaining_a_message_is_a_document() {
        // A Korean blog on vLLM (wild paste): `다음과 같은 에러를 마주하게
        // 됨` (you come to face an error like the following), then `이
        // 에러는` (this error is ...).
        let blog = "vLLM을 실제 서비스 환경에 배포하다 보면 다음과 같은 에러를 마주하게 됨\n🚫 ValueError: No available memory for the cache blocks.\n이 에러는 단순한 메모리 부족이 아니라, vLLM이 내부적으로 사용하는 KV Cache 영역이 부족해서 발생하는 것.\n";
        let message = "ValueError: No available memory for the cache blocks.";
        assert!(is_document(blog, &span(blog, message)));
        // The introduction alone is two points.
        let intro = blog.lines().take(2).collect::<Vec<_>>().join("\n");
        assert!(!is_document(&intro, &span(&intro, message)));
    }

    #[test]
    fn an_error_catalogue_entry_is_a_document() {
        // An error catalogue's markdown entry (wild paste): the message is
        // its title, the fields follow.
        let entry = "# RuntimeError: MPS backend out of memory (MPS allocated: 2.00 GB, limit: 2.00 GB)\n\n- **ID:** `cuda/mps-memory-pressure`\n- **Domain:** cuda\n- **Category:** resource_error\n- **Verification:** ai_generated\n- **Fix Rate:** 85%\n";
        let message = "RuntimeError: MPS backend out of memory";
        assert!(is_document(entry, &span(entry, message)));
        // Two fields are two points; a Windows event's `Task Category` is
        // no catalogue's field.
        let two: String = entry.lines().take(5).map(|l| format!("{l}\n")).collect();
        assert!(!is_document(&two, &span(&two, message)));
        let event = "RuntimeError: MPS backend out of memory (MPS allocated: 2.00 GB, limit: 2.00 GB)\nTask Category: None\nTask Category: None\nTask Category: None\n";
        assert!(!is_document(event, &span(event, message)));
        // Nor are a structured log's plain fields.
        let yaml = "RuntimeError: MPS backend out of memory (MPS allocated: 2.00 GB, limit: 2.00 GB)\ncategory: resource_error\ndomain: cuda\nverification: none\n";
        assert!(!is_document(yaml, &span(yaml, message)));
        // Another catalogue (wild paste): fields on one line, a fix rate,
        // and when the error is usually reported.
        let kb = "CUDA error: an illegal memory access was encountered\n\nEnvironment: cuda >=12.0,<13.0 · A100-40GB · linux · Last verified: 2026-02-11 · Evidence: 50 sources · JSON API\n\nFIXABLE 75% fix rate\n\nGPU kernel accessed invalid memory. Hard to debug — error often reported asynchronously.\n";
        let message = "CUDA error: an illegal memory access was encountered";
        assert!(is_document(kb, &span(kb, message)));
    }

    #[test]
    fn figures_written_as_letters_are_a_document_without_a_real_one() {
        // A guide's list of message forms (wild paste).
        let forms = "CUDA error: out of memory cudaErrorMemoryAllocation: out of memory RuntimeError: CUDA error: out of memory. Tried to allocate X.XX GiB cudaMalloc failed: out of memory\n";
        assert!(is_document(
            forms,
            &span(forms, "CUDA error: out of memory")
        ));
        // A page's title with the form above the real message (wild
        // paste, a real error): the real figure keeps it a report.
        let titled = "Training YOLO with GPU_V2 error: RuntimeError: CUDA out of memory Tried to allocate XXX MiB\n\nError message:\nRuntimeError: CUDA out of memory Tried to allocate 200.00 MiB (GPU 0; 8.00 GiB total capacity; 5.96 GiB already allocated; 0 bytes free; 6.18 GiB reserved in total by PyTorch)\n";
        let spans = vec![
            MessageSpan {
                line: 1,
                lines: 1,
                first: "RuntimeError: CUDA out of memory Tried to allocate XXX MiB",
            },
            MessageSpan {
                line: 4,
                lines: 1,
                first: "RuntimeError: CUDA out of memory Tried to allocate 200.00 MiB",
            },
        ];
        assert!(!is_document(titled, &spans));
    }

    // The ninth holdout's pages (real text of public pages and issues;
    // each test also holds the same lines in a report's words).

    #[test]
    fn the_reader_s_story_in_the_second_person_is_a_guide() {
        // A fix guide (public page): `You load a 70B model and CUDA runs
        // out of memory before the first token:`.
        let guide = "The Error\n\nYou load a 70B model and CUDA runs out of memory before the first token:\n\ntorch.cuda.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB.\nGPU 0 has a total capacity of 23.65 GiB of which 1.24 GiB is free.\n\nOr the tokenizer produces garbage because it doesn’t match the model:\n";
        let message = "torch.cuda.OutOfMemoryError: CUDA out of memory";
        assert!(is_document(guide, &span(guide, message)));
        // The poster's own story, or no one's, is a report.
        let mine = guide.replace("You load a 70B model", "I load a 70B model");
        assert!(!is_document(&mine, &span(&mine, message)));
        let told = guide.replace(
            "You load a 70B model and CUDA runs",
            "Loading a 70B model, CUDA runs",
        );
        assert!(!is_document(&told, &span(&told, message)));
        // A blog's opening (public page): the message inside the story.
        let blog = "You finally got the WebUI running. You queue up a 1024x1024 generation, hit Generate, and a few seconds later your terminal vomits RuntimeError: CUDA out of memory. Tried to allocate 2.50 GiB . Cool.\n";
        let message = "RuntimeError: CUDA out of memory.";
        assert!(is_document(blog, &span(blog, message)));
        let mine = blog
            .replace("You finally got", "I finally got")
            .replace("You queue up", "I queue up")
            .replace("your terminal", "my terminal");
        assert!(!is_document(&mine, &span(&mine, message)));
        // A modal is advice, not a story: `You can see ...` stays a
        // report's lead-in.
        let advice = "You should reduce the batch size, RuntimeError: CUDA out of memory. Tried to allocate 2.50 GiB .\n";
        assert!(!is_document(advice, &span(advice, message)));
    }

    #[test]
    fn an_explainer_s_opening_sections_and_japanese_headings_are_a_page() {
        // A knowledge-hub page (public page), its site's tagline kept.
        let page = "CUDA_ERROR_OUT_OF_MEMORY in tensorflow\nMaster System Design with Codemia\nIntroduction\nCUDA_ERROR_OUT_OF_MEMORY in TensorFlow means the runtime could not allocate enough GPU memory.\nWhy It Happens\nThat is why small changes can push your run from stable to failing.\n";
        let messages = [
            "CUDA_ERROR_OUT_OF_MEMORY in tensorflow",
            "CUDA_ERROR_OUT_OF_MEMORY in TensorFlow",
        ];
        assert!(is_document(page, &spans(page, &messages)));
        // A Japanese error reference: overview, error message, cause.
        let ja = "OOM Killer: Out of memory (process killed)\n概要\nLinuxカーネルのOOM Killerは、メモリ使用量の多いプロセスを強制終了する仕組みです。\nエラーメッセージ\nOut of memory: Killed process 12345 (java) total-vm:4096000kB, anon-rss:3500000kB, file-rss:0kB, shmem-rss:0kB\n原因\nメモリリーク\n";
        assert!(is_document(
            ja,
            &spans(ja, &["Out of memory: Killed process 12345"])
        ));
        // A report with the same headings keeps its first person.
        let report = ja.replace("メモリリーク", "I ran my java job and it was killed.");
        assert!(!is_document(
            &report,
            &spans(&report, &["Out of memory: Killed process 12345"])
        ));
    }

    #[test]
    fn an_article_announcing_what_it_explains_is_a_page() {
        // An Italian blog article (public page).
        let page = "Gestire l'Errore: Resource exhausted: OOM when allocating tensor with shape\n\nIn questo articolo, esploreremo cosa significa questo errore, perché si verifica e come possiamo risolverlo.\n\nQuesto errore si verifica quando la GPU non ha sufficiente memoria disponibile.\n";
        assert!(is_document(
            page,
            &spans(page, &["Resource exhausted: OOM"])
        ));
        // A glossary's definitions (public page).
        let glossary = "Oomkilled Exit Code 137\nWhen a process is terminated by the Linux kernel due to running out of memory, it is referred to as an \"oomkilled\" exit code 137.\nThe OOM killer is a feature of the Linux kernel that helps prevent the system from crashing.\n";
        assert!(is_document(glossary, &spans(glossary, &["Exit Code 137"])));
    }

    #[test]
    fn graded_fixes_are_an_error_catalogue() {
        // An error knowledge base's entry (public page).
        let page = "RuntimeError: CUDA error: device-side assert triggered\n\nVerdict\n\nFix success rate: 0.6 · Confidence: 0.78\n\nSet CUDA_LAUNCH_BLOCKING=0 and ignore (Fail rate: 0.85)\n\nIncrease GPU memory (Fail rate: 0.8)\n";
        assert!(is_document(
            page,
            &spans(page, &["RuntimeError: CUDA error: device-side"])
        ));
    }

    #[test]
    fn a_glossary_entry_with_what_it_is_and_why_it_matters_is_a_page() {
        // A glossary (public page).
        let entry = "GPU Fallen Off Bus\nXid 79 error: GPU completely disconnects from the PCIe bus.\nWhat it is\nGPU fallen off bus is the failure condition reported as Xid 79, where the GPU becomes completely unresponsive to the host system over the PCIe bus.\nWhy it matters\nThis is one of the most disruptive GPU failure modes: all running workloads on the affected device are killed instantly.\n";
        let messages = ["Xid 79 error: GPU", "Xid 79, where"];
        assert!(is_document(entry, &spans(entry, &messages)));
        // Without the glossary's headings, the judgement alone is two points.
        let bare = entry
            .replace("What it is\n", "")
            .replace("Why it matters\n", "");
        assert!(!is_document(&bare, &spans(&bare, &messages)));
    }

    #[test]
    fn a_troubleshooting_table_with_cause_and_solution_columns_is_a_page() {
        // A generated wiki's table (public page).
        let table = "Memory and performance issues in ComfyUI typically manifest as:\n| Symptom | Likely Cause | Primary Solutions |\n|---|---|---|\nCUDA out of memory error | Insufficient VRAM for loaded models | Use --lowvram, --novram, reduce batch size |\nRuntimeError: Not enough memory | Memory calculation exceeded available VRAM | Increase steps in split attention, clear cache |\n";
        let message = "RuntimeError: Not enough memory";
        assert!(is_document(table, &span(table, message)));
        // The header alone is two points; a row of figures is no header.
        let header = table.replacen(
            "Memory and performance issues in ComfyUI typically manifest as:\n",
            "",
            1,
        );
        assert!(!is_document(&header, &span(&header, message)));
        let log = "| GPU | Used | Total |\nRuntimeError: Not enough memory | 7.9 GiB | 8 GiB |\n";
        assert!(!is_document(log, &span(log, message)));
    }

    #[test]
    fn a_one_of_a_kind_explanation_in_chinese_or_korean_is_a_page() {
        // Chinese articles (public pages): `类似问题` (similar problems)
        // above the message, then the reader addressed.
        let similar = "类似问题\nCUDA error: no kernel image is available for execution on the device\n这不是你的代码写错了,也不是显卡坏了 —— 很可能是因为你的 GPU 太先进,而 PyTorch “还不认识它”。\n";
        let message = "CUDA error: no kernel image";
        assert!(is_document(similar, &span(similar, message)));
        let heading = similar.replace("类似问题", "报错");
        assert!(!is_document(&heading, &span(&heading, message)));
        // `常见CUDA错误类型` (common CUDA error types), `通常出现在` (usually
        // appears when).
        let kinds = "常见CUDA错误类型\n1. CUDA_ERROR_OUT_OF_MEMORY\n这是最常见的情况,通常出现在显存不足时。在训练大型模型如LLaMA-70B时,即使配置了48GB显存,仍可能出现此错误。\n";
        let message = "CUDA_ERROR_OUT_OF_MEMORY";
        assert!(is_document(kinds, &span(kinds, message)));
        let mine = kinds
            .replace("常见CUDA错误类型", "我的训练报错")
            .replace("这是最常见的情况,", "我");
        assert!(!is_document(&mine, &span(&mine, message)));
        // A blogger's greeting is not the first person of a report:
        // `大家好,我是默语` (hello all, I am Moyu), then `今天,我们要讨论一个
        // 常见的错误:` (today we discuss a common error:).
        let blog = "OutOfMemoryError: CUDA out of memory\n🧠大家好,我是默语,擅长全栈开发、运维和人工智能技术。今天,我们要讨论一个在深度学习中常见的错误:OutOfMemoryError: CUDA out of memory\n。这个错误通常在使用GPU训练深度学习模型时发生,原因是显存不足,无法分配所需的内存空间。\n";
        let spans = vec![
            MessageSpan {
                line: 1,
                lines: 1,
                first: "OutOfMemoryError: CUDA out of memory",
            },
            MessageSpan {
                line: 2,
                lines: 1,
                first: "OutOfMemoryError: CUDA out of memory",
            },
        ];
        assert!(is_document(blog, &spans));
        let mine = blog.replace("今天,我们要讨论", "今天我训练时遇到了");
        assert!(!is_document(&mine, &spans));
        // A Korean tutorial (public page): `발생하는 문제` (a problem that
        // occurs), `해결할 수 있다` (one can solve it).
        let korean = "RuntimeError: CUDA out of memory.\n메모리 용량이 부족해 발생하는 문제이기 때문에 단순히 batch size를 줄이는 등 공간을 확보해 해결할 수 있다. 또 의도적으로 GC를 실행해 메모리를 확보하거나 cache를 비워줄 수 있다.\n";
        let message = "RuntimeError: CUDA out of memory.";
        assert!(is_document(korean, &span(korean, message)));
        let mine = korean.replace("메모리 용량이", "제가 돌린 모델의 메모리 용량이");
        assert!(!is_document(&mine, &span(&mine, message)));
    }

    #[test]
    fn output_kept_as_comments_under_a_command_is_a_report() {
        // An issue's reproduction (mirror of a GitHub issue): the commands,
        // then their output as comments under `# Output:`.
        let paste = "# On NVIDIA GB10 (sm_121):\nexport SKIP_PARITY_GATE=1\napr run checkpoints/qwen2.5-coder-32b-instruct-q4km.apr --prompt \"hello\" --max-tokens 5 --json\n\n# Output:\n# [PMAT-053] FP8 cache warmup failed (non-fatal): CUDA_ERROR_ILLEGAL_ADDRESS (code: 700)\n# [GH-480] generate_gpu_resident FAILED: Prefill workspace init failed: CUDA_ERROR_ILLEGAL_ADDRESS\n# [CUDA-FAILFAST] Context poisoned during executor lifetime\n";
        let message = "CUDA_ERROR_ILLEGAL_ADDRESS (code: 700)";
        assert!(!is_document(paste, &span(paste, message)));
        // The same comments without the heading quote the message in code.
        let quoted = paste.replace("# Output:\n", "");
        assert!(is_document(&quoted, &span(&quoted, message)));
    }

    #[test]
    fn an_output_example_under_a_command_is_a_page() {
        // A how-to (public page): the message is a commented sample output.
        let howto = "To verify that the OOM-Killer (and not a Python bug) was responsible for the crash, interrogate the kernel logs directly:\n# Search the kernel ring buffer for OOM execution logs\ndmesg -T | egrep -i 'killed process'\n# Output Example:\n# [Tue Mar 24 14:32:11 2026] Out of memory: Killed process 14592 (python3) total-vm:1980996kB...\n";
        let message = "Out of memory: Killed process";
        assert!(is_document(howto, &span(howto, message)));
        let output = howto.replace("# Output Example:", "# Output:");
        assert!(!is_document(&output, &span(&output, message)));
    }

    #[test]
    fn a_row_of_tags_is_a_published_post() {
        // An error-notes page (public page).
        let post = "Error Message\n\nValueError: No available memory for the cache blocks. Try increasing `gpu_memory_utilization` when initializing the engine.\n#vllm#gpu#memory-management#inference#cuda\n";
        let message = "ValueError: No available memory for the cache blocks.";
        assert!(is_document(post, &span(post, message)));
        // Without the tags, or with issue references, a report's heading.
        let bare = post.replace("#vllm#gpu#memory-management#inference#cuda\n", "");
        assert!(!is_document(&bare, &span(&bare, message)));
        let refs = post.replace(
            "#vllm#gpu#memory-management#inference#cuda",
            "#1234 #5678 #91011",
        );
        assert!(!is_document(&refs, &span(&refs, message)));
    }

    #[test]
    fn a_size_written_as_a_letter_is_a_template() {
        // An error catalogue's entry (public page).
        let entry = "Metal Allocator: out of memory on Apple Silicon\n\n[METAL] Metal Allocator: out of memory (Allocation size X exceeds available)\nBy Fredoline Eruo · Last verified Jun 12, 2026\n\nCause\n\nEnvironment: Apple Silicon (M1/M2/M3/M4 family) running MLX or llama.cpp with Metal backend.\n";
        let message = "[METAL] Metal Allocator: out of memory (Allocation";
        assert!(is_document(entry, &span(entry, message)));
        let real = entry.replace("size X exceeds", "size 17179869184 exceeds");
        assert!(!is_document(&real, &span(&real, message)));
    }

    #[test]
    fn codes_given_as_alternatives_describe_cases() {
        // A maintainer's issue about a tool's status reporting (public
        // issue): a program prints one exit code, not a list.
        let issue = "There are multiple cases when the OOM error is not reported in `cortex get`:\n\n1. Exit code 137/236/237/350/363/370 as shown in logs, but exit code 0 in container status with `reason` as OOMKilled and Job marked as Successful.\n1. Exit code 137/236/237/350 as shown in logs, but exit code 0 in container status with `reason` as OOMKilled and Job marked as Failed.\n";
        let messages = [
            "Exit code 137/236/237/350/363/370",
            "Exit code 137/236/237/350 as",
        ];
        assert!(is_document(issue, &spans(issue, &messages)));
        let one = issue
            .replace("137/236/237/350/363/370", "137")
            .replace("137/236/237/350", "137");
        let one_messages = ["Exit code 137 as shown in logs, but exit code 0 in container status with `reason` as OOMKilled and Job marked as Successful"];
        assert!(!is_document(&one, &spans(&one, &one_messages)));
    }

    #[test]
    fn a_feature_request_about_a_message_is_no_report() {
        // A feature request (public issue): the message is its subject,
        // and `I would ...` under the proposal heading proposes.
        let request = "### Is your feature request related to a problem? Please describe.\n\nWhen you train and the batch size is too big you will get a not very useful error message when training starts. Basically this blob\n\nOutOfMemoryError: CUDA out of memory. Tried to allocate 266.00 MiB. GPU 0 has a total capacity of 23.57 GiB of which 217.06 MiB is free.\n\n### Describe the solution you'd like\n\nI would try-catch the part when we create the batches and give an better error that one should reduce the batch size.\n";
        let message = "OutOfMemoryError: CUDA out of memory. Tried to allocate 266.00 MiB.";
        assert!(is_document(request, &span(request, message)));
        // A bug report's template, or the poster's own failure before the
        // proposal, keeps it a report.
        let bug = request.replace(
            "### Is your feature request related to a problem? Please describe.",
            "### Describe the bug",
        );
        assert!(!is_document(&bug, &span(&bug, message)));
        let mine = request.replace("When you train and", "When I train and");
        assert!(!is_document(&mine, &span(&mine, message)));
    }

    #[test]
    fn a_message_s_general_form_is_no_report() {
        // An enhancement issue's sentence (public issue), with a real line
        // of the same message (wild corpus).
        let issue = "when there's a CUDA error using the conda binaries, it looks like this `RuntimeError: cuda runtime error (2) : out of memory at /pytorch/torch/lib/THC/generic/THCStorage.cu:58`\n";
        let message = "RuntimeError: cuda runtime error (2)";
        assert!(is_document(issue, &span(issue, message)));
        // What happened once is a report.
        let once = issue.replace(
            "when there's a CUDA error using the conda binaries, it looks like this",
            "running the conda binaries, the error looks like this",
        );
        assert!(!is_document(&once, &span(&once, message)));
        let mine = issue.replace("it looks like this", "I get this");
        assert!(!is_document(&mine, &span(&mine, message)));
    }

    #[test]
    fn a_change_that_avoids_errors_like_these_is_a_description() {
        // A pull request's description (public pull request).
        let pr = "This change will clear the torch cache on each function call and avoids errors like these:\nRuntimeError: CUDA out of memory. Tried to allocate 288.00 MiB (GPU 0; 3.94 GiB total capacity; 793.31 MiB already allocated; 1.89 GiB free; 1008.73 MiB allowed; 936.00 MiB reserved in total by PyTorch)\n";
        let message = "CUDA out of memory. Tried to allocate 288.00 MiB";
        assert!(is_document(pr, &span(pr, message)));
        // The poster's own run is a report.
        let mine = pr.replace(
            "This change will clear the torch cache on each function call and avoids errors like these:",
            "I clear the torch cache on each call and still get errors like these:",
        );
        assert!(!is_document(&mine, &span(&mine, message)));
    }

    #[test]
    fn a_title_rewording_the_message_is_a_description() {
        // A pull request's description (public pull request).
        let pr = "Reword the error raised when the estimated kv-cache block count falls below `num_min_blocks`, as suggested in review:\n\nValueError: Insufficient memory for the required KV cache: only 3 blocks can be allocated,\nbut at least 9 blocks are required.\n";
        let message = "Insufficient memory for the required KV cache";
        assert!(is_document(pr, &span(pr, message)));
        // A poster quoting the same error is reporting it.
        let mine = pr.replace(
            "Reword the error raised when the estimated kv-cache block count falls below `num_min_blocks`, as suggested in review:",
            "I get this error when the estimated kv-cache block count falls below `num_min_blocks`:",
        );
        assert!(!is_document(&mine, &span(&mine, message)));
    }

    #[test]
    fn a_translated_catalogue_entry_is_a_page() {
        // An error catalogue's entry in Chinese (public page).
        let entry = "# 运行时错误：CUDA 错误：遇到非法内存访问\n\n- **ID:** `pytorch/cuda-error-illegal-memory-access`\n- **领域:** pytorch\n- **类别:** runtime_error\n- **错误码:** `CUDA_ERROR_ILLEGAL_ADDRESS`\n- **验证级别:** ai_generated\n- **修复率:** 75%\n\n## 根因\n\n内核尝试读取或写入其分配区域之外的内存，通常由张量越界索引或指针损坏引起。\n";
        let message = "CUDA_ERROR_ILLEGAL_ADDRESS";
        assert!(is_document(entry, &span(entry, message)));
        // A poster's own field list is no catalogue.
        let mine = "我的环境:\n- 显卡: RTX 3090\n- 错误码: CUDA_ERROR_ILLEGAL_ADDRESS\n";
        assert!(!is_document(mine, &span(mine, message)));
    }

    #[test]
    fn the_reader_s_story_in_russian_and_indonesian_is_a_page() {
        // A Russian blog guide (public page): a classic situation told to
        // the reader, then `Знакомо?` (familiar?).
        let guide = "Сколько видеопамяти (VRAM) реально нужно для обучения нейросетей? Большой гайд\n\nКлассическая ситуация: вы скачали веса LLaMA-7B, запускаете скрипт дообучения (finetuning) на своей любимой RTX 3060, и через 3 секунды консоль “радует” вас ошибкой: RuntimeError: CUDA out of memory. Tried to allocate 2.00 GiB...\n\nЗнакомо? Ошибка CUDA OOM (Out Of Memory) — это главный враг ML-инженера.\n";
        let message = "RuntimeError: CUDA out of memory. Tried to allocate 2.00 GiB";
        assert!(is_document(guide, &span(guide, message)));
        // The poster's own story (`я скачал`, I downloaded) is a report.
        let mine = guide
            .replace("Классическая ситуация: вы скачали", "Я скачал")
            .replace("запускаете", "запускаю")
            .replace(" вас", " меня");
        assert!(!is_document(&mine, &span(&mine, message)));
        // An Indonesian explainer (public page): last updated, `biasanya
        // berarti` (usually means), `Jika Anda mengalami` (if you meet).
        let page = "VK_ERROR_DEVICE_LOST di Vulkan: penyebab sebenarnya, diagnostik, dan perbaikan\n\nPembaruan terakhir: 24/10/2025\n\n  • VK_ERROR_DEVICE_LOST biasanya berarti driver disetel ulang atau kegagalan swapchain.\n\nJika Anda mengalami pesan VK_ERROR_DEVICE_LOST Saat bermain game atau mendesain aplikasi dengan Vulkan, Anda tidak sendirian: ini adalah masalah umum.\n";
        let message = "VK_ERROR_DEVICE_LOST di Vulkan";
        assert!(is_document(page, &span(page, message)));
        let mine = "Saya mendapatkan VK_ERROR_DEVICE_LOST di Vulkan saat bermain game.\nPembaruan terakhir: 24/10/2025\n";
        assert!(!is_document(
            mine,
            &span(mine, "VK_ERROR_DEVICE_LOST di Vulkan")
        ));
    }

    #[test]
    fn a_fix_page_asking_what_the_error_is_is_a_page() {
        // A fix page (public page).
        let page = "DXGI_ERROR_DEVICE_REMOVED\n\nWhat is this error?\n\nThe GPU device was removed or stopped responding during a DirectX operation. This is the most common DirectX crash in modern games.\n\nCommon causes\n\n  • GPU driver crash or timeout\n";
        let message = "DXGI_ERROR_DEVICE_REMOVED";
        assert!(is_document(page, &span(page, message)));
        // A question about one's own error is not the page's heading.
        let asked = "DXGI_ERROR_DEVICE_REMOVED\n\nWhat is this error? My game crashed twice.\n";
        assert!(!is_document(asked, &span(asked, message)));
    }

    #[test]
    fn an_article_preview_with_reading_time_is_a_page() {
        // A translated article's preview (public page).
        let preview = "文章预览\n来源:Deephub Imba 本文 共4500字 ,建议阅读 5 分钟 本文将深入剖析PyTorch如何优化GPU内存使用。 在深度学习工程实践中,上述错误信息对许多开发者而言已不陌生。这是众所周知的CUDA out of memory错误——当GPU尝试为张量分配空间而内存不足时发生。 torch.cuda.OutOfMemoryError: CUDA out of memory. Tried to allocate 512.00 MiB. GPU 0 has a total capacity of 79.32 GiB of which 401.56 MiB is free.\n";
        let message = "torch.cuda.OutOfMemoryError: CUDA out of memory.";
        assert!(is_document(preview, &span(preview, message)));
        // A poster's sentence with the same error is a report.
        let mine = "训练时我遇到了这个错误: torch.cuda.OutOfMemoryError: CUDA out of memory. Tried to allocate 512.00 MiB. GPU 0 has a total capacity of 79.32 GiB of which 401.56 MiB is free.\n";
        assert!(!is_document(mine, &span(mine, message)));
    }

    #[test]
    fn a_question_marked_as_an_faq_s_is_a_page() {
        // A repository FAQ, as a commit's view shows it (public page).
        let faq = "**问:为什么提示 RuntimeError: CUDA out of memory. Tried to allocate 52.00 MiB (GPU 0; 15.90 GiB total capacity; 14.85 GiB already allocated; 51.88 MiB free; 15.07 GiB reserved in total by PyTorch)?\n";
        let message = "RuntimeError: CUDA out of memory. Tried to allocate 52.00 MiB";
        assert!(is_document(faq, &span(faq, message)));
        // `Q:` in English too, its `I` the FAQ's asker.
        let en = "Q: Why do I get RuntimeError: CUDA out of memory. Tried to allocate 52.00 MiB (GPU 0; 15.90 GiB total capacity)?\n";
        assert!(is_document(en, &span(en, message)));
        // Without the mark it is a poster's question about their error.
        let asked = faq.replace("**问:", "");
        assert!(!is_document(&asked, &span(&asked, message)));
    }

    #[test]
    fn a_tool_s_list_of_matched_fragments_is_its_documentation() {
        // A log-triage tool's signature page (public page).
        let page = "Matched signals\n- exit code 137\n- OOMKilled\n- out of memory\nProcess killed by OOM killer\nWhat this failure means\nThe process was terminated by the operating system’s out-of-memory (OOM) killer.\nSymptoms\nFaultline looks for one or more of these log fragments:\nexit code 137\nOOMKilled\n";
        let messages = ["- exit code 137", "- OOMKilled"];
        assert!(is_document(page, &spans(page, &messages)));
        let bare = page.replace("Matched signals\n", "").replace(
            "Faultline looks for one or more of these log fragments:\n",
            "",
        );
        assert!(!is_document(&bare, &spans(&bare, &messages)));
    }

    #[test]
    fn lines_similar_to_a_placeholder_line_are_an_example() {
        // An explainer on exit code 137 (public page).
        let page = "The Linux kernel logs contain entries about processes killed by the OOM Killer:\n\ndmesg | grep -i 'killed process'\n\nLook for lines similar to:\n\n[12345.678901] Out of memory: Kill process 1234 (your_app) score 987 or sacrifice child\n\nThis confirms that the kernel terminated the process due to memory exhaustion.\n";
        let message = "Out of memory: Kill process 1234";
        assert!(is_document(page, &span(page, message)));
        // A real process name and the poster's own lines are a report.
        let mine = page
            .replace("Look for lines similar to:", "I found these lines:")
            .replace("your_app", "python3");
        assert!(!is_document(&mine, &span(&mine, message)));
    }

    #[test]
    fn a_byline_with_reading_time_and_listed_tags_is_a_published_post() {
        // A troubleshooting guide's opening (public page).
        let guide = "AI for Linux Admins By James Joyner IV · · 10 min read\n\nLinux Error: Out of memory: Killed process — Cause, Fix, and Troubleshooting Guide\n\n  • #linux\n  • #troubleshooting\n  • #errors\n  • #memory\n\nCommon Symptoms\n\n  • A container shows OOMKilled status and exit code 137.\n";
        let messages = [
            "Out of memory: Killed process",
            "OOMKilled status and exit code 137",
        ];
        assert!(is_document(guide, &spans(guide, &messages)));
        // Two tags are no row, and a byline alone is two points.
        let two = guide
            .replace("  • #errors\n", "")
            .replace("  • #memory\n", "")
            .replace("Common Symptoms\n", "");
        assert!(!is_document(&two, &spans(&two, &messages)));
        // A Russian fix guide (public page): `Обновлено` (updated) and
        // `В этой статье` (in this article).
        let ru = "Как исправить RuntimeError: CUDA out of Memory\n\n7 min read Machine Learning Обновлено 18 Nov 2025\n\nПри работе с большими моделями нередко появляется ошибка “RuntimeError: CUDA out of Memory”.\n\nВ этой статье мы разберём причины ошибки и предложим практические способы её устранения.\n";
        let message = "RuntimeError: CUDA out of Memory";
        assert!(is_document(ru, &span(ru, message)));
        let mine = ru.replace(
            "В этой статье мы разберём",
            "У меня эта ошибка, помогите понять",
        );
        assert!(!is_document(&mine, &span(&mine, message)));
    }
}
