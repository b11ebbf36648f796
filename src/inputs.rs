//! Input lists of `--goal` and `--noise`: each value is a file, a glob (`'calibration/*.h5'`,
//! quoted so that the shell leaves it alone) or a directory (every `*.h5` resp. schedule file in
//! it), expanded in sorted order; plus content hashes and the labels of cells.

use std::path::{Path, PathBuf};

use anyhow::{bail, Context, Result};
use sha2::{Digest, Sha256};

/// What a directory given to a flag contributes.
#[derive(Clone, Copy)]
pub enum Kind {
    /// `--goal`: schedule files (`*.goal`, and LogGOPSim's binary `*.bin`).
    Schedule,
    /// `--noise`: `*.h5` profiles.
    Profile,
}

impl Kind {
    fn flag(self) -> &'static str {
        match self {
            Kind::Schedule => "--goal",
            Kind::Profile => "--noise",
        }
    }
    fn extensions(self) -> &'static [&'static str] {
        match self {
            Kind::Schedule => &["goal", "bin"],
            Kind::Profile => &["h5"],
        }
    }
}

fn is_glob(s: &str) -> bool {
    s.contains(['*', '?', '['])
}

/// Expands the values of a flag into files, keeping the order of the values; a glob or a
/// directory contributes its matches sorted by path. Duplicates are dropped (first kept).
pub fn expand(values: &[PathBuf], kind: Kind) -> Result<Vec<PathBuf>> {
    let mut out: Vec<PathBuf> = Vec::new();
    for v in values {
        let text = v.to_string_lossy();
        let mut found: Vec<PathBuf> = if v.is_dir() {
            let mut files = Vec::new();
            for e in std::fs::read_dir(v)
                .with_context(|| format!("{} {}: cannot list the directory", kind.flag(), text))?
            {
                let p = e?.path();
                let ext = p.extension().and_then(|e| e.to_str()).unwrap_or("");
                if p.is_file() && kind.extensions().contains(&ext) {
                    files.push(p);
                }
            }
            if files.is_empty() {
                bail!(
                    "{} {}: the directory has no {} files",
                    kind.flag(),
                    text,
                    kind.extensions()
                        .iter()
                        .map(|e| format!("*.{e}"))
                        .collect::<Vec<_>>()
                        .join(" or ")
                );
            }
            files
        } else if !v.exists() && is_glob(&text) {
            let paths = glob::glob(&text)
                .with_context(|| format!("{} {}: not a valid pattern", kind.flag(), text))?;
            let mut files = Vec::new();
            for p in paths {
                let p = p?;
                if p.is_file() {
                    files.push(p);
                }
            }
            if files.is_empty() {
                bail!("{} {}: the pattern matches no file", kind.flag(), text);
            }
            files
        } else {
            vec![v.clone()]
        };
        found.sort();
        for f in found {
            if !out.contains(&f) {
                out.push(f);
            }
        }
    }
    Ok(out)
}

/// SHA-256 of a file's bytes, lower-case hex.
pub fn sha256_file(path: &Path) -> Result<String> {
    let mut f =
        std::fs::File::open(path).with_context(|| format!("cannot read {}", path.display()))?;
    let mut h = Sha256::new();
    std::io::copy(&mut f, &mut h).with_context(|| format!("cannot read {}", path.display()))?;
    Ok(hex(&h.finalize()))
}

/// A reader that hashes the bytes of a file as they are read, so that a parser's one pass
/// also gives the file's SHA-256: bytes read in order extend the hash, a seek elsewhere leaves
/// a gap that [`HashingReader::finish`] reads at the end (a parser that reads the file front to
/// back, as both GOAL readers do, reads nothing twice).
pub struct HashingReader<R> {
    inner: R,
    /// The inner reader's position.
    pos: u64,
    /// Bytes `0..hashed` are in `h`.
    hashed: u64,
    h: Sha256,
}

