//! The critical path of a recorded run and where its picoseconds go.
//!
//! # The path
//! From the rank with the largest final CPU time (the first such rank), the path follows
//! binding predecessors ([`crate::log`]) back to time 0: each step is one *end* of one
//! activity (its CPU, its NIC, its message's arrival, or a zero-length rendezvous raise),
//! covering the interval from the activity's start to the start of the next step (or the
//! finishing time). The steps tile `[0, T]`, so the parts below sum exactly to `T`.
//!
//! # Parts
//! Every step is cut into its cost terms, in the order the engine adds them:
//!
//! | activity, end | terms |
//! |---|---|
//! | calc, CPU | compute (its length), OS detour |
//! | send, CPU | CPU overhead `o`, CPU overhead `O·(s−1)`, OS detour |
//! | send, NIC | NIC gap `g`, NIC gap `G·(s−1)` |
//! | send, arrival | CPU overhead `o`, latency `L` × latencies (1, or 3 for a rendezvous message with `--rndv-3l`) |
//! | message, CPU (or received, queued model) | CPU overhead `o`, OS detour, then the larger of NIC gap `G·(s−1)` and CPU overhead `O·(s−1)` |
//! | message, NIC | NIC gap `g`, NIC gap `G·(s−1)` |
//! | rendezvous raise, start | nothing (zero length) |
//!
//! A send's NIC and arrival ends start at its `nic_start` (see [`Activity::nic_start`]): in
//! the queued model a message that waited in its NIC's queue leaves when the NIC is free, and
//! the path then continues through the send that held the NIC.
//!
//! A term whose value was drawn (L, G, o, g) is split into its noiseless value (the
//! placement's base parameter, from [`Noise::base_costs`](loggops_engine::Noise::base_costs))
//! and **network noise**, the drawn value minus the noiseless one: negative when the draw was
//! below the base (a median-scaled distribution draws below its median half the time).
//!
//! # Waiting for a busy CPU or NIC
//! A step that reaches an activity `W` through a CPU or NIC end leaves the chain of the
//! activity `X` after it when `W` is *unrelated* to `X`: `W` did not complete one of `X`'s
//! direct dependencies. Precisely, with `t(X)` the op `X` is (a calc, send or posted
//! receive) or the receive `X` completes (a message), and `d(W)` the op `W` is or the
//! receive it completed, `W` is related to `X` iff `d(W) == t(X)` or `t(X)` `requires` or
//! `irequires` `d(W)` (in the program, on the same rank). On such a resource step the part
//! of `W`'s occupancy after `X` was ready (an op freed, a message arrived) is **waiting for
//! a busy CPU** (or NIC): `X` could have started, but the resource was held by something
//! else (an earlier message being processed, a computation that a posted receive's message
//! has to wait for, another send on the NIC). It is cut from the end of `W`'s terms
//! (a drawn term gives up its positive noise first); the rest of `W`'s terms keep their
//! parts, and the path continues through `W`. In the queued model a send's message that
//! waited in its NIC's queue (the path reaching the send through its NIC or arrival end,
//! bound by the NIC's previous send) waits for a busy NIC from the send's start, whatever the
//! ops are to each other: the part of the previous send's NIC time after that start is
//! **waiting for a busy NIC**. So the path is always the chain of binding
//! constraints (the longest path through the run's events, which is what the sensitivities
//! need), and "waiting" names the time it spends on resources held by unrelated work.
//!
//! # Sensitivities
//! Every term on the path counts towards the derivatives, waiting or not: `dT/dL` is the
//! number of latency terms, `dT/do` of `o` terms, `dT/dg` of `g` terms, `dT/dG` the bytes
//! charged at `G`, `dT/dO` those charged at `O`. Where the path is unique (no tie on it,
//! [`CriticalPath::ties`] = 0) and no other path comes within one step, they are the exact
//! one-sided finite differences of the run; on a tie the run's left and right derivatives
//! differ and the path's counts are one of them.

use std::collections::HashMap;

use loggops_engine::{DepKind, MsgCosts, Program, Time};

use crate::log::{Activity, ActivityLog, Exit, Kind, NONE};

/// The parts of a critical path (see the module docs).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Part {
    Compute,
    CpuOverhead,
    NicGap,
    Latency,
    WaitCpu,
    WaitNic,
    OsDetour,
    NetworkNoise,
}

impl Part {
    pub const ALL: [Part; 8] = [
        Part::Compute,
        Part::CpuOverhead,
        Part::NicGap,
        Part::Latency,
        Part::WaitCpu,
        Part::WaitNic,
        Part::OsDetour,
        Part::NetworkNoise,
    ];

