//! Tests of the plots' parts: arguments, ticks and their labels, wrapping, PNG glyph placement,
//! ECDF steps.

use plotters::prelude::*;

use super::axis::{fmt_axis, linear_ticks, log_ticks, pct_tick, tick_decimals};
use super::layout::{PANEL_W, TITLE_SIZE};
use super::text::{font, text_width, wrap, Typeset, FONT};
use super::*;

#[test]
fn plot_arguments() {
    assert_eq!(
        parse_plot_arg("out.svg").unwrap(),
        (PlotKind::All, "out.svg".into())
    );
    assert_eq!(
        parse_plot_arg("cost=x/c.PNG").unwrap(),
        (PlotKind::Cost, "x/c.PNG".into())
    );
    assert_eq!(
        parse_plot_arg("dir=a/b.svg").unwrap_err(),
        "unknown plot `dir`: expected one of all, runtime, cost, ecdf"
    );
    assert_eq!(
        parse_plot_arg("out.pdf").unwrap_err(),
        "out.pdf: a plot file must end in .svg or .png (e.g. runtime.svg, or cost=cost.png)"
    );
    // A `=` after a `/` is part of the path.
    assert_eq!(
        parse_plot_arg("out/a=b.svg").unwrap(),
        (PlotKind::All, "out/a=b.svg".into())
    );
}

#[test]
fn ticks() {
    assert_eq!(
        linear_ticks(0.0, 100.0),
        vec![0.0, 20.0, 40.0, 60.0, 80.0, 100.0]
    );
    let t = log_ticks(6.0, 9.0);
    let back: Vec<f64> = t.iter().map(|e| (10f64.powf(*e)).round()).collect();
    assert_eq!(back, vec![1e6, 2e6, 5e6, 1e7, 2e7, 5e7, 1e8, 2e8, 5e8, 1e9]);
}

/// Titles wrap inside a 620 px panel: no line wider than the figure.
#[test]
fn long_titles_wrap_inside_the_figure() {
    let title = "Runtime of ring_512MiB and dissemination_16B on aws, azure, gcp and \
                 alps at 4, 64, 1024 and 16384 nodes, every noise mode";
    let lines = wrap(title, TITLE_SIZE, PANEL_W as f64 - 24.0);
    assert!(lines.len() > 1, "{lines:?}");
    for l in &lines {
        assert!(text_width(l, TITLE_SIZE) <= PANEL_W as f64 - 24.0, "{l}");
    }
    assert_eq!(lines.join(" "), title);
}

/// PNG text is set glyph by glyph at its pen with its side bearing: every glyph's ink
/// starts where the font puts it (within a pixel), so `+500.0%` has no gap after the
/// point (plotters' own bitmap text started every glyph's ink at the pen).
#[test]
fn png_glyphs_sit_at_their_side_bearings() {
    use ab_glyph::{Font, ScaleFont};
    let (w, h) = (400u32, 80u32);
    let size = 40.0;
    let text = "+500.0%";
    let mut buf = vec![255u8; (w * h * 3) as usize];
    {
        let root = Typeset(BitMapBackend::with_buffer(&mut buf, (w, h))).into_drawing_area();
        root.draw_text(text, &(FONT, size).into_font().color(&BLACK), (10, 10))
            .unwrap();
        root.present().unwrap();
    }
    // Columns with ink, grouped into runs (one per glyph: none of these touch).
    let ink = |x: u32| (0..h).any(|y| buf[((y * w + x) * 3) as usize] < 128);
    let mut runs = Vec::new();
    let mut x = 0;
    while x < w {
        if ink(x) {
            let a = x;
            while x < w && ink(x) {
                x += 1;
            }
            runs.push(a as f32);
        }
        x += 1;
    }
    // Where the font puts each glyph's ink.
    let f = font().unwrap();
    let sf = f.as_scaled(size as f32);
    let mut pen = 0f32;
    let mut prev = None;
    let mut want = Vec::new();
    for c in text.chars() {
        let id = sf.glyph_id(c);
        if let Some(p) = prev {
            pen += sf.kern(p, id);
        }
        prev = Some(id);
        want.push(10.0 + pen + sf.h_side_bearing(id));
        pen += sf.h_advance(id);
    }
    assert_eq!(runs.len(), want.len(), "{runs:?} against {want:?}");
    for (got, want) in runs.iter().zip(&want) {
        assert!((got - want).abs() <= 1.5, "{runs:?} against {want:?}");
    }
}

/// Tail panels (`1 − CDF`, log y) label small probabilities with their first digit.
#[test]
fn small_fractions_keep_a_digit() {
    assert_eq!(fmt_axis(AxisUnit::Fraction, 0.5), "50%");
    assert_eq!(fmt_axis(AxisUnit::Fraction, 0.001), "0.1%");
    assert_eq!(fmt_axis(AxisUnit::Fraction, 0.00001), "0.001%");
    assert_eq!(fmt_axis(AxisUnit::Fraction, 0.0), "0%");
}

#[test]
fn percent_ticks_are_exact() {
    let t = [0.0, 0.25, 0.5, 0.75, 1.0];
    let d = tick_decimals(&t);
    let l: Vec<String> = t.iter().map(|&v| pct_tick(v, d)).collect();
    assert_eq!(l, ["0.00%", "+0.25%", "+0.50%", "+0.75%", "+1.00%"]);
    assert_eq!(tick_decimals(&[-10.0, 0.0, 10.0, 20.0]), 0);
    assert_eq!(tick_decimals(&[-0.02, 0.0, 0.02]), 2);
}

#[test]
fn ecdf_steps() {
    assert_eq!(
        ecdf_points(&[3, 1]),
        vec![(1.0, 0.0), (1.0, 0.5), (3.0, 0.5), (3.0, 1.0)]
    );
}
