//! The live batch: a row per call in declared order, barriers between
//! groups, a progress gauge. A frame draws only the visible rows.

use ratatui::buffer::Buffer;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::style::{Color, Modifier, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::{LineGauge, Widget};

use super::{is_focused, pane_block, text};
use crate::app::{App, CallRow, Pane, Stage};
use tether_tools::ToolExecutionMode;

pub fn render(app: &App, area: Rect, buf: &mut Buffer) {
    let focused = is_focused(app, Pane::Batch);
    let Some(batch) = app.current_batch() else {
        let hint = match app.pending_batches {
            Some(n) if n > 0 => format!("{n} batches to replay: press r to run the next"),
            _ => "no batch yet".to_owned(),
        };
        let block = pane_block(Line::from(" Batch "), focused);
        let inner = block.inner(area);
        block.render(area, buf);
        Line::styled(hint, Style::default().fg(Color::DarkGray)).render(inner, buf);
        return;
    };
    let title = format!(
        " Batch {}/{}: {} · {} · max {} ",
        app.shown_batch + 1,
        app.batches.len(),
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
    let call_id = text::fit(&crate::sanitize::escape(&row.call.call_id), 12);
    let tool = text::fit(&crate::sanitize::escape(&row.call.name), 18);
    let warn = crate::sanitize::needs_warning(&row.call.call_id) || crate::sanitize::needs_warning(&row.call.name);
    let mut spans = vec![
        Span::styled(format!("{:>5} ", index + 1), Style::default().fg(Color::DarkGray)),
        Span::raw(format!("{call_id:<12} {tool:<18} ")),
        mode,
        Span::raw(" "),
        Span::raw(format!("{:<24}", "")),
        Span::styled(format!("{elapsed:>7}"), Style::default().fg(Color::DarkGray)),
    ];
    // The status sits in the padded slot, so columns stay aligned.
    let status_width = status.content.chars().count().min(24);
    spans[4] = Span::styled(
        format!("{}{}", status.content, " ".repeat(24 - status_width)),
        status.style,
    );
    // index 6 + ids 12+1 + tool 18+1 + mode 4+1 + status 24 + time 7 = 74 columns so far.
    if let Some(decided) = &row.decided_by {
        let room = width.saturating_sub(76);
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
