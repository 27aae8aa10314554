//! Why a node keeps a script from being allowed, in words: the one place
//! the reader's parts (words, plain segments, the walk) say it.

use tree_sitter::Node;

use super::Opaque;

pub(super) fn opaque(node: Node<'_>, why: impl Into<String>) -> Opaque {
    Opaque {
        why: why.into(),
        span: node.byte_range(),
    }
}

/// What a node the allow side refuses does, in a few words.
pub(super) fn refused(kind: &str) -> &'static str {
    match kind {
        "command_substitution" => "a command substitution",
        "process_substitution" => "a process substitution",
        "expansion" | "simple_expansion" => "a variable expansion",
        "arithmetic_expansion" => "an arithmetic expansion",
        "ansi_c_string" => "an ANSI-C quoted string ($'…')",
        "translated_string" => "a translated string ($\"…\")",
        "brace_expression" => "a brace expansion",
        "subshell" => "a subshell",
        "compound_statement" => "a { } group",
        "function_definition" => "a function definition",
        "variable_assignment" | "variable_assignments" => "a variable assignment",
        "declaration_command" | "unset_command" => "a variable declaration",
        "heredoc_redirect" => "a here-document",
        "herestring_redirect" => "a here-string",
        "test_command" => "a [[ ]] test",
        // A comment hides the rest of its line from a reader that does not
        // join lines exactly as bash does: never part of an allowed script.
        "comment" => "a comment (#)",
        "negated_command" => "a negated command (!)",
        "if_statement" | "while_statement" | "for_statement" | "c_style_for_statement" | "case_statement" => {
            "a control structure"
        }
        _ => "shell syntax that is not a plain command",
    }
}
