//! Opening captures (plain or xz, told apart by magic bytes) and reading them line by line.

use std::fs::File;
use std::io::{self, BufRead, BufReader};
use std::path::Path;

use crate::error::CalibError;

/// The six magic bytes that open every xz stream.
const XZ_MAGIC: [u8; 6] = [0xFD, b'7', b'z', b'X', b'Z', 0x00];
const GZIP_MAGIC: [u8; 2] = [0x1F, 0x8B];
const ZSTD_MAGIC: [u8; 4] = [0x28, 0xB5, 0x2F, 0xFD];
const BZIP2_MAGIC: [u8; 3] = [b'B', b'Z', b'h'];

const BUF_BYTES: usize = 1 << 16;

/// Opens `path` for streaming. xz input (recognised by its magic bytes, whatever the file is called)
/// is decompressed on the fly, including several concatenated xz streams. gzip, zstd and bzip2 input
/// is refused with a clear error.
pub fn open_capture(path: &Path) -> Result<Box<dyn BufRead>, CalibError> {
    let name = path.display().to_string();
    let file = File::open(path).map_err(|source| CalibError::Open {
        path: name.clone(),
        source,
    })?;
    let reader = BufReader::with_capacity(BUF_BYTES, file);
    wrap_reader(reader, &name)
}

/// Like [`open_capture`] for any buffered reader: sniffs the first bytes and adds an xz decoder
/// when they are the xz magic.
pub fn wrap_reader<R: BufRead + 'static>(
    mut reader: R,
    name: &str,
) -> Result<Box<dyn BufRead>, CalibError> {
    let head = peek(&mut reader, XZ_MAGIC.len()).map_err(|source| CalibError::Read {
        path: name.to_string(),
        line: 0,
        source,
    })?;
    if head.starts_with(&XZ_MAGIC) {
        let decoder = liblzma::bufread::XzDecoder::new_multi_decoder(reader);
        return Ok(Box::new(BufReader::with_capacity(BUF_BYTES, decoder)));
    }
    let other = if head.starts_with(&GZIP_MAGIC) {
        Some("gzip")
    } else if head.starts_with(&ZSTD_MAGIC) {
        Some("zstd")
    } else if head.starts_with(&BZIP2_MAGIC) && head.len() >= 4 && head[3].is_ascii_digit() {
        Some("bzip2")
    } else {
        None
    };
    if let Some(what) = other {
        return Err(CalibError::UnsupportedCompression {
            path: name.to_string(),
            what,
        });
    }
    Ok(Box::new(reader))
}

/// Returns up to `n` leading bytes without consuming them. `fill_buf` may return fewer bytes than
/// are in the file only at the very start of an unusual reader; a 64 KiB `BufReader` always holds
/// the first six bytes of a regular file.
fn peek<R: BufRead>(reader: &mut R, n: usize) -> io::Result<Vec<u8>> {
    let buf = reader.fill_buf()?;
    Ok(buf[..buf.len().min(n)].to_vec())
}

/// One line of input.
pub(crate) struct Line<'a> {
    /// 1-based line number.
    pub no: u64,
    /// The text without its line terminator.
    pub text: &'a str,
    /// The line has no line terminator (the last line of a file that was cut short).
    pub unterminated: bool,
}

/// A line reader that keeps the 1-based line number, tolerates invalid UTF-8 (such lines come back
/// with replacement characters, which no parser accepts), strips `\r\n`, and remembers whether the
/// last line ended without a newline (a hint that the file was cut short).
pub(crate) struct Lines {
    reader: Box<dyn BufRead>,
    buf: Vec<u8>,
    text: String,
    line: u64,
    path: String,
    /// True once a line without a trailing newline has been returned (it is the last one).
    last_unterminated: bool,
}

impl Lines {
    pub(crate) fn new(reader: Box<dyn BufRead>, path: &str) -> Lines {
        Lines {
            reader,
            buf: Vec::with_capacity(256),
            text: String::with_capacity(256),
            line: 0,
            path: path.to_string(),
            last_unterminated: false,
        }
    }

    pub(crate) fn path(&self) -> &str {
        &self.path
    }

