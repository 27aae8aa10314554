//! Reading JSON files with errors that name the file, line and column.
//!
//! Syntax is checked strictly by `serde_json`; positions of values inside a
//! valid document come from `jsonc-parser`'s AST (serde_json's `Value` keeps
//! none), so every later error — a failed shape check, a reference to a scope
//! that does not exist — can point at the exact spot.

use std::fmt;
use std::path::Path;

use jsonc_parser::ast::{ObjectPropName, Value as Node};
use jsonc_parser::common::Ranged;
use jsonc_parser::{CollectOptions, ParseOptions};
use serde_json::Value;

/// An error in a file, at a position.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FileError {
    /// The file as the user named it.
    pub path: String,
    /// 1-based line.
    pub line: usize,
    /// 1-based column, in characters.
    pub column: usize,
    /// What was wrong and what was expected.
    pub message: String,
}

impl fmt::Display for FileError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}:{}: {}", self.path, self.line, self.column, self.message)
    }
}

/// Several file errors, as one error for `anyhow`.
#[derive(Debug)]
pub struct FileErrors(pub Vec<FileError>);

impl fmt::Display for FileErrors {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, error) in self.0.iter().enumerate() {
            if i > 0 {
                writeln!(f)?;
            }
            write!(f, "{error}")?;
        }
        Ok(())
    }
}

impl std::error::Error for FileErrors {}

/// A JSON document with its text, for locating errors.
pub struct Document {
    pub path: String,
    pub text: String,
    pub value: Value,
}

/// A file's text, with the name it is shown by; a file that cannot be read
/// is an error at 1:1.
pub fn read_text(path: &Path) -> Result<(String, String), Vec<FileError>> {
    let shown = path.display().to_string();
    match std::fs::read_to_string(path) {
        Ok(text) => Ok((shown, text)),
        Err(e) => Err(vec![FileError {
            path: shown,
            line: 1,
            column: 1,
            message: format!("cannot read the file: {e}"),
        }]),
    }
}

/// Reads a journal's text, its errors placed like every other file's.
pub fn parse_journal(path: &str, text: &str) -> Result<tether_tools::journal::Journal, Vec<FileError>> {
    use tether_tools::journal::{Journal, JournalError};
    Journal::parse(text).map_err(|e| {
        let (line, column) = match &e {
            JournalError::Syntax { line, column, .. } => (*line, *column),
            JournalError::Shape { line, .. } => (*line, 1),
        };
        vec![FileError {
            path: path.to_owned(),
            line,
            column,
            message: format!("not a journal: {e}"),
        }]
    })
}

/// Deserializes a field that is there (even as `null`) to `Some`, so an
/// explicit `null` differs from a missing field.
pub fn present<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Option<Value>, D::Error> {
    <Value as serde::Deserialize>::deserialize(d).map(Some)
}

impl Document {
    /// Reads and parses a file. A syntax error is returned with its position.
    pub fn read(path: &Path) -> Result<Document, Vec<FileError>> {
        let (shown, text) = read_text(path)?;
        Self::parse(shown, text)
    }

    /// Parses text that came from `path`.
    pub fn parse(path: String, text: String) -> Result<Document, Vec<FileError>> {
        match serde_json::from_str::<Value>(&text) {
            Ok(value) => Ok(Document { path, text, value }),
            Err(e) => {
                let (line, column) = (e.line().max(1), e.column().max(1));
                let (column, message) = explain_syntax(&strip_position(&e.to_string()), &text, line, column);
                Err(vec![FileError {
                    path,
                    line,
                    column,
                    message: format!("invalid JSON: {message}"),
                }])
            }
        }
    }

    /// An error at the value a JSON pointer names (or the nearest existing
    /// ancestor of it).
    pub fn error_at(&self, pointer: &str, message: impl Into<String>) -> FileError {
        let offset = self.offset_of(pointer);
        let (line, column) = line_column(&self.text, offset);
        FileError {
            path: self.path.clone(),
            line,
            column,
            message: message.into(),
        }
    }

    fn offset_of(&self, pointer: &str) -> usize {
        let options = ParseOptions::default();
        let Ok(parsed) = jsonc_parser::parse_to_ast(&self.text, &CollectOptions::default(), &options) else {
            return 0;
        };
        let Some(mut node) = parsed.value.as_ref() else {
            return 0;
        };
        let mut offset = node.start();
        for segment in pointer_segments(pointer) {
            match node {
                Node::Object(object) => {
                    let Some(prop) = object.properties.iter().find(|p| prop_name(&p.name) == segment) else {
                        break;
                    };
                    // A property is pointed at by its name, where a reader looks.
                    offset = prop.start();
                    node = &prop.value;
                }
                Node::Array(array) => {
                    let Some(element) = segment.parse::<usize>().ok().and_then(|i| array.elements.get(i)) else {
                        break;
                    };
                    offset = element.start();
                    node = element;
                }
                _ => break,
            }
        }
        offset
    }
}

