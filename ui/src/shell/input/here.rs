//! Here-documents in bash's input stage: the operator's delimiter word, and
//! each body read as bash reads it, up to its delimiter line.

use super::{Here, HereDoc, Lexer};

impl Lexer<'_> {
    /// After `<<`: an optional `-`, blanks, then the delimiter word.
    pub(super) fn here_operator(&mut self) {
        let operator = self.out.len() - 2;
        let strip_tabs = self.peek(0) == Some(b'-');
        if strip_tabs {
            self.copy(1);
        }
        while matches!(self.peek(0), Some(b' ' | b'\t')) {
            self.copy(1);
        }
        let mut delimiter = Vec::new();
        let mut quoted = false;
        while let Some(c) = self.peek(0) {
            match c {
                b' ' | b'\t' | b'\n' | b';' | b'&' | b'|' | b'(' | b')' | b'<' | b'>' => break,
                b'\\' if self.peek(1) == Some(b'\n') => self.backslash(),
                b'\\' => {
                    quoted = true;
                    delimiter.extend(self.peek(1));
                    self.copy(2);
                }
                b'\'' | b'"' => {
                    quoted = true;
                    self.copy(1);
                    while let Some(q) = self.peek(0) {
                        self.copy(1);
                        if q == c {
                            break;
                        }
                        delimiter.push(q);
                    }
                }
                b'$' | b'`' => {
                    self.uncertain = true;
                    delimiter.push(c);
                    self.copy(1);
                }
                _ => {
                    delimiter.push(c);
                    self.copy(1);
                }
            }
        }
        // `$(( 1 << 2 ))` and `(( x << 2 ))` shift; they open no body.
        if delimiter.is_empty() || delimiter.iter().all(u8::is_ascii_digit) {
            self.uncertain = true;
            return;
        }
        self.pending.push(Here {
            operator,
            delimiter,
            quoted,
            strip_tabs,
        });
    }

    /// At the start of a line: the bodies of the here-documents opened on
    /// the line before, each up to its delimiter line.
    pub(super) fn here_bodies(&mut self) {
        for here in std::mem::take(&mut self.pending) {
            let start = self.out.len();
            let mut end = None;
            loop {
                if self.peek(0).is_none() {
                    break;
                }
                let line_start = self.out.len();
                while let Some(c) = self.peek(0) {
                    if c == b'\n' {
                        break;
                    }
                    if c == b'\\' && !here.quoted {
                        self.backslash();
                    } else {
                        self.copy(1);
                    }
                }
                let mut line = &self.out[line_start..];
                if here.strip_tabs {
                    while let [b'\t', rest @ ..] = line {
                        line = rest;
                    }
                }
                let done = line == here.delimiter.as_slice();
                if done {
                    end = Some(line_start);
                }
                self.copy(1);
                if done {
                    break;
                }
            }
            // Without its delimiter, a body runs to the end of the text.
            let end = end.unwrap_or(self.out.len());
            self.heres.push(HereDoc {
                operator: here.operator,
                body: String::from_utf8_lossy(&self.out[start..end]).into_owned(),
                quoted: here.quoted,
            });
            self.bodies.push(start..end);
        }
    }
}
