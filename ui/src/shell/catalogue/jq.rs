//! jq (1.6 and 1.7): prints what a filter makes of JSON files. The filter
//! is a program, read whole here: every name it calls must be one of jq's
//! pure builtins — `env` and `$ENV` print the agent's environment (its API
//! keys), `import`/`include` read modules from anywhere, `def` could
//! rebind a name, a comment hides text — and anything this reader does not
//! know is not covered. jq's options are its own parser's (main.c): long
//! names whole, short ones bundled, anywhere on the line; those that read
//! a file given as a value (`--rawfile`, `--slurpfile`, `--argfile`, `-f`,
//! `-L`, `--run-tests`) or take two values are refused. A `~/.jq` file is
//! loaded into every filter (its definitions can shadow any builtin), so
//! where one exists nothing is covered.

use std::path::Path;

use super::table::{Check, HELP, Kind, Operands, Program, Reads, Syntax, T, Takes, VERSION, flag, refused, value};

const FILTER: Kind = Kind::Checked(Check {
    name: "FILTER",
    check: filter,
});

const TWO_VALUES: &str = "takes two values (a name, then a value or a file)";

pub(super) const JQ: Program = Program {
    judge: Some(no_home_library),
    ..Program::new(
        "jq",
        "prints what a filter makes of JSON files (only jq's pure builtins: no `env`/`$ENV`, modules, `def` or comments)",
        Syntax::EXACT,
        &[
            flag("s", "slurp"),
            flag("r", "raw-output"),
            flag("", "raw-output0"),
            flag("j", "join-output"),
            flag("a", "ascii-output"),
            flag("c", "compact-output"),
            flag("C", "color-output"),
            flag("M", "monochrome-output"),
            flag("S", "sort-keys"),
            flag("R", "raw-input"),
            flag("n", "null-input"),
            flag("e", "exit-status"),
            flag("", "tab"),
            value("", "indent", T),
            flag("", "seq"),
            flag("", "stream"),
            flag("", "stream-errors"),
            flag("", "unbuffered"),
            flag("h", ""),
            HELP,
            flag("V", ""),
            VERSION,
            refused("f", "from-file", Takes::Nothing, "reads its filter from a file"),
            refused("L", "", Takes::Value(T), "reads modules from a directory"),
            refused("", "library-path", Takes::Value(T), "reads modules from a directory"),
            refused("", "arg", Takes::Value(T), TWO_VALUES),
            refused("", "argjson", Takes::Value(T), TWO_VALUES),
            refused("", "slurpfile", Takes::Value(T), TWO_VALUES),
            refused("", "rawfile", Takes::Value(T), TWO_VALUES),
            refused("", "argfile", Takes::Value(T), TWO_VALUES),
            refused("", "args", Takes::Nothing, "reads the operands after it as arguments"),
            refused(
                "",
                "jsonargs",
                Takes::Nothing,
                "reads the operands after it as arguments",
            ),
            refused("", "run-tests", Takes::Nothing, "runs the tests a file holds"),
            refused("", "debug-dump-disasm", Takes::Nothing, "prints jq's internals"),
            refused("", "debug-trace", Takes::Nothing, "prints jq's internals"),
            refused("", "build-configuration", Takes::Nothing, "prints jq's build"),
        ],
        Operands {
            leading: &[FILTER],
            rest: Some(Kind::Path),
        },
        Reads::Contents,
    )
};

/// jq loads `~/.jq`, when it is a file, into every filter.
fn no_home_library(_argv: &[String], _cwd: Option<&Path>) -> Result<(), String> {
    let Some(home) = std::env::var_os("HOME") else {
        return Ok(());
    };
    let library = Path::new(&home).join(".jq");
    if library.is_file() {
        return Err(format!(
            "{} exists: jq loads its definitions into every filter, and they can rebind any builtin",
            library.display()
        ));
    }
    Ok(())
}

