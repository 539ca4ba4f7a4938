//! How one explanation file holds both languages: the English page, a line
//! `<!-- zh -->` (invisible where Markdown is rendered, as on GitHub), then
//! the Chinese page with its own `# code: 标题` title. Compiled into the
//! library's build.rs, which splits every page with it, and into the
//! library's tests.

/// The line between a page's English and its Chinese.
pub const CHINESE_FOLLOWS: &str = "<!-- zh -->";

/// A page's English and Chinese, each ending in one newline, or why the
/// file cannot be split.
pub fn halves(text: &str) -> Result<(String, String), String> {
    let mut markers = Vec::new();
    let mut offset = 0;
    for line in text.split_inclusive('\n') {
        if line.trim() == CHINESE_FOLLOWS {
            markers.push((offset, offset + line.len()));
        }
        offset += line.len();
    }
    let [(start, end)] = markers[..] else {
        return Err(format!(
            "{} lines `{CHINESE_FOLLOWS}` where there must be one: a page is its \
             English, the line `{CHINESE_FOLLOWS}`, then its Chinese",
            markers.len()
        ));
    };
    let english = text[..start].trim();
    let chinese = text[end..].trim();
    if english.is_empty() || chinese.is_empty() {
        return Err(format!(
            "the {} half around `{CHINESE_FOLLOWS}` is empty",
            if english.is_empty() {
                "English"
            } else {
                "Chinese"
            }
        ));
    }
    Ok((format!("{english}\n"), format!("{chinese}\n")))
}
