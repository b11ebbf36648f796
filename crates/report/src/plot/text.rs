//! Text: the embedded DejaVu Sans font (registered with plotters, measured with `ab_glyph`),
//! word wrapping, and [`Typeset`], the backend that sets PNG text glyph by glyph.

use std::sync::Once;

use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, VPos};
use plotters_backend::{BackendColor, BackendCoord, DrawingErrorKind};

pub(super) const FONT: &str = "sans-serif";

static FONT_INIT: Once = Once::new();

/// Registers the embedded font with plotters (once per process).
pub(super) fn register_font() {
    FONT_INIT.call_once(|| {
        static BYTES: &[u8] = include_bytes!("../../fonts/DejaVuSans.ttf");
        // The font is part of the binary; if it did not parse, every text would be missing.
        let _ = plotters::style::register_font(FONT, FontStyle::Normal, BYTES);
    });
}
static FONT_BYTES: &[u8] = include_bytes!("../../fonts/DejaVuSans.ttf");

/// The embedded font for measuring and setting text ourselves.
pub(super) fn font() -> Option<ab_glyph::FontRef<'static>> {
    ab_glyph::FontRef::try_from_slice(FONT_BYTES).ok()
}

/// Width of `text` in pixels at `size` (plotters' size: pixels per line), with kerning.
pub(super) fn text_width(text: &str, size: f64) -> f64 {
    use ab_glyph::{Font, ScaleFont};
    let Some(f) = font() else {
        return text.chars().count() as f64 * size * 0.55;
    };
    let f = f.as_scaled(size as f32);
    let mut w = 0f32;
    let mut prev = None;
    for c in text.chars() {
        let g = f.glyph_id(c);
        if let Some(p) = prev {
            w += f.kern(p, g);
        }
        w += f.h_advance(g);
        prev = Some(g);
    }
    w as f64
}
/// `text` broken into lines of at most `width` pixels at `size` (at word boundaries).
pub(super) fn wrap(text: &str, size: f64, width: f64) -> Vec<String> {
    let mut lines: Vec<String> = Vec::new();
    let mut cur = String::new();
    for word in text.split(' ') {
        let trial = if cur.is_empty() {
            word.to_string()
        } else {
            format!("{cur} {word}")
        };
        if !cur.is_empty() && text_width(&trial, size) > width {
            lines.push(std::mem::take(&mut cur));
            cur = word.to_string();
        } else {
            cur = trial;
        }
    }
    if !cur.is_empty() || lines.is_empty() {
        lines.push(cur);
    }
    lines
}

/// A backend that sets text itself, glyph by glyph at its pen position with its side bearing
/// and kerning, and passes everything else on. plotters' own bitmap text drops the side
/// bearings (every glyph's ink starts at the pen), which spaced PNG text unevenly
/// (`+500. 0%`, `l og`).
pub(super) struct Typeset<B>(pub(super) B);

