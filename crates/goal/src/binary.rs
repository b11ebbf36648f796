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
//! The reader streams the file rank by rank (one seek per rank) and validates everything:
//! offsets, ids, dependency counts, root lists, peers, cpu/nic indices.
//!
//! A calc's duration is its `size` field, a number of LogGOPSim's unit-less ticks: the reader
//! turns it into the program's time unit with [`ParseOptions::tick_ps`] (1 ns by default, see
//! [`crate::text`]) and the writer turns it back, so that a file reads back to the same
//! durations with the same tick.

use std::fs::File;
use std::io::{self, BufReader, BufWriter, Read, Seek, SeekFrom, Write};
use std::path::Path;

use loggops_engine::{DepKind, Op, OpKind, Program, ANY};

use crate::error::GoalError;
use crate::explicit::{ExplicitProgram, ProgramBuilder, MAX_CPU_NIC_INDEX};
use crate::text::{ParseOptions, DEFAULT_TICK_PS};

/// Magic cookie of a binary GOAL file.
pub const MAGIC: u64 = 4223;
/// Magic cookie LogGOPSim writes when `--save-mem` consumed the file.
pub const MAGIC_INVALIDATED: u64 = 2342;
/// Bytes per node record.
pub const NODE_BYTES: u64 = 39;
/// Offset of the base (`num_ranks`) that jumptable offsets are relative to.
const BASE: u64 = 8;

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
        r: BufReader::with_capacity(1 << 20, reader),
        pos: 0,
        len: 0,
    };
    r.len = r.r.seek(SeekFrom::End(0)).map_err(|e| r.io(e))?;
    r.r.seek(SeekFrom::Start(0)).map_err(|e| r.io(e))?;

    let magic = r.u64("the magic cookie")?;
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
    let num_ranks = r.u32("the number of ranks")?;
    let max_cpu = r.u8("max_cpu")?;
    let max_nic = r.u8("max_nic")?;
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
    let mut jt = Vec::with_capacity(num_ranks as usize);
    for _ in 0..num_ranks {
        let s = r.u64("the jumptable")?;
        let e = r.u64("the jumptable")?;
        jt.push((s, e));
    }

    let mut b = ProgramBuilder::new(num_ranks);
    b.require_cpus(max_cpu + 1);
    b.require_nics(max_nic + 1);
    let mut meta: Vec<[u32; 5]> = Vec::new();
    let mut app: Vec<u32> = Vec::new();
    let mut count: Vec<u32> = Vec::new();
    let mut roots: Vec<u32> = Vec::new();
    for rank in 0..num_ranks {
        let (s, e) = jt[rank as usize];
        let jt_off = 14 + 16 * rank as u64;
        if s < first_section || e < s {
            return Err(r.err(
                jt_off,
                format!("rank {rank}: jumptable entry [{s}, {e}) (relative to byte 8) is not a section after the jumptable (which ends at {first_section})"),
            ));
        }
        if BASE.saturating_add(e) > r.len {
            return Err(r.err(
                jt_off,
                format!("truncated file: the section of rank {rank} ends at byte {}, but the file has {} bytes", BASE.saturating_add(e), r.len),
            ));
        }
        let start = BASE + s;
        r.seek(start)?;
        let n = r.u32("the number of ops")?;
        let nroots = r.u32("the number of roots")?;
        let need = 8 + 4 * nroots as u64 + NODE_BYTES * n as u64;
        if need > e - s {
            return Err(r.err(
                start,
                format!("rank {rank}: {n} ops and {nroots} roots need {need} bytes, but the rank's section has {} bytes", e - s),
            ));
        }
        if !(e - s - need).is_multiple_of(4) {
            return Err(r.err(
                start + need,
                format!(
                    "rank {rank}: the dependency appendix has {} bytes, not a multiple of 4",
                    e - s - need
                ),
            ));
        }
        let n_app = (e - s - need) / 4;
        let roots_off = start + 8;
        roots.clear();
        for _ in 0..nroots {
            roots.push(r.u32("the root list")?);
        }
        let nodes_off = r.pos;
        b.start_rank(rank);
        meta.clear();
        for i in 0..n {
            let at = nodes_off + NODE_BYTES * i as u64;
            let mut rec = [0u8; NODE_BYTES as usize];
            r.read(&mut rec, "an op record")?;
            let u32_at = |k: usize| u32::from_le_bytes(rec[k..k + 4].try_into().unwrap());
            let kind = match rec[4] {
                1 => OpKind::Send,
                2 => OpKind::Recv,
                3 => OpKind::Calc,
                t => {
                    return Err(r.err(
                        at + 4,
                        format!(
                        "rank {rank} op {i}: unknown op type {t} (expected 1 send, 2 recv, 3 calc)"
                    ),
                    ))
                }
            };
            let peer = u32_at(5);
            let size = u64::from_le_bytes(rec[9..17].try_into().unwrap());
            let tag = u32_at(17);
            let (cpu, nic) = (rec[21], rec[22]);
            if cpu > max_cpu {
                return Err(r.err(
                    at + 21,
                    format!("rank {rank} op {i}: cpu {cpu} exceeds the header's max_cpu {max_cpu}"),
                ));
            }
            if nic > max_nic {
                return Err(r.err(
                    at + 22,
                    format!("rank {rank} op {i}: nic {nic} exceeds the header's max_nic {max_nic}"),
                ));
            }
            let op = match kind {
                OpKind::Calc => {
                    let duration = opts.ticks_to_time(size).map_err(|_| {
                        r.err(
                            at + 9,
                            format!(
                                "rank {rank} op {i}: a calc of {size} ticks is too long (at most {})",
                                opts.tick_limit()
                            ),
                        )
                    })?;
                    Op::calc(duration).on_cpu(cpu).on_nic(nic)
                }
                _ => {
                    if peer >= num_ranks && !(kind == OpKind::Recv && peer == ANY) {
                        let msg = if peer == ANY {
                            format!("rank {rank} op {i}: a send to -1 (any source); a send needs a destination rank")
                        } else {
                            format!("rank {rank} op {i}: peer rank {peer} does not exist (num_ranks is {num_ranks})")
                        };
                        return Err(r.err(at + 5, msg));
                    }
                    Op {
                        kind,
                        peer,
                        tag,
                        size,
                        cpu,
                        nic,
                    }
                }
            };
            b.add_op(op);
            meta.push([u32_at(0), u32_at(23), u32_at(27), u32_at(31), u32_at(35)]);
        }
        let app_off = r.pos;
        app.clear();
        for _ in 0..n_app {
            app.push(r.u32("the dependency appendix")?);
        }
        count.clear();
        count.resize(n as usize, 0);
        for i in 0..n {
            let at = nodes_off + NODE_BYTES * i as u64;
            let m = meta[i as usize];
            for (cnt, idx, field, kind) in [
                (m[1], m[2], 23, DepKind::Done),
                (m[3], m[4], 31, DepKind::Start),
            ] {
                if idx as u64 + cnt as u64 > n_app {
                    return Err(r.err(
                        at + field,
                        format!(
                            "rank {rank} op {i}: dependents list (index {idx}, {cnt} entries) extends beyond the appendix of {n_app} entries"
                        ),
                    ));
                }
                for j in idx..idx + cnt {
                    let t = app[j as usize];
                    if t >= n {
                        return Err(r.err(
                            app_off + 4 * j as u64,
                            format!("rank {rank} op {i}: dependent op {t} out of range (the rank has {n} ops)"),
                        ));
                    }
                    count[t as usize] += 1;
                    b.add_dep(t, i, kind);
                }
            }
        }
        for i in 0..n {
            if count[i as usize] != meta[i as usize][0] {
                return Err(r.err(
                    nodes_off + NODE_BYTES * i as u64,
                    format!(
                        "rank {rank} op {i}: dependency count is {}, but {} dependents lists name it",
                        meta[i as usize][0], count[i as usize]
                    ),
                ));
            }
        }
        let expected = (0..n).filter(|&i| count[i as usize] == 0);
        if !expected.clone().eq(roots.iter().copied()) {
            let want: Vec<u32> = expected.take(8).collect();
            let got: Vec<u32> = roots.iter().take(8).copied().collect();
            return Err(r.err(
                roots_off,
                format!("rank {rank}: root list {got:?}… does not list the ops without dependencies {want:?}…"),
            ));
        }
        b.end_rank().map_err(|source| GoalError::BinaryCycle {
            path: name.to_string(),
            source,
        })?;
    }
    Ok(b.finish())
}

