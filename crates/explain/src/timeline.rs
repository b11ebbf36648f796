//! One recorded run as a Chrome trace-event JSON timeline, which ui.perfetto.dev,
//! chrome://tracing and Perfetto's trace processor open.
//!
//! # Mapping
//! * one process per rank (`pid` = rank, named `rank R`), with threads (tracks)
//!   `CPU c` (tid `1 + c`), `NIC n send` (tid `100 + n`), `NIC n recv` (tid `200 + n`),
//!   `receives posted` (tid 300) and `critical path` (tid 400);
//! * every **op** is one slice (`ph: "X"`): a calc on its CPU (`calc`), a send on its CPU
//!   (`send → dst`), a receive on `receives posted` (zero length, at the time it was posted);
//! * every **message** is two slices, its send on the sender's send NIC (`g + G·(s−1)`) and
//!   its processing on the receiver's CPU (`recv ← src`: `o`, detour, `max(O, G)·(s−1)`),
//!   plus a slice on the receiver's receive NIC; and one **flow**, drawn as an arrow from the
//!   send's CPU slice to the processing slice: flow events v2, the two slices carrying the
//!   same `bind_id` with `flow_out` and `flow_in` (binding `ph: "s"`/`"f"` events by timestamp
//!   picks the wrong slice when slices of 0 ns start together);
//! * in the queued model ([`loggops_engine::Model::Queued`]) a message holds neither CPU nor
//!   NIC while it is received: its `recv ← src` slice (arrival to reception: `o`, detour,
//!   `max(O, G)·(s−1)`) goes on a `receiving k` track of the receiver (tid `500 + k`, as
//!   many as messages overlap there), with no receive-NIC slice; its send's NIC slice starts
//!   when the message left the NIC's queue;
//! * every **OS detour** is a slice `OS detour` (category `os`) nested at the end of the CPU
//!   slice it lengthened (the noise model gives its length, not where in the slice it fell);
//! * the **critical path** is one slice per step on the `critical path` track of the rank it
//!   ran on (category `critical`), and the slices of activities on it carry
//!   `args.critical = true`.
//!
//! So a full timeline has `ops + messages` slices in the categories `calc`, `send`, `post`
//! and `recv`, `sends` slices in `nic_send`, `messages` in `nic_recv` (none in the queued
//! model), and `messages` flows. Times (`ts`, `dur`) are microseconds rounded to the nanosecond, the viewers'
//! resolution (start and end rounded each, so that touching slices never overlap); every
//! slice's `args` hold the op and its costs in exact integer ps.
//!
//! # Keeping it small
//! [`TimelineOptions::ranks`] keeps only some ranks' tracks, [`TimelineOptions::window`] only
//! slices that overlap a time window, and a flow is kept only when both its ends are.
//! [`estimate_bytes`] bounds the file before the run; [`write`] stops with an error as soon as
//! the file would exceed [`TimelineOptions::max_bytes`], so that an atomic writer leaves
//! nothing behind.

use std::fmt::Write as _;
use std::io::{self, Write};

use loggops_engine::{Program, Time};

use crate::log::{Activity, ActivityLog, Exit, Kind, NONE};
use crate::path::CriticalPath;

/// Bytes a timeline takes per op, at most about (an op's slice, its message's slices and
/// flow, detours).
pub const BYTES_PER_OP: u64 = 900;

/// What to put in a timeline.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TimelineOptions {
    /// Ranks to show, as sorted, disjoint, inclusive ranges (`None`: all).
    pub ranks: Option<Vec<(u32, u32)>>,
    /// Show only slices overlapping `[from, to]` (ps).
    pub window: Option<(Time, Time)>,
    /// Refuse to write more than this many bytes.
    pub max_bytes: u64,
}

impl Default for TimelineOptions {
    fn default() -> Self {
        TimelineOptions {
            ranks: None,
            window: None,
            max_bytes: 1 << 30,
        }
    }
}