impl<R: std::io::Read + std::io::Seek> HashingReader<R> {
    pub fn new(inner: R) -> HashingReader<R> {
        HashingReader {
            inner,
            pos: 0,
            hashed: 0,
            h: Sha256::new(),
        }
    }

    /// The SHA-256 of the whole file, lower-case hex (reading what the parser skipped).
    pub fn finish(mut self) -> std::io::Result<String> {
        use std::io::SeekFrom;
        self.inner.seek(SeekFrom::Start(self.hashed))?;
        let mut buf = vec![0u8; 1 << 16];
        loop {
            match self.inner.read(&mut buf) {
                Ok(0) => break,
                Ok(n) => self.h.update(&buf[..n]),
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                Err(e) => return Err(e),
            }
        }
        Ok(hex(&self.h.finalize()))
    }
}

impl<R: std::io::Read> std::io::Read for HashingReader<R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = self.inner.read(buf)?;
        let end = self.pos + n as u64;
        if self.pos <= self.hashed && end > self.hashed {
            self.h.update(&buf[(self.hashed - self.pos) as usize..n]);
            self.hashed = end;
        }
        self.pos = end;
        Ok(n)
    }
}

impl<R: std::io::Seek> std::io::Seek for HashingReader<R> {
    fn seek(&mut self, to: std::io::SeekFrom) -> std::io::Result<u64> {
        self.pos = self.inner.seek(to)?;
        Ok(self.pos)
    }
}

