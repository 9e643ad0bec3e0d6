//! The sender's per-segment record of what is outstanding: when each segment
//! was last sent, whether it was retransmitted, and whether the receiver has
//! SACKed it (RFC 6675 §3 "scoreboard"), covering `[snd_una, snd_max)`.
//!
//! RFC 6675 §4 defines IsLost, SetPipe and NextSeg by walking the scoreboard
//! segment by segment. Recovery (`recovery/sack.rs`) asks the equivalent
//! counting questions on every ACK: the k-th highest SACKed segment (IsLost's
//! DupThresh test), how many segments of a range are SACKed (SetPipe), and the
//! first or last un-SACKed segment of a range (NextSeg rules 1, 3 and 4). A
//! window after a slow-start overshoot holds tens of thousands of segments, so
//! answering by scanning made each ACK cost as much as the window; here every
//! question costs O(log n) in the window size n, with the same answers:
//!
//! - Records live in a power-of-two ring indexed by `seg & mask`, so a segment
//!   keeps its slot while outstanding. The ring doubles (rebuilding the indexes
//!   below) when full and never shrinks: steady-state operation does not allocate.
//! - The SACKed flags are mirrored in a bitmap with one bit per slot, and a
//!   Fenwick (binary indexed) tree over the bitmap's 64-bit words counts the
//!   SACKed slots in each word. A count over a slot range is two prefix sums
//!   plus popcounts of the partial words; the r-th SACKed slot, or the r-th
//!   un-SACKed one (a word holds 64 minus its count), is found by binary
//!   lifting down the tree and a select within one word. Counting words rather
//!   than slots keeps the tree 64 times smaller (a few KB for 10^5 segments, so
//!   it stays in cache) and lets a SACK block be marked a word at a time.
//! - Slots outside the window are never SACKed, so counts over the whole ring
//!   are counts over the window. A segment range that runs past the ring's last
//!   slot is split into two slot ranges.
//! - `mark_sacked` jumps from un-SACKed slot to un-SACKed slot: the receiver
//!   repeats the same blocks on every ACK, and re-reporting a block costs
//!   O(log n) instead of its length.
//! - The SACKed flag lives only in the bitmap, and a second bitmap says which
//!   records still hold a pending delivery-rate snapshot. ns-2 Sack1 forgets
//!   SACKs at every cumulative ACK and the next ACK reports the same blocks
//!   again, so a block can be re-marked on every ACK: this way re-marking and
//!   forgetting cost a word operation per 64 segments, and a record (56 bytes)
//!   is read only when its segment is delivered for the first time. Forgetting
//!   used to walk the whole ring, which after a slow-start overshoot holds
//!   tens of thousands of records, on every such ACK.
//!
//! The scan-based scoreboard this replaced is kept in the tests as an oracle
//! that a randomized differential test compares every answer against.

use super::rate::TxSnapshot;
use cclab_wire::prefetch::prefetch;
use cclab_wire::Time;

/// Slots per bitmap word.
const WORD: usize = 64;
/// How many records ahead of the ring's tail and head are prefetched.
const AHEAD: u64 = 4;
/// The first ring: one bitmap word.
const MIN_CAPACITY: usize = WORD;

/// What `get` reports about one outstanding segment.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SegmentRecord {
    pub sent_at: Time,
    pub retransmitted: bool,
    pub sacked: bool,
    /// Delivery state at the last transmission, for delivery-rate samples.
    pub tx: TxSnapshot,
}

/// A segment as the ring stores it: `SegmentRecord` less the SACKed flag,
/// which only the bitmap holds, and the delivery-rate snapshot, which a ring
/// of its own holds for the senders that track delivery rate.
/// The send time with the retransmitted flag in its top bit: 8 bytes where
/// the two fields took 16, which halves the ring every sender allocates (64
/// slots at least: at 20 000 flows 10 MB instead of 20). Simulated time in
/// nanoseconds stays below 2^63 (292 years).
#[derive(Clone, Copy, Debug)]
struct Slot(u64);

const FREE: Slot = Slot(0);

impl Slot {
    const RETRANSMITTED: u64 = 1 << 63;

    fn new(sent_at: Time, retransmitted: bool) -> Self {
        debug_assert!(sent_at < Self::RETRANSMITTED);
        Slot(sent_at | (retransmitted as u64) << 63)
    }

    fn sent_at(self) -> Time {
        self.0 & !Self::RETRANSMITTED
    }

    fn retransmitted(self) -> bool {
        self.0 & Self::RETRANSMITTED != 0
    }

    /// Sent again at `now`: once retransmitted, always retransmitted (Karn).
    fn resend(&mut self, now: Time, retransmission: bool) {
        *self = Slot::new(now, self.retransmitted() | retransmission);
    }
}

/// What a slot without a stored snapshot hands to delivery while its pending bit is set.
const PENDING: TxSnapshot = TxSnapshot { pending: true, ..TxSnapshot::NONE };

/// What a cumulative ACK removed from the scoreboard.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Acked {
    pub segments: u64,
    /// Any of them was ever retransmitted (Karn: no RTT sample from this ACK).
    pub any_retransmitted: bool,
    /// Send time of the highest segment acknowledged.
    pub last_sent_at: Time,
    /// How many of them had been SACKed already.
    pub previously_sacked: u64,
}

#[derive(Clone, Debug, Default)]
pub struct Scoreboard {
    base: u64,
    /// Outstanding segments: `[base, base + len)`.
    len: u64,
    /// The ring; its length is a power of two, or 0 before the first transmission.
    records: Vec<Slot>,
    /// Each slot's delivery-rate snapshot, laid out as `records`; empty until a
    /// transmission carries one with more than its pending flag (which the
    /// `pending` bitmap holds). Only senders that sample the delivery rate
    /// (BBR) fill it, and a snapshot is 40 of a record's 56 bytes: at 20 000
    /// flows the rings' 64 slots each were 73 MB with snapshots, 20 without.
    snapshots: Vec<TxSnapshot>,
    /// Whether each slot's segment is SACKed, `bits[slot / 64] >> (slot % 64)`; 0 for free slots.
    bits: Vec<u64>,
    /// `snapshots[slot].pending` as bits, laid out as `bits`; 0 for free slots.
    pending: Vec<u64>,
    /// Fenwick tree over the words of `bits`, 1-based: `tree[i]` counts the
    /// SACKed slots in words `[i - lowbit(i), i)`. Its length is `bits.len() + 1`.
    /// u32 suffices: a count is at most the ring's length, and 2^32 records
    /// would not fit in memory.
    tree: Vec<u32>,
    sacked: u64,
    /// The highest SACKed segment while `sacked > 0`: IsLost and NextSeg ask
    /// for the top few SACKed segments on every ACK, and they usually share its word.
    top: u64,
}

