//! The Tether console. The terminal UI is not built yet: this binary says so.

fn main() -> std::process::ExitCode {
    let message = "tether: the approval console is not ready yet; the engine \
                   (crate `tether-tools`) is. Run `cargo test --workspace` to see it work.";
    #[allow(clippy::print_stderr)]
    {
        eprintln!("{message}");
    }
    std::process::ExitCode::from(2)
}
