//! Noiseless closed forms of the generated allreduces (LOGGOPSIM.md §11), for tests.
//!
//! With `step(s) = 2o + L + (s−1)·G` (normal mode: `s−1` saturates at 0 for 0-byte messages):
//!
//! * dissemination (and `nwaydissemination` with fan-out 1 and zero-length reduction calcs):
//!   `⌈log2 P⌉ · step(D)`;
//! * ring allreduce: `2(P−1) · step(⌊D/P⌋)`;
//! * recursive doubling (power-of-two P, K = log2 P): `Σ_{k=1..K} step(⌊D/2^k⌋) +
//!   Σ_{j=0..K−1} step(⌊D/2^K⌋·2^j)`.
//!
//! They hold when the NIC gap does not dominate (`g ≤ 2o + L`) and `O ≤ G`, for every
//! eager threshold (LogGOPSim's rendezvous adds no control-message latency).

use loggops_engine::{Params, Time};

use crate::collective::Collective;

/// `2o + L + (s−1)·G`, with `s−1` saturating at 0.
pub fn step(params: &Params, size: u64) -> Time {
    let per_byte = params
        .big_g
        .cost(size.saturating_sub(1))
        .expect("G·size overflows");
    2 * params.o + params.l + per_byte
}

/// Whether the closed forms apply to these parameters (`g ≤ 2o + L` and `O ≤ G`).
pub fn applies(params: &Params) -> bool {
    params.g <= 2 * params.o + params.l && params.big_o <= params.big_g
}

/// The noiseless completion time of `collective` on `p` ranks with `size` bytes, or `None`
/// for patterns without a closed form here (or recdoub on a non-power-of-two `p`).
/// `NwayDissemination` means fan-out 1 with zero-length reduction calcs.
pub fn closed_form_time(
    collective: Collective,
    p: u32,
    size: u64,
    params: &Params,
) -> Option<Time> {
    let log2 = |p: u32| if p <= 1 { 0 } else { 32 - (p - 1).leading_zeros() } as u64;
    match collective {
        Collective::Dissemination | Collective::NwayDissemination => {
            Some(log2(p) * step(params, size))
        }
        Collective::AllreduceRing => Some(2 * (p as u64 - 1) * step(params, size / p as u64)),
        Collective::AllreduceRecdoub if p.is_power_of_two() => {
            let k = p.trailing_zeros();
            let down: Time = (1..=k).map(|i| step(params, size >> i)).sum();
            let up: Time = (0..k).map(|j| step(params, (size >> k) << j)).sum();
            Some(down + up)
        }
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn matches_the_reference_numbers() {
        // LOGGOPSIM.md §11 (default parameters read as ticks; 16 B messages are far from 0 B).
        let p = Params::loggopsim_defaults_ticks();
        assert!(applies(&p));
        assert_eq!(
            closed_form_time(Collective::AllreduceRing, 16, 16 << 20, &p),
            Some(188_908_500)
        );
        assert_eq!(
            closed_form_time(Collective::Dissemination, 1024, 16, &p),
            Some(55_900)
        );
        assert_eq!(
            closed_form_time(Collective::AllreduceRecdoub, 16, 16 << 20, &p),
            Some(188_787_632)
        );
        assert_eq!(
            closed_form_time(Collective::AllreduceRecdoub, 12, 16, &p),
            None
        );
        assert_eq!(
            closed_form_time(Collective::LinearAlltoall, 16, 16, &p),
            None
        );
        // Normal mode: 0-byte messages cost 2o + L (LogGOPSim would wrap to 2o + L − G).
        assert_eq!(step(&p, 0), 5500);
    }
}