impl Scoreboard {
    pub fn base(&self) -> u64 {
        self.base
    }

    /// One past the highest segment sent.
    pub fn end(&self) -> u64 {
        self.base + self.len
    }

    pub fn get(&self, seg: u64) -> Option<SegmentRecord> {
        self.contains(seg).then(|| {
            let slot = self.slot(seg);
            let r = self.records[slot];
            SegmentRecord {
                sent_at: r.sent_at(),
                retransmitted: r.retransmitted(),
                sacked: self.bit(slot),
                tx: self.snapshot(slot),
            }
        })
    }

    pub fn is_sacked(&self, seg: u64) -> bool {
        self.contains(seg) && self.bit(self.slot(seg))
    }

    fn bit(&self, slot: usize) -> bool {
        self.bits[slot / WORD] >> (slot % WORD) & 1 == 1
    }

    pub fn sacked_count(&self) -> u64 {
        self.sacked
    }

    /// Records a transmission of `seg`, which must be at most `end()`.
    pub fn on_transmit(&mut self, seg: u64, now: Time, retransmission: bool) {
        self.on_transmit_with(seg, now, retransmission, TxSnapshot::NONE);
    }

    /// Records a transmission of `seg` with the delivery state it left with.
    pub fn on_transmit_with(&mut self, seg: u64, now: Time, retransmission: bool, tx: TxSnapshot) {
        if seg == self.end() && self.len == self.records.len() as u64 {
            self.grow();
        }
        if self.snapshots.is_empty() && (TxSnapshot { pending: false, ..tx }) != TxSnapshot::NONE {
            // Segments sent before (a sampler's first, at time 0, has nothing
            // but its pending flag) keep that flag.
            self.snapshots = (0..self.records.len()).map(|slot| self.snapshot(slot)).collect();
        }
        if seg == self.end() {
            let slot = self.slot(seg);
            // A free slot's bits are already clear.
            self.records[slot] = Slot::new(now, retransmission);
            if let Some(snapshot) = self.snapshots.get_mut(slot) {
                *snapshot = tx;
            }
            self.pending[slot / WORD] |= (tx.pending as u64) << (slot % WORD);
            self.len += 1;
            // The ring is walked round and round: the slots the next
            // transmissions write were last touched a lap ago.
            prefetch(&self.records[self.slot(seg + AHEAD)]);
        } else if self.contains(seg) {
            let slot = self.slot(seg);
            let (w, bit) = (slot / WORD, 1 << (slot % WORD));
            // A segment already delivered (SACKed, which consumed its snapshot)
            // and sent again because a timeout forgot the SACK information
            // delivers nothing new when acknowledged: counting it again would
            // inflate the delivery rate (BBR's BtlBw) after every such timeout.
            let pending = tx.pending && self.pending[w] & bit != 0;
            self.records[slot].resend(now, retransmission);
            if let Some(snapshot) = self.snapshots.get_mut(slot) {
                *snapshot = TxSnapshot { pending, ..tx };
            }
            self.pending[w] = if pending { self.pending[w] | bit } else { self.pending[w] & !bit };
        }
    }

    /// Slot `slot`'s snapshot: the stored one, or without a ring only its pending bit.
    fn snapshot(&self, slot: usize) -> TxSnapshot {
        let pending = self.pending[slot / WORD] >> (slot % WORD) & 1 == 1;
        self.snapshots.get(slot).copied().unwrap_or(TxSnapshot { pending, ..TxSnapshot::NONE })
    }

    /// Removes every segment below `seg` (a cumulative ACK).
    pub fn ack_to(&mut self, seg: u64) -> Acked {
        self.ack_to_with(seg, |_, _| {})
    }

    /// Removes every segment below `seg`, showing the delivery-rate snapshot of
    /// each removed segment whose snapshot is still pending to `delivered`.
    pub fn ack_to_with(&mut self, seg: u64, mut delivered: impl FnMut(u64, &mut TxSnapshot)) -> Acked {
        let mut acked = Acked::default();
        if seg <= self.base {
            return acked;
        }
        let n = (seg - self.base).min(self.len);
        if n == 1 {
            // Without delayed ACKs nearly every cumulative ACK removes one
            // segment: one slot and one bit of each bitmap, without the ranges.
            let slot = self.slot(self.base);
            let (w, bit) = (slot / WORD, 1u64 << (slot % WORD));
            let r = self.records[slot];
            // A pending bit is set only by a transmission that carried a snapshot.
            if self.pending[w] & bit != 0 {
                let mut only_pending = PENDING;
                delivered(self.base, self.snapshots.get_mut(slot).unwrap_or(&mut only_pending));
                self.pending[w] &= !bit;
            }
            acked.any_retransmitted = r.retransmitted();
            acked.last_sent_at = r.sent_at();
            acked.segments = 1;
            if self.bits[w] & bit != 0 {
                self.bits[w] &= !bit;
                self.tree_sub(w, 1);
                acked.previously_sacked = 1;
                self.sacked -= 1;
            }
        } else if n > 0 {
            // Linear in the segments removed, but each segment is removed once.
            let [first, second] = self.slot_ranges(self.base, self.base + n);
            let mut seg_of_slot = self.base;
            for (a, b) in [first, second] {
                for slot in a..b {
                    acked.any_retransmitted |= self.records[slot].retransmitted();
                    if self.pending[slot / WORD] >> (slot % WORD) & 1 == 1 {
                        let mut only_pending = PENDING;
                        delivered(seg_of_slot, self.snapshots.get_mut(slot).unwrap_or(&mut only_pending));
                    }
                    seg_of_slot += 1;
                }
                acked.previously_sacked += self.clear_slots(a, b);
            }
            acked.segments = n;
            acked.last_sent_at = self.records[self.slot(self.base + n - 1)].sent_at();
            self.sacked -= acked.previously_sacked;
        }
        self.len -= n;
        // Acknowledging beyond what was sent leaves an empty window starting at `seg`.
        self.base = seg;
        // The records the next ACKs read were written a round trip ago.
        if self.len > AHEAD {
            prefetch(&self.records[self.slot(seg + AHEAD)]);
        }
        acked
    }

