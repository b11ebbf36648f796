//! The match queues: posted receives (as runs) and unexpected messages, per rank, as LogGOPSim
//! keeps them (FIFO, first match wins), shared by both engines.

use crate::program::{Program, ANY};

/// Does a receive for `(want_src, want_tag)` accept a message from `src` with `tag` (either side
/// may be a wildcard)?
#[inline]
pub(crate) fn matches(want_src: u32, want_tag: u32, src: u32, tag: u32) -> bool {
    (want_src == ANY || src == ANY || src == want_src)
        && (want_tag == ANY || tag == ANY || tag == want_tag)
}

/// A run of receives posted one after the other: ops `first + i*stride`, `i < count`. When they
/// all have the same (src, tag), those are stored; otherwise `src` is [`MIXED`] and each
/// receive's (src, tag) is read from the program when the run is searched. A generated
/// dissemination posts all ⌈log2 P⌉ receives of a rank as one run.
#[derive(Clone, Copy, Debug)]
pub(crate) struct PostedRun {
    pub src: u32,
    pub tag: u32,
    pub first: u32,
    pub stride: u32,
    pub count: u32,
}

impl PostedRun {
    /// Does receive `i` of the run (of rank `host`) accept a message from `src` with `tag`?
    #[inline(always)]
    fn accepts<P: Program>(&self, prog: &P, host: u32, i: u32, src: u32, tag: u32) -> bool {
        if self.src == MIXED {
            let r = prog.op(host, self.first + i * self.stride);
            matches(src, tag, r.peer, r.tag)
        } else {
            matches(src, tag, self.src, self.tag)
        }
    }
}

#[derive(Clone, Copy, Debug)]
pub(crate) struct Unexpected {
    pub src: u32,
    pub tag: u32,
    pub send_op: u32,
}

/// End of a linked list.
pub(crate) const NIL: u32 = u32::MAX;

/// `PostedRun::src` of a run whose receives differ in (src, tag). Ranks are below 2^30, and
/// ANY_SOURCE is `u32::MAX`, so no receive has this source.
pub(crate) const MIXED: u32 = u32::MAX - 1;

/// FIFOs kept as singly linked lists through an arena shared by all ranks: a rank's list heads
/// are kept by the engine next to its other hot per-rank state, and its tails where they are touched
/// only when appending or when the last node is removed.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Node<T> {
    pub item: T,
    pub next: u32,
}

/// Nodes of every rank's lists, with a free list.
pub(crate) struct Arena<T> {
    pub nodes: Vec<Node<T>>,
    free: u32,
}

impl<T: Copy> Arena<T> {
    pub fn new() -> Self {
        Self::reuse(Vec::new())
    }

    /// An empty arena in the allocation of `nodes`.
    pub fn reuse(mut nodes: Vec<Node<T>>) -> Self {
        nodes.clear();
        Arena { nodes, free: NIL }
    }

    /// Stores `node` in a recycled slot (or a new one) and returns its index.
    #[inline]
    pub fn alloc(&mut self, node: Node<T>) -> u32 {
        if self.free != NIL {
            let i = self.free;
            self.free = self.nodes[i as usize].next;
            self.nodes[i as usize] = node;
            i
        } else {
            self.nodes.push(node);
            (self.nodes.len() - 1) as u32
        }
    }

    #[inline]
    pub fn push_back(&mut self, head: &mut u32, tail: &mut u32, item: T) {
        let i = self.alloc(Node { item, next: NIL });
        if *tail == NIL {
            *head = i;
        } else {
            self.nodes[*tail as usize].next = i;
        }
        *tail = i;
    }

    /// The first node whose item satisfies `f`, with its predecessor (NIL for the head).
    #[inline]
    pub fn find(&self, head: u32, mut f: impl FnMut(&T) -> bool) -> Option<(u32, u32)> {
        let mut prev = NIL;
        let mut cur = head;
        while cur != NIL {
            let n = &self.nodes[cur as usize];
            if f(&n.item) {
                return Some((prev, cur));
            }
            prev = cur;
            cur = n.next;
        }
        None
    }