/// jq's builtins that compute from their input and arguments only (1.6
/// and 1.7), and its keywords. Missing on purpose: `env`, `$ENV`,
/// `input_filename`'s kin that name files (`get_search_list`,
/// `get_prog_origin`, `get_jq_origin`), `modulemeta`, `import`, `include`,
/// `def`.
const PURE: &[&str] = &[
    // keywords
    "as",
    "if",
    "then",
    "elif",
    "else",
    "end",
    "and",
    "or",
    "reduce",
    "foreach",
    "try",
    "catch",
    "label",
    "break",
    "__loc__", // builtins
    "not",
    "length",
    "utf8bytelength",
    "keys",
    "keys_unsorted",
    "values",
    "has",
    "in",
    "inside",
    "contains",
    "map",
    "map_values",
    "path",
    "paths",
    "leaf_paths",
    "getpath",
    "setpath",
    "delpaths",
    "del",
    "pick",
    "to_entries",
    "from_entries",
    "with_entries",
    "select",
    "empty",
    "error",
    "halt",
    "halt_error",
    "add",
    "any",
    "all",
    "flatten",
    "range",
    "floor",
    "ceil",
    "round",
    "sqrt",
    "pow",
    "log",
    "log2",
    "log10",
    "exp",
    "exp2",
    "exp10",
    "fabs",
    "abs",
    "trunc",
    "significand",
    "tostring",
    "tonumber",
    "toarray",
    "type",
    "infinite",
    "nan",
    "isinfinite",
    "isnan",
    "isnormal",
    "isvalid",
    "sort",
    "sort_by",
    "group_by",
    "min",
    "max",
    "min_by",
    "max_by",
    "unique",
    "unique_by",
    "reverse",
    "combinations",
    "ltrimstr",
    "rtrimstr",
    "trim",
    "ltrim",
    "rtrim",
    "startswith",
    "endswith",
    "explode",
    "implode",
    "split",
    "splits",
    "join",
    "ascii",
    "ascii_downcase",
    "ascii_upcase",
    "recurse",
    "recurse_down",
    "transpose",
    "first",
    "last",
    "nth",
    "until",
    "while",
    "repeat",
    "limit",
    "test",
    "match",
    "capture",
    "scan",
    "sub",
    "gsub",
    "tojson",
    "fromjson",
    "todate",
    "fromdate",
    "date",
    "now",
    "mktime",
    "gmtime",
    "localtime",
    "strftime",
    "strflocaltime",
    "strptime",
    "todateiso8601",
    "fromdateiso8601",
    "dateadd",
    "datesub",
    "tostream",
    "fromstream",
    "truncate_stream",
    "input",
    "inputs",
    "input_line_number",
    "input_filename",
    "debug",
    "stderr",
    "objects",
    "iterables",
    "booleans",
    "numbers",
    "strings",
    "nulls",
    "arrays",
    "scalars",
    "indices",
    "index",
    "rindex",
    "walk",
    "isempty",
    "builtins",
    "null",
    "true",
    "false",
    "IN",
    "INDEX",
    "GROUP_BY",
    "UNIQUE_BY",
    "ANY",
    "ALL",
    "have_decnum",
    "have_literal_numbers",
];

/// jq's `@format`s: each turns a value into text.
const FORMATS: &[&str] = &[
    "text", "json", "html", "uri", "csv", "tsv", "sh", "base64", "base64d", "base32", "base32d",
];

/// Whether a filter is jq Tether reads whole, calling only pure builtins.
pub(super) fn filter(text: &str) -> Result<(), String> {
    let mut reader = Reader {
        chars: text.chars().collect(),
        at: 0,
    };
    reader.code(None)?;
    Ok(())
}

struct Reader {
    chars: Vec<char>,
    at: usize,
}

impl Reader {
    fn peek(&self) -> Option<char> {
        self.chars.get(self.at).copied()
    }

    fn ident(&mut self) -> String {
        let start = self.at;
        while self.peek().is_some_and(|c| c.is_ascii_alphanumeric() || c == '_') {
            self.at += 1;
        }
        self.chars[start..self.at].iter().collect()
    }

    fn skip_space(&mut self) {
        while self.peek().is_some_and(char::is_whitespace) {
            self.at += 1;
        }
    }