    /// The next line without its line terminator, or `None` at the end of the input.
    pub(crate) fn next_line(&mut self) -> Result<Option<Line<'_>>, CalibError> {
        if !self.advance()? {
            return Ok(None);
        }
        Ok(Some(Line {
            no: self.line,
            text: &self.text,
            unterminated: self.last_unterminated,
        }))
    }

    /// The next line that is not blank, trimmed of surrounding whitespace, or `None` at the end
    /// of the input. Blank lines are skipped (they still count for the line numbers and for
    /// [`Lines::lines_read`]). The one loop every importer reads its input with.
    pub(crate) fn next_nonblank(&mut self) -> Result<Option<Line<'_>>, CalibError> {
        loop {
            if !self.advance()? {
                return Ok(None);
            }
            if !self.text.trim().is_empty() {
                break;
            }
        }
        Ok(Some(Line {
            no: self.line,
            text: self.text.trim(),
            unterminated: self.last_unterminated,
        }))
    }

    /// Number of lines read so far, blank ones included (0: the input was empty).
    pub(crate) fn lines_read(&self) -> u64 {
        self.line
    }

    /// Reads the next line into `text`; false at the end of the input.
    fn advance(&mut self) -> Result<bool, CalibError> {
        self.buf.clear();
        let n = self
            .reader
            .read_until(b'\n', &mut self.buf)
            .map_err(|source| CalibError::Read {
                path: self.path.clone(),
                line: self.line,
                source,
            })?;
        if n == 0 {
            return Ok(false);
        }
        self.line += 1;
        if self.buf.last() == Some(&b'\n') {
            self.buf.pop();
            if self.buf.last() == Some(&b'\r') {
                self.buf.pop();
            }
        } else {
            self.last_unterminated = true;
        }
        self.text.clear();
        match std::str::from_utf8(&self.buf) {
            Ok(s) => self.text.push_str(s),
            Err(_) => self.text.push_str(&String::from_utf8_lossy(&self.buf)),
        }
        Ok(true)
    }
}

/// Opens `path` and returns a line reader over its (decompressed) text.
pub(crate) fn lines_of(path: &Path) -> Result<Lines, CalibError> {
    let name = path.display().to_string();
    Ok(Lines::new(open_capture(path)?, &name))
}

/// Reads at most `max_lines` lines of `reader` (for format sniffing). Returns the lines and whether
/// the input had any byte at all.
pub(crate) fn head_lines(lines: &mut Lines, max_lines: usize) -> Result<Vec<String>, CalibError> {
    let mut out = Vec::new();
    while out.len() < max_lines {
        match lines.next_line()? {
            Some(l) => out.push(l.text.to_string()),
            None => break,
        }
    }
    Ok(out)
}

/// A line reader over any buffered reader (used by the `*_from` entry points); xz input is
/// recognised and decompressed here too.
pub(crate) fn lines_from_reader<R: BufRead + 'static>(
    reader: R,
    name: &str,
) -> Result<Lines, CalibError> {
    Ok(Lines::new(wrap_reader(reader, name)?, name))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lines(text: &'static str) -> Lines {
        lines_from_reader(std::io::Cursor::new(text.as_bytes()), "t.txt").unwrap()
    }

    #[test]
    fn nonblank_lines_are_trimmed_and_keep_their_numbers() {
        let mut l = lines("\n  # a \r\n\t\n1 2\n   \n 3");
        let mut got = Vec::new();
        while let Some(Line {
            no,
            text,
            unterminated,
        }) = l.next_nonblank().unwrap()
        {
            got.push((no, text.to_string(), unterminated));
        }
        assert_eq!(
            got,
            [
                (2, "# a".to_string(), false),
                (4, "1 2".to_string(), false),
                (6, "3".to_string(), true)
            ]
        );
        assert_eq!(l.lines_read(), 6);
        let mut blank = lines("\n \n");
        assert!(blank.next_nonblank().unwrap().is_none());
        assert_eq!(blank.lines_read(), 2);
        assert_eq!(lines("").lines_read(), 0);
    }
}
