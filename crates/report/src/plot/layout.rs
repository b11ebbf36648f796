//! The geometry of a figure: panel and title sizes, panels per row, and the width and height
//! a figure's sections need.

use super::figure::Section;
use super::text::wrap;

pub(super) const PANEL_W: u32 = 620;
pub(super) const PANEL_H: u32 = 380;
/// A section title's first line; every further line adds [`TITLE_LINE_H`].
pub(super) const SECTION_TITLE_H: u32 = 34;
pub(super) const TITLE_LINE_H: u32 = 22;
pub(super) const TITLE_SIZE: f64 = 17.0;
pub(super) const LEGEND_H: u32 = 30;
/// The `PARTIAL RESULT` banner.
pub(super) const BANNER_H: u32 = 36;

pub(super) fn columns_for(panels: usize) -> usize {
    panels.clamp(1, 2)
}

/// The lines of a section's title in a figure `width` pixels wide.
pub(super) fn title_lines(s: &Section, width: u32) -> Vec<String> {
    wrap(&s.title, TITLE_SIZE, width as f64 - 24.0)
}

pub(super) fn section_height(s: &Section, width: u32) -> u32 {
    let cols = columns_for(s.panels.len());
    let rows = s.panels.len().div_ceil(cols).max(1);
    let extra = (title_lines(s, width).len() as u32 - 1) * TITLE_LINE_H;
    SECTION_TITLE_H + extra + LEGEND_H + rows as u32 * PANEL_H
}

pub(super) fn figure_width(sections: &[Section]) -> u32 {
    let cols = sections
        .iter()
        .map(|s| columns_for(s.panels.len()))
        .max()
        .unwrap_or(1);
    cols as u32 * PANEL_W
}

pub(super) fn figure_size(sections: &[Section], banner: bool) -> (u32, u32) {
    let w = figure_width(sections);
    let h: u32 = sections.iter().map(|s| section_height(s, w)).sum();
    (w, h.max(PANEL_H) + if banner { BANNER_H } else { 0 })
}
