//! An exact emulation of libstdc++'s `std::sort` (introsort) permutation.
//!
//! LogGOPSim orders the operations freed by one event with `std::sort` by op type. That sort is
//! not stable: above 16 elements its introsort permutes equal keys, and the permutation decides
//! which posted receive a message matches (LogGOPSim's deadlocks on Schedgen's ring come from it).
//! To reproduce LogGOPSim to the tick, `--order libstdcxx` applies the very same sequence of
//! moves as GCC's libstdc++ (`bits/stl_algo.h`, `bits/stl_heap.h`): median-of-three pivot moved
//! to the front, Hoare-style unguarded partition, depth limit `2·⌊log2 n⌋` then heapsort, and a
//! final insertion sort with threshold 16. The algorithm is described from its public behaviour;
//! the tests check it against permutations produced by g++ 12.

const THRESHOLD: usize = 16;

/// Sorts `v` by `less` exactly as libstdc++'s `std::sort(v.begin(), v.end(), less)` does.
pub fn sort_by<T: Copy, F: Fn(&T, &T) -> bool>(v: &mut [T], less: F) {
    let n = v.len();
    if n < 2 {
        return;
    }
    let depth = 2 * (usize::BITS - 1 - n.leading_zeros()) as usize;
    introsort_loop(v, 0, n, depth, &less);
    final_insertion_sort(v, 0, n, &less);
}

fn introsort_loop<T: Copy, F: Fn(&T, &T) -> bool>(
    v: &mut [T],
    first: usize,
    mut last: usize,
    mut depth: usize,
    less: &F,
) {
    while last - first > THRESHOLD {
        if depth == 0 {
            heap_sort(v, first, last, less);
            return;
        }
        depth -= 1;
        let cut = partition_pivot(v, first, last, less);
        introsort_loop(v, cut, last, depth, less);
        last = cut;
    }
}

fn partition_pivot<T: Copy, F: Fn(&T, &T) -> bool>(
    v: &mut [T],
    first: usize,
    last: usize,
    less: &F,
) -> usize {
    let mid = first + (last - first) / 2;
    move_median_to_first(v, first, first + 1, mid, last - 1, less);
    unguarded_partition(v, first + 1, last, first, less)
}

fn move_median_to_first<T: Copy, F: Fn(&T, &T) -> bool>(
    v: &mut [T],
    result: usize,
    a: usize,
    b: usize,
    c: usize,
    less: &F,
) {
    let pick = if less(&v[a], &v[b]) {
        if less(&v[b], &v[c]) {
            b
        } else if less(&v[a], &v[c]) {
            c
        } else {
            a
        }
    } else if less(&v[a], &v[c]) {
        a
    } else if less(&v[b], &v[c]) {
        c
    } else {
        b
    };
    v.swap(result, pick);
}

fn unguarded_partition<T: Copy, F: Fn(&T, &T) -> bool>(
    v: &mut [T],
    mut first: usize,
    mut last: usize,
    pivot: usize,
    less: &F,
) -> usize {
    loop {
        while less(&v[first], &v[pivot]) {
            first += 1;
        }
        last -= 1;
        while less(&v[pivot], &v[last]) {
            last -= 1;
        }
        if first >= last {
            return first;
        }
        v.swap(first, last);
        first += 1;
    }
}

fn final_insertion_sort<T: Copy, F: Fn(&T, &T) -> bool>(
    v: &mut [T],
    first: usize,
    last: usize,
    less: &F,
) {
    if last - first > THRESHOLD {
        insertion_sort(v, first, first + THRESHOLD, less);
        for i in first + THRESHOLD..last {
            unguarded_linear_insert(v, i, less);
        }
    } else {
        insertion_sort(v, first, last, less);
    }
}

fn insertion_sort<T: Copy, F: Fn(&T, &T) -> bool>(
    v: &mut [T],
    first: usize,
    last: usize,
    less: &F,
) {
    if first == last {
        return;
    }
    for i in first + 1..last {
        if less(&v[i], &v[first]) {
            let val = v[i];
            v.copy_within(first..i, first + 1);
            v[first] = val;
        } else {
            unguarded_linear_insert(v, i, less);
        }
    }
}

fn unguarded_linear_insert<T: Copy, F: Fn(&T, &T) -> bool>(v: &mut [T], mut last: usize, less: &F) {
    let val = v[last];
    let mut next = last - 1;
    while less(&val, &v[next]) {
        v[last] = v[next];
        last = next;
        next -= 1;
    }
    v[last] = val;
}

