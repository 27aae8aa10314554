//! Text from a model or an agent is shown escaped, never written raw: control
//! characters, escape sequences, bidi overrides and zero-width characters
//! become visible `\u{..}` escapes, so nothing can spoof the screen.

/// Whether a character must not reach the terminal as it is.
pub fn is_hostile(c: char) -> bool {
    c.is_control()
        || matches!(c,
            '\u{200B}'..='\u{200F}'   // zero-width space/joiners, LRM, RLM
            | '\u{202A}'..='\u{202E}' // bidi embeddings and overrides
            | '\u{2060}'..='\u{2064}' // word joiner, invisible operators
            | '\u{2066}'..='\u{2069}' // bidi isolates
            | '\u{FEFF}'              // zero-width no-break space
            | '\u{061C}'              // Arabic letter mark
            | '\u{180E}'              // Mongolian vowel separator
        )
}

/// The text with every hostile character escaped as `\u{..}`.
pub fn escape(text: &str) -> String {
    if !text.chars().any(is_hostile) {
        return text.to_owned();
    }
    let mut out = String::with_capacity(text.len() + 8);
    for c in text.chars() {
        if is_hostile(c) {
            out.push_str(&format!("\\u{{{:x}}}", c as u32));
        } else {
            out.push(c);
        }
    }
    out
}

/// Whether the text holds anything that [`escape`] would change.
pub fn needs_warning(text: &str) -> bool {
    text.chars().any(is_hostile)
}

/// A value as one line of JSON in which every hostile character is escaped
/// as `\uXXXX`: serde escapes control characters only, and a log that is
/// read in a terminal can be spoofed by bidi or zero-width ones as well. The
/// line still parses to the same value.
pub fn json_line(value: &serde_json::Value) -> String {
    let text = value.to_string();
    if !text.chars().any(is_hostile) {
        return text;
    }
    let mut out = String::with_capacity(text.len() + 16);
    for c in text.chars() {
        if is_hostile(c) {
            let mut units = [0_u16; 2];
            for unit in c.encode_utf16(&mut units) {
                out.push_str(&format!("\\u{unit:04x}"));
            }
        } else {
            out.push(c);
        }
    }
    out
}

/// Arguments as display lines: pretty-printed when they are JSON, with a
/// string value's `\n` shown as a real line break (its next line indented
/// under the key) and every other escape kept as JSON wrote it; every line
/// escaped for the screen.
pub fn argument_lines(raw: &str) -> Vec<String> {
    let Ok(value) = serde_json::from_str::<serde_json::Value>(raw) else {
        return raw.lines().map(escape).collect();
    };
    let text = serde_json::to_string_pretty(&value).unwrap_or_else(|_| raw.to_owned());
    let mut out = Vec::new();
    for line in text.lines() {
        let indent = " ".repeat(line.len() - line.trim_start().len() + 2);
        let mut current = String::new();
        let mut chars = line.chars();
        // Backslashes occur only inside JSON strings, each starting an escape.
        while let Some(c) = chars.next() {
            match (c, c == '\\') {
                (_, true) => match chars.next() {
                    Some('n') => {
                        out.push(escape(&current));
                        current.clone_from(&indent);
                    }
                    Some(next) => {
                        current.push('\\');
                        current.push(next);
                    }
                    None => current.push('\\'),
                },
                (c, false) => current.push(c),
            }
        }
        out.push(escape(&current));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escape_sequences_bidi_and_zero_width_are_made_visible() {
        assert_eq!(escape("a\u{1b}[31mb"), "a\\u{1b}[31mb");
        assert_eq!(escape("x\u{202E}y"), "x\\u{202e}y");
        assert_eq!(escape("z\u{200B}w"), "z\\u{200b}w");
        assert_eq!(escape("tab\there"), "tab\\u{9}here");
        assert_eq!(escape("plain ünïcode ✓"), "plain ünïcode ✓");
        assert!(needs_warning("\u{7}"));
        assert!(!needs_warning("fine"));
    }

    #[test]
    fn argument_strings_break_at_their_newlines_and_keep_other_escapes() {
        let raw = r#"{"a": "one\ntwo\\nthree\t\u001b\u202e"}"#;
        assert_eq!(
            argument_lines(raw),
            ["{", "  \"a\": \"one", "    two\\\\nthree\\t\\u001b\\u{202e}\"", "}"]
        );
        assert_eq!(argument_lines("not json\nat all"), ["not json", "at all"]);
    }
}
