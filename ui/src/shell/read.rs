//! Where a tool keeps its shell command, and reading it from there.

use std::rc::Rc;

use serde_json::Value;

use super::{Script, parse, unwrap, zsh};

/// Tools whose calls run a shell command (the coding agents' own names).
const SHELL_TOOLS: &[&str] = &["bash", "shell", "exec_command", "run_shell_command", "local_shell"];

/// Where a built-in shell tool's command may be.
pub const BUILT_IN_POINTERS: [&str; 2] = ["/command", "/cmd"];

/// Whether a tool is one of the agents' built-in shell tools.
pub fn is_shell_tool(tool: &str) -> bool {
    SHELL_TOOLS.iter().any(|t| t.eq_ignore_ascii_case(tool))
}

/// A built-in shell tool's command and the pointer it was read at. A call
/// holding both `command` and `cmd` that differ is opaque (no allow covers
/// it) and every command of both is found (any deny sees them).
pub fn command_of(arguments: &Value) -> Option<(&'static str, Script)> {
    built_in(None, arguments).map(|(pointer, script)| (pointer, Rc::unwrap_or_clone(script)))
}

/// The command of a call of `tool` read at `pointer`: a built-in shell
/// tool at one of its own pointers is read as [`command_of`] reads it, so a
/// rule on `cmd` never approves what `command` runs.
pub fn command_at(tool: &str, arguments: &Value, pointer: &str) -> Option<Script> {
    at(tool, arguments, pointer).map(Rc::unwrap_or_clone)
}

/// The command a call runs, for deciding it: at `pointer` when the policy
/// marks the tool ([`command_at`]), else a built-in shell tool's
/// ([`command_of`]). Every rule of a policy asks for the same call's
/// command: it is read once and shared, never copied.
pub fn shared_command(tool: &str, arguments: &Value, pointer: Option<&str>) -> Option<Rc<Script>> {
    match pointer {
        Some(pointer) => at(tool, arguments, pointer),
        None if is_shell_tool(tool) => built_in(Some(tool), arguments).map(|(_, script)| script),
        None => None,
    }
}

/// `tool`: the shell tool called, when known (its own arguments are then
/// checked: see [`known_arguments`]).
fn built_in(tool: Option<&str>, arguments: &Value) -> Option<(&'static str, Rc<Script>)> {
    // A command argument that is there but holds no command (a number, an
    // array of non-strings) may still be what the tool runs: opaque.
    let [first, second] = BUILT_IN_POINTERS.map(|p| {
        arguments.pointer(p).map(|v| {
            shared(v).unwrap_or_else(|| {
                Rc::new(Script::opaque(
                    format!("a {} that is not a command", &p[1..]),
                    Vec::new(),
                ))
            })
        })
    });
    let read = match (first, second) {
        (Some(a), Some(b)) if a != b => {
            let beyond_depth = a.beyond_depth || b.beyond_depth;
            let found = a.found.iter().chain(&b.found).cloned().collect();
            let mut both = Script::opaque("two different commands in one call (command and cmd)", found);
            both.beyond_depth = beyond_depth;
            both.reads = a.reads.iter().chain(&b.reads).cloned().collect();
            Some((BUILT_IN_POINTERS[0], Rc::new(both)))
        }
        (Some(a), _) => Some((BUILT_IN_POINTERS[0], a)),
        (None, Some(b)) => Some((BUILT_IN_POINTERS[1], b)),
        (None, None) => None,
    };
    read.map(
        |(pointer, script)| match how_run(arguments).and_then(|()| known_arguments(tool, arguments)) {
            Ok(()) => (pointer, script),
            // Still read for denies: its commands are found.
            Err(why) => {
                let mut opaque = Script::opaque(why, script.found.clone());
                opaque.beyond_depth = script.beyond_depth;
                opaque.reads = script.reads.clone();
                (pointer, Rc::new(opaque))
            }
        },
    )
}

