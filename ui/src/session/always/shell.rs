//! Shell commands as an "approve always" rule sees them: the words a real
//! shell-words parser finds, and whether the command does more than run one
//! program (then no prefix rule may ever cover it).

use serde_json::Value;

/// Tools whose calls run a shell command (the coding agents' own names).
const SHELL_TOOLS: &[&str] = &["bash", "shell", "exec_command", "run_shell_command", "local_shell"];

/// Programs that run their arguments as another command: a prefix rule on
/// them would approve anything, so none is offered.
const WRAPPERS: &[&str] = &[
    "sudo", "doas", "su", "env", "sh", "bash", "zsh", "dash", "fish", "ksh", "eval", "exec", "xargs", "nohup", "time",
    "timeout", "nice", "command", "builtin", "ssh", "watch", "parallel",
];

/// A shell tool's command, as found in its arguments.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Command {
    /// One program and its words.
    Simple(Vec<String>),
    /// Chains, pipes, substitutions, redirections, or text that does not
    /// parse: asked every time, whatever prefix rule exists.
    Compound,
}

/// Whether a tool runs shell commands.
pub fn is_shell_tool(tool: &str) -> bool {
    SHELL_TOOLS.iter().any(|t| t.eq_ignore_ascii_case(tool))
}

/// Where a built-in shell tool's command may be, in the order looked at.
const BUILT_IN_POINTERS: [&str; 2] = ["/command", "/cmd"];

/// A built-in shell tool's command: the first of its command arguments
/// that holds one, as a JSON pointer, and the command.
pub fn command_of(arguments: &Value) -> Option<(&'static str, Command)> {
    BUILT_IN_POINTERS
        .into_iter()
        .find_map(|pointer| arguments.pointer(pointer).and_then(parse).map(|c| (pointer, c)))
}

/// The command of a call of `tool`, read at `pointer`. For a built-in shell
/// tool at one of its own pointers, the pointer must be the one
/// [`command_of`] picks: a call holding another command argument too is
/// read as that one, so a rule on `cmd` never approves what `command` runs.
pub fn command_at(tool: &str, arguments: &Value, pointer: &str) -> Option<Command> {
    if is_shell_tool(tool) && BUILT_IN_POINTERS.contains(&pointer) {
        return command_of(arguments)
            .filter(|(found, _)| *found == pointer)
            .map(|(_, c)| c);
    }
    arguments.pointer(pointer).and_then(parse)
}

/// A command given as a string or an argv array.
pub fn parse(value: &Value) -> Option<Command> {
    match value {
        Value::String(text) => Some(parse_text(text)),
        Value::Array(items) => {
            let argv: Vec<String> = items
                .iter()
                .map(|v| v.as_str().map(str::to_owned))
                .collect::<Option<_>>()?;
            // `["bash", "-lc", "git status"]`: the script is what runs.
            match argv.as_slice() {
                [shell, flag, script] if is_shell(shell) && flag.starts_with('-') && flag.ends_with('c') => {
                    Some(parse_text(script))
                }
                [] => None,
                _ => Some(Command::Simple(argv)),
            }
        }
        _ => None,
    }
}

fn is_shell(program: &str) -> bool {
    let name = program.rsplit('/').next().unwrap_or(program);
    ["sh", "bash", "zsh", "dash"].contains(&name)
}

/// A command is compound if it holds anything a shell treats as more than
/// words: `;`, `&`, `|`, `<`, `>`, `$(`, backticks, a line break. This is
/// checked on the raw text, quotes included: a quoted `;` is asked too,
/// which costs a prompt and never approves what was not seen.
pub fn parse_text(text: &str) -> Command {
    let compound = text.contains(['\n', '\r', ';', '&', '|', '<', '>', '`']) || text.contains("$(");
    if compound {
        return Command::Compound;
    }
    match shell_words::split(text) {
        Ok(words) if !words.is_empty() => Command::Simple(words),
        _ => Command::Compound,
    }
}

/// The prefix a rule offers for a command: the program and its subcommand
/// (`git push`, `npm test`); when the second word is a flag or a path, the
/// whole command (more words may follow it). None for a wrapper or a
/// leading variable assignment.
pub fn prefix_of(words: &[String]) -> Option<Vec<String>> {
    let program = words.first()?;
    let name = program.rsplit('/').next().unwrap_or(program);
    if program.contains('=') || WRAPPERS.contains(&name) {
        return None;
    }
    match words.get(1) {
        None => Some(vec![program.clone()]),
        Some(sub)
            if sub.chars().next().is_some_and(|c| c.is_ascii_alphanumeric()) && !sub.contains(['/', '=', '.']) =>
        {
            Some(words[..2].to_vec())
        }
        Some(_) => Some(words.to_vec()),
    }
}

/// Whether a command's words start with `prefix` and it is not compound.
pub fn covered(command: &Command, prefix: &[String]) -> bool {
    match command {
        Command::Simple(words) => words.starts_with(prefix),
        Command::Compound => false,
    }
}

/// Words joined back for display, quoted where a shell would need it.
pub fn join(words: &[String]) -> String {
    shell_words::join(words)
}
