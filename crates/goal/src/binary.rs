//! LogGOPSim's binary GOAL format (written by `txt2bin`, read by `LogGOPSim -f`).
//!
//! Little-endian, unaligned (`LOGGOPSIM.md` §5):
//!
//! ```text
//! 0        u64 magic 4223 (2342: invalidated by LogGOPSim --save-mem)
//! 8 = B    u32 num_ranks | u8 max_cpu | u8 max_nic
//! B+6      u64 jumptable[2·num_ranks]: (start, end) of each rank's section, relative to B
//! B+start  u32 num_nodes | u32 num_roots | u32 roots[num_roots]
//!          node[num_nodes], 39 bytes: u32 depcnt, u8 type (1 send, 2 recv, 3 calc), u32 peer,
//!          u64 size, u32 tag, u8 cpu, u8 nic, u32 n_deps, u32 deps_idx, u32 n_sdeps, u32 sdeps_idx
//!          u32 appendix[]: dependents (ids) indexed by deps_idx / sdeps_idx
//! ```
//!
//! The reader streams the file through a window of a few hundred kilobytes (grown to hold the
//! largest rank section) and validates everything: offsets, ids, dependency counts, root lists,
//! peers, cpu/nic indices. A rank's section is read in one piece. When it is the previous
//! rank's section again with every peer shifted by the difference of the two ranks (so the
//! same rank data, peers relative: every rank of a collective), the rank shares the previous
//! rank's storage without being parsed or checked again: identical bytes pass the same checks.
//! Other sections are parsed straight into the [`ExplicitProgram`]'s records and dependents
//! lists (txt2bin's appendix already lists each op's dependents in declaration order), and
//! identical ranks found by the program's hash are shared all the same.
//!
//! A calc's duration is its `size` field, a number of LogGOPSim's unit-less ticks: the reader
//! turns it into the program's time unit with [`ParseOptions::tick_ps`] (1 ns by default, see
//! [`crate::text`]) and the writer turns it back, so that a file reads back to the same
//! durations with the same tick.

use std::fs::File;
use std::io::{self, BufWriter, Read, Seek, SeekFrom, Write};
use std::path::Path;

use loggops_engine::{DepKind, OpKind, Program, ANY};

use crate::error::GoalError;
use crate::explicit::{ExplicitProgram, ProgramBuilder, Rec, MAX_CPU_NIC_INDEX, START};
use crate::text::{ParseOptions, DEFAULT_TICK_PS};

/// Magic cookie of a binary GOAL file.
pub const MAGIC: u64 = 4223;
/// Magic cookie LogGOPSim writes when `--save-mem` consumed the file.
pub const MAGIC_INVALIDATED: u64 = 2342;
/// Bytes per node record.
pub const NODE_BYTES: u64 = 39;
/// Offset of the base (`num_ranks`) that jumptable offsets are relative to.
const BASE: u64 = 8;
/// Bytes read at a time (more when a rank's section is larger).
const CHUNK: usize = 256 << 10;

/// Reads a binary GOAL file, calc durations in ticks of 1 ns ([`ParseOptions::default`]).
pub fn read_binary(path: impl AsRef<Path>) -> Result<ExplicitProgram, GoalError> {
    read_binary_with(path, &ParseOptions::default())
}

/// Reads a binary GOAL file, calc durations in ticks of `opts.tick_ps` picoseconds (the other
/// options are for text).
pub fn read_binary_with(
    path: impl AsRef<Path>,
    opts: &ParseOptions,
) -> Result<ExplicitProgram, GoalError> {
    let path = path.as_ref();
    let name = path.display().to_string();
    let f = File::open(path).map_err(|source| GoalError::Io {
        path: name.clone(),
        source,
    })?;
    read_binary_from_with(&name, f, opts)
}

/// Reads a binary GOAL file from any seekable reader; `name` is used in messages.
pub fn read_binary_from<R: Read + Seek>(
    name: &str,
    reader: R,
) -> Result<ExplicitProgram, GoalError> {
    read_binary_from_with(name, reader, &ParseOptions::default())
}

