//! The operating system a finding came from, read once from what the
//! finding carries (its message, its traceback's paths and the writer's
//! lines around it), so that platform-specific fixes (dmesg and Xid on
//! Linux, Event Viewer and TDR on Windows) go only where they can be run.
//! Also whether the writer says the crash comes back at random or leaves
//! the GPU unusable until a reboot: the signs of a driver or hardware fault.

use crate::record::Finding;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Platform {
    Windows,
    Linux,
    MacOs,
    Unknown,
}

/// Words only a Windows machine writes or a Windows user states.
const WINDOWS_MARKS: &[&str] = &[
    "windows 10",
    "windows 11",
    "windows 7",
    "win10",
    "win11",
    "operating system: windows",
    "os: windows",
    "event viewer",
    "powershell",
    "ps c:\\",
    ".dll",
    "nvlddmkm",
    "wddm",
];

/// Words only a Linux machine writes (or a Linux user states).
const LINUX_MARKS: &[&str] = &[
    "/home/",
    "/usr/",
    "/opt/conda",
    "dmesg",
    "journalctl",
    "nvrm:",
    "ubuntu",
    "debian",
    "centos",
    "linux",
    "site-packages/",
    "dist-packages/",
];

/// Words only a Mac writes: also bash's `Killed: 9` (the C library's
/// description of SIGKILL on macOS; Linux's bash prints `Killed`) and the
/// framework build of Python (`/Library/Frameworks/Python.framework`).
const MAC_MARKS: &[&str] = &[
    "macos",
    "mac os",
    "/users/",
    "darwin",
    "/opt/homebrew",
    "macbook",
    "killed: 9",
    "/library/frameworks/python.framework",
];

/// A path such as `C:\Users\...` (a drive letter, a colon, a backslash).
fn drive_path(s: &str) -> bool {
    s.as_bytes().windows(3).enumerate().any(|(i, w)| {
        w[0].is_ascii_alphabetic()
            && w[1] == b':'
            && w[2] == b'\\'
            && (i == 0 || !s.as_bytes()[i - 1].is_ascii_alphanumeric())
    })
}

impl Platform {
    pub(super) fn of(f: &Finding) -> Platform {
        let frames = f
            .traceback
            .as_ref()
            .map(|tb| {
                tb.frames
                    .iter()
                    .map(|fr| fr.file.as_str())
                    .collect::<Vec<_>>()
                    .join("\n")
            })
            .unwrap_or_default();
        let said = format!("{}\n{}\n{}", f.text, f.nearby, frames);
        Platform::in_text(&said)
    }

    /// Linux's words win over Windows' (WSL runs Linux and prints Linux
    /// paths), and an unclear text stays unknown: only a clear Windows
    /// reading takes a Linux command away.
    fn in_text(text: &str) -> Platform {
        let lower = text.to_ascii_lowercase();
        let has = |marks: &[&str]| marks.iter().any(|m| lower.contains(m));
        if has(LINUX_MARKS) {
            Platform::Linux
        } else if has(WINDOWS_MARKS) || drive_path(text) {
            Platform::Windows
        } else if has(MAC_MARKS) {
            Platform::MacOs
        } else {
            Platform::Unknown
        }
    }
}

/// Words of a crash that comes back at random, or that leaves the GPU
/// unusable until the machine restarts.
const RECURRING_MARKS: &[&str] = &[
    "random",
    "intermittent",
    "sporadic",
    "until reboot",
    "until i reboot",
    "restart the computer",
    "reboot the computer",
    "restart my computer",
    "reboot my",
    "busy or unavailable",
];

/// Whether the writer says the crash recurs at random or the device stays
/// unusable until a reboot: a kernel bug fails at the same place every
/// time, so these point at the driver, power, heat or the PCIe link.
pub(super) fn recurs_at_random(f: &Finding) -> bool {
    let said = format!("{}\n{}", f.text, f.nearby).to_ascii_lowercase();
    RECURRING_MARKS.iter().any(|m| said.contains(m))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Linux's commands are never offered for a finding read as Windows,
    /// over every fixture and real paste (fixtures/wild/2256.txt is a
    /// CatBoost crash on Windows 10).
    #[test]
    fn a_windows_finding_gets_no_linux_only_fix() {
        const LINUX_ONLY: &[&str] = &["dmesg", "journalctl", "/var/log/"];
        let mut windows = 0;
        for (path, paste) in crate::explain::test_support::fixture_pastes() {
            for f in crate::decode_str(&paste) {
                if Platform::of(&f) != Platform::Windows {
                    continue;
                }
                windows += 1;
                for x in &f.diagnosis.fixes {
                    // A fix that names both platforms' ways is fine.
                    if x.how.contains("on Windows") || x.how.contains("Event Viewer") {
                        continue;
                    }
                    for word in LINUX_ONLY {
                        assert!(
                            !x.how.contains(word) && !x.title.contains(word),
                            "{path}: {} offers {word}: {}",
                            x.id,
                            x.how
                        );
                    }
                }
            }
        }
        assert!(windows > 0, "no Windows finding among the fixtures");
    }

    /// fixtures/wild/2256.txt ("Operating System: Windows 10", a CatBoost
    /// crash at random points) is read as Windows; 2257.txt (an Xid in a
    /// Linux kernel log, from a user who also tried WSL) as Linux.
    #[test]
    fn real_pastes_name_their_platform() {
        let first = |paste: &str| crate::decode_str(paste).into_iter().next().unwrap();
        let catboost = first(include_str!("../../../../fixtures/wild/2256.txt"));
        assert_eq!(Platform::of(&catboost), Platform::Windows);
        assert!(recurs_at_random(&catboost));
        let xid = first(include_str!("../../../../fixtures/wild/2257.txt"));
        assert_eq!(Platform::of(&xid), Platform::Linux);
    }

    /// Real lines: a CatBoost issue's header ("Operating System: Windows
    /// 10"), a Windows traceback path, a kernel log's NVRM line, and a WSL
    /// user's paste naming Ubuntu next to a Windows path.
    #[test]
    fn reads_the_platform_from_the_writers_words() {
        assert_eq!(
            Platform::in_text("catboost version: 0.22\nOperating System: Windows 10"),
            Platform::Windows
        );
        assert_eq!(
            Platform::in_text("  File \"C:\\Users\\me\\anaconda3\\lib\\site.py\", line 3"),
            Platform::Windows
        );
        assert_eq!(
            Platform::in_text("NVRM: Xid (PCI:0000:01:00): 109, pid=4124, name=python"),
            Platform::Linux
        );
        assert_eq!(
            Platform::in_text("OS: Both native Ubuntu and also WSL\nC:\\Users\\me"),
            Platform::Linux
        );
        assert_eq!(
            Platform::in_text("RuntimeError: CUDA error: unspecified launch failure"),
            Platform::Unknown
        );
        // A URL's scheme is no drive letter.
        assert_eq!(
            Platform::in_text("see https:\\\\example"),
            Platform::Unknown
        );
    }
}