/// The directories a `shell` argument may name its shell in (the system's,
/// never the project's).
const SHELL_DIRS: [&str; 4] = ["/bin", "/usr/bin", "/usr/local/bin", "/opt/homebrew/bin"];

/// Whether the arguments that say how a command runs leave it read as the
/// shell grammar reads it (Codex's `exec_command` takes `shell`, `tty` and
/// `login` beside `cmd`): `shell` absent or a system bash, sh or zsh (each
/// command is judged as bash and zsh both read it), no `tty` (on a PTY
/// `git log` and `man` start a pager, which later input drives), `login`
/// true or false.
fn how_run(arguments: &Value) -> Result<(), String> {
    if let Some(shell) = arguments.get("shell").filter(|v| !v.is_null()) {
        let Some(path) = shell.as_str() else {
            return Err(format!("a shell argument that is not a program name ({shell})"));
        };
        let (dir, name) = match path.rsplit_once('/') {
            Some((dir, name)) => (Some(dir), name),
            None => (None, path),
        };
        let system = dir.is_none_or(|d| SHELL_DIRS.contains(&d));
        if !system || !["bash", "sh", "zsh"].contains(&name) {
            return Err(format!(
                "the command runs under the shell {path:?}, which Tether does not read (only a system bash, sh or zsh)"
            ));
        }
    }
    match arguments.get("tty") {
        None | Some(Value::Null | Value::Bool(false)) => {}
        Some(Value::Bool(true)) => {
            return Err("the command runs on a terminal (tty), where a pager it starts (git log, man) takes later input as commands".into());
        }
        Some(other) => return Err(format!("a tty argument that is not true or false ({other})")),
    }
    match arguments.get("login") {
        None | Some(Value::Null | Value::Bool(_)) => Ok(()),
        Some(other) => Err(format!("a login argument that is not true or false ({other})")),
    }
}

/// The arguments Codex's `exec_command` takes besides its command, from
/// the tool schema Codex 0.171.0 sends its model (`cmd` required,
/// `additionalProperties: false`), and `with_escalated_permissions`, an
/// earlier Codex's spelling of `sandbox_permissions`. Each either says how
/// the command runs, read by [`how_run`] (`shell`, `tty`, `login`) or
/// where (`workdir`, read by the session), or changes nothing the command
/// does (how long to wait for output, how much of it to keep, the sandbox
/// Codex runs it in and why, a prefix to approve).
const EXEC_COMMAND_ARGUMENTS: &[&str] = &[
    "cmd",
    "command",
    "workdir",
    "shell",
    "tty",
    "login",
    "yield_time_ms",
    "max_output_tokens",
    "sandbox_permissions",
    "with_escalated_permissions",
    "justification",
    "prefix_rule",
];

/// Whether every argument of an `exec_command` call is one this reader
/// knows: another (an `env`, a `stdin`, an argument a later Codex adds)
/// may change what runs, so the call is covered by no allow. Other shell
/// tools' arguments are not listed here.
fn known_arguments(tool: Option<&str>, arguments: &Value) -> Result<(), String> {
    if !tool.is_some_and(|t| t.eq_ignore_ascii_case("exec_command")) {
        return Ok(());
    }
    let Some(object) = arguments.as_object() else {
        return Ok(());
    };
    match object.keys().find(|k| !EXEC_COMMAND_ARGUMENTS.contains(&k.as_str())) {
        None => Ok(()),
        Some(unknown) => Err(format!(
            "an exec_command argument {unknown:?} this reader does not know, which may change what runs"
        )),
    }
}

fn at(tool: &str, arguments: &Value, pointer: &str) -> Option<Rc<Script>> {
    if is_shell_tool(tool) && BUILT_IN_POINTERS.contains(&pointer) {
        return built_in(Some(tool), arguments).map(|(_, script)| script);
    }
    arguments.pointer(pointer).and_then(shared)
}