    /// Inserts `item` after node `at`.
    #[inline]
    pub fn insert_after(&mut self, tail: &mut u32, at: u32, item: T) {
        let next = self.nodes[at as usize].next;
        let i = self.alloc(Node { item, next });
        self.nodes[at as usize].next = i;
        if next == NIL {
            *tail = i;
        }
    }

    /// Unlinks node `cur` (predecessor `prev`) and recycles it.
    #[inline]
    pub fn remove(&mut self, head: &mut u32, tail: &mut u32, prev: u32, cur: u32) -> T {
        let Node { item, next } = self.nodes[cur as usize];
        if prev == NIL {
            *head = next;
        } else {
            self.nodes[prev as usize].next = next;
        }
        if next == NIL {
            *tail = prev;
        }
        self.nodes[cur as usize].next = self.free;
        self.free = cur;
        item
    }

    pub fn iter<'s>(&'s self, head: u32) -> impl Iterator<Item = &'s T> + 's {
        let mut cur = head;
        std::iter::from_fn(move || {
            if cur == NIL {
                return None;
            }
            let n = &self.nodes[cur as usize];
            cur = n.next;
            Some(&n.item)
        })
    }
}

/// Every rank's posted-receive and unexpected-message lists, as both engines keep them: the
/// nodes and each rank's tails. The heads live in the engines' per-rank state, which nearly
/// every event reads anyway.
#[derive(Default)]
pub(crate) struct Lists {
    pub rq: Arena<PostedRun>,
    pub uq: Arena<Unexpected>,
    tails: Vec<[u32; 2]>,
}

impl Lists {
    /// Empty lists for `ranks` ranks (in the allocations of these).
    pub fn reset(&mut self, ranks: usize) {
        self.rq = Arena::reuse(std::mem::take(&mut self.rq.nodes));
        self.uq = Arena::reuse(std::mem::take(&mut self.uq.nodes));
        self.tails.clear();
        self.tails.resize(ranks, [NIL; 2]);
    }

    /// Rank `h`'s posted-receive list, whose head is `head`.
    #[inline(always)]
    pub fn posted<'a>(&'a mut self, head: &'a mut u32, h: usize) -> Posted<'a> {
        Posted {
            rq: &mut self.rq,
            head,
            tail: &mut self.tails[h][0],
        }
    }

    /// Rank `h`'s unexpected-message list, whose head is `head`.
    #[inline(always)]
    pub fn arrived<'a>(&'a mut self, head: &'a mut u32, h: usize) -> Arrived<'a> {
        Arrived {
            uq: &mut self.uq,
            head,
            tail: &mut self.tails[h][1],
        }
    }
}

impl<T: Copy> Default for Arena<T> {
    fn default() -> Self {
        Self::new()
    }
}

/// One rank's posted-receive list: its head and tail in a shared [`Arena`].
pub(crate) struct Posted<'a> {
    pub rq: &'a mut Arena<PostedRun>,
    pub head: &'a mut u32,
    pub tail: &'a mut u32,
}

