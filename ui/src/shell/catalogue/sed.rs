//! GNU sed (4.9) as a reader: its options, and its script read as sed
//! reads it (`compile.c`), command by command. A script is covered only
//! when every command is one that prints or edits the pattern space: no
//! command that writes a file (`w`, `W`, `s///w`), reads one it is not
//! given (`r`, `R`), or runs a program (`e`, `s///e`); anything the reader
//! does not know is refused. `-i` (edits files in place) and `-f` (a script
//! in a file this command does not show) are refused.

use super::table::Effect::GivesPattern;
use super::table::{
    Check, HELP, Kind, Operands, P, Program, READS_LISTED, Reads, Syntax, T, Takes, VERSION, WRITES, flag, refused,
    value,
};

/// A sed script, checked by [`script`].
const SCRIPT: Kind = Kind::Checked(Check {
    name: "SCRIPT",
    check: script,
});

pub(super) const SED: Program = Program::new(
    "sed",
    "edits a stream: prints what a script makes of its input (no command that writes, reads other files or runs one)",
    Syntax::GNU,
    &[
        flag("n", "quiet"),
        flag("", "silent"),
        flag("", "debug"),
        value("e", "expression", SCRIPT).with(&[GivesPattern]),
        refused("f", "file", Takes::Value(P), READS_LISTED),
        refused(
            "",
            "follow-symlinks",
            Takes::Nothing,
            "only matters when editing files in place",
        ),
        refused("i", "in-place", Takes::Optional(T), WRITES),
        value("l", "line-length", T),
        flag("", "posix"),
        flag("b", "binary"),
        flag("E", "regexp-extended"),
        flag("r", ""),
        flag("s", "separate"),
        flag("", "sandbox"),
        flag("u", "unbuffered"),
        flag("z", "null-data"),
        flag("", "zero-terminated"),
        HELP,
        VERSION,
    ],
    Operands {
        leading: &[SCRIPT],
        rest: Some(P),
    },
    Reads::Contents,
);

/// Why a sed script is not covered, or `Ok` when every command only prints
/// or edits the pattern space.
pub(super) fn script(text: &str) -> Result<(), String> {
    let mut reader = Reader {
        chars: text.chars().collect(),
        at: 0,
        depth: 0,
    };
    reader.commands()?;
    if reader.depth != 0 {
        return Err("a `{` block is not closed".into());
    }
    Ok(())
}

struct Reader {
    chars: Vec<char>,
    at: usize,
    depth: usize,
}

impl Reader {
    fn peek(&self) -> Option<char> {
        self.chars.get(self.at).copied()
    }

    fn bump(&mut self) -> Option<char> {
        let c = self.peek();
        self.at += usize::from(c.is_some());
        c
    }

    fn blanks(&mut self) {
        while matches!(self.peek(), Some(' ' | '\t')) {
            self.at += 1;
        }
    }

    fn commands(&mut self) -> Result<(), String> {
        loop {
            while matches!(self.peek(), Some(' ' | '\t' | '\n' | ';')) {
                self.at += 1;
            }
            if self.peek().is_none() {
                return Ok(());
            }
            self.command()?;
        }
    }

    fn command(&mut self) -> Result<(), String> {
        if self.peek() == Some('#') {
            // GNU compile.c reads a comment to the line break, with no
            // escape: a `\` before it does not carry the comment on (the
            // next line is a command sed runs).
            while self.bump().is_some_and(|c| c != '\n') {}
            return Ok(());
        }
        if self.address()? {
            self.blanks();
            if self.peek() == Some(',') {
                self.at += 1;
                self.blanks();
                if matches!(self.peek(), Some('+' | '~')) {
                    self.at += 1;
                    self.number()?;
                } else if !self.address()? {
                    return Err("an address range without its second address".into());
                }
            }
        }
        self.blanks();
        while self.peek() == Some('!') {
            self.at += 1;
            self.blanks();
        }
        let Some(command) = self.bump() else {
            return Err("an address without a command".into());
        };
        match command {
            '{' => {
                self.depth += 1;
                return Ok(());
            }
            '}' => {
                self.depth = self.depth.checked_sub(1).ok_or("a `}` that closes no block")?;
            }
            '=' | 'd' | 'D' | 'g' | 'G' | 'h' | 'H' | 'n' | 'N' | 'p' | 'P' | 'x' | 'z' | 'F' => {}
            'l' | 'L' | 'q' | 'Q' => {
                self.blanks();
                if self.peek().is_some_and(|c| c.is_ascii_digit()) {
                    self.number()?;
                }
            }
            ':' => {
                self.blanks();
                let label = self.label();
                if label.is_empty() {
                    return Err("`:` without a label".into());
                }
                return Ok(());
            }
            'b' | 't' | 'T' => {
                self.blanks();
                self.label();
            }
            'a' | 'i' | 'c' => return self.text(),
            's' => self.substitute()?,
            'y' => {
                let delimiter = self.delimiter('y')?;
                self.delimited(delimiter)?;
                self.delimited(delimiter)?;
            }
            'w' | 'W' => return Err(format!("`{command}` writes a file")),
            'r' | 'R' => return Err(format!("`{command}` reads a file the command does not name")),
            'e' => return Err("`e` runs a command".into()),
            'v' => {
                self.blanks();
                self.label();
            }
            other => return Err(format!("`{other}` is not a sed command the catalogue knows")),
        }
        self.end()
    }

