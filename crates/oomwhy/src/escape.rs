//! Escaping text that came from an input before it reaches a terminal.
//!
//! A leaf: it imports nothing of the crate, so that every layer (errors,
//! the renderers, the fleet summary) can escape names and messages without
//! depending on any other.

/// Escapes control characters (terminal escape sequences included) and
/// bidirectional overrides so that text from a log cannot act on the
/// user's terminal. Tabs become spaces.
pub fn sanitize(text: &str) -> std::borrow::Cow<'_, str> {
    let unsafe_char = |c: char| {
        (c.is_control() && c != '\n')
            || matches!(c, '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}')
    };
    if !text.chars().any(unsafe_char) {
        return std::borrow::Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + 8);
    for c in text.chars() {
        match c {
            '\t' => out.push(' '),
            c if unsafe_char(c) => out.push_str(&c.escape_unicode().to_string()),
            c => out.push(c),
        }
    }
    std::borrow::Cow::Owned(out)
}

#[cfg(test)]
mod tests {
    use super::sanitize;

    #[test]
    fn escapes_terminal_sequences() {
        assert_eq!(
            sanitize("a\x1b]52;c;ZXZpbA==\x07b"),
            "a\\u{1b}]52;c;ZXZpbA==\\u{7}b"
        );
        assert_eq!(sanitize("plain text"), "plain text");
        assert_eq!(sanitize("rtl\u{202e}x"), "rtl\\u{202e}x");
    }
}