    /// Marks `[start, end)` SACKed (clipped to what is outstanding); returns how
    /// many segments were newly marked.
    pub fn mark_sacked(&mut self, start: u64, end: u64) -> u64 {
        self.mark_sacked_with(start, end, |_, _| {})
    }

    /// Marks `[start, end)` SACKed, showing the delivery-rate snapshot of each
    /// newly SACKed segment whose snapshot is still pending to `delivered`.
    pub fn mark_sacked_with(
        &mut self,
        start: u64,
        end: u64,
        mut delivered: impl FnMut(u64, &mut TxSnapshot),
    ) -> u64 {
        let [first, second] = self.slot_ranges(start, end);
        // The second range is empty unless the block wraps round the ring:
        // tested here, so the common case makes one call.
        let mut newly = self.mark_slots(first.0, first.1, &mut delivered);
        if second.0 < second.1 {
            newly += self.mark_slots(second.0, second.1, &mut delivered);
        }
        if newly > 0 {
            // All of the clipped range is SACKed now; a stale `top` (nothing was
            // SACKed before) must not survive.
            let last = end.min(self.end()) - 1;
            self.top = if self.sacked == 0 { last } else { self.top.max(last) };
        }
        self.sacked += newly;
        newly
    }

    /// Forgets all SACK information (RFC 2018 §5: after a retransmission timeout
    /// the sender should turn off the SACKed bits; the receiver may have reneged).
    pub fn clear_sacks(&mut self) {
        if self.sacked == 0 {
            return;
        }
        // Nothing outside `[base, top]` is SACKed: clear only the words that
        // range covers, which keeps this proportional to the window / 64
        // rather than to the ring (never shrunk after an overshoot).
        let [first, second] = self.slot_ranges(self.base, self.top + 1);
        for (a, b) in [first, second] {
            if a < b {
                for w in a / WORD..(b - 1) / WORD + 1 {
                    let n = self.bits[w].count_ones();
                    if n > 0 {
                        self.bits[w] = 0;
                        self.tree_sub(w, n);
                    }
                }
            }
        }
        self.sacked = 0;
    }

    /// The `k`-th highest SACKed segment (k = 1 is the highest).
    pub fn kth_highest_sacked(&self, k: u64) -> Option<u64> {
        if k == 0 || self.sacked < k {
            return None;
        }
        if k == 1 {
            // Asked on every ACK in recovery (GetNextRetran's bound).
            return Some(self.top);
        }
        // Below `top`'s slot in its word, every set bit is a SACKed segment
        // under `top`, at the same distance: slots there that hold no segment
        // of `[base, top]` are free or hold segments above `top`, all clear.
        let slot = self.slot(self.top);
        let near = self.bits[slot / WORD] & low_mask(slot % WORD + 1);
        let n = near.count_ones() as u64;
        if n >= k {
            let at = select_in_word(near, (n - k) as u32);
            return Some(self.top - (slot % WORD - at) as u64);
        }
        // Counted from the bottom instead. In segment order the slots run from
        // base's slot to the ring's end, then from slot 0: the SACKed slots below
        // base's slot hold the highest segments.
        let from_bottom = self.sacked - k + 1;
        let wrapped = self.rank(self.slot(self.base));
        let unwrapped = self.sacked - wrapped;
        let r = if from_bottom <= unwrapped { wrapped + from_bottom } else { from_bottom - unwrapped };
        Some(self.seg_at(self.select(r, true)))
    }

    /// Number of SACKed segments in `[start, end)`.
    pub fn sacked_in(&self, start: u64, end: u64) -> u64 {
        self.slot_ranges(start, end).iter().map(|&(a, b)| self.rank(b) - self.rank(a)).sum()
    }

    /// The first segment in `[start, end)` that is not SACKed.
    pub fn first_unsacked_in(&self, start: u64, end: u64) -> Option<u64> {
        let [first, second] = self.slot_ranges(start, end);
        let slot = self
            .first_unsacked_slot(first.0, first.1)
            .or_else(|| self.first_unsacked_slot(second.0, second.1));
        slot.map(|s| self.seg_at(s))
    }

    /// The last segment in `[start, end)` that is not SACKed.
    pub fn last_unsacked_in(&self, start: u64, end: u64) -> Option<u64> {
        let [first, second] = self.slot_ranges(start, end);
        let slot =
            self.last_unsacked_slot(second.0, second.1).or_else(|| self.last_unsacked_slot(first.0, first.1));
        slot.map(|s| self.seg_at(s))
    }

    /// What stepping over SACKed segments one at a time from `from` reaches: the
    /// first segment at or above it that is not SACKed, but no further than `limit`
    /// (and `from` itself if it is not below `limit`).
    pub fn skip_sacked(&self, from: u64, limit: u64) -> u64 {
        if from >= limit || !self.is_sacked(from) {
            return from;
        }
        // Nothing at or beyond `end()` is SACKed.
        let stop = limit.min(self.end());
        self.first_unsacked_in(from, stop).unwrap_or(stop)
    }

    fn contains(&self, seg: u64) -> bool {
        seg >= self.base && seg - self.base < self.len
    }

    /// The ring slot of `seg`; only meaningful once the ring exists.
    fn slot(&self, seg: u64) -> usize {
        (seg & (self.records.len() as u64).wrapping_sub(1)) as usize
    }

    /// The outstanding segment in `slot`.
    fn seg_at(&self, slot: usize) -> u64 {
        let offset = (slot as u64).wrapping_sub(self.base) & (self.records.len() as u64 - 1);
        self.base + offset
    }