    /// What may follow a command: blanks, then `;`, a line break, `}`, a
    /// comment or the end.
    fn end(&mut self) -> Result<(), String> {
        self.blanks();
        match self.peek() {
            None | Some(';' | '\n' | '}' | '#') => Ok(()),
            Some(other) => Err(format!("`{other}` after a command")),
        }
    }

    /// An address, if one starts here.
    fn address(&mut self) -> Result<bool, String> {
        match self.peek() {
            Some(c) if c.is_ascii_digit() => {
                self.number()?;
                if self.peek() == Some('~') {
                    self.at += 1;
                    self.number()?;
                }
            }
            Some('$') => self.at += 1,
            Some('/') => {
                self.at += 1;
                self.delimited('/')?;
                self.regex_flags();
            }
            Some('\\') => {
                self.at += 1;
                let delimiter = self.delimiter('\\')?;
                self.delimited(delimiter)?;
                self.regex_flags();
            }
            _ => return Ok(false),
        }
        Ok(true)
    }

    fn regex_flags(&mut self) {
        while matches!(self.peek(), Some('I' | 'M')) {
            self.at += 1;
        }
    }

    fn number(&mut self) -> Result<(), String> {
        let start = self.at;
        while self.peek().is_some_and(|c| c.is_ascii_digit()) {
            self.at += 1;
        }
        if self.at == start {
            return Err("a number was expected".into());
        }
        Ok(())
    }

    fn delimiter(&mut self, command: char) -> Result<char, String> {
        match self.bump() {
            Some('\n' | '\\') | None => Err(format!("`{command}` without a delimiter sed accepts")),
            Some(d) => Ok(d),
        }
    }

    /// Text up to an unescaped `delimiter` (consumed), as sed's
    /// `match_slash` reads it: a backslash escapes the next character.
    fn delimited(&mut self, delimiter: char) -> Result<(), String> {
        loop {
            match self.bump() {
                None => return Err(format!("an unterminated `{delimiter}` expression")),
                Some('\\') => {
                    if self.bump().is_none() {
                        return Err("a trailing backslash".into());
                    }
                }
                Some(c) if c == delimiter => return Ok(()),
                Some(_) => {}
            }
        }
    }

    fn substitute(&mut self) -> Result<(), String> {
        let delimiter = self.delimiter('s')?;
        self.delimited(delimiter)?;
        self.delimited(delimiter)?;
        loop {
            match self.peek() {
                Some('g' | 'p' | 'i' | 'I' | 'm' | 'M') => self.at += 1,
                Some(c) if c.is_ascii_digit() => self.number()?,
                Some('w') => return Err("`s///w` writes a file".into()),
                Some('e') => return Err("`s///e` runs the pattern space as a command".into()),
                _ => return Ok(()),
            }
        }
    }

    /// A label: up to a `;`, blank or line break.
    fn label(&mut self) -> String {
        let start = self.at;
        while self.peek().is_some_and(|c| !matches!(c, ';' | ' ' | '\t' | '\n')) {
            self.at += 1;
        }
        self.chars[start..self.at].iter().collect()
    }

    /// `a`, `i`, `c`: text to the end of the line (a backslash continues
    /// it on the next).
    fn text(&mut self) -> Result<(), String> {
        self.skip_line().map(|_| ())
    }

    fn skip_line(&mut self) -> Result<usize, String> {
        let start = self.at;
        while let Some(c) = self.bump() {
            match c {
                '\\' => {
                    self.bump();
                }
                '\n' => break,
                _ => {}
            }
        }
        Ok(self.at - start)
    }
}