    /// Machine name (JSON and CSV keys get `_ps` appended).
    pub fn key(self) -> &'static str {
        match self {
            Part::Compute => "compute",
            Part::CpuOverhead => "cpu_overhead",
            Part::NicGap => "nic_gap",
            Part::Latency => "latency",
            Part::WaitCpu => "wait_cpu",
            Part::WaitNic => "wait_nic",
            Part::OsDetour => "os_detour",
            Part::NetworkNoise => "network_noise",
        }
    }

    /// What the part is, for people.
    pub fn label(self) -> &'static str {
        match self {
            Part::Compute => "compute (calc)",
            Part::CpuOverhead => "CPU overhead (o, O·size)",
            Part::NicGap => "NIC gap (g, G·size)",
            Part::Latency => "latency (L)",
            Part::WaitCpu => "waiting for a busy CPU",
            Part::WaitNic => "waiting for a busy NIC",
            Part::OsDetour => "OS detours",
            Part::NetworkNoise => "network noise",
        }
    }

    /// Short phrase for sentences ("62 % of the p95 inflation is ...").
    pub fn phrase(self) -> &'static str {
        match self {
            Part::Compute => "compute",
            Part::CpuOverhead => "CPU overhead",
            Part::NicGap => "NIC gap (bandwidth)",
            Part::Latency => "latency",
            Part::WaitCpu => "waiting for busy CPUs",
            Part::WaitNic => "waiting for busy NICs",
            Part::OsDetour => "OS detours",
            Part::NetworkNoise => "network noise",
        }
    }

    fn index(self) -> usize {
        self as usize
    }
}

/// Picoseconds per [`Part`]; only network noise can be negative. They sum to the path's
/// length.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct Parts(pub [i64; 8]);

impl Parts {
    pub fn get(&self, p: Part) -> i64 {
        self.0[p.index()]
    }
    fn add(&mut self, p: Part, v: i64) {
        self.0[p.index()] += v;
    }
    pub fn total(&self) -> i64 {
        self.0.iter().sum()
    }
}

/// How many of each cost term lie on the path: the derivatives of the finishing time.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, serde::Serialize)]
pub struct TermCounts {
    /// Latency terms: `dT/dL` (ps per ps).
    pub latency: u64,
    /// `o` terms: `dT/do`.
    pub o: u64,
    /// `g` terms: `dT/dg`.
    pub g: u64,
    /// Bytes charged at `G`: `dT/dG` in ps per (ps/B).
    pub big_g_bytes: u64,
    /// Bytes charged at `O`: `dT/dO`.
    pub big_o_bytes: u64,
}

/// What decided a step's start (the binding constraint of the activity after it).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Binding {
    /// Nothing: the path's first step starts at 0.
    Start,
    /// The activity's own dependency (a related activity's CPU or NIC end).
    Dependency,
    /// A message arrived.
    Arrival,
    /// The CPU became free after unrelated work.
    CpuFree,
    /// The send NIC became free after unrelated work.
    SendNicFree,
    /// The receive NIC became free after unrelated work.
    RecvNicFree,
    /// A rendezvous send was matched.
    RendezvousMatch,
    /// Queued model: a message was received, completing the receive the activity needed (or
    /// its rendezvous send).
    Received,
    /// Queued model: a lower-numbered send of the rank started (sends start in program
    /// order).
    ProgramOrder,
}

/// One step of the path: an end of an activity.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Step {
    pub node: u32,
    pub exit: Exit,
    pub start: Time,
    pub end: Time,
    /// Picoseconds of it spent waiting (the next step's activity was ready, the resource
    /// busy with this unrelated one; time the resource spent moving bytes, `G·(s−1)`, is
    /// bandwidth, not waiting).
    pub wait: Time,
    /// How this step's activity came to start at `start` (the end of the step before).
    pub binding: Binding,
}

/// A message on the path and the path time spent on it (its send's and its processing's
/// steps).
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
pub struct PathMessage {
    pub src: u32,
    pub dst: u32,
    pub send_op: u32,
    pub size: u64,
    pub time_ps: Time,
}