impl TimelineOptions {
    pub fn shows_rank(&self, r: u32) -> bool {
        match &self.ranks {
            None => true,
            Some(v) => v.iter().any(|&(a, b)| a <= r && r <= b),
        }
    }
    fn shows(&self, rank: u32, start: Time, end: Time) -> bool {
        self.shows_rank(rank)
            && match self.window {
                None => true,
                Some((a, b)) => start <= b && end >= a,
            }
    }
}

/// An upper bound of the timeline's size before the run: [`BYTES_PER_OP`] per op of the shown
/// ranks (a time window can only make it smaller).
pub fn estimate_bytes<P: Program>(prog: &P, opts: &TimelineOptions) -> u64 {
    let ops: u64 = match &opts.ranks {
        None => prog.total_ops(),
        Some(v) => v
            .iter()
            .flat_map(|&(a, b)| a..=b.min(prog.num_ranks().saturating_sub(1)))
            .map(|r| prog.num_ops(r) as u64)
            .sum(),
    };
    ops.saturating_mul(BYTES_PER_OP)
}

/// What a written timeline holds.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize)]
pub struct TimelineStats {
    /// Op slices (calc, send, post) and message slices (recv on the receiver's CPU).
    pub op_slices: u64,
    pub message_slices: u64,
    /// NIC slices (send and receive NICs).
    pub nic_slices: u64,
    pub detour_slices: u64,
    pub path_slices: u64,
    pub flows: u64,
    pub bytes: u64,
}

/// The timeline would be larger than allowed.
#[derive(Debug, thiserror::Error)]
#[error("the timeline would exceed {max} bytes")]
pub struct TooLarge {
    pub max: u64,
}

/// Counts bytes and refuses to go past a limit.
struct Capped<'a> {
    w: &'a mut dyn Write,
    n: u64,
    max: u64,
}

impl Write for Capped<'_> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        if self.n + buf.len() as u64 > self.max {
            return Err(io::Error::other(TooLarge { max: self.max }));
        }
        let k = self.w.write(buf)?;
        self.n += k as u64;
        Ok(k)
    }
    fn flush(&mut self) -> io::Result<()> {
        self.w.flush()
    }
}

/// A time in ps rounded to the nanosecond, the viewers' resolution. Start and end of a slice
/// are rounded each (its `dur` is the difference), so slices that touch still touch and
/// nested ones stay nested: viewers drop a slice that overlaps its neighbour by a rounding
/// error.
fn ns(ps: Time) -> Time {
    ps / 1000 + (ps % 1000 >= 500) as Time
}

/// Microseconds with nanosecond digits, from ns.
fn us(ns: Time) -> String {
    format!("{}.{:03}", ns / 1000, ns % 1000)
}

fn esc(s: &str) -> String {
    serde_json::to_string(s).expect("strings serialise")
}

const TID_NIC_SEND: u32 = 100;
const TID_NIC_RECV: u32 = 200;
const TID_POSTS: u32 = 300;
const TID_PATH: u32 = 400;
const TID_RECEIVING: u32 = 500;

/// Lanes for the queued model's receptions, which overlap on a rank: per activity its lane
/// (first fit in order of start, on the rounded times the viewers see), and per rank the
/// number of lanes.
fn reception_lanes(log: &ActivityLog) -> (Vec<u32>, Vec<u32>) {
    let mut lane = vec![0; log.nodes.len()];
    let mut lanes = vec![0; log.ranks() as usize];
    let mut by_rank: Vec<Vec<(Time, Time, usize)>> = vec![Vec::new(); log.ranks() as usize];
    for (i, a) in log.nodes.iter().enumerate() {
        if a.kind == Kind::Message && a.queued {
            by_rank[a.rank as usize].push((ns(a.start), ns(a.cpu_end), i));
        }
    }
    for (r, v) in by_rank.iter_mut().enumerate() {
        v.sort_unstable();
        // Lanes by the time they are free again: (end, lane).
        let mut free: std::collections::BinaryHeap<std::cmp::Reverse<(Time, u32)>> =
            std::collections::BinaryHeap::new();
        for &(start, end, i) in v.iter() {
            let l = match free.peek() {
                Some(&std::cmp::Reverse((e, l))) if e <= start => {
                    free.pop();
                    l
                }
                _ => {
                    lanes[r] += 1;
                    lanes[r] - 1
                }
            };
            lane[i] = l;
            free.push(std::cmp::Reverse((end, l)));
        }
    }
    (lane, lanes)
}