    /// `[start, end)` clipped to the window, as slot ranges in segment order:
    /// the second is empty unless the range runs past the ring's last slot.
    fn slot_ranges(&self, start: u64, end: u64) -> [(usize, usize); 2] {
        let lo = start.max(self.base);
        let hi = end.min(self.end());
        if lo >= hi {
            return [(0, 0), (0, 0)];
        }
        let capacity = self.records.len();
        let a = self.slot(lo);
        // The window fits in the ring, so this does not overflow.
        let n = (hi - lo) as usize;
        if a + n <= capacity {
            [(a, a + n), (0, 0)]
        } else {
            [(a, capacity), (0, a + n - capacity)]
        }
    }

    /// Doubles the ring (or creates it), moving each outstanding record to its
    /// slot under the new mask.
    fn grow(&mut self) {
        let capacity = (self.records.len() * 2).max(MIN_CAPACITY);
        let mut records = vec![FREE; capacity];
        let mut snapshots = vec![TxSnapshot::NONE; if self.snapshots.is_empty() { 0 } else { capacity }];
        let mut bits = vec![0; capacity / WORD];
        let mut pending = vec![0; capacity / WORD];
        for seg in self.base..self.end() {
            let old = self.slot(seg);
            let slot = (seg & (capacity as u64 - 1)) as usize;
            records[slot] = self.records[old];
            if let Some(snapshot) = snapshots.get_mut(slot) {
                *snapshot = self.snapshots[old];
            }
            bits[slot / WORD] |= (self.bit(old) as u64) << (slot % WORD);
            pending[slot / WORD] |= (self.pending[old / WORD] >> (old % WORD) & 1) << (slot % WORD);
        }
        self.records = records;
        self.snapshots = snapshots;
        self.bits = bits;
        self.pending = pending;
        self.rebuild_tree();
    }

    fn rebuild_tree(&mut self) {
        let words = self.bits.len();
        self.tree.clear();
        self.tree.resize(words + 1, 0);
        for i in 1..=words {
            self.tree[i] += self.bits[i - 1].count_ones();
            let parent = i + lowbit(i);
            if parent <= words {
                self.tree[parent] += self.tree[i];
            }
        }
    }

    /// SACKed slots in words `[0, w)`.
    fn words_prefix(&self, mut w: usize) -> u64 {
        let mut sum = 0;
        while w > 0 {
            sum += self.tree[w] as u64;
            w &= w - 1;
        }
        sum
    }

    fn tree_add(&mut self, w: usize, n: u32) {
        let mut i = w + 1;
        while i < self.tree.len() {
            self.tree[i] += n;
            i += lowbit(i);
        }
    }

    fn tree_sub(&mut self, w: usize, n: u32) {
        let mut i = w + 1;
        while i < self.tree.len() {
            self.tree[i] -= n;
            i += lowbit(i);
        }
    }

    /// SACKed slots in `[0, slot)`.
    fn rank(&self, slot: usize) -> u64 {
        let (w, bit) = (slot / WORD, slot % WORD);
        // `slot` may be the ring's length: no partial word then.
        let partial = if bit == 0 { 0 } else { (self.bits[w] & low_mask(bit)).count_ones() as u64 };
        self.words_prefix(w) + partial
    }

    /// Un-SACKed slots in `[0, slot)`.
    fn unsacked_rank(&self, slot: usize) -> u64 {
        slot as u64 - self.rank(slot)
    }

    /// The slot of the `r`-th (from 1) SACKed slot, or un-SACKed one if not
    /// `sacked`, in slot order. There must be at least `r` of them.
    fn select(&self, mut r: u64, sacked: bool) -> usize {
        let words = self.bits.len();
        // Binary lifting: `tree[w + step]` covers words `[w, w + step)` because
        // `w` is a multiple of `2 * step`; the word count is a power of two.
        let mut w = 0;
        let mut step = words;
        while step > 0 {
            let count = self.tree[w + step] as u64;
            let n = if sacked { count } else { (step * WORD) as u64 - count };
            if n < r {
                w += step;
                r -= n;
            }
            step /= 2;
        }
        let word = if sacked { self.bits[w] } else { !self.bits[w] };
        w * WORD + select_in_word(word, (r - 1) as u32)
    }

    /// The first un-SACKed slot in `[a, b)`, a range of slots (possibly empty).
    fn first_unsacked_slot(&self, a: usize, b: usize) -> Option<usize> {
        if a >= b {
            return None;
        }
        // The answer is usually close by: look in `a`'s word before lifting.
        let w = a / WORD;
        let here = !self.bits[w] & !low_mask(a % WORD);
        if here != 0 {
            let slot = w * WORD + here.trailing_zeros() as usize;
            return (slot < b).then_some(slot);
        }
        let next = (w + 1) * WORD;
        if next >= b {
            return None;
        }
        let before = self.unsacked_rank(next);
        (self.unsacked_rank(b) > before).then(|| self.select(before + 1, false))
    }

    /// The last un-SACKed slot in `[a, b)`, a range of slots (possibly empty).
    fn last_unsacked_slot(&self, a: usize, b: usize) -> Option<usize> {
        if a >= b {
            return None;
        }
        let w = (b - 1) / WORD;
        let start = w * WORD;
        let here = !self.bits[w] & low_mask(b - start);
        if here != 0 {
            let slot = start + (WORD - 1) - here.leading_zeros() as usize;
            return (slot >= a).then_some(slot);
        }
        if start <= a {
            return None;
        }
        let below = self.unsacked_rank(start);
        (below > self.unsacked_rank(a)).then(|| self.select(below, false))
    }

    /// Sets the SACKed bits in `[a, b)`, a range of outstanding slots (possibly
    /// empty); returns how many were newly set.
    fn mark_slots(&mut self, a: usize, b: usize, delivered: &mut impl FnMut(u64, &mut TxSnapshot)) -> u64 {
        let mut newly = 0;
        let mut from = a;
        // Jump over what is SACKed already: the same blocks come on every ACK.
        while let Some(slot) = self.first_unsacked_slot(from, b) {
            let w = slot / WORD;
            let word_end = ((w + 1) * WORD).min(b);
            let new = low_mask(word_end - w * WORD) & !low_mask(slot % WORD) & !self.bits[w];
            self.bits[w] |= new;
            let n = new.count_ones();
            self.tree_add(w, n);
            let mut rest = new & self.pending[w];
            while rest != 0 {
                let slot = w * WORD + rest.trailing_zeros() as usize;
                let seg = self.seg_at(slot);
                let mut only_pending = PENDING;
                let tx = self.snapshots.get_mut(slot).unwrap_or(&mut only_pending);
                delivered(seg, tx);
                if !tx.pending {
                    self.pending[w] &= !(1 << (slot % WORD));
                }
                rest &= rest - 1;
            }
            newly += n as u64;
            from = word_end;
        }
        newly
    }