/// SHA-256 of bytes, lower-case hex.
pub fn sha256_bytes(bytes: &[u8]) -> String {
    hex(&Sha256::digest(bytes))
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// Labels for a list of items: `preferred(i)` unless two items share it, then the path.
pub fn unique_names(paths: &[PathBuf], preferred: impl Fn(usize) -> String) -> Vec<String> {
    let names: Vec<String> = (0..paths.len()).map(&preferred).collect();
    names
        .iter()
        .enumerate()
        .map(|(i, n)| {
            if names.iter().filter(|m| *m == n).count() > 1 {
                paths[i].display().to_string()
            } else {
                n.clone()
            }
        })
        .collect()
}

/// The file's name without its extension.
pub fn stem(path: &Path) -> String {
    path.file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_else(|| path.display().to_string())
}

/// A word quoted for a POSIX shell when it needs it.
pub fn shell_quote(a: &str) -> String {
    if !a.is_empty()
        && a.chars()
            .all(|c| c.is_ascii_alphanumeric() || "-_./=,:+@%".contains(c))
    {
        a.to_string()
    } else {
        format!("'{}'", a.replace('\'', "'\\''"))
    }
}

/// Flags that say where and how a result is written, how fast it is computed or what is
/// explained about it, not what it is: left out of the recorded command with their values.
const NOT_RESULT_FLAGS: [&str; 14] = [
    "--output",
    "--format",
    "--threads",
    "--engine",
    "--samples",
    "--plot",
    "--report",
    "--shard",
    "--critical-path-top",
    "--timeline",
    "--timeline-rep",
    "--timeline-ranks",
    "--timeline-window",
    "--timeline-max-size",
];

/// The same without a separate value (switches, and `--critical-path[=FILE]`).
const NOT_RESULT_SWITCHES: [&str; 4] = ["-q", "--quiet", "--sensitivity", "--critical-path"];

/// The command that makes a run's result: `loggops-sim` and the arguments as typed (each word
/// quoted for a POSIX shell when it needs it), without the flags of [`NOT_RESULT_FLAGS`] and
/// [`NOT_RESULT_SWITCHES`]. So results of different thread counts, engines, output files,
/// shards or explanations of one run record the same command, and it reproduces the result when run
/// again (with any output flags).
pub fn result_command(args: impl IntoIterator<Item = String>) -> String {
    let mut words = vec!["loggops-sim".to_string()];
    let mut it = args.into_iter().skip(1);
    while let Some(a) = it.next() {
        let name = a.split('=').next().unwrap_or("");
        if NOT_RESULT_SWITCHES.contains(&name) {
            continue;
        }
        if NOT_RESULT_FLAGS.contains(&name) {
            if !a.contains('=') {
                it.next();
            }
            continue;
        }
        words.push(shell_quote(&a));
    }
    words.join(" ")
}

/// [`result_command`] of this process.
pub fn command_line() -> String {
    result_command(std::env::args())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn directories_and_globs_expand_sorted() {
        let d = tempfile::tempdir().unwrap();
        for f in ["b.h5", "a.h5", "c.txt", "x.goal"] {
            std::fs::write(d.path().join(f), "x").unwrap();
        }
        let got = expand(&[d.path().to_path_buf()], Kind::Profile).unwrap();
        assert_eq!(got, vec![d.path().join("a.h5"), d.path().join("b.h5")]);
        let pat = d.path().join("*.h5");
        let got = expand(&[pat, d.path().join("a.h5")], Kind::Profile).unwrap();
        assert_eq!(got, vec![d.path().join("a.h5"), d.path().join("b.h5")]);
        let got = expand(&[d.path().to_path_buf()], Kind::Schedule).unwrap();
        assert_eq!(got, vec![d.path().join("x.goal")]);
        let e = expand(&[d.path().join("*.bin")], Kind::Schedule).unwrap_err();
        assert!(
            e.to_string().ends_with("the pattern matches no file"),
            "{e}"
        );
    }

    #[test]
    fn the_recorded_command_leaves_out_output_flags() {
        let args = "target/release/loggops-sim --goal a.goal --threads 3 -q --format=json \
                    --output o.json --plot runtime=p.svg --seed 2 --report r.html --shard 1/2 \
                    -o 5us --critical-path --timeline t.json --critical-path=cp.json \
                    --sensitivity"
            .split_whitespace()
            .map(String::from);
        assert_eq!(
            result_command(args),
            "loggops-sim --goal a.goal --seed 2 -o 5us"
        );
        let quoted = ["x", "--goal", "my file.goal"].map(String::from);
        assert_eq!(result_command(quoted), "loggops-sim --goal 'my file.goal'");
    }

    #[test]
    fn hashes_and_names() {
        assert_eq!(
            sha256_bytes(b"abc"),
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
        );
        let paths = vec![
            PathBuf::from("a/x.h5"),
            PathBuf::from("b/x.h5"),
            PathBuf::from("c/y.h5"),
        ];
        assert_eq!(
            unique_names(&paths, |i| stem(&paths[i])),
            vec!["a/x.h5", "b/x.h5", "y"]
        );
    }
}

#[cfg(test)]
mod hashing_tests {
    use super::*;
    use std::io::{Cursor, Read, Seek, SeekFrom};

    /// Whatever a parser reads, in whatever order, `finish` gives the whole file's SHA-256.
    #[test]
    fn hashing_reader_gives_the_file_hash_for_any_read_pattern() {
        let data: Vec<u8> = (0..100_000u32).map(|i| (i * 7 + i / 13) as u8).collect();
        let want = sha256_bytes(&data);
        // Front to back in odd chunks, stopping early, or jumping back and forth.
        let patterns: [&[(u64, usize)]; 4] = [
            &[(0, 4096), (4096, 70_000), (74_096, 25_904)],
            &[(0, 10)],
            &[(0, 8), (50_000, 100), (8, 1000), (99_990, 10)],
            &[],
        ];
        for reads in patterns {
            let mut r = HashingReader::new(Cursor::new(data.clone()));
            for &(at, n) in reads {
                r.seek(SeekFrom::Start(at)).unwrap();
                let mut buf = vec![0u8; n];
                r.read_exact(&mut buf).unwrap();
                assert_eq!(buf, data[at as usize..at as usize + n]);
            }
            assert_eq!(r.finish().unwrap(), want, "{reads:?}");
        }
    }
}