    /// Code up to `closer` (or the end), brackets nested.
    fn code(&mut self, closer: Option<char>) -> Result<(), String> {
        while let Some(c) = self.peek() {
            self.at += 1;
            match c {
                c if c.is_whitespace() => {}
                '#' => return Err("a comment, which can hide text from this reader".into()),
                '"' => self.string()?,
                '(' => self.code(Some(')'))?,
                '[' => self.code(Some(']'))?,
                '{' => self.object()?,
                ')' | ']' | '}' if Some(c) == closer => return Ok(()),
                ')' | ']' | '}' => return Err(format!("an unbalanced `{c}`")),
                '.' => self.dot()?,
                '$' => self.variable()?,
                '@' => {
                    let name = self.ident();
                    if !FORMATS.contains(&name.as_str()) {
                        return Err(format!("`@{name}` is not a jq format Tether knows"));
                    }
                }
                c if c.is_ascii_digit() => self.number(),
                c if c.is_ascii_alphabetic() || c == '_' => {
                    self.at -= 1;
                    let name = self.ident();
                    if self.chars.get(self.at..self.at + 2) == Some(&[':', ':']) {
                        return Err(format!("`{name}::…` calls a module"));
                    }
                    if !PURE.contains(&name.as_str()) {
                        return Err(format!(
                            "`{name}` is not one of jq's pure builtins (`env` prints the environment; `def`, `import` and `include` are not read)"
                        ));
                    }
                }
                '|' | ',' | '/' | '=' | '!' | '<' | '>' | '+' | '-' | '*' | '%' | '?' | ';' | ':' => {}
                c => return Err(format!("`{c}` is not jq Tether reads")),
            }
        }
        match closer {
            None => Ok(()),
            Some(c) => Err(format!("a `{c}` is missing")),
        }
    }

    /// After `.`: a field (`.env` is the key "env", never the builtin),
    /// `.."`, `."key"`, `.[…]`, or the input itself.
    fn dot(&mut self) -> Result<(), String> {
        match self.peek() {
            Some('.') => {
                // `..` (recurse); a name right after it is a call.
                self.at += 1;
                Ok(())
            }
            Some(c) if c.is_ascii_alphabetic() || c == '_' => {
                self.ident();
                Ok(())
            }
            Some('"') => {
                self.at += 1;
                self.string()
            }
            _ => Ok(()),
        }
    }

    /// `$name` (jq 1.6 allows a space after `$`): any variable the filter
    /// binds, or `$__loc__`; never `$ENV`.
    fn variable(&mut self) -> Result<(), String> {
        self.skip_space();
        let name = self.ident();
        match name.as_str() {
            "" => Err("a `$` with no name".into()),
            "ENV" => Err("`$ENV` holds the environment, which may hold secrets".into()),
            _ => Ok(()),
        }
    }

    fn number(&mut self) {
        while self.peek().is_some_and(|c| c.is_ascii_digit() || c == '.') {
            self.at += 1;
        }
        if self.peek().is_some_and(|c| c == 'e' || c == 'E') {
            self.at += 1;
            if self.peek().is_some_and(|c| c == '+' || c == '-') {
                self.at += 1;
            }
            while self.peek().is_some_and(|c| c.is_ascii_digit()) {
                self.at += 1;
            }
        }
    }

    /// A string after its opening quote, `\(…)` read as code.
    fn string(&mut self) -> Result<(), String> {
        while let Some(c) = self.peek() {
            self.at += 1;
            match c {
                '"' => return Ok(()),
                '\\' => {
                    let Some(e) = self.peek() else {
                        break;
                    };
                    self.at += 1;
                    match e {
                        '(' => self.code(Some(')'))?,
                        '"' | '\\' | '/' | 'b' | 'f' | 'n' | 'r' | 't' => {}
                        'u' => {
                            for _ in 0..4 {
                                if !self.peek().is_some_and(|c| c.is_ascii_hexdigit()) {
                                    return Err("a `\\u` escape without four hex digits".into());
                                }
                                self.at += 1;
                            }
                        }
                        e => return Err(format!("`\\{e}` is not a jq string escape")),
                    }
                }
                _ => {}
            }
        }
        Err("a string with no closing quote".into())
    }

