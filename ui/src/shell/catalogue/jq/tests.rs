//! The filter reader on pure and leaking filters.

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
