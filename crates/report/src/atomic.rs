//! Atomic file output: a reader sees either the old file or the complete new one, never a part.

use std::fs;
use std::io::{self, BufWriter, Write};
use std::path::Path;

/// Writes a file atomically.
///
/// The closure writes into a temporary file created in the target's directory (so the final
/// rename never crosses file systems). On success the data is flushed and `fsync`ed, the target's
/// permissions are kept if it already existed (otherwise the file gets `0o666` minus the umask on
/// Unix, like a plain `File::create`), and the temporary file is renamed over the target; on Unix
/// the directory is then `fsync`ed too. If the closure returns an error or panics, the target is
/// left untouched and the temporary file is removed (by `NamedTempFile`'s destructor, which also
/// runs while a panic unwinds). A process killed by a signal (e.g. Ctrl-C without a handler) leaves
/// the target untouched but may leave a `.<name>.*.tmp` file behind.
pub fn write_atomic<P, F>(path: P, f: F) -> io::Result<()>
where
    P: AsRef<Path>,
    F: FnOnce(&mut dyn Write) -> io::Result<()>,
{
    let path = path.as_ref();
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
        io::Error::new(
            e.kind(),
            format!("cannot create a temporary file in `{}`: {e}", dir.display()),
        )
    })?;
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
}
