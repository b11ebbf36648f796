//! File output that never leaves a half-written file behind, and that does the right thing for
//! every kind of path a user may name.
//!
//! [`write_atomic`] decides by what the path is ([`output_target`]):
//!
//! | the path is | what happens |
//! |---|---|
//! | a regular file, or nothing yet | temp file in the same directory, `fsync`, rename over the path: a reader sees the old file or the complete new one, never a part |
//! | a symlink to a regular file (or a dangling symlink) | the same, on the file the link points to; the link stays a link |
//! | a character or block device, FIFO or socket (`/dev/null`, `/dev/full`, a named pipe), or a link to one (`/dev/stdout` on a pipe or terminal) | written straight through, like a shell redirection: such files cannot be replaced, and replacing them (as root) would destroy a device node |
//! | `/dev/stdout`, `/dev/fd/N`, `/proc/…/fd/N` naming a regular file | written straight through too (the descriptor's file, at its start) |
//! | a regular file without write permission (`0444`, or not writable by this user) | refused: renaming over it would silently defeat the protection |
//! | a directory | refused |
//!
//! Every writer of the project (reports, samples, generated schedules, profiles, fit reports)
//! goes through [`write_atomic`].

use std::fs;
use std::io::{self, BufWriter, Write};
use std::path::{Path, PathBuf};

/// How [`write_atomic`] writes to a path.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum OutputTarget {
    /// A regular file (existing or to be created) at this path, symlinks resolved: replaced
    /// atomically (temp file + rename in its directory).
    Replace(PathBuf),
    /// A device, FIFO, socket or descriptor alias: opened for writing and written straight
    /// through (no temp file, no rename, no truncation).
    Stream(PathBuf),
}

impl OutputTarget {
    /// The path that is written (the file a symlink points to, for [`OutputTarget::Replace`]).
    pub fn path(&self) -> &Path {
        match self {
            OutputTarget::Replace(p) | OutputTarget::Stream(p) => p,
        }
    }
}

/// How many symlinks [`output_target`] follows before giving up (Linux's own limit).
const MAX_LINKS: usize = 40;

fn err(kind: io::ErrorKind, msg: String) -> io::Error {
    io::Error::new(kind, msg)
}

/// Paths that name an open descriptor rather than a file (`/dev/stdout`, `/dev/fd/1`,
/// `/proc/self/fd/1`): always written through, never replaced, even when the descriptor is a
/// regular file (the shell that opened it keeps its own handle).
fn is_descriptor_alias(path: &Path) -> bool {
    path.starts_with("/dev/") || path.starts_with("/proc/")
}

/// Decides how [`write_atomic`] writes `path` without writing anything; errors say why the path
/// cannot be written (a directory, a read-only file, a symlink loop).
pub fn output_target(path: &Path) -> io::Result<OutputTarget> {
    let meta = match fs::symlink_metadata(path) {
        Ok(m) => m,
        Err(e) if e.kind() == io::ErrorKind::NotFound => {
            return Ok(OutputTarget::Replace(path.to_path_buf()))
        }
        Err(e) => {
            return Err(err(
                e.kind(),
                format!("cannot inspect `{}`: {e}", path.display()),
            ))
        }
    };
    let ft = meta.file_type();
    if ft.is_symlink() {
        return match fs::metadata(path) {
            Ok(m) if m.is_dir() => Err(is_dir(path)),
            Ok(m) if m.is_file() && !is_descriptor_alias(path) => {
                let real = fs::canonicalize(path).map_err(|e| {
                    err(
                        e.kind(),
                        format!("cannot resolve the symlink `{}`: {e}", path.display()),
                    )
                })?;
                check_writable(&real, &m)?;
                Ok(OutputTarget::Replace(real))
            }
            Ok(_) => Ok(OutputTarget::Stream(path.to_path_buf())),
            Err(e) if e.kind() == io::ErrorKind::NotFound => {
                // A dangling link: create the file it names.
                Ok(OutputTarget::Replace(follow_dangling(path)?))
            }
            Err(e) => Err(err(
                e.kind(),
                format!("cannot follow the symlink `{}`: {e}", path.display()),
            )),
        };
    }
    if ft.is_dir() {
        return Err(is_dir(path));
    }
    if ft.is_file() {
        check_writable(path, &meta)?;
        return Ok(OutputTarget::Replace(path.to_path_buf()));
    }
    // Character and block devices, FIFOs, sockets.
    Ok(OutputTarget::Stream(path.to_path_buf()))
}

