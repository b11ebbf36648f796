//! Throughput experiment: a lazy Schedgen-shaped ring allreduce.
use loggops_engine::*;

struct Ring { p: u32, chunk: u64 }
impl Program for Ring {
    fn num_ranks(&self) -> u32 { self.p }
    fn num_cpus(&self) -> u8 { 1 }
    fn num_nics(&self) -> u8 { 1 }
    fn num_ops(&self, _: u32) -> u32 { 4 * (self.p - 1) }
    fn op(&self, r: u32, id: u32) -> Op {
        if id % 2 == 0 { Op::send(self.chunk, (r + 1) % self.p, 0) } else { Op::recv(self.chunk, (r + self.p - 1) % self.p, 0) }
    }
    fn depcount(&self, _: u32, id: u32) -> u32 { if id % 2 == 0 && id > 0 { 1 } else { 0 } }
    fn num_roots(&self, _: u32) -> u32 { 1 + 2 * (self.p - 1) }
    fn root(&self, _: u32, k: u32) -> u32 { if k == 0 { 0 } else { 2 * k - 1 } }
    fn for_each_dependent<F: FnMut(u32)>(&self, _: u32, id: u32, kind: DepKind, mut f: F) {
        if kind == DepKind::Done && id % 2 == 1 && id + 1 < 4 * (self.p - 1) { f(id + 1) }
    }
    fn dense_counters(&self) -> bool { false }
}

fn main() {
    let p: u32 = std::env::args().nth(1).map(|s| s.parse().unwrap()).unwrap_or(1024);
    let d: u64 = 16 << 20;
    let ring = Ring { p, chunk: d / p as u64 };
    let cfg = Config::new(Params::loggopsim_defaults_ticks());
    let t = std::time::Instant::now();
    let out = simulate(&ring, &cfg, &mut NoNoise).unwrap();
    let s = t.elapsed().as_secs_f64();
    let want = 2 * (p as u64 - 1) * (5500 + 6 * (d / p as u64 - 1));
    println!("P={p} max={:?} want={want} events={} msgs={} {:.2}s {:.1} Mev/s {:.1} Mmsg/s", out.max(), out.events, out.messages, s, out.events as f64 / s / 1e6, out.messages as f64 / s / 1e6);
}
