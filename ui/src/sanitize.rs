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

/// The text's lines, each [`escape`]d: a line feed is where a person broke
/// the line (a typed reason), so it is shown as one; every other hostile
/// character, a carriage return too, stays escaped.
pub fn escaped_lines(text: &str) -> impl Iterator<Item = String> + '_ {
    text.split('\n').map(escape)
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
    json_text(value.to_string())
}

/// JSON text (one line of it) with every hostile character escaped as
/// `\uXXXX`, as [`json_line`] writes it: outside its strings JSON text holds
/// no hostile character but white space, so it still parses to the same
/// value.
pub fn json_text(text: String) -> String {
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

/// One display line of a call's arguments, and where it holds a hostile
/// character, whether written raw or as a JSON escape (`\u202e`, `\u001b`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ArgumentLine {
    /// The line as the screen shows it, every hostile character escaped.
    pub text: String,
    /// Character columns in `text` where a hostile character's escape starts.
    pub hostile: Vec<usize>,
}

impl ArgumentLine {
    /// Escapes `raw` for the screen; `json_escapes` are the character
    /// indices in `raw` where a JSON escape of a hostile character starts.
    fn escaped(raw: &str, json_escapes: &[usize]) -> ArgumentLine {
        let mut text = String::with_capacity(raw.len());
        let mut hostile = Vec::new();
        let mut column = 0;
        for (i, c) in raw.chars().enumerate() {
            if json_escapes.contains(&i) {
                hostile.push(column);
            }
            if is_hostile(c) {
                hostile.push(column);
                let escaped = format!("\\u{{{:x}}}", c as u32);
                column += escaped.chars().count();
                text.push_str(&escaped);
            } else {
                column += 1;
                text.push(c);
            }
        }
        ArgumentLine { text, hostile }
    }
}

/// Arguments as display lines: pretty-printed when they are JSON, with a
/// string value's `\n` shown as a real line break (its next line indented
/// under the key) and every other escape kept as JSON wrote it; every line
/// escaped for the screen.
pub fn argument_lines(raw: &str) -> Vec<String> {
    marked_argument_lines(raw).into_iter().map(|l| l.text).collect()
}

/// [`argument_lines`], each line with where it holds hostile characters, so
/// a badge marks exactly the arguments that hold one, even as JSON escapes.
/// A tab (`\t`) and a carriage return (`\r`) count as ordinary whitespace:
/// JSON already shows them as the escapes everyone reads.
pub fn marked_argument_lines(raw: &str) -> Vec<ArgumentLine> {
    let Ok(value) = serde_json::from_str::<serde_json::Value>(raw) else {
        return raw.lines().map(|l| ArgumentLine::escaped(l, &[])).collect();
    };
    let text = serde_json::to_string_pretty(&value).unwrap_or_else(|_| raw.to_owned());
    let mut out = Vec::new();
    for line in text.lines() {
        let indent = " ".repeat(line.len() - line.trim_start().len() + 2);
        let mut current = String::new();
        let mut escapes = Vec::new();
        let mut chars = line.chars().peekable();
        // Backslashes occur only inside JSON strings, each starting an escape.
        while let Some(c) = chars.next() {
            if c != '\\' {
                current.push(c);
                continue;
            }
            let at = current.chars().count();
            match chars.next() {
                Some('n') => {
                    out.push(ArgumentLine::escaped(&current, &std::mem::take(&mut escapes)));
                    current.clone_from(&indent);
                }
                Some('u') => {
                    let hex: String = (0..4).filter_map(|_| chars.next_if(char::is_ascii_hexdigit)).collect();
                    let decoded = u32::from_str_radix(&hex, 16).ok().and_then(char::from_u32);
                    if decoded.is_some_and(is_hostile) {
                        escapes.push(at);
                    }
                    current.push_str("\\u");
                    current.push_str(&hex);
                }
                Some(next) => {
                    if matches!(next, 'b' | 'f') {
                        escapes.push(at);
                    }
                    current.push('\\');
                    current.push(next);
                }
                None => current.push('\\'),
            }
        }
        out.push(ArgumentLine::escaped(&current, &escapes));
    }
    out
}

/// Whether any argument line holds a hostile character.
pub fn arguments_need_warning(lines: &[ArgumentLine]) -> bool {
    lines.iter().any(|l| !l.hostile.is_empty())
}

/// `text` in at most `max_chars` characters: cut, the last one is `…`.
pub fn shortened(text: &str, max_chars: usize) -> String {
    if text.chars().count() <= max_chars {
        return text.to_owned();
    }
    let mut out: String = text.chars().take(max_chars.saturating_sub(1)).collect();
    out.push('…');
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
    fn a_typed_reason_breaks_at_line_feeds_and_escapes_the_rest() {
        let lines: Vec<String> = escaped_lines("one\ntwo\r\n\u{1b}[2J\u{202e}").collect();
        assert_eq!(lines, ["one", "two\\u{d}", "\\u{1b}[2J\\u{202e}"]);
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

    #[test]
    fn hostile_characters_written_as_json_escapes_are_marked_where_they_sit() {
        let lines = marked_argument_lines(r#"{"a": "x\u202ey", "b": "\u001b[31m", "c": "z\u200bw", "d": "tab\tok"}"#);
        let marked: Vec<(&str, &[usize])> = lines.iter().map(|l| (l.text.as_str(), l.hostile.as_slice())).collect();
        assert_eq!(
            marked,
            [
                ("{", &[][..]),
                ("  \"a\": \"x\\u{202e}y\",", &[9][..]),
                ("  \"b\": \"\\u001b[31m\",", &[8][..]),
                ("  \"c\": \"z\\u{200b}w\",", &[9][..]),
                ("  \"d\": \"tab\\tok\"", &[][..]),
                ("}", &[][..]),
            ]
        );
        assert!(!arguments_need_warning(&marked_argument_lines(
            r#"{"clean": "text\nmore"}"#
        )));
        assert!(arguments_need_warning(&marked_argument_lines("raw \u{1b} text")));
    }
}
