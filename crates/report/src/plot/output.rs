//! Output: a figure rendered as an SVG string or file, or drawn into a bitmap and written as
//! PNG, every file through [`loggops_output::write_atomic`]; the public entry points.

use std::path::Path;

use plotters::coord::Shift;
use plotters::prelude::*;

use super::data::{banner, sections};
use super::draw::draw_figure;
use super::figure::{CurvePanel, Panel, Section};
use super::layout::figure_size;
use super::text::{register_font, Typeset};
use super::{DrawResult, PlotError, PlotKind};
use crate::model::RunResult;

#[derive(Clone, Copy, PartialEq, Eq)]
pub(super) enum ImageFormat {
    Svg,
    Png,
}

pub(super) fn image_format(path: &Path) -> Option<ImageFormat> {
    match path
        .extension()
        .and_then(|e| e.to_str())
        .map(|e| e.to_ascii_lowercase())
        .as_deref()
    {
        Some("svg") => Some(ImageFormat::Svg),
        Some("png") => Some(ImageFormat::Png),
        _ => None,
    }
}
fn render(
    sections: &[Section],
    banner: Option<&str>,
    path: Option<&Path>,
) -> DrawResult<Option<String>> {
    register_font();
    let size = figure_size(sections, banner.is_some());
    match path.map(image_format) {
        None | Some(Some(ImageFormat::Svg)) => {
            let mut svg = String::new();
            {
                let root = SVGBackend::with_string(&mut svg, size).into_drawing_area();
                draw_figure(&root, sections, banner)?;
            }
            if let Some(p) = path {
                loggops_output::write_atomic(p, |w| w.write_all(svg.as_bytes())).map_err(
                    |source| PlotError::Io {
                        path: p.display().to_string(),
                        source,
                    },
                )?;
                return Ok(None);
            }
            Ok(Some(svg))
        }
        Some(Some(ImageFormat::Png)) => {
            let p = path.expect("a path");
            write_png(p, size, |root| draw_figure(root, sections, banner))?;
            Ok(None)
        }
        Some(None) => Err(PlotError::Extension(
            path.map(|p| p.display().to_string()).unwrap_or_default(),
        )),
    }
}

/// Draws into an RGB buffer, encodes it as PNG and writes the file through
/// [`loggops_output::write_atomic`] (like every other output).
fn write_png(
    path: &Path,
    size: (u32, u32),
    draw: impl FnOnce(&DrawingArea<Typeset<BitMapBackend<'_>>, Shift>) -> DrawResult<()>,
) -> DrawResult<()> {
    let io = |source: std::io::Error| PlotError::Io {
        path: path.display().to_string(),
        source,
    };
    let mut rgb = vec![0u8; size.0 as usize * size.1 as usize * 3];
    {
        let root = Typeset(BitMapBackend::with_buffer(&mut rgb, size)).into_drawing_area();
        draw(&root)?;
    }
    let image = image::RgbImage::from_raw(size.0, size.1, rgb).expect("the buffer fits the size");
    let mut png = std::io::Cursor::new(Vec::new());
    image
        .write_to(&mut png, image::ImageOutputFormat::Png)
        .map_err(|e| io(std::io::Error::other(e)))?;
    loggops_output::write_atomic(path, |w| w.write_all(png.get_ref())).map_err(io)
}

/// The figure `kind` of `run` as an SVG document.
pub fn render_svg(run: &RunResult, kind: PlotKind) -> Result<String, PlotError> {
    let s = sections(run, kind)?;
    Ok(render(&s, banner(run).as_deref(), None)?.unwrap_or_default())
}
/// Whether [`write_plot`] can draw the figure `kind` of `run` into `path` (its extension, and
/// something to plot), without drawing or writing: a caller with several outputs checks every
/// one before it writes any.
pub fn check_plot(path: &Path, run: &RunResult, kind: PlotKind) -> Result<(), PlotError> {
    if image_format(path).is_none() {
        return Err(PlotError::Extension(path.display().to_string()));
    }
    sections(run, kind).map(|_| ())
}

/// Writes the figure `kind` of `run` to `path` (`.svg` or `.png`), atomically.
pub fn write_plot(path: &Path, run: &RunResult, kind: PlotKind) -> Result<(), PlotError> {
    if image_format(path).is_none() {
        return Err(PlotError::Extension(path.display().to_string()));
    }
    let s = sections(run, kind)?;
    render(&s, banner(run).as_deref(), Some(path)).map(|_| ())
}

/// A figure of curve panels (e.g. a profile's distributions), `title` above them; written to
/// `path` (`.svg` or `.png`), or returned as SVG when `path` is `None`.
pub fn write_curves(
    path: Option<&Path>,
    title: &str,
    panels: Vec<CurvePanel>,
) -> Result<Option<String>, PlotError> {
    if panels.is_empty() {
        return Err(PlotError::Empty("no distributions to plot".into()));
    }
    let s = [Section {
        title: title.to_string(),
        hues: Vec::new(),
        panels: panels.into_iter().map(Panel::Curves).collect(),
    }];
    render(&s, None, path)
}