    /// Clears the SACKed and pending bits in `[a, b)`, a range of slots being
    /// freed (possibly empty); returns how many SACKed bits were set.
    fn clear_slots(&mut self, a: usize, b: usize) -> u64 {
        let mut cleared = 0;
        let mut from = a;
        while from < b {
            let w = from / WORD;
            let word_end = ((w + 1) * WORD).min(b);
            let span = low_mask(word_end - w * WORD) & !low_mask(from % WORD);
            self.pending[w] &= !span;
            let n = (self.bits[w] & span).count_ones();
            if n > 0 {
                self.bits[w] &= !span;
                self.tree_sub(w, n);
                cleared += n as u64;
            }
            from = word_end;
        }
        cleared
    }
}

fn lowbit(i: usize) -> usize {
    i & i.wrapping_neg()
}

/// The lowest `n` bits (n <= 64).
fn low_mask(n: usize) -> u64 {
    if n >= WORD {
        !0
    } else {
        (1 << n) - 1
    }
}

/// The position of the set bit of `word` that has `r` set bits below it
/// (`r` < number of set bits): halve the search range six times.
fn select_in_word(mut word: u64, mut r: u32) -> usize {
    let mut pos = 0;
    for half in [32, 16, 8, 4, 2, 1] {
        let low = (word & low_mask(half)).count_ones();
        if r >= low {
            r -= low;
            word >>= half;
            pos += half;
        }
    }
    pos
}

/// The scan-based scoreboard this module replaced, kept as the oracle for the
/// differential test: the answers must stay exactly the same.
#[cfg(test)]
mod linear {
    use super::{Acked, SegmentRecord};
    use cclab_wire::Time;
    use std::collections::VecDeque;

    #[derive(Clone, Debug, Default)]
    pub struct Scoreboard {
        base: u64,
        records: VecDeque<SegmentRecord>,
        sacked: u64,
    }

    impl Scoreboard {
        pub fn base(&self) -> u64 {
            self.base
        }

        /// One past the highest segment sent.
        pub fn end(&self) -> u64 {
            self.base + self.records.len() as u64
        }

        pub fn get(&self, seg: u64) -> Option<&SegmentRecord> {
            seg.checked_sub(self.base).and_then(|i| self.records.get(i as usize))
        }

        pub fn is_sacked(&self, seg: u64) -> bool {
            self.get(seg).is_some_and(|r| r.sacked)
        }

        pub fn sacked_count(&self) -> u64 {
            self.sacked
        }

        /// Records a transmission of `seg`, which must be at most `end()`.
        pub fn on_transmit(&mut self, seg: u64, now: Time, retransmission: bool) {
            let end = self.end();
            if seg == end {
                self.records.push_back(SegmentRecord {
                    sent_at: now,
                    retransmitted: retransmission,
                    sacked: false,
                    tx: super::TxSnapshot::NONE,
                });
            } else if let Some(r) = seg.checked_sub(self.base).and_then(|i| self.records.get_mut(i as usize))
            {
                r.sent_at = now;
                r.retransmitted |= retransmission;
            }
        }

        /// Removes every segment below `seg` (a cumulative ACK).
        pub fn ack_to(&mut self, seg: u64) -> Acked {
            let mut acked = Acked::default();
            while self.base < seg {
                let Some(r) = self.records.pop_front() else {
                    self.base = seg;
                    break;
                };
                self.base += 1;
                acked.segments += 1;
                acked.any_retransmitted |= r.retransmitted;
                acked.last_sent_at = r.sent_at;
                if r.sacked {
                    self.sacked -= 1;
                    acked.previously_sacked += 1;
                }
            }
            acked
        }

        /// Marks `[start, end)` SACKed (clipped to what is outstanding); returns how
        /// many segments were newly marked.
        pub fn mark_sacked(&mut self, start: u64, end: u64) -> u64 {
            let lo = start.max(self.base);
            let hi = end.min(self.end());
            let mut newly = 0;
            for seg in lo..hi {
                let r = &mut self.records[(seg - self.base) as usize];
                if !r.sacked {
                    r.sacked = true;
                    newly += 1;
                }
            }
            self.sacked += newly;
            newly
        }

        /// Forgets all SACK information (RFC 2018 §5: after a retransmission timeout
        /// the sender should turn off the SACKed bits; the receiver may have reneged).
        pub fn clear_sacks(&mut self) {
            for r in self.records.iter_mut() {
                r.sacked = false;
            }
            self.sacked = 0;
        }

        /// The `k`-th highest SACKed segment (k = 1 is the highest).
        pub fn kth_highest_sacked(&self, k: u64) -> Option<u64> {
            if k == 0 || self.sacked < k {
                return None;
            }
            let mut seen = 0;
            for (i, r) in self.records.iter().enumerate().rev() {
                if r.sacked {
                    seen += 1;
                    if seen == k {
                        return Some(self.base + i as u64);
                    }
                }
            }
            None
        }

        /// Number of SACKed segments in `[start, end)`.
        pub fn sacked_in(&self, start: u64, end: u64) -> u64 {
            let lo = start.max(self.base);
            let hi = end.min(self.end());
            (lo..hi).filter(|&s| self.records[(s - self.base) as usize].sacked).count() as u64
        }

        /// The first segment in `[start, end)` that is not SACKed.
        pub fn first_unsacked_in(&self, start: u64, end: u64) -> Option<u64> {
            let lo = start.max(self.base);
            let hi = end.min(self.end());
            (lo..hi).find(|&s| !self.records[(s - self.base) as usize].sacked)
        }

