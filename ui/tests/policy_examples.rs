//! Rules that carry their own examples (issue 24, item 4): `tether check`
//! and policy loading both verify every example, each error at the
//! example's line and column.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod check_support;

use tether_console::files::policy::Policy;

fn write(text: &str) -> (tempfile::TempDir, std::path::PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("p.json");
    std::fs::write(&path, text).unwrap();
    (dir, path)
}

fn check(text: &str) -> (i32, String) {
    check_support::check("p.json", text)
}

const GOOD: &str = r#"{"rules": [
  {"id": "no-system-writes", "stage": "pre-execute",
   "match": {"tool": "write_*", "scope": "agent", "args": [{"pointer": "/path", "regex": "^/etc/"}]},
   "action": {"type": "deny", "reason": "system files"},
   "examples": {
     "match": [{"tool": "write_file", "arguments": {"path": "/etc/passwd"}, "scope": "agent", "agent_type": "Explore"}],
     "no_match": [
       {"tool": "write_file", "arguments": {"path": "/home/me/notes"}, "scope": "agent"},
       {"tool": "read_file", "arguments": {"path": "/etc/passwd"}, "scope": "agent"},
       {"tool": "write_file", "arguments": {"path": "/etc/passwd"}, "scope": "elsewhere"}
     ]
   }}
]}"#;

#[test]
fn a_rule_whose_examples_all_hold_passes() {
    let (code, out) = check(GOOD);
    assert_eq!((code, out.as_str()), (0, "p.json: ok (policy: 1 rule)\n"));
}

/// The same rule with a regex that is too narrow and one that is too wide.
const WRONG: &str = r#"{"rules": [
  {"id": "no-system-writes", "stage": "pre-execute",
   "match": {"tool": "write_*", "args": [{"pointer": "/path", "regex": "^/etc/passwd$"}]},
   "action": {"type": "deny", "reason": "system files"},
   "examples": {
     "match": [
       {"tool": "write_file", "arguments": {"path": "/etc/passwd"}},
       {"tool": "write_file", "arguments": {"path": "/etc/shadow"}}
     ],
     "no_match": [{"tool": "write_file", "arguments": {"path": "/home/me"}}]
   }},
  {"id": "reads", "stage": "pre-execute", "match": {"tool": "read_*"}, "action": {"type": "allow"},
   "examples": {"no_match": [
     {"tool": "write_file"},
     {"tool": "read_file", "arguments": {"path": "/etc/passwd"}}
   ]}}
]}"#;

#[test]
fn an_example_the_rule_gets_wrong_is_an_error_at_the_example() {
    let (code, out) = check(WRONG);
    assert_eq!(code, 1, "{out}");
    assert_eq!(
        out,
        "p.json:8:8: rule \"no-system-writes\" does not match this example, which it must match: its arguments fail {\"pointer\": \"/path\", \"regex\": \"^/etc/passwd$\"}\n\
         p.json:15:6: rule \"reads\" matches this example, which it must not match\n"
    );
}

#[test]
fn loading_a_policy_verifies_its_examples_too() {
    let (_dir, path) = write(WRONG);
    let errors = Policy::load(&path).unwrap_err();
    let at: Vec<(usize, usize)> = errors.iter().map(|e| (e.line, e.column)).collect();
    assert_eq!(at, [(8, 8), (15, 6)], "{errors:?}");
    let (_dir, path) = write(GOOD);
    assert!(Policy::load(&path).is_ok());
}

#[test]
fn examples_of_the_wrong_shape_are_reported_with_what_a_call_looks_like() {
    let (code, out) = check(
        r#"{"rules": [{"id": "r", "stage": "pre-execute", "action": {"type": "allow"},
  "examples": {"match": [{"name": "x"}]}}]}"#,
    );
    assert_eq!(code, 1, "{out}");
    assert!(
        out.contains("expected a call: {\"tool\": \"name\", \"arguments\": {..}}"),
        "{out}"
    );
}
