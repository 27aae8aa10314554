//! The terminal is precious: raw mode and the alternate screen are undone by
//! a guard's `Drop` and by the panic hook, and logs go to a file only.

use std::io::{Stdout, stdout};
use std::path::{Path, PathBuf};

use anyhow::Context as _;
use crossterm::execute;
use crossterm::terminal::{EnterAlternateScreen, LeaveAlternateScreen, disable_raw_mode, enable_raw_mode};
use ratatui::Terminal;
use ratatui::backend::{CrosstermBackend, TestBackend};
use tracing_appender::non_blocking::WorkerGuard;

/// Where logs go when `--log-dir` is not given.
pub fn default_log_dir() -> PathBuf {
    if let Some(state) = std::env::var_os("XDG_STATE_HOME") {
        return PathBuf::from(state).join("tether");
    }
    if let Some(home) = std::env::var_os("HOME") {
        return PathBuf::from(home).join(".local/state/tether");
    }
    std::env::temp_dir().join("tether-logs")
}

/// Logs to `DIR/tether.log` (mode 0600, the directory 0700), ANSI off,
/// filtered by `TETHER_LOG` (default `info`). Keep the guard alive in `main`:
/// dropping it flushes and stops the writer.
pub fn init_logging(dir: &Path) -> anyhow::Result<WorkerGuard> {
    std::fs::create_dir_all(dir).with_context(|| format!("creating the log directory {}", dir.display()))?;
    let file = dir.join("tether.log");
    #[cfg(unix)]
    {
        use std::os::unix::fs::{OpenOptionsExt, PermissionsExt};
        std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o700)).ok();
        std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .mode(0o600)
            .open(&file)
            .with_context(|| format!("opening {}", file.display()))?;
        std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o600)).ok();
    }
    let appender = tracing_appender::rolling::never(dir, "tether.log");
    let (writer, guard) = tracing_appender::non_blocking(appender);
    // rmcp wraps every message's future in an `info` span, entered on each
    // poll: 3% of a gateway call (issue 36). Its warnings stay; what its
    // `info` said (each peer's name, version and capabilities) the gateway
    // logs itself when a peer initializes.
    let filter = tracing_subscriber::EnvFilter::try_from_env("TETHER_LOG")
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("info,rmcp=warn"));
    tracing_subscriber::fmt()
        .with_writer(writer)
        .with_ansi(false)
        .with_env_filter(filter)
        .try_init()
        .map_err(|e| anyhow::anyhow!("installing the logger: {e}"))?;
    Ok(guard)
}

fn restore() {
    // Best effort: this runs on drop and in the panic hook, where there is
    // nobody left to report a failure to.
    let _ = disable_raw_mode();
    let _ = execute!(stdout(), LeaveAlternateScreen, crossterm::cursor::Show);
}

/// Ctrl+Z: gives the terminal back to the shell and stops the process as a
/// shell's job; when the shell continues it (`fg`), takes the terminal again.
/// The caller redraws everything afterwards.
pub fn suspend() -> anyhow::Result<()> {
    restore();
    #[cfg(unix)]
    signal_hook::low_level::raise(signal_hook::consts::SIGTSTP).context("stopping for Ctrl+Z")?;
    enable_raw_mode().context("switching the terminal back to raw mode")?;
    execute!(stdout(), EnterAlternateScreen).context("entering the alternate screen again")?;
    Ok(())
}

/// A frame is written between the terminal's synchronized-update marks
/// (`CSI ? 2026 h` / `l`), so a terminal that knows them (or a test reading
/// the pty) shows whole frames only, never one half drawn; others ignore them.
pub trait FrameSync {
    /// Marks the start of a frame.
    fn begin_frame(&mut self) -> std::io::Result<()>;
    /// Marks its end and flushes.
    fn end_frame(&mut self) -> std::io::Result<()>;
    /// Writes bytes that are not drawing (the bell, a desktop notification).
    fn ring(&mut self, bytes: &[u8]) -> std::io::Result<()>;
}

impl<W: std::io::Write> FrameSync for CrosstermBackend<W> {
    fn begin_frame(&mut self) -> std::io::Result<()> {
        crossterm::queue!(self, crossterm::terminal::BeginSynchronizedUpdate)
    }

    fn end_frame(&mut self) -> std::io::Result<()> {
        execute!(self, crossterm::terminal::EndSynchronizedUpdate)
    }

    fn ring(&mut self, bytes: &[u8]) -> std::io::Result<()> {
        std::io::Write::write_all(self, bytes)?;
        std::io::Write::flush(self)
    }
}

impl FrameSync for TestBackend {
    fn begin_frame(&mut self) -> std::io::Result<()> {
        Ok(())
    }

    fn end_frame(&mut self) -> std::io::Result<()> {
        Ok(())
    }

    fn ring(&mut self, _bytes: &[u8]) -> std::io::Result<()> {
        Ok(())
    }
}

/// Owns the terminal while the console runs; restores it when dropped.
pub struct TerminalGuard {
    pub terminal: Terminal<CrosstermBackend<Stdout>>,
}

impl TerminalGuard {
    pub fn enter() -> anyhow::Result<Self> {
        install_panic_hook();
        // crossterm's "No such device or address" means there is no terminal at all.
        enable_raw_mode().map_err(|error| {
            anyhow::anyhow!(
                "the console needs a terminal, and this is not one ({error}): run it in a terminal, \
                 or add --headless (`tether replay FILE --headless`, `tether serve --headless`) for line output"
            )
        })?;
        execute!(stdout(), EnterAlternateScreen).context("entering the alternate screen")?;
        let terminal = Terminal::new(CrosstermBackend::new(stdout())).context("starting the terminal")?;
        Ok(Self { terminal })
    }
}

impl Drop for TerminalGuard {
    fn drop(&mut self) {
        restore();
    }
}

/// Only a panic on the thread that owns the terminal ends the console: it is
/// logged, the terminal restored, and the previous hook prints it to a normal
/// screen. A panic on any other thread is one the runtime or the engine
/// contains (a scripted body that panics becomes `TOOL_ERROR`), so it is
/// logged and nothing else: the terminal, still in use, is left alone, and
/// nothing is written over the panes. The hook never exits the process, so
/// the log guard in `main` still flushes.
fn install_panic_hook() {
    let owner = std::thread::current().id();
    let previous = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        if std::thread::current().id() == owner {
            tracing::error!(%info, "panic");
            restore();
            previous(info);
        } else {
            tracing::warn!(%info, "panic on a worker thread, contained");
        }
    }));
}