        /// The last segment in `[start, end)` that is not SACKed.
        pub fn last_unsacked_in(&self, start: u64, end: u64) -> Option<u64> {
            let lo = start.max(self.base);
            let hi = end.min(self.end());
            (lo..hi).rev().find(|&s| !self.records[(s - self.base) as usize].sacked)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn board(n: u64) -> Scoreboard {
        let mut b = Scoreboard::default();
        for s in 0..n {
            b.on_transmit(s, s * 10, false);
        }
        b
    }

    #[test]
    fn a_slot_keeps_its_send_time_and_once_retransmitted_stays_so() {
        let late = (1 << 62) + 12_345;
        for (at, retransmitted) in [(0, false), (7, true), (late, false), (late, true)] {
            let slot = Slot::new(at, retransmitted);
            assert_eq!((slot.sent_at(), slot.retransmitted()), (at, retransmitted));
        }
        let mut slot = Slot::new(5, true);
        slot.resend(9, false);
        assert_eq!((slot.sent_at(), slot.retransmitted()), (9, true));
        let mut slot = Slot::new(5, false);
        slot.resend(late, false);
        assert_eq!((slot.sent_at(), slot.retransmitted()), (late, false));
        slot.resend(late + 1, true);
        assert_eq!((slot.sent_at(), slot.retransmitted()), (late + 1, true));
    }

    #[test]
    fn sack_marks_only_outstanding_segments_once() {
        let mut b = board(10);
        assert_eq!(b.mark_sacked(3, 6), 3);
        assert_eq!(b.mark_sacked(4, 12), 4);
        assert_eq!(b.sacked_count(), 7);
        assert!(b.is_sacked(9) && !b.is_sacked(2));
    }

    #[test]
    fn cumulative_ack_removes_records_and_reports_them() {
        let mut b = board(10);
        b.mark_sacked(2, 3);
        b.on_transmit(1, 500, true);
        let a = b.ack_to(4);
        assert_eq!(a.segments, 4);
        assert!(a.any_retransmitted);
        assert_eq!(a.last_sent_at, 30);
        assert_eq!(a.previously_sacked, 1);
        assert_eq!(b.sacked_count(), 0);
        assert_eq!(b.base(), 4);
    }

    #[test]
    fn kth_highest_sacked_counts_from_the_top() {
        let mut b = board(10);
        b.mark_sacked(2, 3);
        b.mark_sacked(5, 7);
        assert_eq!(b.kth_highest_sacked(1), Some(6));
        assert_eq!(b.kth_highest_sacked(3), Some(2));
        assert_eq!(b.kth_highest_sacked(4), None);
    }

    #[test]
    fn snapshots_are_kept_only_once_a_transmission_carries_one_and_survive_growth() {
        let mut b = Scoreboard::default();
        for s in 0..10 {
            b.on_transmit(s, s, false);
        }
        assert!(b.snapshots.is_empty(), "no delivery-rate tracking, no snapshot ring");
        assert_eq!(b.get(3).map(|r| r.tx), Some(TxSnapshot::NONE));
        let tx = |s: u64| TxSnapshot { delivered: s * 100, sent_time: s, pending: true, ..TxSnapshot::NONE };
        for s in 10..300 {
            b.on_transmit_with(s, s, false, tx(s));
        }
        assert_eq!(b.snapshots.len(), b.records.len(), "grown with the ring");
        assert!(b.records.len() >= 512);
        assert_eq!(b.get(3).map(|r| r.tx), Some(TxSnapshot::NONE));
        assert_eq!(b.get(10).map(|r| r.tx), Some(tx(10)));
        assert_eq!(b.get(299).map(|r| r.tx), Some(tx(299)));
        b.check_invariants();
    }

    #[test]
    fn a_pending_flag_alone_is_delivered_once_with_or_without_a_snapshot_ring() {
        let mut b = Scoreboard::default();
        let pending_only = TxSnapshot { pending: true, ..TxSnapshot::NONE };
        for s in 0..3 {
            b.on_transmit_with(s, 0, false, pending_only);
        }
        assert!(b.snapshots.is_empty(), "a sender that does not sample keeps no snapshots");
        assert_eq!(b.get(1).map(|r| r.tx), Some(pending_only));
        // A sampler's first segments, sent at time 0, carry nothing else either.
        b.on_transmit_with(3, 5, false, TxSnapshot { sent_time: 5, ..pending_only });
        assert_eq!(b.snapshots.len(), b.records.len());
        let mut delivered = Vec::new();
        let mut consume = |seg: u64, tx: &mut TxSnapshot| {
            if tx.pending {
                delivered.push(seg);
            }
            tx.pending = false;
        };
        assert_eq!(b.mark_sacked_with(1, 2, &mut consume), 1);
        b.ack_to_with(4, &mut consume);
        assert_eq!(delivered, [1, 0, 2, 3]);
        b.check_invariants();
    }

    #[test]
    fn a_snapshot_is_delivered_once() {
        let mut b = Scoreboard::default();
        let tx = TxSnapshot { pending: true, ..TxSnapshot::NONE };
        for s in 0..200 {
            b.on_transmit_with(s, s * 10, false, tx);
        }
        let mut seen = Vec::new();
        let mut consume = |seg: u64, tx: &mut TxSnapshot| {
            seen.push(seg);
            tx.pending = false;
        };
        assert_eq!(b.mark_sacked_with(100, 130, &mut consume), 30);
        b.clear_sacks();
        assert_eq!(b.sacked_count(), 0);
        // Re-reported after being forgotten: SACKed again, but not delivered again.
        assert_eq!(b.mark_sacked_with(95, 130, &mut consume), 35);
        b.ack_to_with(140, &mut consume);
        let expected: Vec<u64> = (100..130).chain(95..100).chain(0..95).chain(130..140).collect();
        assert_eq!(seen, expected);
    }

    /// Cumulative ACKs of one segment each (the common case, taken on a path
    /// of its own) report what the ACK of a range reports for each segment.
    #[test]
    fn one_segment_acks_report_each_segment_as_a_range_ack_does() {
        let build = || {
            let mut b = Scoreboard::default();
            let send = |b: &mut Scoreboard, s: u64| {
                let tx = TxSnapshot { pending: !s.is_multiple_of(3), ..TxSnapshot::NONE };
                b.on_transmit_with(s, s * 10, s.is_multiple_of(7), tx);
            };
            // 60 acknowledged before 100..160 are sent: the 100 outstanding
            // segments wrap round the 128-slot ring (segment 128 is in slot 0).
            (0..100).for_each(|s| send(&mut b, s));
            b.ack_to(60);
            (100..160).for_each(|s| send(&mut b, s));
            assert_eq!(b.records.len(), 128);
            b.mark_sacked(80, 90);
            b.mark_sacked(130, 131);
            b
        };
        let (mut single, mut range) = (build(), build());
        let mut delivered_single = Vec::new();
        for seg in 60..160 {
            let acked = single.ack_to_with(seg + 1, |s, tx| {
                delivered_single.push(s);
                tx.pending = false;
            });
            let expected = Acked {
                segments: 1,
                any_retransmitted: seg.is_multiple_of(7),
                last_sent_at: seg * 10,
                previously_sacked: u64::from((80..90).contains(&seg) || seg == 130),
            };
            assert_eq!(acked, expected, "ack of {seg}");
            single.check_invariants();
        }
        let mut delivered_range = Vec::new();
        let acked = range.ack_to_with(160, |s, tx| {
            delivered_range.push(s);
            tx.pending = false;
        });
        assert_eq!((acked.segments, acked.previously_sacked), (100, 11));
        assert_eq!(delivered_single, delivered_range);
        assert_eq!(delivered_single, (60..160u64).filter(|s| !s.is_multiple_of(3)).collect::<Vec<_>>());
        assert_eq!((single.sacked_count(), single.base(), single.end()), (0, 160, 160));
    }

    #[test]
    fn a_delivered_segment_sent_again_after_a_timeout_is_not_delivered_twice() {
        let mut b = Scoreboard::default();
        let tx = TxSnapshot { pending: true, ..TxSnapshot::NONE };
        for s in 0..10 {
            b.on_transmit_with(s, s * 10, false, tx);
        }
        let mut seen = Vec::new();
        let mut consume = |seg: u64, tx: &mut TxSnapshot| {
            seen.push(seg);
            tx.pending = false;
        };
        b.mark_sacked_with(5, 10, &mut consume);
        // A timeout forgets the SACKs and go-back-N resends everything.
        b.clear_sacks();
        for s in 0..10 {
            b.on_transmit_with(s, 200 + s, true, tx);
        }
        b.ack_to_with(10, &mut consume);
        let expected: Vec<u64> = (5..10).chain(0..5).collect();
        assert_eq!(seen, expected, "segments 5-9 were delivered by their SACKs already");
    }

    #[test]
    fn clear_sacks_forgets_everything() {
        let mut b = board(5);
        b.mark_sacked(1, 4);
        b.clear_sacks();
        assert_eq!(b.sacked_count(), 0);
        assert_eq!(b.kth_highest_sacked(1), None);
    }

    #[test]
    fn unsacked_search_in_both_directions() {
        let mut b = board(8);
        b.mark_sacked(0, 2);
        b.mark_sacked(6, 8);
        assert_eq!(b.first_unsacked_in(0, 8), Some(2));
        assert_eq!(b.last_unsacked_in(0, 8), Some(5));
        assert_eq!(b.sacked_in(0, 8), 4);
    }
}

/// Long random operation sequences on the ring scoreboard and the scan-based
/// oracle side by side; every answer must agree. Windows grow through several
/// ring sizes, shrink again and wrap around the ring many times.
#[cfg(test)]
mod differential {
    use super::{linear, Scoreboard, SegmentRecord, TxSnapshot, WORD};
    use cclab_wire::random::SplitMix64;
    use cclab_wire::Time;