fn is_dir(path: &Path) -> io::Error {
    err(
        io::ErrorKind::InvalidInput,
        format!("`{}` is a directory; name a file to write", path.display()),
    )
}

/// The file a chain of symlinks ends at when that file does not exist yet.
fn follow_dangling(path: &Path) -> io::Result<PathBuf> {
    let mut cur = path.to_path_buf();
    for _ in 0..MAX_LINKS {
        match fs::symlink_metadata(&cur) {
            Ok(m) if m.file_type().is_symlink() => {
                let next = fs::read_link(&cur)?;
                cur = match cur.parent() {
                    Some(dir) if next.is_relative() => dir.join(next),
                    _ => next,
                };
            }
            _ => return Ok(cur),
        }
    }
    Err(err(
        io::ErrorKind::InvalidInput,
        format!(
            "`{}`: more than {MAX_LINKS} symlinks in a row (a loop?)",
            path.display()
        ),
    ))
}

/// Refuses a regular file that has no write permission: replacing it by a rename would work
/// (the directory is writable), but would silently undo the protection.
fn check_writable(path: &Path, meta: &fs::Metadata) -> io::Result<()> {
    let read_only = || {
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            format!(
                "`{}` is read-only (mode {:04o}); make it writable (chmod u+w) or write to another file",
                path.display(),
                meta.permissions().mode() & 0o7777
            )
        }
        #[cfg(not(unix))]
        {
            format!(
                "`{}` is read-only; make it writable or write to another file",
                path.display()
            )
        }
    };
    if meta.permissions().readonly() {
        return Err(err(io::ErrorKind::PermissionDenied, read_only()));
    }
    // Permission bits, ACLs and ownership together: can this process open it for writing?
    // (Opening without truncation changes nothing.)
    match fs::OpenOptions::new().write(true).open(path) {
        Ok(_) => Ok(()),
        Err(e) if e.kind() == io::ErrorKind::PermissionDenied => Err(err(
            io::ErrorKind::PermissionDenied,
            format!(
                "`{}` is not writable by this user ({e}); write to another file",
                path.display()
            ),
        )),
        // Anything else (e.g. a file that vanished) shows up again when it is replaced.
        Err(_) => Ok(()),
    }
}

/// Whether two output paths name the same file (after resolving symlinks), so that one write
/// would overwrite the other. Paths that are written straight through (`/dev/null`, FIFOs)
/// never clash: writing the same device twice is what the user asked for.
pub fn same_output(a: &Path, b: &Path) -> bool {
    let key = |p: &Path| -> Option<PathBuf> {
        match output_target(p) {
            Ok(OutputTarget::Replace(t)) => Some(absolute(&t)),
            Ok(OutputTarget::Stream(_)) => None,
            // A path that cannot be written is reported where it is written.
            Err(_) => Some(absolute(p)),
        }
    };
    match (key(a), key(b)) {
        (Some(x), Some(y)) => x == y,
        _ => false,
    }
}

/// Whether writing `output` would replace the input file `input` (e.g. `--output` naming the
/// schedule being read).
pub fn overwrites_input(output: &Path, input: &Path) -> bool {
    let Ok(OutputTarget::Replace(t)) = output_target(output) else {
        return false;
    };
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt;
        if let (Ok(a), Ok(b)) = (fs::metadata(&t), fs::metadata(input)) {
            return a.dev() == b.dev() && a.ino() == b.ino();
        }
    }
    absolute(&t) == absolute(&fs::canonicalize(input).unwrap_or_else(|_| input.to_path_buf()))
}

/// An absolute path with the directory part canonicalised (the file itself may not exist yet).
fn absolute(p: &Path) -> PathBuf {
    if let Ok(c) = fs::canonicalize(p) {
        return c;
    }
    let dir = match p.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    };
    let dir = fs::canonicalize(dir).unwrap_or_else(|_| dir.to_path_buf());
    match p.file_name() {
        Some(n) => dir.join(n),
        None => dir,
    }
}

