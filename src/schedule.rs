//! Loading a schedule file: explicit GOAL (text or LogGOPSim binary) or a rank-parametric file.

use std::path::Path;

use std::io::Read;

use anyhow::{bail, Context, Result};
use loggops_engine::Program;
use loggops_goal::{ExplicitProgram, ParseOptions};

/// A loaded schedule; both kinds implement [`Program`].
pub enum Schedule {
    Explicit(ExplicitProgram),
    Parametric(loggops_schedgen::Schedule),
    Generated(loggops_schedgen::Generated),
}

/// Runs `$body` with `$p` bound to the concrete program inside `$sched` (the engine is generic,
/// so each kind gets its own monomorphised copy).
macro_rules! with_program {
    ($sched:expr, |$p:ident| $body:expr) => {
        match $sched {
            $crate::schedule::Schedule::Explicit($p) => $body,
            $crate::schedule::Schedule::Parametric($p) => $body,
            $crate::schedule::Schedule::Generated($p) => $body,
        }
    };
}
pub(crate) use with_program;

impl Schedule {
    pub fn num_ranks(&self) -> u32 {
        with_program!(self, |p| p.num_ranks())
    }
}

/// Loads `path`. A rank-parametric file needs `nodes`; an explicit file must agree with it and
/// is read with `goal` (its tick: what a plain calc number means).
pub fn load(
    path: &Path,
    nodes: Option<u32>,
    overrides: &[(String, String)],
    goal: &ParseOptions,
) -> Result<Schedule> {
    if is_parametric(path)? {
        let Some(n) = nodes else {
            bail!(
                "{} is a rank-parametric schedule: give the number of ranks with --nodes N",
                path.display()
            );
        };
        let s = loggops_schedgen::parse_schedule(path, n, overrides)?;
        // A file that is one collective runs as the bare generator: same program, no phase
        // bookkeeping per op.
        if let Some(g) = s.single_collective() {
            return Ok(Schedule::Generated(g.clone()));
        }
        return Ok(Schedule::Parametric(s));
    }
    if !overrides.is_empty() {
        bail!(
            "--param only applies to rank-parametric schedules; {} is explicit GOAL",
            path.display()
        );
    }
    let parsed = loggops_goal::load_with(path, goal).map_err(|e| with_hint(path, e))?;
    explicit(path, nodes, parsed)
}

/// [`load`], and the file's SHA-256 (lower-case hex). An explicit file is hashed in the same
/// pass that parses it (these files are the large ones); a rank-parametric one is small and
/// hashed on its own.
pub fn load_hashed(
    path: &Path,
    nodes: Option<u32>,
    overrides: &[(String, String)],
    goal: &ParseOptions,
) -> Result<(Schedule, String)> {
    if is_parametric(path)? || !overrides.is_empty() {
        let s = load(path, nodes, overrides, goal)?;
        return Ok((s, crate::inputs::sha256_file(path)?));
    }
    let name = path.display().to_string();
    let cannot = || format!("cannot read {name}");
    let file = std::fs::File::open(path).with_context(cannot)?;
    let mut r = crate::inputs::HashingReader::new(file);
    let parsed = if loggops_goal::is_binary(path)? {
        loggops_goal::Parsed {
            program: loggops_goal::read_binary_from_with(&name, &mut r, goal)?,
            warnings: Vec::new(),
            duplicate_labels: 0,
        }
    } else {
        let buffered = std::io::BufReader::with_capacity(1 << 18, &mut r);
        loggops_goal::parse_reader_with(&name, buffered, goal).map_err(|e| with_hint(path, e))?
    };
    let sha = r.finish().with_context(cannot)?;
    Ok((explicit(path, nodes, parsed)?, sha))
}