/// A command given as a string or an argv array of strings; `bash -lc
/// SCRIPT` (either way) is SCRIPT, its shell's own commands found too.
fn shared(value: &Value) -> Option<Rc<Script>> {
    match value {
        Value::String(text) => {
            let script = zsh::also(text, parse::cached(text));
            // Only `SHELL -c SCRIPT`, three words, is unwrapped: no other
            // command's words are copied to check.
            let wrapped = script.single().filter(|s| s.words.len() == 3).map(|s| s.values());
            match wrapped.as_deref().and_then(unwrap::shell_script) {
                Some(mut inner) => {
                    inner.found.extend(script.found.iter().cloned());
                    inner.beyond_depth |= script.beyond_depth;
                    inner.reads.extend(script.reads.iter().cloned());
                    Some(Rc::new(inner))
                }
                None => Some(script),
            }
        }
        Value::Array(items) => {
            let argv: Vec<String> = items
                .iter()
                .map(|v| v.as_str().map(str::to_owned))
                .collect::<Option<_>>()?;
            (!argv.is_empty()).then(|| Rc::new(Script::argv(&argv)))
        }
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn covered(arguments: Value) -> Result<(), String> {
        let script = shared_command("exec_command", &arguments, None).ok_or("no command")?;
        script.segments.as_ref().map(|_| ()).map_err(|o| o.why.clone())
    }

    #[test]
    fn a_command_run_by_another_shell_or_on_a_terminal_is_not_plain() {
        // Review finding N16's calls: fish reads this text otherwise, zsh's
        // hash makes cat run rm, a PTY lets a pager take later input.
        for (arguments, said) in [
            (
                json!({"cmd": "echo 'a\\'b' (touch /tmp/x) ''\\'", "shell": "/usr/bin/fish"}),
                "fish",
            ),
            (
                json!({"cmd": "cat README.md", "shell": "/tmp/p/scripts/deploy.sh"}),
                "deploy.sh",
            ),
            (json!({"cmd": "cat README.md", "shell": "./bash"}), "./bash"),
            (json!({"cmd": "cat README.md", "shell": ["bash"]}), "not a program name"),
            (json!({"cmd": "git log", "tty": true}), "tty"),
            (json!({"cmd": "git log", "tty": "yes"}), "tty"),
            (json!({"cmd": "git log", "login": "yes"}), "login"),
            // An argument no reader here knows may change what runs.
            (json!({"cmd": "git log", "env": {"GIT_PAGER": "sh"}}), "\"env\""),
            (json!({"cmd": "git log", "stdin": "x", "yield_time_ms": 5}), "\"stdin\""),
        ] {
            let why = covered(arguments.clone()).unwrap_err();
            assert!(why.contains(said), "{arguments}: {why}");
        }
        // A deny still finds the programs of the command.
        let script = shared_command("exec_command", &json!({"cmd": "rm -rf x", "shell": "fish"}), None).unwrap();
        assert!(script.found.iter().any(|c| c[0] == "rm"));
    }

    #[test]
    fn a_system_bash_sh_or_zsh_and_login_either_way_stay_plain() {
        for arguments in [
            json!({"cmd": "git status"}),
            json!({"cmd": "git status", "shell": "/bin/bash", "login": true}),
            json!({"cmd": "git status", "shell": "zsh", "login": false, "tty": false}),
            json!({"cmd": "git status", "shell": "/usr/bin/sh", "workdir": "src", "yield_time_ms": 1000}),
            json!({"cmd": "git status", "max_output_tokens": 10, "sandbox_permissions": "require_escalated",
                   "justification": "x", "prefix_rule": ["git", "status"], "with_escalated_permissions": true}),
        ] {
            assert_eq!(covered(arguments.clone()), Ok(()), "{arguments}");
        }
        // Another shell tool's own arguments are not this list's.
        let bash = shared_command("Bash", &json!({"command": "git status", "description": "x"}), None).unwrap();
        assert!(bash.segments.is_ok());
    }
}