/// The critical path of one run (see the module docs).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CriticalPath {
    /// The finishing time `T` (ps) and the rank that has it.
    pub finish: Time,
    pub rank: u32,
    pub parts: Parts,
    pub counts: TermCounts,
    /// Steps from time 0 to `T`.
    pub steps: Vec<Step>,
    /// Path time per rank (a message's `o` and latency count for its sender), largest first.
    pub ranks: Vec<(u32, Time)>,
    /// Messages on the path by path time, largest first.
    pub messages: Vec<PathMessage>,
    /// Ties on the path (activities with two binding candidates, a receive CPU charge with
    /// `O·(s−1) = G·(s−1)`, another rank finishing at `T`): the derivatives are one-sided there.
    pub ties: u32,
}

impl CriticalPath {
    /// Whether the path's steps, ranks and messages are listed (read from a full log), or only
    /// its attribution is known ([`crate::Carrier`]).
    pub fn is_listed(&self) -> bool {
        !self.steps.is_empty() || self.finish == 0
    }
}

/// A path that does not tile `[0, T]`: a bug in the engine's records or the log.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PathError {
    #[error("the critical path does not reach time 0 (it stops at {at} ps); please report this")]
    Gap { at: Time },
    #[error("an activity on the critical path ends before it starts ({what}); please report this")]
    Order { what: String },
}

/// One cost term: noiseless value, network noise (drawn − noiseless), and which derivative it
/// feeds.
#[derive(Clone, Copy, Debug)]
struct Term {
    part: Part,
    base: i64,
    noise: i64,
    sens: Sens,
}

#[derive(Clone, Copy, Debug)]
enum Sens {
    None,
    L(u64),
    O,
    G,
    BigG(u64),
    BigO(u64),
}

fn term(part: Part, base: i64, noise: i64, sens: Sens) -> Term {
    Term {
        part,
        base,
        noise,
        sens,
    }
}

/// Reads the critical path of a run recorded in `log` (whose program is `prog`, run with the
/// engine's per-byte CPU overhead `big_o`, used only to report ties) from the finishing times
/// `finish` (the engine's [`Outcome::finish`](loggops_engine::Outcome)).
pub fn critical_path<P: Program>(
    log: &ActivityLog,
    prog: &P,
    finish: &[Time],
    big_o: loggops_engine::PerByte,
) -> Result<CriticalPath, PathError> {
    let (t_end, rank) =
        finish.iter().enumerate().fold(
            (0, 0),
            |best, (r, &t)| if t > best.0 { (t, r as u32) } else { best },
        );
    let mut ties = finish.iter().filter(|&&t| t == t_end).count() as u32 - 1;
    let mut steps = Vec::new();
    let mut cur = log.final_writer(rank).filter(|w| w.2 == t_end);
    if t_end > 0 && cur.is_none() {
        return Err(PathError::Gap { at: t_end });
    }
    let mut end = t_end;
    while let Some((node, exit, at)) = cur {
        let a = &log.nodes[node as usize];
        let start = a.start_of(exit);
        if at != end || start > end {
            return Err(PathError::Order {
                what: format!("{:?} of rank {} op {} at {end} ps", a.kind, a.rank, a.op),
            });
        }
        steps.push(Step {
            node,
            exit,
            start,
            end,
            wait: 0,
            binding: Binding::Start,
        });
        end = start;
        let (pred, pred_exit) = a.pred_of(exit);
        cur = (pred != NONE).then(|| {
            let p = &log.nodes[pred as usize];
            (pred, pred_exit, p.exit_time(pred_exit))
        });
    }
    if end != 0 {
        return Err(PathError::Gap { at: end });
    }
    steps.reverse();
    // Each step's activity came to start at the end of the step before it.
    for k in 1..steps.len() {
        let (w, exit) = (&log.nodes[steps[k - 1].node as usize], steps[k - 1].exit);
        let x = &log.nodes[steps[k].node as usize];
        // A queued-model message that waited in its NIC's queue since its send started.
        let nic_queue = steps[k].start > x.start;
        let (b, wait) = link(prog, x, nic_queue, w, exit);
        steps[k].binding = b;
        steps[k - 1].wait = wait;
    }
    let mut parts = Parts::default();
    let mut counts = TermCounts::default();
    let mut per_rank: HashMap<u32, Time> = HashMap::new();
    let mut per_msg: HashMap<(u32, u32), PathMessage> = HashMap::new();
    for s in &mut steps {
        let a = &log.nodes[s.node as usize];
        let len = s.end - s.start;
        let (t, waited) = charge(
            &log.bases,
            a,
            s.exit,
            len,
            s.wait,
            big_o,
            &mut parts,
            &mut counts,
        );
        ties += t;
        s.wait = waited;
        *per_rank.entry(a.rank).or_default() += len;
        if let Some(k) = a.message_key() {
            let m = per_msg.entry(k).or_insert(PathMessage {
                src: k.0,
                dst: a.message_dst(),
                send_op: k.1,
                size: a.size,
                time_ps: 0,
            });
            m.time_ps += len;
        }
    }
    debug_assert_eq!(parts.total(), t_end as i64);
    let mut ranks: Vec<(u32, Time)> = per_rank.into_iter().filter(|r| r.1 > 0).collect();
    ranks.sort_by_key(|&(r, t)| (std::cmp::Reverse(t), r));
    let mut messages: Vec<PathMessage> = per_msg.into_values().collect();
    messages.sort_by_key(|m| (std::cmp::Reverse(m.time_ps), m.src, m.send_op));
    Ok(CriticalPath {
        finish: t_end,
        rank,
        parts,
        counts,
        steps,
        ranks,
        messages,
        ties,
    })
}