/// Writes the run recorded in `log` (and its critical path, if given) as Chrome trace JSON.
/// `title` names the run in the trace's metadata.
pub fn write(
    w: &mut dyn Write,
    log: &ActivityLog,
    path: Option<&CriticalPath>,
    opts: &TimelineOptions,
    title: &str,
) -> io::Result<TimelineStats> {
    let mut out = Capped {
        w,
        n: 0,
        max: opts.max_bytes,
    };
    let mut st = TimelineStats::default();
    let mut on_path = vec![false; log.nodes.len()];
    if let Some(p) = path {
        for s in &p.steps {
            on_path[s.node as usize] = true;
        }
    }
    let mut line = String::with_capacity(512);
    writeln!(
        out,
        "{{\"displayTimeUnit\":\"ns\",\"otherData\":{{\"title\":{},\"time_unit\":\"us, rounded to ns; exact ps in args\"}},\"traceEvents\":[",
        esc(title)
    )?;
    let mut first = true;
    let mut emit = |out: &mut Capped, line: &str| -> io::Result<()> {
        if !first {
            out.write_all(b",\n")?;
        }
        first = false;
        out.write_all(line.as_bytes())
    };
    // Names of processes and threads that are shown.
    let ncpu = log.nodes.iter().map(|a| a.cpu).max().unwrap_or(0);
    let nnic = log.nodes.iter().map(|a| a.nic).max().unwrap_or(0);
    let (lane, lanes) = reception_lanes(log);
    for r in (0..log.ranks()).filter(|&r| opts.shows_rank(r)) {
        line.clear();
        let _ = write!(
            line,
            "{{\"ph\":\"M\",\"name\":\"process_name\",\"pid\":{r},\"args\":{{\"name\":\"rank {r}\"}}}},\n{{\"ph\":\"M\",\"name\":\"process_sort_index\",\"pid\":{r},\"args\":{{\"sort_index\":{r}}}}}"
        );
        let mut threads = Vec::new();
        for c in 0..=ncpu as u32 {
            threads.push((1 + c, format!("CPU {c}")));
        }
        for n in 0..=nnic as u32 {
            threads.push((TID_NIC_SEND + n, format!("NIC {n} send")));
            threads.push((TID_NIC_RECV + n, format!("NIC {n} recv")));
        }
        for k in 0..lanes[r as usize] {
            threads.push((TID_RECEIVING + k, format!("receiving {k}")));
        }
        threads.push((TID_POSTS, "receives posted".into()));
        threads.push((TID_PATH, "critical path".into()));
        for (tid, name) in threads {
            let _ = write!(
                line,
                ",\n{{\"ph\":\"M\",\"name\":\"thread_name\",\"pid\":{r},\"tid\":{tid},\"args\":{{\"name\":{}}}}},\n{{\"ph\":\"M\",\"name\":\"thread_sort_index\",\"pid\":{r},\"tid\":{tid},\"args\":{{\"sort_index\":{tid}}}}}",
                esc(&name)
            );
        }
        emit(&mut out, &line)?;
    }
    let slice = |line: &mut String,
                 name: &str,
                 cat: &str,
                 pid: u32,
                 tid: u32,
                 start: Time,
                 end: Time,
                 args: &str| {
        let (a, b) = (ns(start), ns(end));
        let _ = write!(
            line,
            "{{\"ph\":\"X\",\"name\":{},\"cat\":\"{cat}\",\"pid\":{pid},\"tid\":{tid},\"ts\":{},\"dur\":{},\"args\":{{{args}}}}}",
            esc(name),
            us(a),
            us(b - a)
        );
    };
    // Flows bind to their slices by id (flow events v2: `bind_id` with `flow_out` on the
    // send's CPU slice, `flow_in` on the processing slice): binding `s`/`f` events by
    // timestamp picks the wrong slice when several start at once (a send whose `o` rounds to
    // 0 ns next to a calc), and viewers then draw the arrow from the calc.
    let mut message_of = vec![NONE; log.nodes.len()];
    for (i, a) in log.nodes.iter().enumerate() {
        if a.kind == Kind::Message && a.link != NONE {
            message_of[a.link as usize] = i as u32;
        }
    }
    let shown_cpu = |a: &Activity| opts.shows(a.rank, a.start, a.cpu_end);
    let with_flow = |line: &mut String, id: u32, dir: &str| {
        // The slice's closing `}` becomes the flow fields.
        line.pop();
        let _ = write!(line, ",\"bind_id\":\"0x{id:x}\",\"{dir}\":true}}");
    };
    for (i, a) in log.nodes.iter().enumerate() {
        line.clear();
        let crit = if on_path[i] { ",\"critical\":true" } else { "" };
        let cpu_tid = 1 + a.cpu as u32;
        let mut any = false;
        match a.kind {
            Kind::Calc => {
                if opts.shows(a.rank, a.start, a.cpu_end) {
                    let args = format!(
                        "\"op\":{},\"duration_ps\":{},\"detour_ps\":{}{crit}",
                        a.op, a.size, a.detour
                    );
                    slice(
                        &mut line, "calc", "calc", a.rank, cpu_tid, a.start, a.cpu_end, &args,
                    );
                    st.op_slices += 1;
                    any = true;
                    detour(&mut line, a, cpu_tid, &mut st, &slice);
                }
            }
            Kind::Send => {
                if opts.shows(a.rank, a.start, a.cpu_end) {
                    let args = format!(
                        "\"op\":{},\"dst\":{},\"size_bytes\":{},\"o_ps\":{},\"latency_ps\":{},\"arrival_ps\":{},\"detour_ps\":{}{crit}",
                        a.op,
                        a.peer,
                        a.size,
                        a.o,
                        a.lat,
                        a.arrival(),
                        a.detour
                    );
                    let name = format!("send → {}", a.peer);
                    slice(
                        &mut line, &name, "send", a.rank, cpu_tid, a.start, a.cpu_end, &args,
                    );
                    let m = message_of[i];
                    if m != NONE && shown_cpu(&log.nodes[m as usize]) {
                        with_flow(&mut line, i as u32, "flow_out");
                    }
                    st.op_slices += 1;
                    any = true;
                    detour(&mut line, a, cpu_tid, &mut st, &slice);
                }
                if opts.shows(a.rank, a.nic_start, a.nic_end) {
                    if any {
                        line.push_str(",\n");
                    }
                    let args = format!(
                        "\"op\":{},\"g_ps\":{},\"gap_ps\":{},\"nic_wait_ps\":{}{crit}",
                        a.op,
                        a.g,
                        a.gap,
                        a.nic_start - a.start
                    );
                    let name = format!("send → {}", a.peer);
                    slice(
                        &mut line,
                        &name,
                        "nic_send",
                        a.rank,
                        TID_NIC_SEND + a.nic as u32,
                        a.nic_start,
                        a.nic_end,
                        &args,
                    );
                    st.nic_slices += 1;
                    any = true;
                }
            }
            Kind::Message => {
                if opts.shows(a.rank, a.start, a.cpu_end) {
                    let matched = if a.matched == NONE {
                        "null".to_string()
                    } else {
                        a.matched.to_string()
                    };
                    let args = format!(
                        "\"src\":{},\"send_op\":{},\"recv_op\":{matched},\"size_bytes\":{},\"arrival_ps\":{},\"o_ps\":{},\"gap_ps\":{},\"detour_ps\":{}{crit}",
                        a.peer, a.op, a.size, a.ready, a.o, a.gap, a.detour
                    );
                    let name = format!("recv ← {}", a.peer);
                    let tid = if a.queued {
                        TID_RECEIVING + lane[i]
                    } else {
                        cpu_tid
                    };
                    slice(
                        &mut line, &name, "recv", a.rank, tid, a.start, a.cpu_end, &args,
                    );
                    // The flow from the send, when the send's slice is shown too.
                    if a.link != NONE && shown_cpu(&log.nodes[a.link as usize]) {
                        with_flow(&mut line, a.link, "flow_in");
                        st.flows += 1;
                    }
                    st.message_slices += 1;
                    any = true;
                    detour(&mut line, a, tid, &mut st, &slice);
                }
                if !a.queued && opts.shows(a.rank, a.start, a.nic_end) {
                    if any {
                        line.push_str(",\n");
                    }
                    let args = format!(
                        "\"src\":{},\"g_ps\":{},\"gap_ps\":{}{crit}",
                        a.peer, a.g, a.gap
                    );
                    let name = format!("recv ← {}", a.peer);
                    slice(
                        &mut line,
                        &name,
                        "nic_recv",
                        a.rank,
                        TID_NIC_RECV + a.nic as u32,
                        a.start,
                        a.nic_end,
                        &args,
                    );
                    st.nic_slices += 1;
                    any = true;
                }
            }
            Kind::Post => {
                if opts.shows(a.rank, a.start, a.start) {
                    let from = if a.peer == NONE {
                        String::new()
                    } else {
                        format!(",\"matched_src\":{}", a.peer)
                    };
                    let args = format!("\"op\":{}{from}{crit}", a.op);
                    slice(
                        &mut line,
                        "post recv",
                        "post",
                        a.rank,
                        TID_POSTS,
                        a.start,
                        a.start,
                        &args,
                    );
                    st.op_slices += 1;
                    any = true;
                }
            }
        }
        if any {
            emit(&mut out, &line)?;
        }
    }
    if let Some(p) = path {
        for s in &p.steps {
            let a = &log.nodes[s.node as usize];
            if !opts.shows(a.rank, s.start, s.end) {
                continue;
            }
            line.clear();
            let name = match (a.kind, s.exit) {
                (_, Exit::Raise) => "rendezvous match".to_string(),
                (_, Exit::Start) => format!("start of op {}", a.op),
                (Kind::Calc, _) => "calc".to_string(),
                (Kind::Send, Exit::Cpu) => format!("send o → {}", a.peer),
                (Kind::Send, Exit::Nic) => format!("send NIC → {}", a.peer),
                (Kind::Send, _) => format!("o + L → {}", a.peer),
                (Kind::Message, Exit::Nic) => format!("recv NIC ← {}", a.peer),
                (Kind::Message, _) => format!("recv ← {}", a.peer),
                (Kind::Post, _) => "post recv".to_string(),
            };
            let args = format!(
                "\"binding\":\"{:?}\",\"wait_ps\":{},\"op\":{}",
                s.binding, s.wait, a.op
            );
            slice(
                &mut line, &name, "critical", a.rank, TID_PATH, s.start, s.end, &args,
            );
            st.path_slices += 1;
            emit(&mut out, &line)?;
        }
    }
    out.write_all(b"\n]}\n")?;
    st.bytes = out.n;
    Ok(st)
}

/// Writes a complete event: line, name, category, pid, tid, start, end (ps), args.
type SliceFn = dyn Fn(&mut String, &str, &str, u32, u32, Time, Time, &str);

/// Appends an `OS detour` slice at the end of `a`'s CPU (or reception) slice on track `tid`
/// when it has one.
fn detour(line: &mut String, a: &Activity, tid: u32, st: &mut TimelineStats, slice: &SliceFn) {
    if a.detour > 0 {
        line.push_str(",\n");
        slice(
            line,
            "OS detour",
            "os",
            a.rank,
            tid,
            a.cpu_end - a.detour,
            a.cpu_end,
            &format!("\"detour_ps\":{}", a.detour),
        );
        st.detour_slices += 1;
    }
}
