//! Finding the repetitions in the template (an application's time steps), so that the schedule
//! says `repeat 20 { … }` once instead of twenty copies.

/// A piece of the template: one call, or a repetition of a body.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Node {
    Call(usize),
    Repeat {
        n: u32,
        /// First template call of the first repetition, and the body's length in calls.
        start: usize,
        len: usize,
        body: Vec<Node>,
    },
}

/// Compresses `sig` (one signature per template call: equal signatures are equal statements)
/// into repetitions, outermost first. `ok(start, len)` says whether `[start, start + len)` may
/// be a body (e.g. its waits refer to nothing outside it).
pub fn compress(sig: &[u32], ok: &dyn Fn(usize, usize) -> bool) -> Vec<Node> {
    compress_range(sig, 0, sig.len(), ok)
}

fn compress_range(
    sig: &[u32],
    lo: usize,
    hi: usize,
    ok: &dyn Fn(usize, usize) -> bool,
) -> Vec<Node> {
    let n = hi - lo;
    // best: (saved calls, start, period, count)
    let mut best: Option<(usize, usize, usize, usize)> = None;
    for p in 1..=n / 2 {
        let mut i = lo;
        while i + p < hi {
            if sig[i] != sig[i + p] {
                i += 1;
                continue;
            }
            let s = i;
            while i + p < hi && sig[i] == sig[i + p] {
                i += 1;
            }
            let run = i - s;
            if run < p {
                continue;
            }
            // the earliest start within the run whose body is allowed (later starts repeat
            // fewer times)
            for start in s..=s + run - p {
                let count = (run - (start - s)) / p + 1;
                let saved = (count - 1) * p;
                if best.is_some_and(|b| b.0 >= saved) {
                    break;
                }
                if ok(start, p) {
                    best = Some((saved, start, p, count));
                    break;
                }
            }
        }
    }
    let Some((_, start, p, count)) = best else {
        return (lo..hi).map(Node::Call).collect();
    };
    let mut out = compress_range(sig, lo, start, ok);
    out.push(Node::Repeat {
        n: count as u32,
        start,
        len: p,
        body: compress_range(sig, start, start + p, ok),
    });
    out.extend(compress_range(sig, start + count * p, hi, ok));
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn show(nodes: &[Node]) -> String {
        nodes
            .iter()
            .map(|n| match n {
                Node::Call(i) => i.to_string(),
                Node::Repeat { n, body, .. } => format!("{n}x[{}]", show(body)),
            })
            .collect::<Vec<_>>()
            .join(" ")
    }

    #[test]
    fn finds_time_steps_and_nested_loops() {
        let all = |_: usize, _: usize| true;
        // init, 3 steps of (a b c), end
        let sig = [9, 1, 2, 3, 1, 2, 3, 1, 2, 3, 8];
        assert_eq!(show(&compress(&sig, &all)), "0 3x[1 2 3] 10");
        // steps of (a (b b b) c)
        let sig = [1, 2, 2, 2, 3, 1, 2, 2, 2, 3];
        assert_eq!(show(&compress(&sig, &all)), "2x[0 3x[1] 4]");
        // a body may be refused: then the loop starts later
        let sig = [1, 1, 1, 1];
        let odd = |s: usize, _: usize| s % 2 == 1;
        assert_eq!(show(&compress(&sig, &odd)), "0 3x[1]");
        assert_eq!(show(&compress(&[], &all)), "");
    }
}
