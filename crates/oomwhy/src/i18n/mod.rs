//! The language of the text a person reads: English or Simplified Chinese.
//!
//! Two compiled-in catalogues, no runtime files:
//! * [`Msg`]: every sentence the renderers and the binary write themselves,
//!   each declared once with its English and its Chinese text, so a message
//!   without a translation does not compile;
//! * [`zh`]: the Chinese text of what the explainer says (headlines, verdicts,
//!   fixes, field rows), keyed by kind, verdict code or the fix's English
//!   title and looked up at render time; what has no entry stays English.
//!
//! JSON keys, kinds and verdict codes never change with the language.

pub mod reporter;
pub mod said;
pub mod zh;

pub use said::Said;

use std::fmt::Display;

/// A language oomwhy can write in.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Hash)]
pub enum Lang {
    /// English (the default).
    #[default]
    En,
    /// Simplified Chinese.
    Zh,
}

impl Lang {
    /// The language named by a `--lang` value or a locale (`zh`, `zh_CN.UTF-8`,
    /// `zh-Hans`, `en_US`); `None` for anything else, `C` and `POSIX` included.
    pub fn parse(value: &str) -> Option<Lang> {
        let tag = value.trim().to_ascii_lowercase();
        let language = tag.split(['_', '-', '.', '@']).next().unwrap_or("");
        match language {
            "zh" => Some(Lang::Zh),
            "en" => Some(Lang::En),
            _ => None,
        }
    }

    /// The language of the messages locale as POSIX resolves it: the first
    /// non-empty of `LC_ALL`, `LC_MESSAGES`, `LANG`; English when that names
    /// neither language.
    pub fn from_locale(var: impl Fn(&str) -> Option<String>) -> Lang {
        ["LC_ALL", "LC_MESSAGES", "LANG"]
            .iter()
            .filter_map(|name| var(name))
            .find(|value| !value.is_empty())
            .and_then(|value| Lang::parse(&value))
            .unwrap_or_default()
    }

    /// [`Lang::from_locale`] on this process's environment.
    pub fn from_env() -> Lang {
        Lang::from_locale(|name| std::env::var(name).ok())
    }
}

/// Replaces `{0}`, `{1}`, … in a catalogue template by `args`.
pub fn fill(template: &str, args: &[&dyn Display]) -> String {
    let mut out = template.to_string();
    for (i, arg) in args.iter().enumerate() {
        out = out.replace(&format!("{{{i}}}"), &arg.to_string());
    }
    out
}

macro_rules! messages {
    ($($name:ident { en: $en:literal, zh: $zh:literal, })*) => {
        /// A sentence oomwhy writes itself, in every language.
        #[derive(Debug, Clone, Copy, PartialEq, Eq)]
        pub enum Msg {
            $(#[doc = $en] $name,)*
        }

        impl Msg {
            /// Every message, for the catalogue's tests.
            pub const ALL: &'static [Msg] = &[$(Msg::$name),*];

            /// The text in `lang`; `{0}`, `{1}` mark arguments ([`Msg::fill`]).
            pub fn text(self, lang: Lang) -> &'static str {
                match (self, lang) {
                    $((Msg::$name, Lang::En) => $en,
                      (Msg::$name, Lang::Zh) => $zh,)*
                }
            }
        }
    };
}

impl Msg {
    /// The text in `lang` with its arguments filled in.
    pub fn fill(self, lang: Lang, args: &[&dyn Display]) -> String {
        fill(self.text(lang), args)
    }
}