fn prop_name(name: &ObjectPropName<'_>) -> String {
    match name {
        ObjectPropName::String(s) => s.value.to_string(),
        ObjectPropName::Word(w) => w.value.to_string(),
    }
}

/// The unescaped segments of a JSON pointer (RFC 6901).
pub fn pointer_segments(pointer: &str) -> impl Iterator<Item = String> + '_ {
    pointer
        .split('/')
        .skip(1)
        .map(|s| s.replace("~1", "/").replace("~0", "~"))
}

/// Escapes one segment for a JSON pointer.
pub fn escape_segment(segment: &str) -> String {
    segment.replace('~', "~0").replace('/', "~1")
}

fn line_column(text: &str, offset: usize) -> (usize, usize) {
    let before = &text[..offset.min(text.len())];
    let line = before.matches('\n').count() + 1;
    let column = before.rsplit('\n').next().map_or(0, |l| l.chars().count()) + 1;
    (line, column)
}

/// serde_json's syntax messages in a user's words, and the column moved to
/// the start of a bare word it stumbled over (serde_json's column is the
/// byte past the first letter it rejected).
fn explain_syntax(message: &str, text: &str, line: usize, column: usize) -> (usize, String) {
    const A_VALUE: &str =
        "text in double quotes (\"like this\"), a number, true, false, null, an object {..} or a list [..]";
    match message {
        "expected ident" | "expected value" => {
            let row = text.lines().nth(line - 1).unwrap_or_default();
            let at = (column - 1).min(row.len());
            if !row.is_char_boundary(at) {
                return (column, format!("expected a value: {A_VALUE}"));
            }
            let is_word = |c: char| c.is_alphanumeric() || c == '_' || c == '-' || c == '.';
            let start = row[..at]
                .char_indices()
                .rfind(|(_, c)| !is_word(*c))
                .map_or(0, |(i, c)| i + c.len_utf8());
            let end = row[at..].find(|c: char| !is_word(c)).map_or(row.len(), |i| at + i);
            let word = row.get(start..end).unwrap_or_default();
            if word.is_empty() {
                return (column, format!("expected a value: {A_VALUE}"));
            }
            (
                row[..start].chars().count() + 1,
                format!("unexpected word {word}: expected a value, {A_VALUE}; text needs double quotes: \"{word}\""),
            )
        }
        "key must be a string" => (
            column,
            "expected a field name in double quotes, e.g. \"name\" (JSON has no single quotes and no bare names)"
                .to_owned(),
        ),
        other => (column, other.to_owned()),
    }
}

/// serde_json appends " at line L column C"; the position is reported separately.
fn strip_position(message: &str) -> String {
    match message.rfind(" at line ") {
        Some(i) => message[..i].to_owned(),
        None => message.to_owned(),
    }
}

/// A file format described by a JSON Schema: its shape is checked first,
/// every problem reported with its position, then the document is read
/// into its type.
pub struct Format {
    schema: Value,
    validator: Option<jsonschema::Validator>,
    what: &'static str,
}

impl Format {
    /// `schema` is the format's JSON Schema text; `what` names the format
    /// in messages ("scenario", "policy").
    pub fn new(schema: &str, what: &'static str) -> Self {
        let schema = serde_json::from_str(schema).unwrap_or(Value::Null);
        let validator = jsonschema::validator_for(&schema).ok();
        Self {
            schema,
            validator,
            what,
        }
    }

    /// The document as a `T`, or every place its shape is wrong.
    pub fn read<T: serde::de::DeserializeOwned>(&self, document: &Document) -> Result<T, Vec<FileError>> {
        let Some(validator) = &self.validator else {
            let message = format!("internal error: the {} format does not compile", self.what);
            return Err(vec![document.error_at("", message)]);
        };
        let shape = check_shape(document, &self.schema, validator);
        if !shape.is_empty() {
            return Err(shape);
        }
        serde_json::from_value(document.value.clone())
            .map_err(|e| vec![document.error_at("", format!("not a {}: {e}", self.what))])
    }
}

