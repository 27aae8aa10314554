//! The command rule "approve always" offers for a shell call: read with the
//! shell module's bash grammar, so it covers exactly what a kept `command`
//! pattern covers.

/// Programs that run their arguments as another command: a rule on them
/// would approve anything, so none is offered.
const WRAPPERS: &[&str] = &[
    "sudo", "doas", "su", "env", "sh", "bash", "zsh", "dash", "fish", "ksh", "eval", "exec", "xargs", "nohup", "time",
    "timeout", "nice", "command", "builtin", "ssh", "watch", "parallel", "source", ".", "stdbuf",
];

/// Programs whose second word is a file or a script, never a subcommand:
/// `rm build` must not become "rm build, then anything".
const EXACT_ONLY: &[&str] = &[
    "rm", "mv", "cp", "ln", "find", "chmod", "chown", "chgrp", "dd", "sed", "awk", "perl", "python", "python3", "node",
    "ruby", "tee", "truncate", "shred", "kill", "pkill", "killall", "curl", "wget",
];

/// The words a rule offers for a command, and whether further words may
/// follow them: the program and its subcommand (`git push …`, `npm test …`);
/// when the second word is a flag or a path, exactly this command (approving
/// `find . -name x` must not approve `find . -name x -delete`). None for a
/// wrapper, or a command with a word a written pattern would read as a glob.
pub fn prefix_of(words: &[String]) -> Option<(Vec<String>, bool)> {
    let program = words.first()?;
    if WRAPPERS.contains(&crate::shell::basename(program)) || words.iter().any(|w| w.contains('*')) {
        return None;
    }
    if EXACT_ONLY.contains(&crate::shell::basename(program)) {
        return Some((words.to_vec(), false));
    }
    match words.get(1) {
        None => Some((vec![program.clone()], true)),
        Some(sub)
            if sub.chars().next().is_some_and(|c| c.is_ascii_alphanumeric()) && !sub.contains(['/', '=', '.']) =>
        {
            Some((words[..2].to_vec(), true))
        }
        Some(_) => Some((words.to_vec(), false)),
    }
}
