//! zsh's pattern language within one component, as `zsh.rs` matches it:
//! `*`, `?`, and with `EXTENDED_GLOB` `^` (anything but the rest) and
//! `x#` / `x##` (zero / one or more of a character or `?`).

use super::Shopts;

/// One piece of a pattern component.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Token {
    Char(char),
    Any,
    Star,
    /// A character (or `?`: `None`) repeated at least `min` times.
    Repeat(Option<char>, usize),
}

/// A component: what its start must match, and (after `^`) what the rest
/// must not.
#[derive(Debug)]
pub(super) struct Component {
    pub prefix: Vec<Token>,
    pub negated: Option<Vec<Token>>,
    /// Starts with a literal `.` (a hidden name needs one, or `GLOB_DOTS`).
    pub dot: bool,
}

impl Component {
    /// Whether a token counts characters (`?`, `?#`).
    pub(super) fn counts(&self) -> bool {
        self.prefix
            .iter()
            .chain(self.negated.iter().flatten())
            .any(|t| matches!(t, Token::Any | Token::Repeat(None, _)))
    }
}

/// Whether a name matches a component, zsh's rule for a leading `.` kept.
pub(super) fn component_matches(pattern: &Component, name: &str, shopts: Shopts) -> bool {
    if name.starts_with('.') && !shopts.dotglob && !pattern.dot {
        return false;
    }
    let chars: Vec<char> = name.chars().collect();
    let nocase = shopts.nocaseglob;
    match &pattern.negated {
        None => sequence(&pattern.prefix, &chars, nocase),
        Some(rest) => (0..=chars.len())
            .any(|at| sequence(&pattern.prefix, &chars[..at], nocase) && !sequence(rest, &chars[at..], nocase)),
    }
}

/// Whether `tokens` match all of `chars`.
pub(super) fn sequence(tokens: &[Token], chars: &[char], nocase: bool) -> bool {
    let same = |p: char, c: char| p == c || nocase && p.eq_ignore_ascii_case(&c);
    // reach[j]: the first k tokens can match chars[..j].
    let mut reach = vec![false; chars.len() + 1];
    reach[0] = true;
    for token in tokens {
        let mut next = vec![false; chars.len() + 1];
        for j in 0..=chars.len() {
            if !reach[j] {
                continue;
            }
            match *token {
                Token::Star => next[j..].iter_mut().for_each(|n| *n = true),
                Token::Any => {
                    if j < chars.len() {
                        next[j + 1] = true;
                    }
                }
                Token::Char(p) => {
                    if chars.get(j).is_some_and(|&c| same(p, c)) {
                        next[j + 1] = true;
                    }
                }
                Token::Repeat(p, min) => {
                    if min == 0 {
                        next[j] = true;
                    }
                    let mut k = j;
                    while let Some(&c) = chars.get(k) {
                        if !p.is_none_or(|p| same(p, c)) {
                            break;
                        }
                        k += 1;
                        if k - j >= min {
                            next[k] = true;
                        }
                    }
                }
            }
        }
        reach = next;
    }
    reach[chars.len()]
}

/// A component's tokens (`extended`: `^` and `#` are operators).
pub(super) fn tokens(component: &str, extended: bool) -> Result<Component, String> {
    let mut prefix = Vec::new();
    let mut negated: Option<Vec<Token>> = None;
    let mut chars = component.chars().peekable();
    let dot = component.starts_with('.') || component.starts_with("\\.");
    while let Some(c) = chars.next() {
        let list = negated.as_mut().unwrap_or(&mut prefix);
        match c {
            '\\' => list.push(Token::Char(chars.next().unwrap_or('\\'))),
            '*' => list.push(Token::Star),
            '?' => list.push(Token::Any),
            '[' | '(' | '|' | '<' => {
                return Err(format!("`{c}` in a pattern is not matched as zsh matches it"));
            }
            '^' if extended => {
                if negated.is_some() {
                    return Err("two `^` in one component".into());
                }
                negated = Some(Vec::new());
            }
            '#' if extended => {
                let min = if chars.peek() == Some(&'#') {
                    chars.next();
                    1
                } else {
                    0
                };
                if chars.peek() == Some(&'#') {
                    return Err("`###`".into());
                }
                match list.pop() {
                    Some(Token::Char(c)) => list.push(Token::Repeat(Some(c), min)),
                    Some(Token::Any) => list.push(Token::Repeat(None, min)),
                    _ => return Err("`#` after nothing it can repeat (zsh: a bad pattern)".into()),
                }
            }
            c => list.push(Token::Char(c)),
        }
    }
    Ok(Component { prefix, negated, dot })
}
