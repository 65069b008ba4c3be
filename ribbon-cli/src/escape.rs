//! Text made safe for a line of output: the one escaping rule of every
//! text output (tables, `db query`'s keys, error lines) that shows names or
//! keys read from files. A leaf module: output and errors both use it.

/// `text` made safe for a line of text output (the one rule of every
/// text output that shows names or keys from files: column-family names,
/// keys, file names, policy names): a control character (C0, DEL, C1)
/// cannot split a line, shift a tab-separated column or reach the
/// terminal as an escape sequence. Tab, newline and carriage return are
/// written `\t`, `\n`, `\r`, other control characters `\xNN` (below
/// U+0080) or `\u{NN}` (C1), and a backslash `\\`, so the escaped text
/// tells every original apart. Everything else is unchanged. (JSON output
/// needs none of this: serde escapes it.)
pub fn escape_text(text: &str) -> std::borrow::Cow<'_, str> {
    if !text.chars().any(|c| c.is_control() || c == '\\') {
        return std::borrow::Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + 8);
    push_escaped(&mut out, text);
    std::borrow::Cow::Owned(out)
}

/// `bytes` as text for a line of output: valid UTF-8 as [`escape_text`]
/// writes it, every byte that is not UTF-8 as `\xNN`.
pub fn escape_bytes(bytes: &[u8]) -> String {
    use std::fmt::Write as _;
    let mut out = String::with_capacity(bytes.len());
    for chunk in bytes.utf8_chunks() {
        push_escaped(&mut out, chunk.valid());
        for b in chunk.invalid() {
            let _ = write!(out, "\\x{b:02x}");
        }
    }
    out
}

fn push_escaped(out: &mut String, text: &str) {
    for c in text.chars() {
        match c {
            '\t' => out.push_str("\\t"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\\' => out.push_str("\\\\"),
            c if c.is_control() => push_control(out, c),
            c => out.push(c),
        }
    }
}

/// Appends the control character `c` escaped: `\xNN` below U+0080, else
/// `\u{NN}` (C1).
pub(crate) fn push_control(out: &mut String, c: char) {
    use std::fmt::Write as _;
    if (c as u32) < 0x80 {
        let _ = write!(out, "\\x{:02x}", c as u32);
    } else {
        let _ = write!(out, "\\u{{{:x}}}", c as u32);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escaping_keeps_lines_and_columns_whole_and_tells_originals_apart() {
        assert!(matches!(
            escape_text("plain név"),
            std::borrow::Cow::Borrowed("plain név")
        ));
        assert_eq!(escape_text("a\tb\nc\rd"), "a\\tb\\nc\\rd");
        assert_eq!(escape_text("\u{1b}[31mred\u{7f}"), "\\x1b[31mred\\x7f");
        assert_eq!(escape_text("\u{9b}2J"), "\\u{9b}2J");
        assert_eq!(escape_text("back\\slash\\t"), "back\\\\slash\\\\t");
        assert_eq!(escape_bytes(b"k\xff\x00\xe2\x82\xac"), "k\\xff\\x00\u{20ac}");
        // No output of either holds a control character.
        let all: String = (0u32..0x200).filter_map(char::from_u32).collect();
        assert!(!escape_text(&all).chars().any(char::is_control));
        let bytes: Vec<u8> = (0..=255).collect();
        assert!(!escape_bytes(&bytes).chars().any(char::is_control));
    }
}
