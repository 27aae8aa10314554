//! The full view of a call's arguments: scrolls by row and by page (inside
//! one long line too when it wraps), wraps or scrolls sideways, and searches
//! with `/`. Help pages the same way.

use crossterm::event::{KeyCode, KeyEvent};

use super::{App, Overlay};
use crate::tui::keys::Action;

/// The full view's text area in a terminal of `screen` (columns, rows): the
/// modal leaves one cell around it and draws a border.
pub fn text_area((columns, rows): (u16, u16)) -> (usize, usize) {
    (
        usize::from(columns.saturating_sub(4)).max(1),
        usize::from(rows.saturating_sub(4)).max(1),
    )
}

/// Screen rows a line takes when wrapped at `width` characters.
pub fn wrapped_rows(line: &str, width: usize) -> usize {
    line.chars().count().div_ceil(width.max(1)).max(1)
}

/// Where the full view stands. `scroll` is the first line shown (a line, not
/// a screen row, so a search hit lands on top whether lines wrap or not).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FullView {
    pub scroll: u16,
    /// Rows of line `scroll` scrolled past when wrapping, so a line longer
    /// than the screen is read page by page.
    pub row: usize,
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
            row: 0,
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
    pub fn type_key(&mut self, key: &KeyEvent, lines: &[String], screen: (u16, u16)) -> bool {
        let Some(typing) = &mut self.typing else { return false };
        match key.code {
            KeyCode::Enter => {
                let query = std::mem::take(typing);
                self.typing = None;
                if !query.is_empty() {
                    self.query = Some((query, false));
                    self.find(lines, 0, screen);
                }
            }
            KeyCode::Esc => self.typing = None,
            KeyCode::Backspace => {
                typing.pop();
            }
            // A control chord is not text.
            KeyCode::Char(c) if !key.modifiers.contains(crossterm::event::KeyModifiers::CONTROL) => typing.push(c),
            _ => {}
        }
        true
    }

    /// Moves to the next line holding the query, `from` lines below the top,
    /// wrapping around to the start.
    fn find(&mut self, lines: &[String], from: usize, screen: (u16, u16)) {
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
            let column = lines[line].to_lowercase().find(&needle).unwrap_or(0);
            let column = lines[line][..column].chars().count();
            if self.wrap {
                // The row that holds the hit, so a hit far into a long line shows.
                self.row = column / text_area(screen).0;
            } else {
                self.row = 0;
                self.hscroll = u16::try_from(column.saturating_sub(8)).unwrap_or(0);
            }
        }
    }

    /// Moves the top of the view `n` rows down (`down`) or up, row by row
    /// through wrapped lines, never past the first or the last row.
    fn move_rows(&mut self, lines: &[String], width: usize, n: usize, down: bool) {
        let rows = |i: usize| match self.wrap {
            true => lines.get(i).map_or(1, |l| wrapped_rows(l, width)),
            false => 1,
        };
        let mut line = usize::from(self.scroll).min(lines.len().saturating_sub(1));
        let mut row = self.row.min(rows(line) - 1);
        let mut left = n;
        while left > 0 {
            if down {
                let here = rows(line) - 1 - row;
                if left <= here {
                    row += left;
                    break;
                }
                if line + 1 >= lines.len() {
                    row = rows(line) - 1;
                    break;
                }
                left -= here + 1;
                line += 1;
                row = 0;
            } else {
                if left <= row {
                    row -= left;
                    break;
                }
                if line == 0 {
                    row = 0;
                    break;
                }
                left -= row + 1;
                line -= 1;
                row = rows(line) - 1;
            }
        }
        self.scroll = u16::try_from(line).unwrap_or(u16::MAX);
        self.row = row;
    }

    /// What a key does, with the terminal at `screen` (columns, rows): a
    /// page is the rows the view shows, less one kept for context.
    pub fn act(&mut self, action: Action, lines: &[String], screen: (u16, u16)) {
        let (width, visible) = text_area(screen);
        let page = visible.saturating_sub(1).max(1);
        match action {
            Action::Up => self.move_rows(lines, width, 1, false),
            Action::Down => self.move_rows(lines, width, 1, true),
            Action::PageUp => self.move_rows(lines, width, page, false),
            Action::PageDown => self.move_rows(lines, width, page, true),
            Action::Home => {
                self.scroll = 0;
                self.row = 0;
            }
            Action::End => {
                // The last page: the end of the last line at the bottom.
                self.scroll = u16::try_from(lines.len().saturating_sub(1)).unwrap_or(u16::MAX);
                self.row = usize::MAX;
                self.move_rows(lines, width, 0, true);
                self.move_rows(lines, width, visible.saturating_sub(1), false);
            }
            Action::Left => self.hscroll = self.hscroll.saturating_sub(8),
            Action::Right if !self.wrap => self.hscroll = self.hscroll.saturating_add(8),
            Action::ToggleWrap => {
                self.wrap = !self.wrap;
                self.row = 0;
                self.hscroll = 0;
            }
            Action::Search => self.typing = Some(String::new()),
            Action::NextMatch => self.find(lines, 1, screen),
            _ => {}
        }
    }
}

impl App {
    /// Scrolls help by a page of the terminal's rows, or to either end.
    pub(super) fn page_help(&mut self, action: Action) {
        // Help's modal shows the terminal's rows less four (margins, border).
        let visible = self.screen.1.saturating_sub(4).max(1);
        let lines = u16::try_from(crate::tui::keys::help_line_count()).unwrap_or(u16::MAX);
        let last_page = lines.saturating_sub(visible);
        if let Overlay::Help { scroll } = &mut self.overlay {
            *scroll = match action {
                Action::PageUp => scroll.saturating_sub(visible.saturating_sub(1).max(1)),
                Action::PageDown => scroll.saturating_add(visible.saturating_sub(1).max(1)).min(last_page),
                Action::Home => 0,
                Action::End => last_page,
                _ => *scroll,
            };
        }
    }
}