fn heap_sort<T: Copy, F: Fn(&T, &T) -> bool>(v: &mut [T], first: usize, last: usize, less: &F) {
    // __partial_sort(first, last, last): make_heap then sort_heap.
    let len = last - first;
    if len >= 2 {
        let mut parent = (len - 2) / 2;
        loop {
            let value = v[first + parent];
            adjust_heap(v, first, parent, len, value, less);
            if parent == 0 {
                break;
            }
            parent -= 1;
        }
    }
    let mut end = last;
    while end - first > 1 {
        end -= 1;
        let value = v[end];
        v[end] = v[first];
        adjust_heap(v, first, 0, end - first, value, less);
    }
}

fn adjust_heap<T: Copy, F: Fn(&T, &T) -> bool>(
    v: &mut [T],
    first: usize,
    mut hole: usize,
    len: usize,
    value: T,
    less: &F,
) {
    let top = hole;
    let mut child = hole;
    while child < (len - 1) / 2 {
        child = 2 * (child + 1);
        if less(&v[first + child], &v[first + child - 1]) {
            child -= 1;
        }
        v[first + hole] = v[first + child];
        hole = child;
    }
    if len & 1 == 0 && child == (len - 2) / 2 {
        child = 2 * (child + 1);
        v[first + hole] = v[first + child - 1];
        hole = child - 1;
    }
    // __push_heap
    let mut parent = hole.wrapping_sub(1) / 2;
    while hole > top && less(&v[first + parent], &value) {
        v[first + hole] = v[first + parent];
        hole = parent;
        parent = hole.wrapping_sub(1) / 2;
    }
    v[first + hole] = value;
}

#[cfg(test)]
mod tests {
    use super::*;

    fn perm(keys: &[u8]) -> Vec<usize> {
        let mut v: Vec<(u8, usize)> = keys.iter().copied().zip(0..).collect();
        sort_by(&mut v, |a, b| a.0 < b.0);
        v.into_iter().map(|(_, i)| i).collect()
    }

    #[test]
    fn small_inputs_sort_stably() {
        assert_eq!(perm(&[3, 1, 2, 1, 3, 2]), vec![1, 3, 2, 5, 0, 4]);
    }

    #[test]
    fn matches_libstdcxx_on_send_then_sixteen_recvs() {
        // LOGGOPSIM.md §6.2: [send, recv x16] -> recv order 8,16,15,...,9,7,...,1
        let mut keys = vec![1u8];
        keys.extend(std::iter::repeat_n(2u8, 16));
        let p = perm(&keys);
        assert_eq!(p[0], 0);
        let expected: Vec<usize> = std::iter::once(8)
            .chain((9..=16).rev())
            .chain((1..=7).rev())
            .collect();
        assert_eq!(&p[1..], &expected[..]);
    }

    #[test]
    fn sorts_any_input() {
        let mut rnd = crate::test_rng::xorshift(12345);
        for n in 0..300 {
            let mut v: Vec<u32> = (0..n).map(|_| (rnd() % 5) as u32).collect();
            let mut w = v.clone();
            sort_by(&mut v, |a, b| a < b);
            w.sort();
            assert_eq!(v, w);
        }
    }
}

#[cfg(test)]
mod against_gcc {
    //! Permutations recorded from g++ 12 / libstdc++ (`tests/data/libstdcxx_*.txt`, made by a
    //! 30-line C++ program that sorts (key, index) pairs by key and prints the indices).
    use super::*;

    fn cases(text: &str) -> Vec<(Vec<i64>, Vec<usize>)> {
        text.lines()
            .map(|l| {
                let (k, p) = l.split_once('|').unwrap();
                let keys = k.split_whitespace().map(|x| x.parse().unwrap()).collect();
                let perm = p.split_whitespace().map(|x| x.parse().unwrap()).collect();
                (keys, perm)
            })
            .collect()
    }

    #[test]
    fn std_sort_permutations_match_gcc() {
        let text = include_str!("../tests/data/libstdcxx_sort.txt");
        let all = cases(text);
        assert_eq!(all.len(), 400);
        for (keys, want) in all {
            let mut v: Vec<(i64, usize)> = keys.iter().copied().zip(0..).collect();
            sort_by(&mut v, |a, b| a.0 < b.0);
            let got: Vec<usize> = v.iter().map(|e| e.1).collect();
            assert_eq!(got, want, "keys {keys:?}");
        }
    }

    #[test]
    fn heap_sort_matches_gcc_make_heap_sort_heap() {
        let text = include_str!("../tests/data/libstdcxx_heap.txt");
        for (keys, want) in cases(text) {
            let mut v: Vec<(i64, usize)> = keys.iter().copied().zip(0..).collect();
            let n = v.len();
            heap_sort(&mut v, 0, n, &|a: &(i64, usize), b: &(i64, usize)| {
                a.0 < b.0
            });
            let got: Vec<usize> = v.iter().map(|e| e.1).collect();
            assert_eq!(got, want, "keys {keys:?}");
        }
    }
}
