//! The terminal console: `app` (state and how it updates), `view` (drawing
//! it), `keys` (the one key table), `terminal` (raw mode, the alternate
//! screen, logging) and `console` (the event loop that ties them together).

pub mod app;
pub mod console;
pub mod keys;
pub mod remote;
pub mod terminal;
pub mod view;