/// Writes a file atomically, or straight through to a device, FIFO or descriptor alias (see the
/// module docs for the rules).
///
/// For a regular file the closure writes into a temporary file created in the target's directory
/// (so the final rename never crosses file systems). On success the data is flushed and
/// `fsync`ed, the target's permissions are kept if it already existed (otherwise the file gets
/// `0o666` minus the umask on Unix, like a plain `File::create`), and the temporary file is
/// renamed over the target; on Unix the directory is then `fsync`ed too. If the closure returns
/// an error or panics, the target is left untouched and the temporary file is removed (by
/// `NamedTempFile`'s destructor, which also runs while a panic unwinds). A process killed by a
/// signal (e.g. Ctrl-C without a handler) leaves the target untouched but may leave a
/// `.<name>.*.tmp` file behind.
///
/// A device or FIFO is opened for writing (a FIFO waits for its reader, as a shell redirection
/// does) and written through a buffer; a write error (`/dev/full`: no space left) is returned.
pub fn write_atomic<P, F>(path: P, f: F) -> io::Result<()>
where
    P: AsRef<Path>,
    F: FnOnce(&mut dyn Write) -> io::Result<()>,
{
    match output_target(path.as_ref())? {
        OutputTarget::Replace(p) => replace(&p, f),
        OutputTarget::Stream(p) => stream(&p, f),
    }
}

fn stream<F>(path: &Path, f: F) -> io::Result<()>
where
    F: FnOnce(&mut dyn Write) -> io::Result<()>,
{
    let file = fs::OpenOptions::new()
        .write(true)
        .open(path)
        .map_err(|e| err(e.kind(), format!("cannot open `{}`: {e}", path.display())))?;
    let mut w = BufWriter::new(file);
    f(&mut w)?;
    w.flush()
}

/// Whether `path` can be written as [`write_atomic`] writes it, found before the work that
/// makes its content: the checks of [`output_target`], then a temporary file created and
/// removed beside it (a directory without write permission, a read-only file system, `/proc`).
pub fn check_output(path: &Path) -> io::Result<()> {
    match output_target(path)? {
        OutputTarget::Replace(p) => temp_beside(&p).map(|(_, t)| drop(t)),
        OutputTarget::Stream(_) => Ok(()),
    }
}

/// The directory of `path` and a new temporary file in it, named after `path`.
fn temp_beside(path: &Path) -> io::Result<(&Path, tempfile::NamedTempFile)> {
    let file_name = path.file_name().ok_or_else(|| {
        io::Error::new(
            io::ErrorKind::InvalidInput,
            format!(
                "cannot write `{}`: the path does not name a file",
                path.display()
            ),
        )
    })?;
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    };
    let mut builder = tempfile::Builder::new();
    let prefix = format!(".{}.", file_name.to_string_lossy());
    builder.prefix(&prefix).suffix(".tmp");
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        builder.permissions(fs::Permissions::from_mode(0o666));
    }
    let tmp = builder.tempfile_in(dir).map_err(|e| {
        // The OS's reason without tempfile's random name (`... at path "/d/.x.AbC123.tmp"`).
        let text = e.to_string();
        let why = text.split(" at path ").next().unwrap_or(&text);
        io::Error::new(
            e.kind(),
            format!(
                "cannot create a temporary file in `{}`: {why}",
                dir.display()
            ),
        )
    })?;
    Ok((dir, tmp))
}