    /// An object after `{`: each key (a name, `$name`, a string, a format
    /// string or `(expression)`), then `: value` up to `,` or `}`.
    fn object(&mut self) -> Result<(), String> {
        loop {
            self.skip_space();
            let Some(c) = self.peek() else {
                return Err("a `}` is missing".into());
            };
            self.at += 1;
            match c {
                '}' => return Ok(()),
                '"' => self.string()?,
                '(' => self.code(Some(')'))?,
                '$' => self.variable()?,
                '@' => {
                    let name = self.ident();
                    if !FORMATS.contains(&name.as_str()) {
                        return Err(format!("`@{name}` is not a jq format Tether knows"));
                    }
                    self.skip_space();
                    if self.peek() == Some('"') {
                        self.at += 1;
                        self.string()?;
                    }
                }
                c if c.is_ascii_alphabetic() || c == '_' => {
                    // A key, whatever its name (`{env: 1}` is the key "env").
                    self.at -= 1;
                    self.ident();
                }
                c => return Err(format!("`{c}` cannot start an object's key")),
            }
            self.skip_space();
            match self.peek() {
                Some(':') => {
                    self.at += 1;
                    if self.value()? {
                        return Ok(());
                    }
                }
                Some(',') => self.at += 1,
                Some('}') => {
                    self.at += 1;
                    return Ok(());
                }
                _ => return Err("an object's key must be followed by `:`, `,` or `}`".into()),
            }
        }
    }

    /// An object's value, up to the `,` (false) or `}` (true) that ends it.
    fn value(&mut self) -> Result<bool, String> {
        let start = self.at;
        let mut depth = 0usize;
        let mut end = None;
        // Find where the value ends (outside strings and brackets), then
        // read it as code.
        let mut probe = Reader {
            chars: self.chars.clone(),
            at: self.at,
        };
        while let Some(c) = probe.peek() {
            match c {
                '"' => {
                    probe.at += 1;
                    probe.string()?;
                    continue;
                }
                '(' | '[' | '{' => depth += 1,
                ')' | ']' => depth = depth.saturating_sub(1),
                '}' if depth == 0 => {
                    end = Some((probe.at, true));
                    break;
                }
                '}' => depth -= 1,
                ',' if depth == 0 => {
                    end = Some((probe.at, false));
                    break;
                }
                _ => {}
            }
            probe.at += 1;
        }
        let (stop, closed) = end.ok_or("a `}` is missing")?;
        let mut inner = Reader {
            chars: self.chars[start..stop].to_vec(),
            at: 0,
        };
        inner.code(None)?;
        self.at = stop + 1;
        Ok(closed)
    }
}

#[cfg(test)]
mod tests {
    use super::filter;

    #[test]
    fn pure_filters_are_read_whole() {
        for ok in [
            ".",
            ".name",
            ".env",
            ".a.env.b",
            ".[] | .env",
            "{env: .x}",
            "{env}",
            "{name, version}",
            "{(.k): .v}",
            "{\"a b\": 1, c: (1, 2)}",
            "{a: 1 | 2}",
            "to_entries[] | \"\\(.key)=\\(.value)\"",
            "map(select(.a > 1)) | length",
            ".a // \"none\"",
            "[range(3)]",
            "reduce .[] as $x (0; . + $x)",
            "@sh \"echo \\(.x)\"",
            ".scripts | keys[]",
            "..|numbers",
            ".[\"env\"]",
            "$__loc__",
            "if .a then 1 elif .b then 2 else 3 end",
        ] {
            assert_eq!(filter(ok), Ok(()), "{ok}");
        }
    }

    #[test]
    fn filters_that_reach_the_environment_or_other_files_are_refused() {
        for (refused, says) in [
            ("env", "pure builtins"),
            ("env.SECRET", "pure builtins"),
            ("$ENV", "$ENV"),
            ("$ ENV.SECRET", "$ENV"),
            ("\"\\(env)\"", "pure builtins"),
            ("[env][0]", "pure builtins"),
            ("{a: env}", "pure builtins"),
            ("{a: 1, b: $ENV}", "$ENV"),
            ("{(env|tostring): 1}", "pure builtins"),
            ("{$ENV}", "$ENV"),
            (".. | env", "pure builtins"),
            ("..env", "pure builtins"),
            (". env", "pure builtins"),
            ("import \"x\" as x; 1", "pure builtins"),
            ("include \"x\"; 1", "pure builtins"),
            ("def f: env; f", "pure builtins"),
            ("m::f", "module"),
            ("get_search_list", "pure builtins"),
            ("1 # \\\nenv", "comment"),
            ("\"\\q\"", "escape"),
            ("\"open", "closing quote"),
            ("(1", "missing"),
            ("@evil \"x\"", "format"),
        ] {
            match filter(refused) {
                Ok(()) => panic!("{refused:?} was read as pure"),
                Err(why) => assert!(why.contains(says), "{refused:?}: {why}"),
            }
        }
    }
}
