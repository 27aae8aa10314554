//! A tool that runs a command of its own making (Claude Code's `Grep` runs
//! `rg`), read as that command: a rule's `"as_command"` names the reading,
//! and its `command` condition — `@read-only`, `@secret`, patterns — then
//! judges the argv the tool would run, exactly as it judges the same
//! command typed in a shell. Every argument of the call must be accounted
//! for: one the reading does not know, or of a shape it does not expect,
//! leaves a command no allow covers.

use serde_json::{Map, Value};

use crate::shell::{self, Script};

/// A tool's arguments read as the command the tool runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AsCommand {
    /// Claude Code's `Grep` tool: the `rg` argv it builds (2.1.197 and
    /// 2.1.332 read the same arguments; see [`claude_code_grep`]).
    ClaudeCodeGrep,
}

impl AsCommand {
    pub const ALL: [AsCommand; 1] = [AsCommand::ClaudeCodeGrep];

    /// The name a policy writes (`"as_command": "claude-code-grep"`).
    pub fn name(self) -> &'static str {
        match self {
            AsCommand::ClaudeCodeGrep => "claude-code-grep",
        }
    }

    /// The reading a policy names.
    pub fn named(name: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|a| a.name() == name)
    }

    /// The tool whose calls this reads, for messages.
    pub fn tool(self) -> &'static str {
        match self {
            AsCommand::ClaudeCodeGrep => "Grep",
        }
    }

    /// The argv the tool runs for `arguments`, or why the call cannot be
    /// read as one.
    pub fn argv(self, arguments: &Value) -> Result<Vec<String>, String> {
        match self {
            AsCommand::ClaudeCodeGrep => claude_code_grep(arguments),
        }
    }

    /// The call as a script for a `command` condition: the argv as one
    /// plain command (no shell reads its words), or a script no allow
    /// covers, naming what could not be read.
    pub fn script(self, arguments: &Value) -> Script {
        match self.argv(arguments) {
            Ok(argv) => Script::argv(&argv),
            Err(why) => Script::opaque(format!("a {} call {why}", self.tool()), Vec::new()),
        }
    }

    /// In words, for an ask's reason: the command the call runs.
    pub fn describe(self, arguments: &Value) -> String {
        match self.argv(arguments) {
            Ok(argv) => format!("{} runs `{}`", self.tool(), shell::join(&argv)),
            Err(why) => format!("this {} call {why}", self.tool()),
        }
    }
}

/// The directories Claude Code keeps every search out of (`--glob !DIR`).
const VCS_DIRS: [&str; 6] = [".git", ".svn", ".hg", ".bzr", ".jj", ".sl"];

/// Claude Code's `Grep` as the `rg` argv it runs, read from its binary
/// (the tool's `call`): `rg --hidden --glob !.git … --max-columns 500`,
/// `-U --multiline-dotall` for `multiline`, `-i`, `-l` (files_with_matches,
/// the default) or `-c -H` (count), for content `-n`, `-o`, and `-C N` (from
/// `context`, else `-C`) or `-B N`/`-A N`, the pattern (after `-e` when it
/// starts with `-`), `--type TYPE`, then `--glob PART` for each part of
/// `glob` (split at blanks, and at commas outside braces), and `path` last.
/// 2.1.332 adds `--no-follow` (ripgrep's default) and `--json`/`--null`
/// (the output's format), which change nothing it reads, and its own Read
/// deny rules as more `!` globs, which only narrow it. `head_limit` and
/// `offset` cut the output Claude Code shows; they change nothing rg reads.
fn claude_code_grep(arguments: &Value) -> Result<Vec<String>, String> {
    let args = arguments.as_object().ok_or("has arguments that are not an object")?;
    let known = [
        "pattern",
        "path",
        "glob",
        "type",
        "output_mode",
        "-B",
        "-A",
        "-C",
        "context",
        "-n",
        "-i",
        "-o",
        "head_limit",
        "offset",
        "multiline",
    ];
    if let Some(unknown) = args.keys().find(|k| !known.contains(&k.as_str())) {
        return Err(format!(
            "has a parameter `{unknown}` Tether does not know: what it makes the search read is not known"
        ));
    }
    let pattern = text(args, "pattern")?.ok_or("has no pattern")?;
    let mode = text(args, "output_mode")?.unwrap_or("files_with_matches");
    if !["content", "files_with_matches", "count"].contains(&mode) {
        return Err(format!("has an output_mode `{mode}` Tether does not know"));
    }
    let content = mode == "content";
    let (before, after, short_c, context) = (
        number(args, "-B")?,
        number(args, "-A")?,
        number(args, "-C")?,
        number(args, "context")?,
    );
    let (_numbered, insensitive, only, multiline) = (
        flag(args, "-n")?,
        flag(args, "-i")?,
        flag(args, "-o")?,
        flag(args, "multiline")?,
    );
    number(args, "head_limit")?;
    number(args, "offset")?;
    let mut argv: Vec<String> = vec!["rg".into(), "--hidden".into()];
    for dir in VCS_DIRS {
        argv.extend(["--glob".into(), format!("!{dir}")]);
    }
    argv.extend(["--max-columns".into(), "500".into()]);
    if multiline {
        argv.extend(["-U".into(), "--multiline-dotall".into()]);
    }
    if insensitive {
        argv.push("-i".into());
    }
    match mode {
        "files_with_matches" => argv.push("-l".into()),
        "count" => argv.extend(["-c".into(), "-H".into()]),
        _ => {}
    }
    if content {
        // 2.1.197 passes -n unless `-n: false`; 2.1.332 always: the same reads.
        argv.push("-n".into());
        if only {
            argv.push("-o".into());
        }
        match context.or(short_c) {
            Some(n) => argv.extend(["-C".into(), n.to_string()]),
            None => {
                if let Some(n) = before {
                    argv.extend(["-B".into(), n.to_string()]);
                }
                if let Some(n) = after {
                    argv.extend(["-A".into(), n.to_string()]);
                }
            }
        }
    }
    if pattern.starts_with('-') {
        argv.push("-e".into());
    }
    argv.push(pattern.to_owned());
    if let Some(kind) = text(args, "type")?.filter(|t| !t.is_empty()) {
        argv.extend(["--type".into(), kind.to_owned()]);
    }
    for part in globs(text(args, "glob")?.unwrap_or_default()) {
        argv.extend(["--glob".into(), part.to_owned()]);
    }
    if let Some(path) = text(args, "path")?.filter(|p| !p.is_empty()) {
        argv.push(path.to_owned());
    }
    Ok(argv)
}

