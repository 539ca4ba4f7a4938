//! Command-line arguments. No logic here: `commands/` turns these into library calls.

use clap::{Args, Parser, Subcommand, ValueEnum};
use std::ffi::OsString;
use std::path::PathBuf;

const EXAMPLES: &str = "\
Examples:
  python train.py 2>&1 | oomwhy            explain a crash in a run's output
  oomwhy train.log                         read a log file
  oomwhy logs/                             every log under logs/, compressed or not
  oomwhy                                   then paste the error and press Ctrl-D
  oomwhy run -- python train.py            run a command, explain it if it crashes
  oomwhy --follow train.log                watch a log while it is written
  oomwhy --follow --from-end train.log     only crashes written from now on
  oomwhy --format json rank*.log > report.json
  oomwhy --format markdown train.log       a report to paste into an issue
  oomwhy --summary logs/*.log              one report over many jobs' logs
  oomwhy explain fragmentation             the long explanation of a code
  oomwhy explain --list                    every code
  oomwhy --brief train.log                 only the answer: what failed, why, first fix
  oomwhy --lang zh train.log               explain in Simplified Chinese (用中文解释)

A file named like a subcommand (explain, schema, run, completions, man, help)
needs a path: oomwhy ./explain

Exit status: 0 if something was found, 1 if nothing was found, 2 on an error;
`oomwhy run` exits with the command's own status.";

/// Explain why your GPU ran out of memory.
///
/// Reads training logs or a pasted error, finds every out-of-memory error and
/// related CUDA crash, and explains each: what the numbers mean, why it
/// happened, what to change.
#[derive(Debug, Parser)]
#[command(
    name = "oomwhy",
    version,
    after_help = EXAMPLES
)]
pub struct Cli {
    /// What to do; without one, read logs.
    #[command(subcommand)]
    pub command: Option<Command>,

    /// Reading logs (the default).
    #[command(flatten)]
    pub scan: ScanArgs,

    /// Language of the explanation (default: from LC_ALL, LC_MESSAGES, LANG).
    /// JSON keys and codes never change.
    #[arg(long, value_enum, global = true, value_name = "LANG")]
    pub lang: Option<LangArg>,
}

/// The subcommands.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Print the long explanation of a code from a finding's "More:" line.
    Explain(ExplainArgs),
    /// Print the JSON Schema of `--format json` (or of one `--format ndjson` line).
    Schema(SchemaArgs),
    /// Run a command, pass its output through, and explain its crash.
    ///
    /// The command's standard output and error pass through unchanged and
    /// live (one pipe for both when they are one file for oomwhy, so their
    /// order is kept); both are scanned as one log. When the command ends,
    /// what was found is reported on standard error (or in `--report PATH`),
    /// and oomwhy exits with the command's own exit status (128 + N for a
    /// signal). SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGUSR1 and SIGUSR2 are
    /// passed on to the command (its process group outside a terminal) and
    /// oomwhy waits for it; a second Ctrl-C within 2 s kills it.
    #[command(
        after_help = "Examples:\n  oomwhy run -- python train.py --batch-size 64\n  oomwhy --format json run --report oom.json -- torchrun --nproc-per-node 8 train.py"
    )]
    Run(RunArgs),
    /// Print a shell completion script (e.g. `oomwhy completions bash > /etc/bash_completion.d/oomwhy`).
    Completions(CompletionsArgs),
    /// Print the manual page in roff (e.g. `oomwhy man > oomwhy.1`).
    Man,
}

/// Reading logs.
#[derive(Debug, Args)]
pub struct ScanArgs {
    /// Log files or directories to read (gzip, zstd, xz and bzip2 are
    /// decompressed; directories are read recursively); none or `-` reads
    /// standard input.
    #[arg(value_name = "PATH")]
    pub files: Vec<PathBuf>,

    /// Output format (for `run`: of the report; json and ndjson need `--report`).
    #[arg(long, value_enum, default_value_t = FormatArg::Text, global = true)]
    pub format: FormatArg,

    /// When to colour the output.
    #[arg(
        long,
        value_enum,
        default_value_t = ColorArg::Auto,
        value_name = "WHEN",
        global = true
    )]
    pub color: ColorArg,

    /// Print nothing; only set the exit status (`run`: only pass the output through).
    #[arg(short, long, global = true)]
    pub quiet: bool,

    /// Print only each finding's answer (what failed, the main reason, the
    /// first fix) and the closing count.
    #[arg(short, long, global = true)]
    pub brief: bool,

    /// Keep reading FILE as it grows, like `tail -F`, and report each crash
    /// about a second after it is complete (text, ndjson, markdown or
    /// github); waits for FILE to appear, survives truncation and log
    /// rotation. Stop with Ctrl-C.
    #[arg(short, long)]
    pub follow: bool,

    /// With `--follow`: start at the end of FILE, so that crashes already in
    /// it are not reported again (line numbers then count from there).
    #[arg(long, requires = "follow")]
    pub from_end: bool,

    /// One report over all FILEs instead of each finding: how many inputs
    /// had findings, counts by kind, verdict and first fix with the inputs
    /// behind each, and the largest shortfalls (text or json).
    #[arg(long, conflicts_with = "follow")]
    pub summary: bool,

    /// Print a text report straight to the terminal. Otherwise a report
    /// taller than the terminal goes through $PAGER, or `less -FRX` (LESS
    /// when set is kept), as git does, so that its first lines, the answer,
    /// stay in view; never when the output is not a terminal (or
    /// TERM=dumb), nor with --follow or `run`. PAGER set empty or to `cat`
    /// also turns it off.
    #[arg(long)]
    pub no_pager: bool,
}

/// `oomwhy explain`.
#[derive(Debug, Args)]
pub struct ExplainArgs {
    /// The code, e.g. `fragmentation`; case, `-` for `_` and a unique prefix are fine.
    #[arg(required_unless_present = "list", conflicts_with = "list")]
    pub code: Option<String>,

    /// List every code with its title.
    #[arg(long)]
    pub list: bool,
}

/// `oomwhy schema`.
#[derive(Debug, Args)]
pub struct SchemaArgs {
    /// The schema of one `--format ndjson` line instead of the JSON document.
    #[arg(long, conflicts_with = "summary")]
    pub ndjson: bool,

    /// The schema of the `--summary --format json` document.
    #[arg(long)]
    pub summary: bool,
}

/// `oomwhy run`.
#[derive(Debug, Args)]
pub struct RunArgs {
    /// Write the report to PATH instead of standard error (needed for
    /// `--format json` and `ndjson`, which are never mixed into the
    /// command's own output).
    #[arg(long, value_name = "PATH")]
    pub report: Option<PathBuf>,

    /// The command and its arguments (put `--` before them).
    #[arg(required = true, trailing_var_arg = true, value_name = "CMD")]
    pub command: Vec<OsString>,
}

/// `oomwhy completions`.
#[derive(Debug, Args)]
pub struct CompletionsArgs {
    /// The shell.
    #[arg(value_enum)]
    pub shell: clap_complete::Shell,
}

/// `--format`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum FormatArg {
    /// Human-readable explanation.
    Text,
    /// One JSON document (schema_version 1; `oomwhy schema`).
    Json,
    /// One JSON object per line, each finding as soon as it is complete, then a summary.
    Ndjson,
    /// A compact Markdown report for an issue or a chat.
    Markdown,
    /// GitHub Actions annotations (`::error file=...,line=...::...`).
    Github,
}

/// Moves a leading `--lang X` after the subcommand it precedes
/// (`oomwhy --lang zh explain frag` → `oomwhy explain --lang zh frag`):
/// log-reading options conflict with subcommands, and clap counts the
/// global `--lang` among them.
pub fn lang_after_subcommand(mut args: Vec<OsString>) -> Vec<OsString> {
    const SUBCOMMANDS: &[&str] = &["explain", "schema", "run", "completions", "man", "help"];
    let mut end = 1;
    while let Some(arg) = args.get(end).and_then(|a| a.to_str()) {
        if arg == "--lang" {
            end += 2;
        } else if arg.starts_with("--lang=") {
            end += 1;
        } else {
            break;
        }
    }
    let is_subcommand = args
        .get(end)
        .and_then(|a| a.to_str())
        .is_some_and(|a| SUBCOMMANDS.contains(&a));
    if end > 1 && end < args.len() && is_subcommand {
        let lang: Vec<OsString> = args.drain(1..end).collect();
        // `help` takes only subcommand names; the language of its text is
        // read from the command line before parsing (`lang_in_args`).
        if args[1] != "help" {
            args.splice(2..2, lang);
        }
    }
    args
}

/// The language `--lang` names on a command line (`--lang zh`, `--lang=zh`).
pub fn lang_in_args(args: &[OsString]) -> Option<LangArg> {
    let mut values = Vec::new();
    let mut iter = args.iter().filter_map(|a| a.to_str());
    while let Some(arg) = iter.next() {
        if arg == "--" {
            break;
        }
        if arg == "--lang" {
            values.extend(iter.next());
        } else if let Some(value) = arg.strip_prefix("--lang=") {
            values.push(value);
        }
    }
    values.last().and_then(|v| LangArg::from_str(v, true).ok())
}

const EXAMPLES_ZH: &str = "\
示例：
  python train.py 2>&1 | oomwhy            解释一次运行输出里的崩溃
  oomwhy train.log                         读取日志文件
  oomwhy                                   然后粘贴报错，按 Ctrl-D
  oomwhy run -- python train.py            运行命令，崩溃时给出解释
  oomwhy --follow train.log                在日志写入时持续监视
  oomwhy --follow --from-end train.log     只报告从现在起写入的崩溃
  oomwhy --format json rank*.log > report.json
  oomwhy --format markdown train.log       生成可贴到 issue 里的报告
  oomwhy --summary logs/*.log              对很多任务的日志出一份汇总报告
  oomwhy explain fragmentation             某个代码的详细说明
  oomwhy explain --list                    列出所有代码
  oomwhy --brief train.log                 只看结论：出了什么错、原因、先试什么
  oomwhy --lang en train.log               用英文解释

和子命令同名的文件（explain、schema、run、completions、man、help）
需要带路径：oomwhy ./explain

退出状态：找到问题为 0，什么都没找到为 1，出错为 2；
`oomwhy run` 以所运行命令自己的状态退出。";

/// The command line with its help in Simplified Chinese, as far as clap
/// lets help be replaced (its own headings such as `Usage:` stay English).
pub fn chinese_help(command: clap::Command) -> clap::Command {
    use clap::{Arg, ArgAction};
    // clap generates `--help` (and `--version`) when it builds the command;
    // to word them, they are declared here instead.
    let own_help = |command: clap::Command| {
        command.disable_help_flag(true).arg(
            Arg::new("help")
                .short('h')
                .long("help")
                .action(ArgAction::Help)
                .help("显示帮助"),
        )
    };
    let help = |command: clap::Command, args: &[(&'static str, &'static str)]| {
        args.iter().fold(command, |command, (id, text)| {
            if command.get_arguments().any(|a| a.get_id() == *id) {
                command.mut_arg(*id, |arg| {
                    let arg = arg.help(*text).long_help(None::<&str>);
                    // The values' own descriptions are English; the text names them.
                    if matches!(*id, "format" | "color" | "shell") {
                        arg.hide_possible_values(true)
                    } else {
                        arg
                    }
                })
            } else {
                command
            }
        })
    };
    let common: &[(&'static str, &'static str)] = &[(
        "color",
        "何时使用颜色：auto（只在终端上且未设 NO_COLOR 时）、always、never",
    )];
    let help_all = |command: clap::Command, args: &[(&'static str, &'static str)]| {
        help(help(own_help(command), args), common)
    };
    let command = help(
        own_help(command)
            .about("解释 GPU 为什么显存不足")
            .long_about(
                "读取训练日志或粘贴的报错，找出每一个显存不足错误和相关的 CUDA 崩溃，\
                 逐一解释：各个数字的含义、为什么会发生、该改什么。",
            )
            .after_help(EXAMPLES_ZH)
            .disable_version_flag(true)
            .arg(
                Arg::new("version")
                    .short('V')
                    .long("version")
                    .action(ArgAction::Version)
                    .help("显示版本"),
            )
            .mut_arg("lang", |arg| {
                arg.help(
                    "解释使用的语言（默认取自 LC_ALL、LC_MESSAGES、LANG）；JSON 的键和代码不变",
                )
            }),
        common,
    );
    let command = help(
        command,
        &[
            ("files", "要读取的日志文件；不给或给 `-` 时读取标准输入"),
            ("format", "输出格式：text（给人读的解释）、json、ndjson、markdown、github"),
            ("quiet", "什么都不打印，只设置退出状态（`run`：只转发命令的输出）"),
            ("brief", "每个发现只打印结论（出了什么错、主要原因、先试什么）和最后的统计"),
            ("follow", "像 `tail -F` 一样持续读取增长中的 FILE，每次崩溃写完约一秒后报告；FILE 还不存在时会等它出现，能应对截断和日志轮转。按 Ctrl-C 停止"),
            ("from_end", "配合 `--follow`：从 FILE 的末尾开始读，已经在里面的崩溃不再报告（行号从那里算起）"),
            ("summary", "对所有 FILE 出一份汇总报告，而不是逐个发现：多少个输入有发现，按类型、结论和首选修复计数并列出对应的输入，以及缺口最大的几次（text 或 json）"),
            ("no_pager", "把文本报告直接打印到终端。默认情况下，比终端窗口还高的报告会像 git 一样交给 $PAGER 或 `less -FRX`（已设置的 LESS 保持不变）显示，让开头的结论留在眼前；输出不是终端（或 TERM=dumb）时、`--follow` 和 `run` 从不分页。PAGER 设为空或 `cat` 也会关闭分页"),
        ],
    );
    command
        .mut_subcommand("explain", |c| {
            help_all(
                c.about("打印某个代码的详细说明（见每个发现的“详见”一行）"),
                &[
                    ("code", "代码，例如 `fragmentation`；大小写、用 `-` 代替 `_`、唯一前缀都可以"),
                    ("list", "列出所有代码及其标题"),
                ],
            )
        })
        .mut_subcommand("schema", |c| {
            help_all(
                c.about("打印 `--format json` 输出（或 `--format ndjson` 的一行）的 JSON Schema"),
                &[
                    ("ndjson", "打印 `--format ndjson` 一行的 schema，而不是整个 JSON 文档的"),
                    ("summary", "打印 `--summary --format json` 文档的 schema"),
                ],
            )
        })
        .mut_subcommand("run", |c| {
            help_all(
                c.about("运行一个命令，原样转发它的输出，并解释它的崩溃")
                    .long_about(None::<&str>)
                    .after_help("示例：\n  oomwhy run -- python train.py --batch-size 64\n  oomwhy run --format json --report oom.json -- torchrun --nproc-per-node 8 train.py"),
                &[
                    ("format", "报告的格式：text、json、ndjson、markdown、github"),
                    ("report", "把报告写到 PATH，而不是标准错误"),
                    ("quiet", "不报告，只转发输出，并以命令的状态退出"),
                    ("brief", "每个发现只报告结论（出了什么错、主要原因、先试什么）"),
                    ("command", "要运行的命令及其参数（前面加 `--`）"),
                ],
            )
        })
        .mut_subcommand("completions", |c| {
            help_all(
                c.about("打印 shell 补全脚本（如 `oomwhy completions bash > /etc/bash_completion.d/oomwhy`）"),
                &[("shell", "shell 的种类：bash、zsh、fish、powershell、elvish")],
            )
        })
        .mut_subcommand("man", |c| {
            help_all(c.about("以 roff 格式打印手册页（如 `oomwhy man > oomwhy.1`）"), &[])
        })
}

/// `--lang`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum LangArg {
    /// English.
    En,
    /// Simplified Chinese (简体中文).
    Zh,
}

/// `--color`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ColorArg {
    /// Colour when the output is a terminal and NO_COLOR is not set.
    Auto,
    /// Always colour.
    Always,
    /// Never colour.
    Never,
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::CommandFactory;

    #[test]
    fn lang_may_come_before_a_subcommand() {
        let args = |list: &[&str]| list.iter().map(OsString::from).collect::<Vec<_>>();
        let moved = lang_after_subcommand(args(&["oomwhy", "--lang", "zh", "explain", "frag"]));
        assert_eq!(moved, args(&["oomwhy", "explain", "--lang", "zh", "frag"]));
        let cli = Cli::try_parse_from(moved).unwrap();
        assert_eq!(cli.lang, Some(LangArg::Zh));
        assert!(matches!(cli.command, Some(Command::Explain(_))));
        let files = args(&["oomwhy", "--lang", "zh", "train.log"]);
        assert_eq!(lang_after_subcommand(files.clone()), files);
        let help = lang_after_subcommand(args(&["oomwhy", "--lang", "zh", "help", "run"]));
        assert_eq!(help, args(&["oomwhy", "help", "run"]));
        let short = args(&["oomwhy", "--lang"]);
        assert_eq!(lang_after_subcommand(short.clone()), short);
    }

    #[test]
    fn definition_is_consistent() {
        Cli::command().debug_assert();
        chinese_help(Cli::command()).debug_assert();
    }

    #[test]
    fn finds_the_language_on_the_command_line() {
        let args = |list: &[&str]| list.iter().map(OsString::from).collect::<Vec<_>>();
        assert_eq!(
            lang_in_args(&args(&["oomwhy", "--lang", "zh", "a.log"])),
            Some(LangArg::Zh)
        );
        assert_eq!(
            lang_in_args(&args(&["oomwhy", "--lang=en"])),
            Some(LangArg::En)
        );
        assert_eq!(
            lang_in_args(&args(&["oomwhy", "run", "--", "x", "--lang", "zh"])),
            None
        );
        let zh = chinese_help(Cli::command()).render_help().to_string();
        assert!(zh.contains("只打印结论"), "{zh}");
    }

    #[test]
    fn files_and_subcommands_coexist() {
        let cli = Cli::try_parse_from(["oomwhy", "train.log"]).unwrap();
        assert!(cli.command.is_none());
        assert_eq!(cli.scan.files, [PathBuf::from("train.log")]);
        let cli = Cli::try_parse_from(["oomwhy", "./explain"]).unwrap();
        assert!(cli.command.is_none());
        let cli = Cli::try_parse_from(["oomwhy", "explain", "frag"]).unwrap();
        assert!(matches!(cli.command, Some(Command::Explain(_))));
        let cli = Cli::try_parse_from(["oomwhy", "run", "--", "sh", "-c", "exit 3"]).unwrap();
        let Some(Command::Run(run)) = cli.command else {
            panic!("not run")
        };
        assert_eq!(run.command, ["sh", "-c", "exit 3"]);
        let cli =
            Cli::try_parse_from(["oomwhy", "run", "python", "train.py", "--lr", "1"]).unwrap();
        let Some(Command::Run(run)) = cli.command else {
            panic!("not run")
        };
        assert_eq!(run.command, ["python", "train.py", "--lr", "1"]);
    }

    #[test]
    fn summary_takes_files_and_not_follow() {
        let cli = Cli::try_parse_from(["oomwhy", "--summary", "a.log", "b.log"]).unwrap();
        assert!(cli.scan.summary);
        assert_eq!(cli.scan.files.len(), 2);
        assert!(Cli::try_parse_from(["oomwhy", "--summary", "--follow", "a.log"]).is_err());
    }
}
