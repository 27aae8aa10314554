//! The full view of a call's arguments: scrolls by line, wraps or scrolls
//! sideways, and searches with `/`.

use crossterm::event::{KeyCode, KeyEvent};

use crate::tui::keys::Action;

/// Where the full view stands. `scroll` is the first line shown (a line, not
/// a screen row, so a search hit lands on top whether lines wrap or not).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FullView {
    pub scroll: u16,
    /// Columns scrolled sideways when lines are not wrapped.
    pub hscroll: u16,
    pub wrap: bool,
    /// The query being typed after `/`, until Enter or Esc.
    pub typing: Option<String>,
    /// The last query searched for, and whether it was found.
    pub query: Option<(String, bool)>,
}

impl Default for FullView {
    fn default() -> Self {
        Self {
            scroll: 0,
            hscroll: 0,
            wrap: true,
            typing: None,
            query: None,
        }
    }
}

impl FullView {
    /// While a query is typed, every key belongs to it; returns whether the
    /// key was taken.
    pub fn type_key(&mut self, key: &KeyEvent, lines: &[String]) -> bool {
        let Some(typing) = &mut self.typing else { return false };
        match key.code {
            KeyCode::Enter => {
                let query = std::mem::take(typing);
                self.typing = None;
                if !query.is_empty() {
                    self.query = Some((query, false));
                    self.find(lines, 0);
                }
            }
            KeyCode::Esc => self.typing = None,
            KeyCode::Backspace => {
                typing.pop();
            }
            KeyCode::Char(c) => typing.push(c),
            _ => {}
        }
        true
    }

    /// Moves to the next line holding the query, `from` lines below the top,
    /// wrapping around to the start.
    fn find(&mut self, lines: &[String], from: usize) {
        let Some((query, found)) = &mut self.query else { return };
        let needle = query.to_lowercase();
        let n = lines.len();
        let start = self.scroll as usize + from;
        let hit = (0..n)
            .map(|i| (start + i) % n.max(1))
            .find(|&i| lines[i].to_lowercase().contains(&needle));
        *found = hit.is_some();
        if let Some(line) = hit {
            self.scroll = u16::try_from(line).unwrap_or(u16::MAX);
            if !self.wrap {
                let column = lines[line].to_lowercase().find(&needle).unwrap_or(0);
                self.hscroll = u16::try_from(lines[line][..column].chars().count().saturating_sub(8)).unwrap_or(0);
            }
        }
    }

    pub fn act(&mut self, action: Action, lines: &[String]) {
        let last = u16::try_from(lines.len().saturating_sub(1)).unwrap_or(u16::MAX);
        match action {
            Action::Up => self.scroll = self.scroll.saturating_sub(1),
            Action::Down => self.scroll = self.scroll.saturating_add(1).min(last),
            Action::PageUp => self.scroll = self.scroll.saturating_sub(10),
            Action::PageDown => self.scroll = self.scroll.saturating_add(10).min(last),
            Action::Home => self.scroll = 0,
            Action::End => self.scroll = last,
            Action::Left => self.hscroll = self.hscroll.saturating_sub(8),
            Action::Right if !self.wrap => self.hscroll = self.hscroll.saturating_add(8),
            Action::ToggleWrap => {
                self.wrap = !self.wrap;
                self.hscroll = 0;
            }
            Action::Search => self.typing = Some(String::new()),
            Action::NextMatch => self.find(lines, 1),
            _ => {}
        }
    }
}