impl Posted<'_> {
    /// Posts receives `first + i·stride`, `i < n`, all from `src` with `tag`, as `n` calls of
    /// [`Self::post`] would.
    pub fn post_run(&mut self, src: u32, tag: u32, first: u32, stride: u32, n: u32) {
        self.post(src, tag, first);
        let last = &mut self.rq.nodes[*self.tail as usize].item;
        let ends_at_first =
            last.first as u64 + last.stride as u64 * (last.count as u64 - 1) == first as u64;
        if ends_at_first
            && (last.count == 1 || last.stride == stride)
            && last.src == src
            && last.tag == tag
        {
            last.stride = stride;
            last.count += n - 1;
        } else {
            for i in 1..n {
                self.post(src, tag, first + i * stride);
            }
        }
    }

    /// Posts receives `first + i·stride`, `i < n`, whatever their (src, tag), as one run that
    /// is searched by reading them back from the program (the same FIFO order as `n` posts).
    pub fn post_mixed(&mut self, first: u32, stride: u32, n: u32) {
        self.rq.push_back(
            self.head,
            self.tail,
            PostedRun {
                src: MIXED,
                tag: 0,
                first,
                stride,
                count: n,
            },
        );
    }

    /// Posts receive `id` for `(src, tag)`: extends the last run when `id` continues its
    /// progression, else appends a new run.
    #[inline(always)]
    pub fn post(&mut self, src: u32, tag: u32, id: u32) {
        let tail = *self.tail;
        if tail != NIL {
            let last = &mut self.rq.nodes[tail as usize].item;
            if id > last.first {
                let next = if last.count == 1 {
                    Some(id - last.first)
                } else {
                    let want = last.first as u64 + last.stride as u64 * last.count as u64;
                    (want == id as u64).then_some(last.stride)
                };
                if let Some(stride) = next {
                    if last.src != src || last.tag != tag {
                        last.src = MIXED;
                    }
                    last.stride = stride;
                    last.count += 1;
                    return;
                }
            }
        }
        self.rq.push_back(
            self.head,
            self.tail,
            PostedRun {
                src,
                tag,
                first: id,
                stride: 0,
                count: 1,
            },
        );
    }

    /// Takes the first posted receive of `host` that accepts a message from `src` with `tag`.
    #[inline(always)]
    pub fn take_match<P: Program>(
        &mut self,
        prog: &P,
        host: u32,
        src: u32,
        tag: u32,
    ) -> Option<u32> {
        let mut prev = NIL;
        let mut cur = *self.head;
        if cur != NIL {
            // The usual case first: the oldest receive matches and more follow in its run.
            let run = &mut self.rq.nodes[cur as usize].item;
            if run.count > 1 && run.accepts(prog, host, 0, src, tag) {
                let recv = run.first;
                run.first += run.stride;
                run.count -= 1;
                return Some(recv);
            }
        }
        while cur != NIL {
            let node = self.rq.nodes[cur as usize];
            let run = node.item;
            let hit = if run.src != MIXED {
                run.accepts(prog, host, 0, src, tag).then_some(0)
            } else {
                (0..run.count).find(|&i| run.accepts(prog, host, i, src, tag))
            };
            if let Some(i) = hit {
                let recv = run.first + i * run.stride;
                let item = &mut self.rq.nodes[cur as usize].item;
                if run.count == 1 {
                    self.rq.remove(self.head, self.tail, prev, cur);
                } else if i == 0 {
                    item.first += run.stride;
                    item.count -= 1;
                } else if i == run.count - 1 {
                    item.count -= 1;
                } else {
                    item.count = i;
                    let rest = PostedRun {
                        first: recv + run.stride,
                        count: run.count - i - 1,
                        ..run
                    };
                    self.rq.insert_after(self.tail, cur, rest);
                }
                return Some(recv);
            }
            prev = cur;
            cur = node.next;
        }
        None
    }
}

/// One rank's unexpected-message list: its head and tail in a shared [`Arena`].
pub(crate) struct Arrived<'a> {
    pub uq: &'a mut Arena<Unexpected>,
    pub head: &'a mut u32,
    pub tail: &'a mut u32,
}

impl Arrived<'_> {
    /// Appends a message from `src` with `tag`, sent by `send_op`.
    #[inline]
    pub fn push(&mut self, src: u32, tag: u32, send_op: u32) {
        let item = Unexpected { src, tag, send_op };
        self.uq.push_back(self.head, self.tail, item);
    }

    /// Takes the first message a receive for `(want_src, want_tag)` accepts.
    #[inline]
    pub fn take_match(&mut self, want_src: u32, want_tag: u32) -> Option<Unexpected> {
        let (prev, cur) = self
            .uq
            .find(*self.head, |u| matches(want_src, want_tag, u.src, u.tag))?;
        Some(self.uq.remove(self.head, self.tail, prev, cur))
    }
}
