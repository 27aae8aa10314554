//! Bash's pathname expansion of one word in one directory (the oracle's own
//! model, to compare a reader's `Word::pattern` with what bash passed).

/// The names of `files` that `pattern` matches, sorted as bash sorts them
/// under `LC_ALL=C` (empty: no match, bash passes the word as it is), or
/// `None` when the pattern is beyond this model (a `/`, a character class).
pub fn expand(pattern: &str, files: &[&str]) -> Option<Vec<String>> {
    if pattern.contains('/') || pattern.contains("[:") || pattern.contains("[=") || pattern.contains("[.") {
        return None;
    }
    let pattern: Vec<char> = pattern.chars().collect();
    // A leading dot must be matched by a dot written in the pattern.
    let dot = matches!(pattern.as_slice(), ['.', ..] | ['\\', '.', ..]);
    let mut matched: Vec<String> = files
        .iter()
        .filter(|f| dot || !f.starts_with('.'))
        .filter(|f| matches(&pattern, &f.chars().collect::<Vec<_>>()))
        .map(|f| (*f).to_owned())
        .collect();
    matched.sort();
    Some(matched)
}

fn matches(pattern: &[char], name: &[char]) -> bool {
    match pattern {
        [] => name.is_empty(),
        ['*', rest @ ..] => (0..=name.len()).any(|skip| matches(rest, &name[skip..])),
        ['?', rest @ ..] => !name.is_empty() && matches(rest, &name[1..]),
        ['\\', c, rest @ ..] => name.first() == Some(c) && matches(rest, &name[1..]),
        ['[', rest @ ..] => match bracket(rest) {
            Some((set, after)) => name.first().is_some_and(|c| set(*c)) && matches(after, &name[1..]),
            // An unclosed `[` stands for itself.
            None => name.first() == Some(&'[') && matches(rest, &name[1..]),
        },
        [c, rest @ ..] => name.first() == Some(c) && matches(rest, &name[1..]),
    }
}

type Set<'a> = Box<dyn Fn(char) -> bool + 'a>;

/// A bracket expression after its `[`: what it matches and the pattern
/// after its `]`, or `None` when it does not close.
fn bracket(pattern: &[char]) -> Option<(Set<'_>, &[char])> {
    let (negated, body) = match pattern {
        ['!' | '^', rest @ ..] => (true, rest),
        _ => (false, pattern),
    };
    let mut items: Vec<(char, char)> = Vec::new();
    let mut i = 0;
    loop {
        let c = *body.get(i)?;
        if c == ']' && i > 0 {
            break;
        }
        let (low, next) = if c == '\\' {
            (*body.get(i + 1)?, i + 2)
        } else {
            (c, i + 1)
        };
        if body.get(next) == Some(&'-') && body.get(next + 1).is_some_and(|c| *c != ']') {
            let high_at = next + 1;
            let (high, after) = if body[high_at] == '\\' {
                (*body.get(high_at + 1)?, high_at + 2)
            } else {
                (body[high_at], high_at + 1)
            };
            items.push((low, high));
            i = after;
        } else {
            items.push((low, low));
            i = next;
        }
    }
    let after = &body[i + 1..];
    Some((
        Box::new(move |c| items.iter().any(|(lo, hi)| (*lo..=*hi).contains(&c)) != negated),
        after,
    ))
}