/// [`read_binary_from`] with the tick of [`read_binary_with`].
pub fn read_binary_from_with<R: Read + Seek>(
    name: &str,
    reader: R,
    opts: &ParseOptions,
) -> Result<ExplicitProgram, GoalError> {
    let mut r = In {
        name,
        r: reader,
        len: 0,
        buf: Vec::new(),
        at: 0,
        fill: 0,
    };
    r.len = r.r.seek(SeekFrom::End(0)).map_err(|e| r.io(e))?;
    r.r.seek(SeekFrom::Start(0)).map_err(|e| r.io(e))?;

    let magic = r.u64(0, "the magic cookie")?;
    if magic == MAGIC_INVALIDATED {
        return Err(GoalError::Invalidated {
            path: name.to_string(),
        });
    }
    if magic != MAGIC {
        let text = magic
            .to_le_bytes()
            .iter()
            .all(|&c| c.is_ascii_graphic() || c.is_ascii_whitespace());
        return Err(GoalError::BadMagic {
            path: name.to_string(),
            found: magic,
            text,
        });
    }
    let num_ranks = r.u32(8, "the number of ranks")?;
    let max_cpu = r.bytes(12, 1, "max_cpu")?[0];
    let max_nic = r.bytes(13, 1, "max_nic")?[0];
    if num_ranks == 0 {
        return Err(r.err(BASE, "num_ranks is 0".to_string()));
    }
    if max_cpu > MAX_CPU_NIC_INDEX {
        return Err(r.err(
            12,
            format!(
                "max_cpu is {max_cpu}: at most {} CPUs per rank are supported",
                MAX_CPU_NIC_INDEX as u32 + 1
            ),
        ));
    }
    if max_nic > MAX_CPU_NIC_INDEX {
        return Err(r.err(
            13,
            format!(
                "max_nic is {max_nic}: at most {} NICs per rank are supported",
                MAX_CPU_NIC_INDEX as u32 + 1
            ),
        ));
    }
    let first_section = 6 + 16 * num_ranks as u64;
    if BASE + first_section > r.len {
        return Err(r.err(
            14,
            format!(
                "the jumptable of {num_ranks} ranks needs {} bytes, but the file has {} bytes",
                BASE + first_section,
                r.len
            ),
        ));
    }
    let jt: Vec<(u64, u64)> = r
        .bytes(14, 16 * num_ranks as usize, "the jumptable")?
        .chunks_exact(16)
        .map(|c| (le64(c, 0), le64(c, 8)))
        .collect();

    let mut b = ProgramBuilder::new(num_ranks);
    b.require_cpus(max_cpu + 1);
    b.require_nics(max_nic + 1);
    let mut s = Scratch::default();
    // The section of the last rank parsed in full, and that rank.
    let mut prev: Vec<u8> = Vec::new();
    let mut prev_rank: Option<u32> = None;
    let mut reserved = false;
    let file_len = r.len;
    for rank in 0..num_ranks {
        let (s0, e0) = jt[rank as usize];
        let jt_off = 14 + 16 * rank as u64;
        if s0 < first_section || e0 < s0 {
            return Err(r.err(
                jt_off,
                format!("rank {rank}: jumptable entry [{s0}, {e0}) (relative to byte 8) is not a section after the jumptable (which ends at {first_section})"),
            ));
        }
        if BASE.saturating_add(e0) > r.len {
            return Err(r.err(
                jt_off,
                format!("truncated file: the section of rank {rank} ends at byte {}, but the file has {} bytes", BASE.saturating_add(e0), r.len),
            ));
        }
        let start = BASE + s0;
        let n = r.u32(start, "the number of ops")?;
        let nroots = r.u32(start + 4, "the number of roots")?;
        let need = 8 + 4 * nroots as u64 + NODE_BYTES * n as u64;
        if need > e0 - s0 {
            return Err(r.err(
                start,
                format!("rank {rank}: {n} ops and {nroots} roots need {need} bytes, but the rank's section has {} bytes", e0 - s0),
            ));
        }
        if !(e0 - s0 - need).is_multiple_of(4) {
            return Err(r.err(
                start + need,
                format!(
                    "rank {rank}: the dependency appendix has {} bytes, not a multiple of 4",
                    e0 - s0 - need
                ),
            ));
        }
        let nodes_at = 8 + 4 * nroots as usize;
        let name = r.name;
        let sec = r.bytes(start, (e0 - s0) as usize, "the rank's section")?;
        if let Some(pr) = prev_rank {
            if same_section(&prev, sec, nodes_at, n as usize, rank - pr, num_ranks) {
                b.repeat_previous_rank(rank);
                continue;
            }
        }
        let at = Located {
            name,
            start,
            rank,
            num_ranks,
            max_cpu,
            max_nic,
            opts,
        };
        let (recs, edges) = b.lay_out_rank(rank);
        let next_differs = jt
            .get(rank as usize + 1)
            .is_some_and(|&(s1, e1)| e1.wrapping_sub(s1) != e0 - s0);
        if !reserved && (rank > 0 || next_differs) {
            // Ranks of their own (an application trace): room for every later op at once, at
            // most one per node's worth of bytes, instead of growing (and copying) by doubling.
            reserved = true;
            let bound: u64 = jt[rank as usize..]
                .iter()
                .map(|&(s1, e1)| e1.saturating_sub(s1) / NODE_BYTES + 1)
                .sum();
            recs.reserve_exact(bound.min(file_len / NODE_BYTES + num_ranks as u64) as usize);
        }
        at.parse(sec, n, nroots, &mut s, recs, edges)?;
        b.end_laid_out_rank()
            .map_err(|source| GoalError::BinaryCycle {
                path: name.to_string(),
                source,
            })?;
        // Kept for the next rank only if its section is as long (ranks of an application
        // trace differ, and copying each would cost as much as reading it).
        prev_rank = None;
        if let Some(&(s1, e1)) = jt.get(rank as usize + 1) {
            if e1.wrapping_sub(s1) == e0 - s0 {
                prev.clear();
                prev.extend_from_slice(sec);
                prev_rank = Some(rank);
            }
        }
    }
    Ok(b.finish())
}