fn replace<F>(path: &Path, f: F) -> io::Result<()>
where
    F: FnOnce(&mut dyn Write) -> io::Result<()>,
{
    let (dir, tmp) = temp_beside(path)?;
    {
        let mut w = BufWriter::new(tmp.as_file());
        f(&mut w)?;
        w.flush()?;
    }
    if let Ok(meta) = fs::metadata(path) {
        tmp.as_file().set_permissions(meta.permissions())?;
    }
    tmp.as_file().sync_all()?;
    tmp.persist(path).map_err(|e| {
        io::Error::new(
            e.error.kind(),
            format!(
                "cannot rename the temporary file onto `{}`: {}",
                path.display(),
                e.error
            ),
        )
    })?;
    #[cfg(unix)]
    {
        // Make the rename itself durable; failure here does not undo a complete, renamed file.
        if let Ok(d) = fs::File::open(dir) {
            let _ = d.sync_all();
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entries(dir: &Path) -> Vec<String> {
        let mut v: Vec<String> = fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        v.sort();
        v
    }

    #[test]
    fn writes_and_replaces() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("out.csv");
        write_atomic(&p, |w| w.write_all(b"first\n")).unwrap();
        assert_eq!(fs::read_to_string(&p).unwrap(), "first\n");
        write_atomic(&p, |w| w.write_all(b"second\n")).unwrap();
        assert_eq!(fs::read_to_string(&p).unwrap(), "second\n");
        assert_eq!(entries(dir.path()), ["out.csv"]);
    }

    #[test]
    fn error_in_closure_leaves_target_and_no_temp() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("out.json");
        fs::write(&p, "old").unwrap();
        let err = write_atomic(&p, |w| {
            w.write_all(b"half of the new cont")?;
            Err(io::Error::other("simulated failure"))
        })
        .unwrap_err();
        assert_eq!(err.to_string(), "simulated failure");
        assert_eq!(fs::read_to_string(&p).unwrap(), "old");
        assert_eq!(entries(dir.path()), ["out.json"]);
        // A new target is not created either.
        let q = dir.path().join("new.json");
        assert!(write_atomic(&q, |_| Err(io::Error::other("no"))).is_err());
        assert_eq!(entries(dir.path()), ["out.json"]);
    }

    #[test]
    fn panic_in_closure_leaves_target_and_no_temp() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("out.txt");
        fs::write(&p, "old").unwrap();
        let r = std::panic::catch_unwind(|| {
            let _ = write_atomic(&p, |w| {
                w.write_all(b"partial")?;
                panic!("boom");
            });
        });
        assert!(r.is_err());
        assert_eq!(fs::read_to_string(&p).unwrap(), "old");
        assert_eq!(entries(dir.path()), ["out.txt"]);
    }

    #[cfg(unix)]
    #[test]
    fn keeps_existing_permissions() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("out.txt");
        fs::write(&p, "old").unwrap();
        fs::set_permissions(&p, fs::Permissions::from_mode(0o640)).unwrap();
        write_atomic(&p, |w| w.write_all(b"new")).unwrap();
        assert_eq!(
            fs::metadata(&p).unwrap().permissions().mode() & 0o777,
            0o640
        );
    }

    #[test]
    fn missing_directory_is_a_clear_error() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("nope").join("out.txt");
        let e = write_atomic(&p, |w| w.write_all(b"x")).unwrap_err();
        assert_eq!(e.kind(), io::ErrorKind::NotFound);
        assert!(
            e.to_string()
                .starts_with("cannot create a temporary file in `"),
            "{e}"
        );
        assert!(e.to_string().contains("/nope`"), "{e}");
    }
    #[cfg(unix)]
    fn kind(p: &Path) -> &'static str {
        use std::os::unix::fs::FileTypeExt;
        let t = fs::symlink_metadata(p).unwrap().file_type();
        if t.is_symlink() {
            "symlink"
        } else if t.is_fifo() {
            "fifo"
        } else if t.is_char_device() {
            "char device"
        } else if t.is_file() {
            "file"
        } else {
            "other"
        }
    }

    #[cfg(unix)]
    #[test]
    fn devices_are_written_through_not_replaced() {
        write_atomic("/dev/null", |w| w.write_all(b"discarded\n")).unwrap();
        assert_eq!(kind(Path::new("/dev/null")), "char device");
        assert_eq!(
            output_target(Path::new("/dev/null")).unwrap(),
            OutputTarget::Stream("/dev/null".into())
        );
        if Path::new("/dev/full").exists() {
            let e = write_atomic("/dev/full", |w| w.write_all(&[b'x'; 100_000])).unwrap_err();
            assert_eq!(e.raw_os_error(), Some(28), "{e}"); // ENOSPC
            assert_eq!(kind(Path::new("/dev/full")), "char device");
        }
    }

    #[cfg(unix)]
    #[test]
    fn fifos_are_written_through() {
        let dir = tempfile::tempdir().unwrap();
        let fifo = dir.path().join("pipe");
        let made = std::process::Command::new("mkfifo").arg(&fifo).status();
        if !made.is_ok_and(|s| s.success()) {
            eprintln!("skipping: mkfifo is not available");
            return;
        }
        let reader = {
            let fifo = fifo.clone();
            std::thread::spawn(move || fs::read_to_string(fifo).unwrap())
        };
        write_atomic(&fifo, |w| w.write_all(b"through the pipe\n")).unwrap();
        // Checked before joining: a FIFO replaced by a file would leave the reader waiting.
        assert_eq!(kind(&fifo), "fifo");
        assert_eq!(reader.join().unwrap(), "through the pipe\n");
        assert_eq!(entries(dir.path()), ["pipe"]);
    }

    #[cfg(unix)]
    #[test]
    fn symlinks_replace_their_target_and_stay_links() {
        let dir = tempfile::tempdir().unwrap();
        fs::create_dir(dir.path().join("real")).unwrap();
        let target = dir.path().join("real").join("out.csv");
        fs::write(&target, "old").unwrap();
        let link = dir.path().join("link.csv");
        std::os::unix::fs::symlink("real/out.csv", &link).unwrap();
        write_atomic(&link, |w| w.write_all(b"new")).unwrap();
        assert_eq!(kind(&link), "symlink");
        assert_eq!(fs::read_to_string(&target).unwrap(), "new");
        assert_eq!(entries(&dir.path().join("real")), ["out.csv"]);
        // A dangling link creates the file it names.
        let dangling = dir.path().join("later.csv");
        std::os::unix::fs::symlink("real/later.csv", &dangling).unwrap();
        write_atomic(&dangling, |w| w.write_all(b"created")).unwrap();
        assert_eq!(kind(&dangling), "symlink");
        assert_eq!(
            fs::read_to_string(dir.path().join("real/later.csv")).unwrap(),
            "created"
        );
        // A loop is an error, not a hang.
        let a = dir.path().join("a");
        std::os::unix::fs::symlink("b", &a).unwrap();
        std::os::unix::fs::symlink("a", dir.path().join("b")).unwrap();
        assert!(write_atomic(&a, |w| w.write_all(b"x")).is_err());
    }

    #[cfg(unix)]
    #[test]
    fn read_only_files_and_directories_are_refused() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("frozen.json");
        fs::write(&p, "old").unwrap();
        fs::set_permissions(&p, fs::Permissions::from_mode(0o444)).unwrap();
        let e = write_atomic(&p, |w| w.write_all(b"new")).unwrap_err();
        assert_eq!(e.kind(), io::ErrorKind::PermissionDenied);
        assert!(
            e.to_string().ends_with(
                "frozen.json` is read-only (mode 0444); make it writable (chmod u+w) or write to another file"
            ),
            "{e}"
        );
        assert_eq!(fs::read_to_string(&p).unwrap(), "old");
        assert_eq!(
            fs::metadata(&p).unwrap().permissions().mode() & 0o777,
            0o444
        );
        let e = write_atomic(dir.path(), |w| w.write_all(b"x")).unwrap_err();
        assert!(
            e.to_string()
                .ends_with("is a directory; name a file to write"),
            "{e}"
        );
        assert_eq!(entries(dir.path()), ["frozen.json"]);
    }

    #[cfg(unix)]
    #[test]
    fn clashing_outputs_are_recognised() {
        let dir = tempfile::tempdir().unwrap();
        let a = dir.path().join("a.csv");
        let link = dir.path().join("link.csv");
        std::os::unix::fs::symlink("a.csv", &link).unwrap();
        // Neither exists yet; one is reached through a symlink and a `..`.
        let sub = dir.path().join("sub");
        fs::create_dir(&sub).unwrap();
        assert!(same_output(&a, &sub.join("../a.csv")));
        assert!(same_output(&a, &link));
        assert!(!same_output(&a, &dir.path().join("b.csv")));
        assert!(!same_output(Path::new("/dev/null"), Path::new("/dev/null")));
        fs::write(&a, "schedule").unwrap();
        assert!(overwrites_input(&link, &a));
        assert!(overwrites_input(&sub.join("../a.csv"), &a));
        assert!(!overwrites_input(&dir.path().join("b.csv"), &a));
        assert!(!overwrites_input(Path::new("/dev/null"), &a));
    }
}
