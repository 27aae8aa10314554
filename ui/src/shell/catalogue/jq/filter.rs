//! jq's filter language, read whole: every name a filter calls must be a
//! pure builtin, and anything this reader does not know is refused.

use super::builtins::{FORMATS, PURE};

/// Whether a filter is jq Tether reads whole, calling only pure builtins.
pub(super) fn filter(text: &str) -> Result<(), String> {
    let mut reader = Reader {
        chars: text.chars().collect(),
        at: 0,
    };
    reader.code(None)?;
    Ok(())
}

struct Reader {
    chars: Vec<char>,
    at: usize,
}

impl Reader {
    fn peek(&self) -> Option<char> {
        self.chars.get(self.at).copied()
    }

    fn ident(&mut self) -> String {
        let start = self.at;
        while self.peek().is_some_and(|c| c.is_ascii_alphanumeric() || c == '_') {
            self.at += 1;
        }
        self.chars[start..self.at].iter().collect()
    }

    fn skip_space(&mut self) {
        while self.peek().is_some_and(char::is_whitespace) {
            self.at += 1;
        }
    }

    /// Code up to `closer` (or the end), brackets nested.
    fn code(&mut self, closer: Option<char>) -> Result<(), String> {
        while let Some(c) = self.peek() {
            self.at += 1;
            match c {
                c if c.is_whitespace() => {}
                '#' => return Err("a comment, which can hide text from this reader".into()),
                '"' => self.string()?,
                '(' => self.code(Some(')'))?,
                '[' => self.code(Some(']'))?,
                '{' => self.object()?,
                ')' | ']' | '}' if Some(c) == closer => return Ok(()),
                ')' | ']' | '}' => return Err(format!("an unbalanced `{c}`")),
                '.' => self.dot()?,
                '$' => self.variable()?,
                '@' => {
                    let name = self.ident();
                    if !FORMATS.contains(&name.as_str()) {
                        return Err(format!("`@{name}` is not a jq format Tether knows"));
                    }
                }
                c if c.is_ascii_digit() => self.number(),
                c if c.is_ascii_alphabetic() || c == '_' => {
                    self.at -= 1;
                    let name = self.ident();
                    if self.chars.get(self.at..self.at + 2) == Some(&[':', ':']) {
                        return Err(format!("`{name}::…` calls a module"));
                    }
                    if !PURE.contains(&name.as_str()) {
                        return Err(format!(
                            "`{name}` is not one of jq's pure builtins (`env` prints the environment; `def`, `import` and `include` are not read)"
                        ));
                    }
                }
                '|' | ',' | '/' | '=' | '!' | '<' | '>' | '+' | '-' | '*' | '%' | '?' | ';' | ':' => {}
                c => return Err(format!("`{c}` is not jq Tether reads")),
            }
        }
        match closer {
            None => Ok(()),
            Some(c) => Err(format!("a `{c}` is missing")),
        }
    }

    /// After `.`: a field (`.env` is the key "env", never the builtin),
    /// `.."`, `."key"`, `.[…]`, or the input itself.
    fn dot(&mut self) -> Result<(), String> {
        match self.peek() {
            Some('.') => {
                // `..` (recurse); a name right after it is a call.
                self.at += 1;
                Ok(())
            }
            Some(c) if c.is_ascii_alphabetic() || c == '_' => {
                self.ident();
                Ok(())
            }
            Some('"') => {
                self.at += 1;
                self.string()
            }
            _ => Ok(()),
        }
    }

    /// `$name` (jq 1.6 allows a space after `$`): any variable the filter
    /// binds, or `$__loc__`; never `$ENV`.
    fn variable(&mut self) -> Result<(), String> {
        self.skip_space();
        let name = self.ident();
        match name.as_str() {
            "" => Err("a `$` with no name".into()),
            "ENV" => Err("`$ENV` holds the environment, which may hold secrets".into()),
            _ => Ok(()),
        }
    }

