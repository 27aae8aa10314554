//! An attached console's terminal, which is somewhere else: its frames go
//! out over the attach socket, its keys and size come back.

use std::io;
use std::sync::{Arc, Mutex};

use crossterm::event::Event;
use ratatui::backend::{Backend, ClearType, CrosstermBackend, WindowSize};
use ratatui::buffer::Cell;
use ratatui::layout::{Position, Size};
use tokio::sync::mpsc;

use super::lock;
use crate::tui::terminal::FrameSync;

/// The receiving end of a channel, as the stream of terminal events the
/// event loop reads.
pub(super) fn tokio_stream_from(
    mut receiver: mpsc::UnboundedReceiver<io::Result<Event>>,
) -> impl futures::Stream<Item = io::Result<Event>> + Unpin {
    Box::pin(futures::stream::poll_fn(move |cx| receiver.poll_recv(cx)))
}

/// A terminal that is somewhere else: drawing is written into a buffer that
/// goes out as one frame; the size is the one its client last reported.
pub(super) struct RemoteBackend {
    pub(super) inner: CrosstermBackend<FrameBuffer>,
    pub(super) buffer: FrameBuffer,
    pub(super) size: Arc<Mutex<Size>>,
    pub(super) cursor: Position,
    pub(super) frames: mpsc::UnboundedSender<Vec<u8>>,
}

impl RemoteBackend {
    fn send(&mut self) {
        let bytes = std::mem::take(&mut *lock(&self.buffer.0));
        if !bytes.is_empty() {
            let _ = self.frames.send(bytes);
        }
    }
}

/// What the drawing is written into until the frame goes out (ratatui's
/// own access to its backend's writer is unstable).
#[derive(Clone, Default)]
pub(super) struct FrameBuffer(Arc<Mutex<Vec<u8>>>);

impl io::Write for FrameBuffer {
    fn write(&mut self, bytes: &[u8]) -> io::Result<usize> {
        lock(&self.0).extend_from_slice(bytes);
        Ok(bytes.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

impl Backend for RemoteBackend {
    fn draw<'a, I>(&mut self, content: I) -> io::Result<()>
    where
        I: Iterator<Item = (u16, u16, &'a Cell)>,
    {
        self.inner.draw(content)
    }

    fn hide_cursor(&mut self) -> io::Result<()> {
        self.inner.hide_cursor()
    }

    fn show_cursor(&mut self) -> io::Result<()> {
        self.inner.show_cursor()
    }

    /// Never asks the terminal (it is not ours): where we last put it.
    fn get_cursor_position(&mut self) -> io::Result<Position> {
        Ok(self.cursor)
    }

    fn set_cursor_position<P: Into<Position>>(&mut self, position: P) -> io::Result<()> {
        self.cursor = position.into();
        self.inner.set_cursor_position(self.cursor)
    }

    fn clear(&mut self) -> io::Result<()> {
        self.inner.clear()
    }

    fn clear_region(&mut self, clear_type: ClearType) -> io::Result<()> {
        self.inner.clear_region(clear_type)
    }

    fn size(&self) -> io::Result<Size> {
        Ok(*lock(&self.size))
    }

    fn window_size(&mut self) -> io::Result<WindowSize> {
        Ok(WindowSize {
            columns_rows: *lock(&self.size),
            pixels: Size::default(),
        })
    }

    fn flush(&mut self) -> io::Result<()> {
        Backend::flush(&mut self.inner)
    }
}

impl FrameSync for RemoteBackend {
    fn begin_frame(&mut self) -> io::Result<()> {
        self.inner.begin_frame()
    }

    fn end_frame(&mut self) -> io::Result<()> {
        self.inner.end_frame()?;
        self.send();
        Ok(())
    }

    fn ring(&mut self, bytes: &[u8]) -> io::Result<()> {
        lock(&self.buffer.0).extend_from_slice(bytes);
        self.send();
        Ok(())
    }
}