/// How activity `x` came to start at the end `exit` of its binding predecessor `w`, and how
/// much of that end's step is waiting for a busy CPU or NIC (the part of `w`'s occupancy after
/// `x` was ready, when `w` is unrelated to `x`). `nic_queue`: `x` is a send whose message
/// waited in its NIC's queue (its NIC interval starts after the send did).
pub(crate) fn link<P: Program>(
    prog: &P,
    x: &Activity,
    nic_queue: bool,
    w: &Activity,
    exit: Exit,
) -> (Binding, Time) {
    let b = if nic_queue {
        Binding::SendNicFree
    } else {
        binding(prog, x, w, exit)
    };
    let wait = if matches!(
        b,
        Binding::CpuFree | Binding::SendNicFree | Binding::RecvNicFree
    ) {
        let ready = if nic_queue { x.start } else { x.ready };
        let (start, end) = (w.start_of(exit), w.exit_time(exit));
        end - ready.clamp(start, end)
    } else {
        0
    };
    (b, wait)
}

/// Adds the step of end `exit` of `a` (length `len`, `wait` of it waiting) to `parts` and
/// `counts`; returns the ties it holds (the activity's own, and a receive CPU charge with
/// `O·(s−1) = G·(s−1)`) and the picoseconds charged as waiting (at most `wait`: time moving
/// bytes stays bandwidth).
pub(crate) fn charge(
    bases: &[MsgCosts],
    a: &Activity,
    exit: Exit,
    len: Time,
    wait: Time,
    big_o: loggops_engine::PerByte,
    parts: &mut Parts,
    counts: &mut TermCounts,
) -> (u32, Time) {
    let (terms, tie) = terms(bases, a, exit, len, big_o);
    let wait_part = if exit == Exit::Nic {
        Part::WaitNic
    } else {
        Part::WaitCpu
    };
    let waited = apply(terms.as_slice(), wait, wait_part, parts, counts);
    (a.tie as u32 + tie as u32, waited)
}

fn binding<P: Program>(prog: &P, x: &Activity, w: &Activity, exit: Exit) -> Binding {
    match exit {
        Exit::Arrival => Binding::Arrival,
        Exit::Raise => Binding::RendezvousMatch,
        Exit::Received => Binding::Received,
        Exit::Start if x.rank != w.rank || related(prog, x, w) => Binding::Dependency,
        Exit::Start => Binding::ProgramOrder,
        Exit::Cpu | Exit::Nic if related(prog, x, w) => Binding::Dependency,
        Exit::Cpu => Binding::CpuFree,
        Exit::Nic if w.kind == Kind::Send => Binding::SendNicFree,
        Exit::Nic => Binding::RecvNicFree,
    }
}

/// Whether `w` completed one of `x`'s direct dependencies (or `x`'s own receive): see the
/// module docs. A message's receive is the one it completed when it was processed
/// ([`Activity::target`]).
fn related<P: Program>(prog: &P, x: &Activity, w: &Activity) -> bool {
    if w.rank != x.rank {
        return false;
    }
    let target = x.target;
    let dep = match w.kind {
        Kind::Message => w.matched,
        _ => w.op,
    };
    if target == NONE || dep == NONE {
        return false;
    }
    if target == dep {
        return true;
    }
    let mut found = false;
    for kind in [DepKind::Done, DepKind::Start] {
        prog.for_each_dependent(x.rank, dep, kind, |d| found |= d == target);
    }
    found
}

/// At most three cost terms of one step.
struct Terms {
    t: [Term; 3],
    n: usize,
}