/// The parts of Claude Code's `glob`: split at blanks, and a part without
/// a brace pair split again at commas, empty parts dropped.
fn globs(glob: &str) -> Vec<&str> {
    glob.split_whitespace()
        .flat_map(|part| {
            if part.contains('{') && part.contains('}') {
                vec![part]
            } else {
                part.split(',').filter(|p| !p.is_empty()).collect()
            }
        })
        .collect()
}

fn text<'a>(args: &'a Map<String, Value>, key: &str) -> Result<Option<&'a str>, String> {
    match args.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(s)) => Ok(Some(s)),
        Some(other) => Err(format!("has a `{key}` that is not text ({other})")),
    }
}

fn number(args: &Map<String, Value>, key: &str) -> Result<Option<u64>, String> {
    match args.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(v) => v
            .as_u64()
            .map(Some)
            .ok_or_else(|| format!("has a `{key}` that is not a whole number ({v})")),
    }
}

fn flag(args: &Map<String, Value>, key: &str) -> Result<bool, String> {
    match args.get(key) {
        None | Some(Value::Null) => Ok(false),
        Some(Value::Bool(b)) => Ok(*b),
        Some(other) => Err(format!("has a `{key}` that is not true or false ({other})")),
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn argv(arguments: Value) -> String {
        shell::join(&AsCommand::ClaudeCodeGrep.argv(&arguments).unwrap())
    }

    const HEAD: &str =
        "rg --hidden --glob !.git --glob !.svn --glob !.hg --glob !.bzr --glob !.jj --glob !.sl --max-columns 500";

    #[test]
    fn grep_is_the_rg_argv_claude_code_builds() {
        assert_eq!(
            argv(json!({"pattern": "fn main", "path": "src"})),
            format!("{HEAD} -l 'fn main' src")
        );
        assert_eq!(
            argv(json!({"pattern": "API_KEY", "glob": ".env", "output_mode": "content"})),
            format!("{HEAD} -n API_KEY --glob .env")
        );
        assert_eq!(
            argv(
                json!({"pattern": "-x", "glob": "*.{ts,tsx} a,b", "type": "rust", "output_mode": "count",
                "-i": true, "multiline": true, "head_limit": 5, "offset": 2})
            ),
            format!("{HEAD} -U --multiline-dotall -i -c -H -e -x --type rust --glob '*.{{ts,tsx}}' --glob a --glob b")
        );
        assert_eq!(
            argv(json!({"pattern": "x", "output_mode": "content", "-B": 1, "-A": 2, "-o": true, "-n": false})),
            format!("{HEAD} -n -o -B 1 -A 2 x")
        );
        assert_eq!(
            argv(json!({"pattern": "x", "output_mode": "content", "-C": 3, "context": 4})),
            format!("{HEAD} -n -C 4 x")
        );
        // Context applies to content only, as Claude Code ignores it otherwise.
        assert_eq!(argv(json!({"pattern": "x", "-C": 3})), format!("{HEAD} -l x"));
    }

    #[test]
    fn an_argument_not_accounted_for_is_no_command() {
        for arguments in [
            json!({"pattern": "x", "follow": true}),
            json!({"pattern": "x", "output_mode": "everything"}),
            json!({"pattern": "x", "-A": "3; rm"}),
            json!({"pattern": "x", "-i": "yes"}),
            json!({"pattern": 7}),
            json!({"path": "src"}),
            json!(["x"]),
        ] {
            let script = AsCommand::ClaudeCodeGrep.script(&arguments);
            assert!(script.segments.is_err(), "{arguments}");
        }
    }
}