/// Reused buffers of the rank being parsed.
#[derive(Default)]
struct Scratch {
    /// Per op: how many dependents lists name it.
    count: Vec<u32>,
}

#[inline(always)]
fn le32(b: &[u8], at: usize) -> u32 {
    u32::from_le_bytes(b[at..at + 4].try_into().unwrap())
}

#[inline(always)]
fn le64(b: &[u8], at: usize) -> u64 {
    u64::from_le_bytes(b[at..at + 8].try_into().unwrap())
}

/// Whether section `b` of a rank holds the same rank data as `a`, the section of the rank
/// `delta` ranks before it: the same bytes except that every send and receive peer (other than
/// ANY_SOURCE) is shifted by `delta` modulo `p`. `a` passed every check, so `b` passes them
/// too. `b` has `n` nodes from byte `nodes_at` on (within its length).
fn same_section(a: &[u8], b: &[u8], nodes_at: usize, n: usize, delta: u32, p: u32) -> bool {
    if a.len() != b.len() {
        return false;
    }
    let nodes_end = nodes_at + NODE_BYTES as usize * n;
    if a[..nodes_at] != b[..nodes_at] || a[nodes_end..] != b[nodes_end..] {
        return false;
    }
    let (delta, p) = (delta as u64, p as u64);
    // Every byte but the peer's (bytes 5..9), as words XORed together (an array comparison
    // would be a call to memcmp per node).
    let differ = |x: &[u8], y: &[u8]| {
        ((le64(x, 0) ^ le64(y, 0)) & 0xff_ffff_ffff) // depcnt and type
            | (le64(x, 9) ^ le64(y, 9))
            | (le64(x, 17) ^ le64(y, 17))
            | (le64(x, 25) ^ le64(y, 25))
            | (le64(x, 31) ^ le64(y, 31))
    };
    a[nodes_at..nodes_end]
        .chunks_exact(NODE_BYTES as usize)
        .zip(b[nodes_at..nodes_end].chunks_exact(NODE_BYTES as usize))
        .all(|(x, y)| {
            let (pa, pb) = (le32(x, 5), le32(y, 5));
            let peer_ok = if x[4] == OpKind::Calc as u8 || pa == ANY {
                pa == pb
            } else {
                // `a`'s peer is a rank (checked), so one subtraction wraps.
                let e = pa as u64 + delta;
                pb as u64 == if e >= p { e - p } else { e }
            };
            peer_ok && differ(x, y) == 0
        })
}