impl<B: DrawingBackend> DrawingBackend for Typeset<B> {
    type ErrorType = B::ErrorType;
    fn get_size(&self) -> (u32, u32) {
        self.0.get_size()
    }
    fn ensure_prepared(&mut self) -> Result<(), DrawingErrorKind<B::ErrorType>> {
        self.0.ensure_prepared()
    }
    fn present(&mut self) -> Result<(), DrawingErrorKind<B::ErrorType>> {
        self.0.present()
    }
    fn draw_pixel(
        &mut self,
        point: BackendCoord,
        color: BackendColor,
    ) -> Result<(), DrawingErrorKind<B::ErrorType>> {
        self.0.draw_pixel(point, color)
    }
    fn draw_line<S: plotters_backend::BackendStyle>(
        &mut self,
        from: BackendCoord,
        to: BackendCoord,
        style: &S,
    ) -> Result<(), DrawingErrorKind<B::ErrorType>> {
        self.0.draw_line(from, to, style)
    }
    fn draw_rect<S: plotters_backend::BackendStyle>(
        &mut self,
        upper_left: BackendCoord,
        bottom_right: BackendCoord,
        style: &S,
        fill: bool,
    ) -> Result<(), DrawingErrorKind<B::ErrorType>> {
        self.0.draw_rect(upper_left, bottom_right, style, fill)
    }
    fn draw_path<S: plotters_backend::BackendStyle, I: IntoIterator<Item = BackendCoord>>(
        &mut self,
        path: I,
        style: &S,
    ) -> Result<(), DrawingErrorKind<B::ErrorType>> {
        self.0.draw_path(path, style)
    }
    fn draw_circle<S: plotters_backend::BackendStyle>(
        &mut self,
        center: BackendCoord,
        radius: u32,
        style: &S,
        fill: bool,
    ) -> Result<(), DrawingErrorKind<B::ErrorType>> {
        self.0.draw_circle(center, radius, style, fill)
    }
    fn fill_polygon<S: plotters_backend::BackendStyle, I: IntoIterator<Item = BackendCoord>>(
        &mut self,
        vert: I,
        style: &S,
    ) -> Result<(), DrawingErrorKind<B::ErrorType>> {
        self.0.fill_polygon(vert, style)
    }
    fn blit_bitmap(
        &mut self,
        pos: BackendCoord,
        size: (u32, u32),
        src: &[u8],
    ) -> Result<(), DrawingErrorKind<B::ErrorType>> {
        self.0.blit_bitmap(pos, size, src)
    }
    fn draw_text<TStyle: plotters_backend::BackendTextStyle>(
        &mut self,
        text: &str,
        style: &TStyle,
        pos: BackendCoord,
    ) -> Result<(), DrawingErrorKind<B::ErrorType>> {
        use ab_glyph::{point, Font, ScaleFont};
        let color = style.color();
        let Some(f) = font().filter(|_| color.alpha > 0.0) else {
            return self.0.draw_text(text, style, pos);
        };
        let size = style.size();
        let sf = f.as_scaled(size as f32);
        // The box plotters lays out: the advances' width, `size / 1.24` high, the baseline at
        // `size / 2` (as its own glyph placement has it).
        let width = text_width(text, size).round() as i32;
        let height = (size / 1.24) as i32;
        let dx = match style.anchor().h_pos {
            HPos::Left => 0,
            HPos::Right => -width,
            HPos::Center => -width / 2,
        };
        let dy = match style.anchor().v_pos {
            VPos::Top => 0,
            VPos::Center => -height / 2,
            VPos::Bottom => -height,
        };
        let trans = style.transform();
        let (w, h) = self.get_size();
        let mut pen = 0f32;
        let mut prev = None;
        for c in text.chars() {
            let id = sf.glyph_id(c);
            if let Some(p) = prev {
                pen += sf.kern(p, id);
            }
            prev = Some(id);
            let glyph = id.with_scale_and_position(sf.scale(), point(pen, size as f32 / 2.0));
            pen += sf.h_advance(id);
            let Some(outline) = f.outline_glyph(glyph) else {
                continue;
            };
            let b = outline.px_bounds();
            let mut px = Vec::new();
            outline.draw(|x, y, cov| px.push((x, y, cov)));
            for (x, y, cov) in px {
                let (lx, ly) = (b.min.x as i32 + x as i32, b.min.y as i32 + y as i32);
                let (tx, ty) = trans.transform(lx + dx, ly + dy);
                let (x, y) = (pos.0 + tx, pos.1 + ty);
                if x >= 0 && y >= 0 && x < w as i32 && y < h as i32 && cov > 0.0 {
                    self.0.draw_pixel(
                        (x, y),
                        BackendColor {
                            alpha: color.alpha * cov.min(1.0) as f64,
                            rgb: color.rgb,
                        },
                    )?;
                }
            }
        }
        Ok(())
    }
}