impl Terms {
    fn of(terms: &[Term]) -> Terms {
        let none = term(Part::Compute, 0, 0, Sens::None);
        let mut t = [none; 3];
        t[..terms.len()].copy_from_slice(terms);
        Terms { t, n: terms.len() }
    }
    fn as_slice(&self) -> &[Term] {
        &self.t[..self.n]
    }
}

/// The cost terms of end `exit` of `a` (length `len`), in the engine's order, and whether the
/// receive CPU charge tied (`O·(s−1) = G·(s−1)`).
fn terms(
    bases: &[MsgCosts],
    a: &Activity,
    exit: Exit,
    len: Time,
    big_o: loggops_engine::PerByte,
) -> (Terms, bool) {
    let base: MsgCosts = bases.get(a.base as usize).copied().unwrap_or(MsgCosts {
        latency: 0,
        o: 0,
        g: 0,
        gap_bytes: 0,
    });
    let bytes = a.size.saturating_sub(1);
    let i = |t: Time| t as i64;
    let drawn = |v: Time, b: Time| term(Part::CpuOverhead, i(b), i(v) - i(b), Sens::O);
    let gap = || {
        let b = i(a.gap) - a.gap_noise;
        term(Part::NicGap, b, a.gap_noise, Sens::BigG(bytes))
    };
    let g = || term(Part::NicGap, i(base.g), i(a.g) - i(base.g), Sens::G);
    let mut tie = false;
    let v = match (a.kind, exit) {
        (_, Exit::Raise | Exit::Start) | (Kind::Post, _) => Terms::of(&[]),
        (Kind::Calc, _) => Terms::of(&[
            term(Part::Compute, i(len - a.detour), 0, Sens::None),
            term(Part::OsDetour, i(a.detour), 0, Sens::None),
        ]),
        (Kind::Send, Exit::Cpu) => Terms::of(&[
            drawn(a.o, base.o),
            term(
                Part::CpuOverhead,
                i(len - a.o - a.detour),
                0,
                Sens::BigO(bytes),
            ),
            term(Part::OsDetour, i(a.detour), 0, Sens::None),
        ]),
        (Kind::Send, Exit::Nic) | (Kind::Message, Exit::Nic) => Terms::of(&[g(), gap()]),
        (Kind::Send, Exit::Arrival | Exit::Received) => {
            let m = a.latencies as i64;
            Terms::of(&[
                drawn(a.o, base.o),
                term(
                    Part::Latency,
                    i(base.latency) * m,
                    (i(a.lat) - i(base.latency)) * m,
                    Sens::L(m as u64),
                ),
            ])
        }
        (Kind::Message, _) => {
            let rest = len - a.o - a.detour;
            let ob = big_o.cost(bytes).unwrap_or(Time::MAX);
            tie = ob == a.gap && bytes > 0;
            let last = if rest == a.gap {
                gap()
            } else {
                term(Part::CpuOverhead, i(rest), 0, Sens::BigO(bytes))
            };
            Terms::of(&[
                drawn(a.o, base.o),
                term(Part::OsDetour, i(a.detour), 0, Sens::None),
                last,
            ])
        }
    };
    (v, tie)
}

/// Adds `terms` to `parts` and `counts`, `wait` picoseconds cut from their end going to
/// `wait_part`. Time moving bytes (a `G·(s−1)` term) is never cut: it is bandwidth, whichever
/// op waits for it, so a step waits at most for its other terms. Returns the time charged as
/// waiting.
fn apply(
    terms: &[Term],
    wait: Time,
    wait_part: Part,
    parts: &mut Parts,
    counts: &mut TermCounts,
) -> Time {
    let mut w = wait as i64;
    for t in terms.iter().rev() {
        let (mut base, mut noise) = (t.base, t.noise);
        if w > 0 && !matches!(t.sens, Sens::BigG(_)) {
            let c = w.min(base + noise);
            let from_noise = if noise > 0 { c.min(noise) } else { 0 };
            noise -= from_noise;
            base -= c - from_noise;
            w -= c;
        }
        parts.add(t.part, base);
        parts.add(Part::NetworkNoise, noise);
        match t.sens {
            Sens::None => {}
            Sens::L(m) => counts.latency += m,
            Sens::O => counts.o += 1,
            Sens::G => counts.g += 1,
            Sens::BigG(b) => counts.big_g_bytes += b,
            Sens::BigO(b) => counts.big_o_bytes += b,
        }
    }
    let waited = wait as i64 - w.max(0);
    parts.add(wait_part, waited);
    waited as Time
}
