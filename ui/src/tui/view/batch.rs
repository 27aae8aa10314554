//! The live batch: a row per call in declared order, barriers between
//! groups, a progress gauge. A frame draws only the visible rows.

use ratatui::buffer::Buffer;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::style::{Color, Modifier, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::{LineGauge, Widget};

use super::{is_focused, pane_block, text};
use crate::tui::app::{App, CallRow, Pane, Remembered, Stage};
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
            format!(" Batch {}/{} ", app.shown_batch + 1, app.batches.len())
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
        app.batches.len(),
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
            batch.done,
            batch.calls.len(),
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
    for offset in 0..height.min(batch.line_count().saturating_sub(first)) {
        let line_no = first + offset;
        let row_area = Rect {
            y: rows_area.y + offset as u16,
            height: 1,
            ..rows_area
        };
        match batch.row_at(line_no) {
            Some(index) => row_line(app, index, &batch.calls[index], width).render(row_area, buf),
            None => Line::styled(
                format!("{:─^width$}", " barrier "),
                Style::default().fg(Color::DarkGray),
            )
            .render(row_area, buf),
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

fn row_line(app: &App, index: usize, row: &CallRow, width: usize) -> Line<'static> {
    let mode = match row.mode {
        ToolExecutionMode::Parallel => Span::styled("PAR ", Style::default().fg(Color::Cyan)),
        ToolExecutionMode::Exclusive => Span::styled("EXCL", Style::default().fg(Color::Magenta)),
    };
    let status = match &row.outcome {
        Some(outcome) => match outcome.code() {
            None => Span::styled("ok", Style::default().fg(Color::Green)),
            Some(code) => Span::styled(code.as_str(), Style::default().fg(Color::Red)),
        },
        None => {
            let style = match row.stage {
                Stage::AwaitingApproval => Style::default().fg(Color::Yellow).add_modifier(Modifier::BOLD),
                Stage::Running => Style::default().fg(Color::Blue),
                _ => Style::default().fg(Color::Gray),
            };
            Span::styled(row.stage.label(), style)
        }
    };
    let elapsed = match (row.started, row.ended) {
        (Some(start), Some(end)) => text::duration(end.saturating_duration_since(start)),
        (Some(start), None) => text::duration(app.now.saturating_duration_since(start)),
        _ => String::new(),
    };
    // Narrow panes (an 80-column screen) get narrower columns and no time
    // (the detail's trail has it), so the outcome always shows in full.
    let narrow = width < 72;
    let (index_width, id_width, tool_width, status_width) = if narrow { (4, 8, 11, 23) } else { (5, 12, 18, 24) };
    let call_id = text::fit(&crate::sanitize::escape(&row.call.call_id), id_width);
    let tool = text::fit(&crate::sanitize::escape(&row.call.name), tool_width);
    let warn = crate::sanitize::needs_warning(&row.call.call_id) || crate::sanitize::needs_warning(&row.call.name);
    let status_text = text::fit(&status.content, status_width);
    let mut spans = vec![
        Span::styled(
            format!("{:>index_width$} ", index + 1),
            Style::default().fg(Color::DarkGray),
        ),
        Span::raw(format!("{call_id:<id_width$} {tool:<tool_width$} ")),
        mode,
        Span::raw(" "),
        Span::styled(format!("{status_text:<status_width$}"), status.style),
    ];
    if !narrow {
        spans.push(Span::styled(
            format!("{elapsed:>7}"),
            Style::default().fg(Color::DarkGray),
        ));
    }
    let used = index_width + 1 + id_width + 1 + tool_width + 1 + 5 + status_width + if narrow { 0 } else { 7 };
    if let Some(decided) = &row.decided_by {
        let room = width.saturating_sub(used + 2);
        if room > 4 {
            spans.push(Span::styled(
                format!("  {}", text::fit(decided, room)),
                Style::default().fg(Color::DarkGray),
            ));
        }
    }
    if warn {
        spans.push(text::badge());
    }
    let mut line = Line::from(spans);
    if index == app.selected_call {
        line = line.style(Style::default().add_modifier(Modifier::REVERSED));
    }
    line
}