/// What a rank's error messages need: the file, where the section starts, the header.
struct Located<'a> {
    name: &'a str,
    start: u64,
    rank: u32,
    num_ranks: u32,
    max_cpu: u8,
    max_nic: u8,
    /// The tick of calc durations.
    opts: &'a ParseOptions,
}

impl Located<'_> {
    fn err(&self, offset: u64, message: String) -> GoalError {
        GoalError::Binary {
            path: self.name.to_string(),
            offset,
            message,
        }
    }

    /// Parses and checks the section `sec` of `n` ops and `nroots` roots (their sizes checked
    /// against the section), appending its records to `recs` and its edges to `edges`.
    fn parse(
        &self,
        sec: &[u8],
        n: u32,
        nroots: u32,
        s: &mut Scratch,
        recs: &mut Vec<Rec>,
        edges: &mut Vec<u32>,
    ) -> Result<(), GoalError> {
        let (rank, start, p) = (self.rank, self.start, self.num_ranks);
        let nodes_at = 8 + 4 * nroots as usize;
        let nodes_off = start + nodes_at as u64;
        let app_at = nodes_at + NODE_BYTES as usize * n as usize;
        let n_app = ((sec.len() - app_at) / 4) as u64;
        recs.reserve(n as usize + 1);
        let mut dep = 0u64;
        for (i, rec) in sec[nodes_at..app_at]
            .chunks_exact(NODE_BYTES as usize)
            .enumerate()
        {
            let at = nodes_off + NODE_BYTES * i as u64;
            let kind = match rec[4] {
                1 => OpKind::Send,
                2 => OpKind::Recv,
                3 => OpKind::Calc,
                t => {
                    return Err(self.err(
                        at + 4,
                        format!(
                        "rank {rank} op {i}: unknown op type {t} (expected 1 send, 2 recv, 3 calc)"
                    ),
                    ))
                }
            };
            let peer = le32(rec, 5);
            let size = le64(rec, 9);
            let tag = le32(rec, 17);
            let (cpu, nic) = (rec[21], rec[22]);
            if cpu > self.max_cpu {
                return Err(self.err(
                    at + 21,
                    format!(
                        "rank {rank} op {i}: cpu {cpu} exceeds the header's max_cpu {}",
                        self.max_cpu
                    ),
                ));
            }
            if nic > self.max_nic {
                return Err(self.err(
                    at + 22,
                    format!(
                        "rank {rank} op {i}: nic {nic} exceeds the header's max_nic {}",
                        self.max_nic
                    ),
                ));
            }
            if kind != OpKind::Calc && peer >= p && !(kind == OpKind::Recv && peer == ANY) {
                let msg = if peer == ANY {
                    format!("rank {rank} op {i}: a send to -1 (any source); a send needs a destination rank")
                } else {
                    format!(
                        "rank {rank} op {i}: peer rank {peer} does not exist (num_ranks is {p})"
                    )
                };
                return Err(self.err(at + 5, msg));
            }
            let size = if kind == OpKind::Calc {
                self.opts.ticks_to_time(size).map_err(|_| {
                    self.err(
                        at + 9,
                        format!(
                            "rank {rank} op {i}: a calc of {size} ticks is too long (at most {})",
                            self.opts.tick_limit()
                        ),
                    )
                })?
            } else {
                size
            };
            let op = loggops_engine::Op {
                kind,
                peer,
                tag,
                size,
                cpu,
                nic,
            };
            recs.push(Rec::new(&op, rank, p, dep as u32));
            dep += le32(rec, 23) as u64 + le32(rec, 31) as u64;
            if dep > u32::MAX as u64 {
                return Err(self.err(
                    at + 23,
                    format!(
                        "rank {rank} op {i}: more than {} dependencies in the rank",
                        u32::MAX
                    ),
                ));
            }
        }
        let app_off = start + app_at as u64;
        let app = &sec[app_at..];
        // `dep` is the sum of the records' list lengths, which the file states before they are
        // checked against the appendix: a 200-byte file can claim 4 Gi dependents. Reserve
        // at most what the appendix holds; overlapping lists (legal, never written) grow.
        edges.reserve(dep.min(n_app) as usize);
        s.count.clear();
        s.count.resize(n as usize, 0);
        let nodes = || sec[nodes_at..app_at].chunks_exact(NODE_BYTES as usize);
        for (i, rec) in nodes().enumerate() {
            let at = nodes_off + NODE_BYTES * i as u64;
            let (n_deps, deps_idx) = (le32(rec, 23), le32(rec, 27));
            let (n_sdeps, sdeps_idx) = (le32(rec, 31), le32(rec, 35));
            for (cnt, idx, field, flag) in
                [(n_deps, deps_idx, 23, 0), (n_sdeps, sdeps_idx, 31, START)]
            {
                if idx as u64 + cnt as u64 > n_app {
                    return Err(self.err(
                        at + field,
                        format!(
                            "rank {rank} op {i}: dependents list (index {idx}, {cnt} entries) extends beyond the appendix of {n_app} entries"
                        ),
                    ));
                }
                for j in idx..idx + cnt {
                    let t = le32(app, 4 * j as usize);
                    if t >= n {
                        return Err(self.err(
                            app_off + 4 * j as u64,
                            format!("rank {rank} op {i}: dependent op {t} out of range (the rank has {n} ops)"),
                        ));
                    }
                    s.count[t as usize] += 1;
                    edges.push(t | flag);
                }
            }
        }
        for (i, (&c, rec)) in s.count.iter().zip(nodes()).enumerate() {
            let depcnt = le32(rec, 0);
            if c != depcnt {
                return Err(self.err(
                    nodes_off + NODE_BYTES * i as u64,
                    format!(
                        "rank {rank} op {i}: dependency count is {depcnt}, but {c} dependents lists name it"
                    ),
                ));
            }
        }
        let roots = sec[8..nodes_at].chunks_exact(4).map(|c| le32(c, 0));
        let expected = (0..n).filter(|&i| s.count[i as usize] == 0);
        if !expected.clone().eq(roots.clone()) {
            let want: Vec<u32> = expected.take(8).collect();
            let got: Vec<u32> = roots.take(8).collect();
            return Err(self.err(
                start + 8,
                format!("rank {rank}: root list {got:?}… does not list the ops without dependencies {want:?}…"),
            ));
        }
        Ok(())
    }
}