    /// A record without its delivery snapshot, which the oracle does not keep
    /// (the invariant check compares the pending bits with the snapshots).
    fn view(r: SegmentRecord) -> (Time, bool, bool) {
        (r.sent_at, r.retransmitted, r.sacked)
    }

    struct Rng(SplitMix64);

    impl Rng {
        fn below(&mut self, n: u64) -> u64 {
            if n == 0 {
                0
            } else {
                self.0.next_u64() % n
            }
        }

        fn chance(&mut self, percent: u64) -> bool {
            self.below(100) < percent
        }

        /// A segment near the window, a few either side of it.
        fn near(&mut self, base: u64, end: u64) -> u64 {
            (base + self.below(end - base + 8)).saturating_sub(4)
        }
    }

    impl Scoreboard {
        /// The indexes agree with the records, and free slots are clear.
        pub(crate) fn check_invariants(&self) {
            let capacity = self.records.len();
            assert!(self.len as usize <= capacity && (capacity == 0 || capacity.is_power_of_two()));
            assert!(self.snapshots.is_empty() || self.snapshots.len() == capacity);
            assert_eq!(self.bits.len() * WORD, capacity);
            assert_eq!(self.pending.len() * WORD, capacity);
            let (mut window, mut pending) = (vec![0u64; self.bits.len()], vec![0u64; self.bits.len()]);
            for seg in self.base..self.end() {
                let slot = self.slot(seg);
                window[slot / WORD] |= 1 << (slot % WORD);
                pending[slot / WORD] |= (self.snapshot(slot).pending as u64) << (slot % WORD);
            }
            for (w, bits) in window.iter().zip(&self.bits) {
                assert_eq!(bits & !w, 0, "free slots are not SACKed");
            }
            assert_eq!(pending, self.pending, "pending bitmap mirrors the records; free slots clear");
            if capacity > 0 {
                let mut rebuilt = self.clone();
                rebuilt.rebuild_tree();
                assert_eq!(rebuilt.tree, self.tree, "Fenwick tree matches the bitmap");
            }
            assert_eq!(self.words_prefix(self.bits.len()), self.sacked);
            if self.sacked > 0 {
                assert!(self.is_sacked(self.top) && self.sacked_in(self.top + 1, self.end()) == 0, "top");
            }
        }
    }