messages! {
    Oom { en: "OUT OF MEMORY", zh: "显存不足", }
    LikelyOom { en: "PROBABLY OUT OF MEMORY", zh: "很可能是显存不足", }
    Crash { en: "GPU CRASH", zh: "GPU 崩溃", }
    OomTitle { en: "Out of memory", zh: "显存不足", }
    LikelyOomTitle { en: "Probably out of memory", zh: "很可能是显存不足", }
    CrashTitle { en: "GPU crash", zh: "GPU 崩溃", }
    ProcessCrash { en: "CRASH", zh: "崩溃", }
    ProcessCrashTitle { en: "Crash", zh: "崩溃", }
    MemoryState { en: "MEMORY STATE", zh: "显存状态", }
    MemoryStateTitle { en: "Memory state", zh: "显存状态", }
    Warning { en: "WARNING", zh: "警告", }
    WarningTitle { en: "Warning", zh: "警告", }
    HostOom { en: "OUT OF MEMORY", zh: "内存不足", }
    HostLikelyOom { en: "PROBABLY OUT OF MEMORY", zh: "很可能是内存不足", }
    HostOomTitle { en: "Out of memory", zh: "内存不足", }
    HostLikelyOomTitle { en: "Probably out of memory", zh: "很可能是内存不足", }
    SummaryWhy { en: "Why:", zh: "原因：", }
    SummaryFix { en: "First fix:", zh: "先试：", }
    Consequence { en: "This follows from finding [{0}]: a consequence of that crash, not a separate cause.", zh: "这是发现 [{0}] 的后果，不是另一个原因。", }
    NumbersHeading { en: "What the numbers mean", zh: "各个数字的含义", }
    GapHeading { en: "Reserved vs allocated", zh: "已预留与已分配", }
    DetailsHeading { en: "Details", zh: "细节", }
    Note { en: "Note: {0}", zh: "注：{0}", }
    DiagnosticsHeading { en: "Diagnostics pasted alongside", zh: "一并贴出的诊断信息", }
    WhyHeading { en: "Why", zh: "原因", }
    FixHeading { en: "What to do (most effective first)", zh: "怎么办（最有效的在前）", }
    WhereHeading { en: "Where (traceback, innermost last)", zh: "出错位置（调用栈，最内层在最后）", }
    DirectCause { en: "caused by an earlier exception", zh: "由更早的异常引起", }
    WhileHandling { en: "raised while handling an earlier exception", zh: "在处理更早的异常时抛出", }
    EarlierFrame { en: "… 1 earlier frame", zh: "… 省略了更早的 1 层", }
    EarlierFrames { en: "… {0} earlier frames", zh: "… 省略了更早的 {0} 层", }
    More { en: "More:", zh: "详见：", }
    AnnotationWhy { en: "Why: {0}. {1}", zh: "原因：{0}。{1}", }
    AnnotationFix { en: "Fix: {0}: {1}", zh: "修复：{0}：{1}", }
    AnnotationMessage { en: "Message ({0} line {1}): {2}", zh: "报错（{0} 第 {1} 行）：{2}", }
    FindingOne { en: "1 finding", zh: "1 个发现", }
    FindingMany { en: "{0} findings", zh: "{0} 个发现", }
    CountOom { en: "{0} out-of-memory", zh: "{0} 个 OOM 错误", }
    CountLikelyOom { en: "{0} likely out-of-memory", zh: "{0} 个很可能的 OOM", }
    CountCrashOne { en: "1 other crash", zh: "1 个其他崩溃", }
    CountCrashMany { en: "{0} other crashes", zh: "{0} 个其他崩溃", }
    CountWarningOne { en: "1 warning", zh: "1 个警告", }
    CountWarningMany { en: "{0} warnings", zh: "{0} 个警告", }
    LinesOne { en: "1 line", zh: "1 行", }
    LinesMany { en: "{0} lines", zh: "{0} 行", }
    InputsOne { en: "in 1 input", zh: "共 1 个输入", }
    InputsMany { en: "in {0} inputs", zh: "共 {0} 个输入", }
    Unreadable { en: "{0} unreadable", zh: "{0} 个无法读取", }
    ListSep { en: ", ", zh: "，", }
    SummaryLine { en: "{0}{1} ({2} {3}{4})", zh: "{0}{1}（{2}，{3}{4}）", }
    CountsIntro { en: ": ", zh: "：", }
    AtLine { en: "{0} line {1}", zh: "{0} 第 {1} 行", }
    MessageForm { en: "message form \"{0}\"", zh: "报错格式“{0}”", }
    CutShort { en: "message cut short", zh: "报错不完整", }
    Ranks { en: "ranks {0} (first to fail: rank {1})", zh: "rank {0}（最先失败：rank {1}）", }
    Rank { en: "rank {0}", zh: "rank {0}", }
    Gpus { en: "GPUs {0}", zh: "GPU {0}", }
    SeenTimes { en: "seen {0} times", zh: "出现 {0} 次", }
    Phase { en: "phase: {0} ({1} confidence)", zh: "阶段：{0}（置信度：{1}）", }
    LastStep { en: "last progress counter: {0}", zh: "最后的进度计数：{0}", }
    SmiHeader { en: "nvidia-smi (line {0}, driver {1}{2}):", zh: "nvidia-smi（第 {0} 行，驱动 {1}{2}）：", }
    SmiGpu { en: "· GPU {0} {1}: {2} / {3} used", zh: "· GPU {0} {1}：已用 {2} / {3}", }
    SmiMore { en: "· … {0} more processes", zh: "· … 还有 {0} 个进程", }
    SummaryHeader { en: "memory_summary (line {0}, device {1}): {2} OOMs, {3} cudaMalloc retries", zh: "memory_summary（第 {0} 行，设备 {1}）：OOM {2} 次，cudaMalloc 重试 {3} 次", }
    SummaryRow { en: "· {0}: {1} now, {2} peak", zh: "· {0}：当前 {1}，峰值 {2}", }
    MessageHeading { en: "Message", zh: "原始报错", }
    TableNumber { en: "Number", zh: "数字", }
    TableValue { en: "Value", zh: "值", }
    TableMeaning { en: "Meaning", zh: "含义", }
    Traceback { en: "Traceback (innermost last)", zh: "调用栈（最内层在最后）", }
    NothingFound { en: "oomwhy: no out-of-memory error or GPU crash found ({0} read)", zh: "oomwhy：没有找到内存不足或 GPU 崩溃（读取了 {0}）", }
    UnknownCode { en: "unknown code `{0}`", zh: "未知代码 `{0}`", }
    DidYouMean { en: "did you mean: {0}?", zh: "你是不是想找：{0}？", }
    Ambiguous { en: "`{0}` matches several codes: {1}", zh: "`{0}` 匹配到多个代码：{1}", }
    SeeList { en: "`oomwhy explain --list` lists every code", zh: "`oomwhy explain --list` 列出所有代码", }
    KindsHeading { en: "Kinds of error (what happened: the first code on a finding's More: line)", zh: "错误类型（发生了什么：发现的“详见”一行里的第一个代码）", }
    VerdictsHeading { en: "Verdicts (why it happened: the codes after it)", zh: "结论（为什么会发生：后面的那些代码）", }
    PageInEnglish { en: "The full page below is in English.", zh: "以下完整说明暂时只有英文版。", }
    CannotRead { en: "cannot read {0}", zh: "无法读取 {0}", }
    CannotWrite { en: "cannot write the output", zh: "无法写出结果", }
    FleetInputOne { en: "1 input", zh: "1 个输入", }
    FleetInputMany { en: "{0} inputs", zh: "{0} 个输入", }
    FleetHead { en: "oomwhy summary: {0}, {1} with findings{2}; {3} ({4}, {5} read)", zh: "oomwhy 汇总：{0}，其中 {1} 个有发现{2}；{3}（{4}，读取 {5}）", }
    ByCategory { en: "By category", zh: "按类别", }
    ByKind { en: "By kind", zh: "按类型", }
    ByVerdict { en: "By verdict", zh: "按结论", }
    ByFirstFix { en: "By first fix", zh: "按首选修复", }
    LargestShortfalls { en: "Largest shortfalls (asked for more than was free)", zh: "缺口最大的几次（申请量超过空闲显存）", }
    AskedFor { en: "{0}asked for {1}, {2} free", zh: "{0}申请 {1}，空闲 {2}", }
    UnreadableInputs { en: "Unreadable inputs", zh: "无法读取的输入", }
    InputsList { en: "{0}: {1}{2}", zh: "{0}：{1}{2}", }
    AndMore { en: " and {0} more", zh: " 等，另有 {0} 个", }
    CannotRun { en: "cannot run {0}: {1}", zh: "无法运行 {0}：{1}", }
    CommandNotFound { en: "command not found", zh: "找不到命令", }
    PermissionDenied { en: "permission denied", zh: "没有权限", }
    CommandExited { en: "the command exited with status {0}", zh: "命令以状态 {0} 退出", }
    KilledAfterInterrupts { en: "oomwhy killed the command (SIGKILL) after a second interrupt", zh: "第二次中断后 oomwhy 杀掉了命令（SIGKILL）", }
    InterruptedTwice { en: "interrupted twice: killing the command (SIGKILL)", zh: "两次中断：正在杀掉命令（SIGKILL）", }
    NoSignalThread { en: "cannot start the signal thread; signals are not passed on", zh: "无法启动信号线程；信号不会转发给命令", }
    CannotReadOutput { en: "cannot read the command's output: {0}", zh: "无法读取命令的输出：{0}", }
    CannotPassOutput { en: "cannot pass the command's output on: {0}", zh: "无法转发命令的输出：{0}", }
    CannotWriteReport { en: "cannot write the report: {0}", zh: "无法写入报告：{0}", }
    NotWaiting { en: "the command exited; not waiting for processes it left running that still hold its output", zh: "命令已退出；它留下的进程仍占着输出，不再等它们", }
    NothingInOutput { en: "no out-of-memory error or GPU crash found in its output ({0})", zh: "它的输出里没有显存不足错误或 GPU 崩溃（{0}）", }
    SymlinkLoop { en: "{0}: a symlink back to {1}; not followed", zh: "{0}：指回 {1} 的符号链接，不跟随", }
    BinarySkipped { en: "{0}: binary file, skipped", zh: "{0}：二进制文件，跳过", }
    NotSnapshot { en: "{0}: {1}", zh: "{0}：不是可读的显存快照（{1}）", }
    FollowWaiting { en: "{0} does not exist yet; waiting for it", zh: "{0} 还不存在，等它出现", }
    Following { en: "following {0}; press Ctrl-C to stop", zh: "正在监视 {0}，按 Ctrl-C 停止", }
    FollowTruncated { en: "{0} was truncated; reading it from the start", zh: "{0} 被截断了，从头重新读取", }
    FollowRotated { en: "{0} was replaced (log rotation); reading it from the start", zh: "{0} 被替换了（日志轮转），从头重新读取", }
    PastePrompt { en: "paste the error or log, then press Ctrl-D (Ctrl-Z then Enter on Windows)", zh: "请粘贴报错或日志，然后按 Ctrl-D（Windows 上按 Ctrl-Z 再回车）", }
}