/// An explicit program as [`load`] hands it on: its warnings said, its rank count checked.
fn explicit(path: &Path, nodes: Option<u32>, parsed: loggops_goal::Parsed) -> Result<Schedule> {
    // The parser's warnings (a duplicate label, text after the last rank block): said once,
    // on stderr, before the run.
    for w in &parsed.warnings {
        crate::out::errln!("{w}");
    }
    let shown = parsed
        .warnings
        .iter()
        .filter(|w| matches!(w, loggops_goal::GoalWarning::DuplicateLabel { .. }))
        .count() as u64;
    if parsed.duplicate_labels > shown {
        crate::out::errln!(
            "{}: warning: {} more duplicate label(s) not shown",
            path.display(),
            parsed.duplicate_labels - shown
        );
    }
    let p = parsed.program;
    if let Some(n) = nodes {
        if n != p.num_ranks() {
            bail!(
                "{} is an explicit GOAL schedule for {} ranks (num_ranks), but --nodes {} was given; \
                 explicit files cannot be resized (use a rank-parametric schedule, see goal/README.md)",
                path.display(),
                p.num_ranks(),
                n
            );
        }
    }
    Ok(Schedule::Explicit(p))
}

/// Rank-parametric schedules start with `loggops-schedule` (after comments); explicit GOAL text
/// starts with `num_ranks`, binary GOAL with its magic number.
pub fn is_parametric(path: &Path) -> Result<bool> {
    let mut head = Vec::new();
    std::fs::File::open(path)
        .and_then(|f| f.take(64 << 10).read_to_end(&mut head))
        .with_context(|| format!("cannot read schedule {}", path.display()))?;
    let compressed = [
        (&b"\xFD7zXZ\x00"[..], "xz", "xz -dk"),
        (&b"\x1F\x8B"[..], "gzip", "gunzip -k"),
        (&b"\x28\xB5\x2F\xFD"[..], "zstd", "zstd -d"),
    ];
    if let Some((_, kind, tool)) = compressed.iter().find(|(m, _, _)| head.starts_with(m)) {
        bail!(
            "{} is {kind}-compressed: decompress it first (`{tool} {}`); --goal reads GOAL text, \
             LogGOPSim's binary GOAL or a rank-parametric schedule",
            path.display(),
            path.display()
        );
    }
    let text = String::from_utf8_lossy(&head);
    Ok(loggops_schedgen::sniff(&text) == loggops_schedgen::FileKind::Schedule)
}

/// An explicit GOAL parse error, with a hint when the file is text that starts with neither
/// `num_ranks` nor `loggops-schedule` (a rank-parametric schedule without its first line), or
/// is not text at all and lacks the binary format's cookie (a file of another kind).
fn with_hint(path: &Path, e: loggops_goal::GoalError) -> anyhow::Error {
    let mut head = Vec::new();
    if loggops_goal::is_binary(path).unwrap_or(true)
        || std::fs::File::open(path)
            .and_then(|f| f.take(64 << 10).read_to_end(&mut head))
            .is_err()
    {
        return e.into();
    }
    // Bytes no text file holds (a NUL, or not UTF-8): a binary file without the cookie.
    let utf8 = std::str::from_utf8(&head);
    let nul = head.iter().position(|&b| b == 0);
    let invalid = match utf8 {
        Err(u) if u.error_len().is_some() => Some(u.valid_up_to()),
        // Valid, or a character cut at the end of what was read.
        _ => None,
    };
    let binary = match (nul, invalid) {
        (Some(a), Some(b)) => Some(a.min(b)),
        (a, b) => a.or(b),
    };
    if let Some(at) = binary {
        let first: Vec<String> = head.iter().take(8).map(|b| format!("{b:02x}")).collect();
        return anyhow::anyhow!(
            "{e}\nnote: {} does not look like a GOAL file: byte 0x{:02x} at offset {at} is not \
             text, and LogGOPSim's binary format starts with the cookie 4223 (bytes 7f 10 00 00 \
             00 00 00 00) where this file has {}",
            path.display(),
            head[at],
            first.join(" ")
        );
    }
    let unknown = utf8.is_ok_and(|t| {
        loggops_schedgen::sniff(t) == loggops_schedgen::FileKind::Unknown && !t.is_empty()
    });
    if unknown {
        anyhow::anyhow!(
            "{e}\nnote: explicit GOAL starts with `num_ranks N`; a rank-parametric schedule \
             (goal/README.md) starts with the line `loggops-schedule 1` (after comments)"
        )
    } else {
        e.into()
    }
}
