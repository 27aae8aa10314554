//! Commands read roughly from text the grammar could not parse, so that a
//! deny or an ask still sees them: the grammar's error recovery drops words
//! (`rm == x` is `rm` then an error), bash does not.

/// The commands of `text`, split at unquoted operators, quotes removed,
/// redirections and leading assignments left out.
pub(super) fn commands(text: &str) -> Vec<Vec<String>> {
    let mut commands = Vec::new();
    let mut words: Vec<String> = Vec::new();
    let mut word: Option<String> = None;
    let mut skip_next = false;
    let mut chars = text.chars().peekable();
    let end_word = |word: &mut Option<String>, words: &mut Vec<String>, skip: &mut bool| {
        if let Some(w) = word.take() {
            if std::mem::take(skip) {
                return;
            }
            let assignment = words.is_empty()
                && w.split_once('=').is_some_and(|(name, _)| {
                    !name.is_empty() && name.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_')
                });
            if !assignment {
                words.push(w);
            }
        }
    };
    while let Some(c) = chars.next() {
        match c {
            '\'' => {
                let w = word.get_or_insert_with(String::new);
                for q in chars.by_ref() {
                    if q == '\'' {
                        break;
                    }
                    w.push(q);
                }
            }
            '"' => {
                let w = word.get_or_insert_with(String::new);
                while let Some(q) = chars.next() {
                    match q {
                        '"' => break,
                        '\\' => w.extend(chars.next()),
                        _ => w.push(q),
                    }
                }
            }
            '\\' => match chars.next() {
                Some('\n') => {}
                Some(e) => word.get_or_insert_with(String::new).push(e),
                None => word.get_or_insert_with(String::new).push('\\'),
            },
            ' ' | '\t' => end_word(&mut word, &mut words, &mut skip_next),
            '<' | '>' => {
                // The descriptor before the operator and the target after it.
                if word.as_deref().is_some_and(|w| w.bytes().all(|b| b.is_ascii_digit())) {
                    word = None;
                }
                end_word(&mut word, &mut words, &mut skip_next);
                while chars.peek().is_some_and(|n| matches!(n, '<' | '>' | '&' | '|')) {
                    chars.next();
                }
                skip_next = true;
            }
            ';' | '&' | '|' | '\n' | '(' | ')' | '`' | '{' | '}' => {
                end_word(&mut word, &mut words, &mut skip_next);
                skip_next = false;
                if !words.is_empty() {
                    commands.push(std::mem::take(&mut words));
                }
            }
            '$' if chars.peek() == Some(&'(') => {
                end_word(&mut word, &mut words, &mut skip_next);
                if !words.is_empty() {
                    commands.push(std::mem::take(&mut words));
                }
            }
            _ => word.get_or_insert_with(String::new).push(c),
        }
    }
    end_word(&mut word, &mut words, &mut skip_next);
    if !words.is_empty() {
        commands.push(words);
    }
    // Reserved words open or close a compound command: the command after
    // them is what runs (`then rm x` is `rm x`).
    for words in &mut commands {
        let keywords = words.iter().take_while(|w| RESERVED.contains(&w.as_str())).count();
        words.drain(..keywords);
    }
    commands.retain(|words| !words.is_empty());
    commands
}

const RESERVED: &[&str] = &[
    "if", "then", "else", "elif", "fi", "do", "done", "while", "until", "for", "case", "esac", "in", "!", "{", "}",
    "time", "select", "function", "coproc",
];
