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
    built_in(arguments).map(|(pointer, script)| (pointer, Rc::unwrap_or_clone(script)))
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
        None if is_shell_tool(tool) => built_in(arguments).map(|(_, script)| script),
        None => None,
    }
}

fn built_in(arguments: &Value) -> Option<(&'static str, Rc<Script>)> {
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
    match (first, second) {
        (Some(a), Some(b)) if a != b => {
            let beyond_depth = a.beyond_depth || b.beyond_depth;
            let found = a.found.iter().chain(&b.found).cloned().collect();
            let mut both = Script::opaque("two different commands in one call (command and cmd)", found);
            both.beyond_depth = beyond_depth;
            Some((BUILT_IN_POINTERS[0], Rc::new(both)))
        }
        (Some(a), _) => Some((BUILT_IN_POINTERS[0], a)),
        (None, Some(b)) => Some((BUILT_IN_POINTERS[1], b)),
        (None, None) => None,
    }
}

fn at(tool: &str, arguments: &Value, pointer: &str) -> Option<Rc<Script>> {
    if is_shell_tool(tool) && BUILT_IN_POINTERS.contains(&pointer) {
        return built_in(arguments).map(|(_, script)| script);
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