struct In<'a, R: Read + Seek> {
    name: &'a str,
    r: BufReader<R>,
    pos: u64,
    len: u64,
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
    fn seek(&mut self, to: u64) -> Result<(), GoalError> {
        if to != self.pos {
            self.r.seek(SeekFrom::Start(to)).map_err(|e| self.io(e))?;
            self.pos = to;
        }
        Ok(())
    }
    fn read(&mut self, buf: &mut [u8], what: &str) -> Result<(), GoalError> {
        if self.pos + buf.len() as u64 > self.len {
            return Err(self.err(
                self.pos,
                format!(
                    "truncated file: {what} needs {} bytes here, but the file has {} bytes",
                    buf.len(),
                    self.len
                ),
            ));
        }
        self.r.read_exact(buf).map_err(|e| self.io(e))?;
        self.pos += buf.len() as u64;
        Ok(())
    }
    fn u8(&mut self, what: &str) -> Result<u8, GoalError> {
        let mut b = [0u8; 1];
        self.read(&mut b, what)?;
        Ok(b[0])
    }
    fn u32(&mut self, what: &str) -> Result<u32, GoalError> {
        let mut b = [0u8; 4];
        self.read(&mut b, what)?;
        Ok(u32::from_le_bytes(b))
    }
    fn u64(&mut self, what: &str) -> Result<u64, GoalError> {
        let mut b = [0u8; 8];
        self.read(&mut b, what)?;
        Ok(u64::from_le_bytes(b))
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
