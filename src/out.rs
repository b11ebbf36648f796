//! Messages on stderr that never panic.
//!
//! `eprintln!` panics when stderr is a closed pipe (`loggops-sim ... 2>&1 | head -1`, or a
//! reader that went away): "failed printing to stderr: Broken pipe", exit 101. Every message of
//! the CLI goes through [`errln!`] and [`err_text`] instead, which drop what cannot be written,
//! the way a closed stdout already ends a run quietly (`main.rs`). `print!`-style macros are
//! denied in this crate by clippy (`print_stdout`, `print_stderr` in `main.rs`).

use std::fmt;
use std::io::Write;

/// `eprintln!` that ignores write errors (a closed or broken stderr).
macro_rules! errln {
    ($($arg:tt)*) => {
        $crate::out::err_line(format_args!($($arg)*))
    };
}
pub(crate) use errln;

/// Writes one formatted line to stderr, ignoring write errors.
pub fn err_line(args: fmt::Arguments<'_>) {
    let mut e = std::io::stderr().lock();
    let _ = e.write_fmt(args);
    let _ = e.write_all(b"\n");
    let _ = e.flush();
}

/// Writes `text` to stderr as it is, ignoring write errors.
pub fn err_text(text: &str) {
    let mut e = std::io::stderr().lock();
    let _ = e.write_all(text.as_bytes());
    let _ = e.flush();
}