/// The file, read through a window of it.
struct In<'a, R: Read + Seek> {
    name: &'a str,
    r: R,
    len: u64,
    /// File bytes `at..at + fill` (the reader is at `at + fill`).
    buf: Vec<u8>,
    at: u64,
    fill: usize,
}

impl<R: Read + Seek> In<'_, R> {
    fn err(&self, offset: u64, message: String) -> GoalError {
        GoalError::Binary {
            path: self.name.to_string(),
            offset,
            message,
        }
    }
    fn io(&self, source: io::Error) -> GoalError {
        GoalError::Io {
            path: self.name.to_string(),
            source,
        }
    }
    /// File bytes `off..off + n`; `what` names them if the file ends before.
    fn bytes(&mut self, off: u64, n: usize, what: &str) -> Result<&[u8], GoalError> {
        if off + n as u64 > self.len {
            return Err(self.err(
                off,
                format!(
                    "truncated file: {what} needs {n} bytes here, but the file has {} bytes",
                    self.len
                ),
            ));
        }
        if off < self.at || off + n as u64 > self.at + self.fill as u64 {
            self.refill(off, n)?;
        }
        let i = (off - self.at) as usize;
        Ok(&self.buf[i..i + n])
    }
    /// Makes the window start at `off` and hold at least `n` bytes (within the file).
    #[cold]
    fn refill(&mut self, off: u64, n: usize) -> Result<(), GoalError> {
        let end = self.at + self.fill as u64;
        if off >= self.at && off <= end {
            // Keep what is already read.
            let keep = (off - self.at) as usize;
            self.buf.copy_within(keep..self.fill, 0);
            self.fill -= keep;
        } else {
            self.r.seek(SeekFrom::Start(off)).map_err(|e| self.io(e))?;
            self.fill = 0;
        }
        self.at = off;
        let want = n.max(CHUNK).min((self.len - off) as usize);
        if self.buf.len() < want {
            self.buf.resize(want, 0);
        }
        while self.fill < n {
            match self.r.read(&mut self.buf[self.fill..want]) {
                Ok(0) => {
                    return Err(self.err(
                        off + self.fill as u64,
                        format!(
                            "the file ended at byte {} while being read ({} bytes expected)",
                            off + self.fill as u64,
                            self.len
                        ),
                    ))
                }
                Ok(k) => self.fill += k,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => return Err(self.io(e)),
            }
        }
        Ok(())
    }
    fn u32(&mut self, off: u64, what: &str) -> Result<u32, GoalError> {
        Ok(le32(self.bytes(off, 4, what)?, 0))
    }
    fn u64(&mut self, off: u64, what: &str) -> Result<u64, GoalError> {
        Ok(le64(self.bytes(off, 8, what)?, 0))
    }
}