    fn number(&mut self) {
        while self.peek().is_some_and(|c| c.is_ascii_digit() || c == '.') {
            self.at += 1;
        }
        if self.peek().is_some_and(|c| c == 'e' || c == 'E') {
            self.at += 1;
            if self.peek().is_some_and(|c| c == '+' || c == '-') {
                self.at += 1;
            }
            while self.peek().is_some_and(|c| c.is_ascii_digit()) {
                self.at += 1;
            }
        }
    }

    /// A string after its opening quote, `\(…)` read as code.
    fn string(&mut self) -> Result<(), String> {
        while let Some(c) = self.peek() {
            self.at += 1;
            match c {
                '"' => return Ok(()),
                '\\' => {
                    let Some(e) = self.peek() else {
                        break;
                    };
                    self.at += 1;
                    match e {
                        '(' => self.code(Some(')'))?,
                        '"' | '\\' | '/' | 'b' | 'f' | 'n' | 'r' | 't' => {}
                        'u' => {
                            for _ in 0..4 {
                                if !self.peek().is_some_and(|c| c.is_ascii_hexdigit()) {
                                    return Err("a `\\u` escape without four hex digits".into());
                                }
                                self.at += 1;
                            }
                        }
                        e => return Err(format!("`\\{e}` is not a jq string escape")),
                    }
                }
                _ => {}
            }
        }
        Err("a string with no closing quote".into())
    }

    /// An object after `{`: each key (a name, `$name`, a string, a format
    /// string or `(expression)`), then `: value` up to `,` or `}`.
    fn object(&mut self) -> Result<(), String> {
        loop {
            self.skip_space();
            let Some(c) = self.peek() else {
                return Err("a `}` is missing".into());
            };
            self.at += 1;
            match c {
                '}' => return Ok(()),
                '"' => self.string()?,
                '(' => self.code(Some(')'))?,
                '$' => self.variable()?,
                '@' => {
                    let name = self.ident();
                    if !FORMATS.contains(&name.as_str()) {
                        return Err(format!("`@{name}` is not a jq format Tether knows"));
                    }
                    self.skip_space();
                    if self.peek() == Some('"') {
                        self.at += 1;
                        self.string()?;
                    }
                }
                c if c.is_ascii_alphabetic() || c == '_' => {
                    // A key, whatever its name (`{env: 1}` is the key "env").
                    self.at -= 1;
                    self.ident();
                }
                c => return Err(format!("`{c}` cannot start an object's key")),
            }
            self.skip_space();
            match self.peek() {
                Some(':') => {
                    self.at += 1;
                    if self.value()? {
                        return Ok(());
                    }
                }
                Some(',') => self.at += 1,
                Some('}') => {
                    self.at += 1;
                    return Ok(());
                }
                _ => return Err("an object's key must be followed by `:`, `,` or `}`".into()),
            }
        }
    }

    /// An object's value, up to the `,` (false) or `}` (true) that ends it.
    fn value(&mut self) -> Result<bool, String> {
        let start = self.at;
        let mut depth = 0usize;
        let mut end = None;
        // Find where the value ends (outside strings and brackets), then
        // read it as code.
        let mut probe = Reader {
            chars: self.chars.clone(),
            at: self.at,
        };
        while let Some(c) = probe.peek() {
            match c {
                '"' => {
                    probe.at += 1;
                    probe.string()?;
                    continue;
                }
                '(' | '[' | '{' => depth += 1,
                ')' | ']' => depth = depth.saturating_sub(1),
                '}' if depth == 0 => {
                    end = Some((probe.at, true));
                    break;
                }
                '}' => depth -= 1,
                ',' if depth == 0 => {
                    end = Some((probe.at, false));
                    break;
                }
                _ => {}
            }
            probe.at += 1;
        }
        let (stop, closed) = end.ok_or("a `}` is missing")?;
        let mut inner = Reader {
            chars: self.chars[start..stop].to_vec(),
            at: 0,
        };
        inner.code(None)?;
        self.at = stop + 1;
        Ok(closed)
    }
}

#[cfg(test)]
#[path = "tests.rs"]
mod tests;