/// The message for `n` of something with a singular and a plural form.
pub fn count(lang: Lang, n: usize, one: Msg, many: Msg) -> String {
    if n == 1 {
        one.fill(lang, &[])
    } else {
        many.fill(lang, &[&n])
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn locale_precedence_follows_posix() {
        let env = |pairs: &'static [(&str, &str)]| {
            move |name: &str| {
                pairs
                    .iter()
                    .find(|(k, _)| *k == name)
                    .map(|(_, v)| v.to_string())
            }
        };
        assert_eq!(Lang::from_locale(env(&[("LANG", "zh_CN.UTF-8")])), Lang::Zh);
        assert_eq!(
            Lang::from_locale(env(&[("LC_ALL", "en_US.UTF-8"), ("LANG", "zh_CN.UTF-8")])),
            Lang::En
        );
        assert_eq!(
            Lang::from_locale(env(&[
                ("LC_ALL", ""),
                ("LC_MESSAGES", "zh_TW"),
                ("LANG", "C")
            ])),
            Lang::Zh
        );
        assert_eq!(Lang::from_locale(env(&[("LANG", "C")])), Lang::En);
        assert_eq!(Lang::from_locale(env(&[])), Lang::En);
        assert_eq!(Lang::parse("zh-Hans"), Some(Lang::Zh));
        assert_eq!(Lang::parse("fr_FR"), None);
    }

    /// A translation that drops or invents an argument would print a raw
    /// `{1}` or lose a number.
    #[test]
    fn both_languages_use_the_same_arguments() {
        let args = |text: &str| {
            let mut found: Vec<usize> = (0..8)
                .filter(|i| text.contains(&format!("{{{i}}}")))
                .collect();
            found.sort_unstable();
            found
        };
        for msg in Msg::ALL {
            assert_eq!(
                args(msg.text(Lang::En)),
                args(msg.text(Lang::Zh)),
                "{msg:?}"
            );
            assert!(
                !msg.text(Lang::Zh).is_empty(),
                "{msg:?} has no Chinese text"
            );
            assert!(
                msg.text(Lang::Zh)
                    .chars()
                    .any(|c| matches!(c, '\u{4e00}'..='\u{9fff}' | '\u{3000}'..='\u{303f}' | '\u{ff00}'..='\u{ffef}'))
                    || msg.text(Lang::Zh) == msg.text(Lang::En)
                    // Names a Chinese reader reads as they are.
                    || *msg == Msg::Gpus,
                "{msg:?}: the Chinese text has no Chinese"
            );
        }
    }

    #[test]
    fn fills_arguments() {
        assert_eq!(Msg::AtLine.fill(Lang::Zh, &[&"a.log", &3]), "a.log 第 3 行");
        assert_eq!(count(Lang::En, 1, Msg::LinesOne, Msg::LinesMany), "1 line");
        assert_eq!(count(Lang::En, 0, Msg::LinesOne, Msg::LinesMany), "0 lines");
    }
}