/// Checks a document against a format schema (JSON Schema), returning every
/// problem with its position. A schema node's `x-expected` text, where
/// present, says what was expected in place of the validator's own words.
fn check_shape(document: &Document, format: &Value, validator: &jsonschema::Validator) -> Vec<FileError> {
    let mut errors: Vec<FileError> = validator
        .iter_errors(&document.value)
        .map(|e| {
            let mut pointer = e.instance_path().as_str().to_owned();
            let mut message = e.to_string();
            if let jsonschema::error::ValidationErrorKind::AdditionalProperties { unexpected } = e.kind() {
                if let Some(first) = unexpected.first() {
                    pointer = format!("{pointer}/{}", escape_segment(first));
                    let allowed = allowed_properties(format, e.schema_path().as_str());
                    message = format!("unknown field {first:?}; expected one of: {allowed}");
                }
            } else if let jsonschema::error::ValidationErrorKind::Enum { options } = e.kind() {
                // The validator's own words name two options and "or N other
                // candidates"; name every one (or what the schema says).
                message = match expected_text(format, e.schema_path().as_str()) {
                    Some(expected) => format!("{} is unknown; expected {expected}", e.instance()),
                    None => format!("{} is not one of {}", e.instance(), listed(options)),
                };
            } else if let Some(expected) = expected_text(format, e.schema_path().as_str()) {
                message = format!("{message}; expected {expected}");
            }
            document.error_at(&pointer, message)
        })
        .collect();
    errors.sort_by_key(|e| (e.line, e.column));
    errors.dedup();
    errors
}

/// `a`, `b` or `c`: every option of an `enum`, as JSON.
fn listed(options: &Value) -> String {
    let all: Vec<String> = match options {
        Value::Array(options) => options.iter().map(Value::to_string).collect(),
        other => vec![other.to_string()],
    };
    match all.split_last() {
        Some((last, [])) => last.clone(),
        Some((last, rest)) => format!("{} or {last}", rest.join(", ")),
        None => String::new(),
    }
}

fn schema_node<'a>(format: &'a Value, schema_path: &str) -> Option<&'a Value> {
    let mut node = format;
    for segment in pointer_segments(schema_path) {
        node = match node {
            Value::Object(map) => map.get(&segment)?,
            Value::Array(items) => items.get(segment.parse::<usize>().ok()?)?,
            _ => return None,
        };
        if let Some(Value::String(reference)) = node.get("$ref") {
            node = format.pointer(reference.trim_start_matches('#'))?;
        }
    }
    Some(node)
}

/// The `x-expected` of the schema node a keyword belongs to.
fn expected_text(format: &Value, schema_path: &str) -> Option<String> {
    let parent = schema_path.rsplit_once('/').map_or("", |(p, _)| p);
    schema_node(format, parent)?
        .get("x-expected")?
        .as_str()
        .map(str::to_owned)
}

fn allowed_properties(format: &Value, schema_path: &str) -> String {
    let parent = schema_path.rsplit_once('/').map_or("", |(p, _)| p);
    schema_node(format, parent)
        .and_then(|n| n.get("properties"))
        .and_then(Value::as_object)
        .map(|props| props.keys().map(|k| format!("{k:?}")).collect::<Vec<_>>().join(", "))
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn errors_point_at_the_named_value() {
        let text = "{\n  \"a\": [1, {\"b\": true}]\n}\n".to_owned();
        let doc = Document::parse("f.json".into(), text).unwrap();
        let e = doc.error_at("/a/1/b", "x");
        assert_eq!((e.line, e.column), (2, 13), "a property is pointed at by its name");
        let e = doc.error_at("/a/5", "x");
        assert_eq!((e.line, e.column), (2, 3), "falls back to the nearest ancestor");
    }

    #[test]
    fn syntax_errors_carry_serde_positions() {
        let errors = Document::parse("f.json".into(), "{\n  \"a\": ,\n}".into())
            .err()
            .unwrap();
        assert_eq!((errors[0].line, errors[0].column), (2, 8));
        assert!(
            errors[0]
                .message
                .starts_with("invalid JSON: expected a value: text in double quotes"),
            "{}",
            errors[0].message
        );
    }

    #[test]
    fn a_bare_word_is_named_and_the_values_json_allows_are_listed() {
        let errors = Document::parse("f.json".into(), "{\"a\": [1,\n  True]}".into())
            .err()
            .unwrap();
        assert_eq!((errors[0].line, errors[0].column), (2, 3), "{errors:?}");
        assert_eq!(
            errors[0].message,
            "invalid JSON: unexpected word True: expected a value, text in double quotes (\"like this\"), a number, true, false, null, an object {..} or a list [..]; text needs double quotes: \"True\""
        );
    }

    #[test]
    fn a_single_quoted_field_name_says_json_needs_double_quotes() {
        let errors = Document::parse("f.json".into(), "{'a': 1}".into()).err().unwrap();
        assert_eq!((errors[0].line, errors[0].column), (1, 2), "{errors:?}");
        assert!(
            errors[0].message.contains("field name in double quotes"),
            "{}",
            errors[0].message
        );
    }
}