    /// Compares every query on random arguments; returns how many answers were
    /// compared and how many of the ranges ran past the ring's last slot.
    fn compare_queries(rng: &mut Rng, new: &Scoreboard, old: &linear::Scoreboard) -> (u64, u64) {
        assert_eq!((new.base(), new.end(), new.sacked_count()), (old.base(), old.end(), old.sacked_count()));
        let (base, end) = (old.base(), old.end());
        let sacked = old.sacked_count();
        let (mut checks, mut wrapped) = (3, 0);
        for k in [0, 1, 2, 3, rng.below(sacked + 3), sacked, sacked + 1] {
            assert_eq!(new.kth_highest_sacked(k), old.kth_highest_sacked(k), "kth_highest_sacked({k})");
            checks += 1;
        }
        for _ in 0..4 {
            let (a, b) = (rng.near(base, end), rng.near(base, end));
            // Mostly ordered ranges, some reversed (empty) ones.
            let (a, b) = if rng.chance(90) { (a.min(b), a.max(b)) } else { (a, b) };
            wrapped += (new.slot_ranges(a, b)[1].1 > 0) as u64;
            assert_eq!(new.sacked_in(a, b), old.sacked_in(a, b), "sacked_in({a}, {b})");
            assert_eq!(
                new.first_unsacked_in(a, b),
                old.first_unsacked_in(a, b),
                "first_unsacked_in({a}, {b})"
            );
            assert_eq!(new.last_unsacked_in(a, b), old.last_unsacked_in(a, b), "last_unsacked_in({a}, {b})");
            let mut stepped = a;
            while stepped < b && old.is_sacked(stepped) {
                stepped += 1;
            }
            assert_eq!(new.skip_sacked(a, b), stepped, "skip_sacked({a}, {b})");
            let s = rng.near(base, end);
            assert_eq!(new.get(s).map(view), old.get(s).copied().map(view), "get({s})");
            assert_eq!(new.is_sacked(s), old.is_sacked(s), "is_sacked({s})");
            checks += 6;
        }
        (checks, wrapped)
    }

    /// Runs `ops` random operations with windows up to about `max_window`;
    /// returns how many answers were compared, how many query ranges wrapped
    /// around the ring, and the largest window reached.
    fn run(seed: u64, ops: u64, max_window: u64) -> (u64, u64, u64) {
        let mut rng = Rng(SplitMix64::new(seed));
        let mut new = Scoreboard::default();
        let mut old = linear::Scoreboard::default();
        let mut target = 0;
        let mut last_block = (0, 0);
        let (mut checks, mut wrapped, mut largest) = (0, 0, 0);
        for op in 0..ops {
            // The window drifts towards a target that changes now and then, so it
            // grows through several ring sizes and shrinks again.
            if op % 1500 == 0 {
                target = rng.below(max_window + 1);
            }
            let (base, end) = (old.base(), old.end());
            let window = end - base;
            let grow_bias = if window < target { 45 } else { 10 };
            let roll = rng.below(100);
            if roll < grow_bias {
                for _ in 0..1 + rng.below(8) {
                    let seg = old.end();
                    // Some with a pending delivery snapshot, which SACKs and ACKs consume.
                    let tx = TxSnapshot { pending: rng.chance(50), ..TxSnapshot::NONE };
                    new.on_transmit_with(seg, op, false, tx);
                    old.on_transmit(seg, op, false);
                }
            } else if roll < grow_bias + 8 {
                // A retransmission, sometimes of a segment outside the window (ignored).
                let seg = rng.near(base, end);
                new.on_transmit(seg, op, true);
                old.on_transmit(seg, op, true);
            } else if roll < grow_bias + 40 {
                // A receiver repeats its last block, often grown at the top, or
                // reports another one.
                let (start, stop) = if last_block.0 < last_block.1 && rng.chance(60) {
                    (last_block.0 + rng.below(2), last_block.1 + rng.below(3))
                } else {
                    let start = rng.near(base, end);
                    let len = match rng.below(10) {
                        0..=4 => 1 + rng.below(4),
                        5..=7 => 1 + rng.below(150),
                        _ => rng.below(window + 10),
                    };
                    (start, if rng.chance(3) { start.saturating_sub(len) } else { start + len })
                };
                last_block = (start, stop);
                let consume = |_: u64, tx: &mut TxSnapshot| tx.pending = false;
                assert_eq!(
                    new.mark_sacked_with(start, stop, consume),
                    old.mark_sacked(start, stop),
                    "mark_sacked({start}, {stop})"
                );
                checks += 1;
            } else if roll < grow_bias + 40 + if window > target { 12 } else { 4 } {
                // Large cumulative ACKs (a hole filled) only while shrinking.
                let advance = match rng.below(10) {
                    0 => 0,
                    7..=9 if window > target => rng.below(window + 5),
                    _ => rng.below(8),
                };
                let seg = (base + advance).saturating_sub(rng.below(2));
                assert_eq!(new.ack_to(seg), old.ack_to(seg), "ack_to({seg})");
                checks += 1;
            } else if rng.chance(2) {
                new.clear_sacks();
                old.clear_sacks();
            }
            let (c, w) = compare_queries(&mut rng, &new, &old);
            checks += c;
            wrapped += w;
            largest = largest.max(old.end() - old.base());
            if op % 997 == 0 {
                new.check_invariants();
                for seg in old.base().saturating_sub(2)..old.end() + 2 {
                    assert_eq!(new.get(seg).map(view), old.get(seg).copied().map(view), "get({seg})");
                }
                checks += 1;
            }
        }
        new.check_invariants();
        (checks, wrapped, largest)
    }

    #[test]
    fn ring_scoreboard_answers_as_the_scan_does() {
        let mut total = 0;
        for (seed, max_window) in
            [(1, 40), (2, 130), (3, 700), (4, 1500), (5, 3000), (6, 5000), (7, 300), (8, 2500)]
        {
            let (checks, wrapped, largest) = run(seed, 30_000, max_window);
            // Several ring sizes were crossed (the first ring holds one word).
            assert!(
                largest > max_window / 2 && largest > WORD as u64 / 2,
                "seed {seed}: window reached {largest}"
            );
            assert!(wrapped > 1000, "seed {seed}: only {wrapped} ranges ran past the ring's end");
            total += checks;
            eprintln!(
                "seed {seed}: {checks} answers compared, {wrapped} wrapped ranges, window up to {largest}"
            );
        }
        assert!(total > 5_000_000, "{total} answers compared");
    }
}