/// Writes `p` (times in ps) in txt2bin's binary format, calc durations in ticks of 1 ns
/// (byte-identical to `txt2bin` for the same schedule). See [`write_binary_with`].
pub fn write_binary<P: Program + ?Sized>(p: &P, w: impl Write) -> io::Result<()> {
    write_binary_with(p, w, DEFAULT_TICK_PS)
}

/// Writes `p` in txt2bin's binary format with calc durations in ticks of `tick` time units of
/// the program (picoseconds for the engine's programs; 1 writes them as they are), so that
/// [`read_binary_with`] and the same tick read back the same durations. A duration that is
/// not a whole number of ticks fails with `InvalidInput` (the caller wrote nothing usable:
/// write through a temporary file). Two passes over the program: one to size the rank
/// sections, one to write them.
pub fn write_binary_with<P: Program + ?Sized>(p: &P, w: impl Write, tick: u64) -> io::Result<()> {
    let mut w = BufWriter::with_capacity(1 << 20, w);
    let num_ranks = p.num_ranks();
    let mut jt = Vec::with_capacity(num_ranks as usize);
    let mut pos = 6 + 16 * num_ranks as u64;
    for r in 0..num_ranks {
        let n = p.num_ops(r) as u64;
        let mut edges = 0u64;
        for i in 0..n as u32 {
            p.for_each_dependent(r, i, DepKind::Done, |_| edges += 1);
            p.for_each_dependent(r, i, DepKind::Start, |_| edges += 1);
        }
        let len = 8 + 4 * p.num_roots(r) as u64 + NODE_BYTES * n + 4 * edges;
        jt.push((pos, pos + len));
        pos += len;
    }
    w.write_all(&MAGIC.to_le_bytes())?;
    w.write_all(&num_ranks.to_le_bytes())?;
    w.write_all(&[
        p.num_cpus().saturating_sub(1),
        p.num_nics().saturating_sub(1),
    ])?;
    for &(s, e) in &jt {
        w.write_all(&s.to_le_bytes())?;
        w.write_all(&e.to_le_bytes())?;
    }
    let mut app: Vec<u32> = Vec::new();
    let mut rec = [0u8; NODE_BYTES as usize];
    for r in 0..num_ranks {
        let n = p.num_ops(r);
        w.write_all(&n.to_le_bytes())?;
        w.write_all(&p.num_roots(r).to_le_bytes())?;
        for k in 0..p.num_roots(r) {
            w.write_all(&p.root(r, k).to_le_bytes())?;
        }
        app.clear();
        for i in 0..n {
            let op = p.op(r, i);
            rec[0..4].copy_from_slice(&p.depcount(r, i).to_le_bytes());
            rec[4] = op.kind as u8;
            rec[5..9].copy_from_slice(&op.peer.to_le_bytes());
            let size = match op.kind {
                OpKind::Calc => crate::write::calc_ticks(r, i, op.size, tick)?,
                _ => op.size,
            };
            rec[9..17].copy_from_slice(&size.to_le_bytes());
            rec[17..21].copy_from_slice(&op.tag.to_le_bytes());
            rec[21] = op.cpu;
            rec[22] = op.nic;
            let di = app.len() as u32;
            p.for_each_dependent(r, i, DepKind::Done, |d| app.push(d));
            let si = app.len() as u32;
            p.for_each_dependent(r, i, DepKind::Start, |d| app.push(d));
            rec[23..27].copy_from_slice(&(si - di).to_le_bytes());
            rec[27..31].copy_from_slice(&di.to_le_bytes());
            rec[31..35].copy_from_slice(&(app.len() as u32 - si).to_le_bytes());
            rec[35..39].copy_from_slice(&si.to_le_bytes());
            w.write_all(&rec)?;
        }
        for &a in &app {
            w.write_all(&a.to_le_bytes())?;
        }
    }
    w.flush()
}
