//! The live batch: a row per call in declared order, barriers between
//! groups, a progress gauge. A frame draws only the visible rows.

use ratatui::buffer::Buffer;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::style::{Color, Modifier, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::{LineGauge, Widget};

use super::{is_focused, pane_block, text};
use crate::subagent::Subagent;
use crate::tui::app::{App, BatchView, CallRow, Pane, Remembered, Stage};
use tether_tools::ToolExecutionMode;

pub fn render(app: &App, area: Rect, buf: &mut Buffer) {
    let focused = is_focused(app, Pane::Batch);
    let Some(batch) = app.current_batch() else {
        let lines = match app.batches.remembered(app.shown_batch) {
            Remembered::Gone if app.batches.is_empty() => vec![match app.pending_batches {
                Some(n) if n > 0 => format!("{n} batches to replay: press r to run the next"),
                _ => "no batch yet".to_owned(),
            }],
            remembered => evicted_lines(app, &remembered),
        };
        let title = if app.batches.is_empty() {
            " Batch ".to_owned()
        } else {
            format!(" Batch {}/{} ", app.shown_batch + 1, app.batches.total())
        };
        let block = pane_block(Line::from(title), focused);
        let inner = block.inner(area);
        block.render(area, buf);
        for (i, line) in lines.into_iter().enumerate().take(inner.height as usize) {
            let row = Rect {
                y: inner.y + i as u16,
                height: 1,
                ..inner
            };
            Line::styled(
                text::fit(&line, inner.width as usize),
                Style::default().fg(Color::DarkGray),
            )
            .render(row, buf);
        }
        return;
    };
    let title = format!(
        " Batch {}/{}{}: {} · {} · max {} ",
        app.shown_batch + 1,
        app.batches.total(),
        if app.shown_from_journal() {
            " (from the journal)"
        } else {
            ""
        },
        crate::sanitize::escape(&batch.label),
        crate::sanitize::escape(&batch.scope_label),
        batch.max_parallelism
    );
    let block = pane_block(
        Line::from(text::fit(&title, area.width.saturating_sub(2) as usize)),
        focused,
    );
    let inner = block.inner(area);
    block.render(area, buf);
    let [gauge_area, rows_area] = Layout::vertical([Constraint::Length(1), Constraint::Min(0)]).areas(inner);

    let elapsed = batch
        .finished
        .unwrap_or(app.now)
        .saturating_duration_since(batch.started);
    LineGauge::default()
        .filled_style(Style::default().fg(Color::Green))
        .unfilled_style(Style::default().fg(Color::DarkGray))
        .label(format!(
            "{}/{} done {} ",
            batch.done(),
            batch.len(),
            text::duration(elapsed)
        ))
        .ratio(batch.progress().clamp(0.0, 1.0))
        .render(gauge_area, buf);

    let height = rows_area.height as usize;
    if height == 0 {
        return;
    }
    let selected_line = batch.line_of(app.selected_call);
    let first = (selected_line + 1).saturating_sub(height);
    let width = rows_area.width as usize;
    let lines = first..batch.line_count_upto(first + height);
    let visible: Vec<CallRow<'_>> = lines
        .clone()
        .filter_map(|l| batch.row_at(l))
        .filter_map(|i| batch.row(i))
        .collect();
    let columns = Columns::fit(&visible, width);
    for line_no in lines {
        let offset = line_no - first;
        let row_area = Rect {
            y: rows_area.y + offset as u16,
            height: 1,
            ..rows_area
        };
        match batch.row_at(line_no) {
            Some(index) => {
                if let Some(row) = batch.row(index) {
                    row_line(app, batch, &row, &columns).render(row_area, buf);
                }
            }
            None => Line::styled(
                format!("{:─^width$}", " barrier "),
                Style::default().fg(Color::DarkGray),
            )
            .render(row_area, buf),
        }
    }
}

/// The longest outcome code (`ABORTED_BEFORE_DISPATCH`).
const LONGEST_STATUS: usize = 23;
/// On a narrow pane the status column is as wide as `UNAVAILABLE`; a longer
/// code or stage runs on into the "decided by" room, never cut.
const NARROW_STATUS: usize = 11;
/// Room kept for "decided by", taken from the tool name while it lasts.
const DECIDED_ROOM: usize = 14;

/// Column widths for the rows on screen: the status column is as wide as
/// its longest entry there, so "decided by" gets the rest of the row; the
/// tool name narrows before it would cut who decided, and a narrow pane (an
/// 80-column screen) drops the time (the detail's trail has it). Only the
/// codes whose decider they imply (`ABORTED_BEFORE_DISPATCH`: cancelled)
/// can leave no room for it there.
struct Columns {
    index: usize,
    id: usize,
    tool: usize,
    status: usize,
    time: bool,
    width: usize,
}

impl Columns {
    fn fit(rows: &[CallRow<'_>], width: usize) -> Columns {
        let narrow = width < 72;
        let limit = if narrow { NARROW_STATUS } else { LONGEST_STATUS };
        // A status longer than the column runs on; it does not widen it.
        let status = rows
            .iter()
            .map(|row| status(row).0.chars().count())
            .filter(|len| *len <= limit)
            .max()
            .unwrap_or(0)
            .max(6);
        let (index, id, mut tool, time) = if narrow { (4, 8, 11, 0) } else { (5, 12, 18, 7) };
        if rows.iter().any(|r| r.outcome.is_some()) {
            let others = index + 1 + id + 1 + 1 + 5 + status + time + 2;
            let shortest = if narrow { 6 } else { 10 };
            tool = tool.min(width.saturating_sub(others + DECIDED_ROOM)).max(shortest);
        }
        Columns {
            index,
            id,
            tool,
            status,
            time: !narrow,
            width,
        }
    }

    /// The width a row takes before "decided by", its status `status_len` long.
    fn used(&self, status_len: usize) -> usize {
        self.index + 1 + self.id + 1 + self.tool + 1 + 5 + self.status.max(status_len) + if self.time { 7 } else { 0 }
    }
}

/// A row's outcome code, or its stage while it has none, and its style.
fn status(row: &CallRow<'_>) -> (&'static str, Style) {
    match &row.outcome {
        Some(outcome) => match outcome.code() {
            None => ("ok", Style::default().fg(Color::Green)),
            Some(code) => (code.as_str(), Style::default().fg(Color::Red)),
        },
        None => {
            let style = match row.stage {
                Stage::AwaitingApproval => Style::default().fg(Color::Yellow).add_modifier(Modifier::BOLD),
                Stage::Running => Style::default().fg(Color::Blue),
                _ => Style::default().fg(Color::Gray),
            };
            (row.stage.label(), style)
        }
    }
}

/// What the pane says of a batch no longer kept in full.
fn evicted_lines(app: &App, remembered: &Remembered<'_>) -> Vec<String> {
    let mut lines = Vec::new();
    if let Remembered::Summary(summary) = remembered {
        lines.push(format!(
            "{} · {}: {} calls, {} failed",
            crate::sanitize::escape(&summary.label),
            crate::sanitize::escape(&summary.scope_label),
            summary.calls,
            summary.failed
        ));
    }
    let evicted = app.batches.evicted();
    if app.journal.is_none() {
        lines.push(format!(
            "{evicted} older batches dropped — start with `--journal` to keep them"
        ));
    } else if matches!(remembered, Remembered::Gone) {
        lines.push(format!(
            "{} older batches are only in the journal; `tether replay` reads it",
            app.batches.dropped()
        ));
    } else {
        lines.push("this batch could not be read back from the journal (see the events pane)".to_owned());
    }
    lines
}

fn row_line(app: &App, batch: &BatchView, row: &CallRow<'_>, columns: &Columns) -> Line<'static> {
    let mode = match row.mode {
        ToolExecutionMode::Parallel => Span::styled("PAR ", Style::default().fg(Color::Cyan)),
        ToolExecutionMode::Exclusive => Span::styled("EXCL", Style::default().fg(Color::Magenta)),
    };
    let (status_text, status_style) = status(row);
    let elapsed = match (row.started, row.ended) {
        (Some(start), Some(end)) => text::duration(end.saturating_duration_since(start)),
        (Some(start), None) => text::duration(app.now.saturating_duration_since(start)),
        _ => String::new(),
    };
    let Columns {
        index: index_width,
        id: id_width,
        tool: tool_width,
        status: status_width,
        ..
    } = *columns;
    let call_id = text::fit(&crate::sanitize::escape(&row.call.call_id), id_width);
    let tool = text::fit(&crate::sanitize::escape(&row.call.name), tool_width);
    let warn = crate::sanitize::needs_warning(&row.call.call_id) || crate::sanitize::needs_warning(&row.call.name);
    let status_len = status_text.chars().count();
    let mut spans = vec![
        Span::styled(
            format!("{:>index_width$} ", row.index + 1),
            Style::default().fg(Color::DarkGray),
        ),
        Span::raw(format!("{call_id:<id_width$} {tool:<tool_width$} ")),
        mode,
        Span::raw(" "),
        Span::styled(format!("{status_text:<status_width$}"), status_style),
    ];
    if columns.time {
        spans.push(Span::styled(
            format!("{elapsed:>7}"),
            Style::default().fg(Color::DarkGray),
        ));
    }
    let mut used = columns.used(status_len);
    if let Some(decided) = app.decided_by(batch, row) {
        let room = columns.width.saturating_sub(used + 2);
        if room > 4 {
            let decided = text::fit(&decided, room);
            used += 2 + decided.chars().count();
            spans.push(Span::styled(
                format!("  {decided}"),
                Style::default().fg(Color::DarkGray),
            ));
        }
    }
    // Which subagent made the call, in the room "decided by" leaves.
    if let Some(subagent) = Subagent::of_context(row.call.invocation_context.as_ref()) {
        let room = columns.width.saturating_sub(used + 2);
        if let Some(via) = row_via(&subagent, room) {
            spans.push(Span::styled(format!("  {via}"), Style::default().fg(Color::Magenta)));
        }
    }
    if warn {
        spans.push(text::badge());
    }
    let mut line = Line::from(spans);
    if row.index == app.selected_call {
        line = line.style(Style::default().add_modifier(Modifier::REVERSED));
    }
    line
}

/// The subagent as a row has room for it: `via subagent Explore a7f3`,
/// else without the id, else `via Explore`, else that cut.
fn row_via(subagent: &Subagent, room: usize) -> Option<String> {
    let kind = crate::sanitize::escape(&subagent.kind);
    let forms = [
        crate::sanitize::escape(&subagent.label()),
        format!("via subagent {kind}"),
        format!("via {kind}"),
    ];
    forms
        .iter()
        .find(|f| f.chars().count() <= room)
        .cloned()
        .or_else(|| (room > 8).then(|| text::fit(&forms[2], room)))
}
