//! The part of a source line an error message shows under its location.
//!
//! The GOAL and schedule readers print the offending line with a caret under the column. A line
//! can be arbitrarily long (a 20,000-term sum, binary junk read as text), and printing all of it
//! buried the caret in tens of kilobytes of output; a long line is therefore cut to a window
//! around the column, with `…` where text was left out. Control characters other than a tab
//! (a NUL, an escape sequence in binary junk) are shown as `�`, one for one, so that the
//! message cannot drive the terminal and the caret stays under its column.

/// Lines up to this many characters are shown whole.
pub const EXCERPT_MAX_CHARS: usize = 120;
/// Characters shown before the column of a cut line.
const BEFORE: usize = 40;

/// The text to show for `line` with a caret at 1-based character `column`, and the caret's
/// 1-based column in that text (an underline longer than what is shown is the caller's to
/// shorten). A line of at most
/// [`EXCERPT_MAX_CHARS`] characters is returned whole; a longer one is cut to
/// [`EXCERPT_MAX_CHARS`] characters (plus the `…` marks) starting 40 characters before the
/// column.
///
/// ```
/// use loggops_units::excerpt;
/// assert_eq!(excerpt("calc 5x", 7), ("calc 5x".to_string(), 7));
/// let long = "+1".repeat(1000);
/// let (shown, col) = excerpt(&long, 1001);
/// assert_eq!(shown.chars().count(), 122);
/// assert_eq!(shown.chars().nth(col - 1), long.chars().nth(1000));
/// ```
pub fn excerpt(line: &str, column: usize) -> (String, usize) {
    let len = line.chars().count();
    let shown = |c: char| {
        if c.is_control() && c != '\t' {
            char::REPLACEMENT_CHARACTER
        } else {
            c
        }
    };
    if len <= EXCERPT_MAX_CHARS {
        return (line.chars().map(shown).collect(), column);
    }
    let at = column.saturating_sub(1).min(len);
    let start = at.saturating_sub(BEFORE).min(len - EXCERPT_MAX_CHARS);
    let end = start + EXCERPT_MAX_CHARS;
    let mut text = String::new();
    if start > 0 {
        text.push('…');
    }
    text.extend(line.chars().skip(start).take(end - start).map(shown));
    if end < len {
        text.push('…');
    }
    (text, at - start + 1 + usize::from(start > 0))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn control_characters_are_shown_one_for_one() {
        assert_eq!(
            excerpt("c\u{0}\u{1b}[2J\tx", 7),
            ("c\u{fffd}\u{fffd}[2J\tx".to_string(), 7)
        );
        let long = format!("{}\u{7}", "y".repeat(200));
        let (shown, col) = excerpt(&long, 201);
        assert_eq!(shown.chars().nth(col - 1), Some('\u{fffd}'));
    }

    #[test]
    fn short_lines_are_whole() {
        let line = "x".repeat(EXCERPT_MAX_CHARS);
        assert_eq!(excerpt(&line, 120), (line.clone(), 120));
    }

    #[test]
    fn long_lines_keep_the_column_under_the_caret() {
        let line: String = (0..5000)
            .map(|i| char::from(b'a' + (i % 26) as u8))
            .collect();
        for column in [1, 2, 40, 41, 42, 500, 4950, 5000, 5001] {
            let (shown, col) = excerpt(&line, column);
            assert!(shown.chars().count() <= EXCERPT_MAX_CHARS + 2, "{column}");
            if column <= 5000 {
                assert_eq!(
                    shown.chars().nth(col - 1),
                    line.chars().nth(column - 1),
                    "{column}: {shown}"
                );
            } else {
                // The end of the line: the caret sits just after the last character.
                assert_eq!(col, shown.chars().count() + 1, "{column}");
            }
            assert_eq!(shown.starts_with('…'), column > 41, "{column}");
            assert_eq!(shown.ends_with('…'), column < 4921, "{column}");
        }
    }
}
