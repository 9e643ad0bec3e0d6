//! The send buffer in the sender: new data only below `snd_una + buffer`,
//! what was sent stays sendable when the buffer shrinks, and the host's limit
//! caps the policy's desire.

use super::test_support::*;
use super::*;
use crate::buffer::{BufferInputs, SendBufferPolicy};
use cclab_wire::random::SplitMix64;
use cclab_wire::time::millis;
use cclab_wire::{Control, Endpoint, Outbox};
use std::cell::Cell;
use std::rc::Rc;

/// Desires what the test sets, in bytes.
struct Desire(Rc<Cell<u64>>);

impl SendBufferPolicy for Desire {
    fn name(&self) -> &'static str {
        "test"
    }
    fn desire(&mut self, _now: Time, _inputs: &BufferInputs) -> u64 {
        self.0.get()
    }
}

/// Desires a random size between 1 and 40 segments, a new one on each call.
struct Wandering(SplitMix64);

impl SendBufferPolicy for Wandering {
    fn name(&self) -> &'static str {
        "wandering"
    }
    fn desire(&mut self, _now: Time, inputs: &BufferInputs) -> u64 {
        (1 + self.0.next_u64() % 40) * inputs.mss as u64
    }
}

fn buffered_sender(desire: u64, limit: u64) -> (TcpSender, Rc<Cell<u64>>) {
    let cell = Rc::new(Cell::new(desire));
    let s = sender("newreno", &config(10, false)).with_send_buffer(Box::new(Desire(cell.clone())), limit);
    (s, cell)
}

#[test]
fn new_data_stays_within_the_buffer() {
    // cwnd 10 segments, buffer 5 segments (5000 bytes of 1000-byte segments).
    let (mut s, _) = buffered_sender(5 * MSS, u64::MAX);
    assert_eq!(start(&mut s), [0, 1, 2, 3, 4]);
    // Two segments acknowledged: two more fit.
    assert_eq!(ack(&mut s, millis(100), 2, &[]), [5, 6]);
    // A buffer of 5500 bytes holds 5 whole segments, not 6.
    assert_eq!(ack(&mut s, millis(101), 3, &[]), [7]);
}

#[test]
fn the_hosts_limit_caps_the_desire() {
    let (mut s, desire) = buffered_sender(8 * MSS, 3 * MSS);
    assert_eq!(start(&mut s), [0, 1, 2]);
    let mut out = Outbox::default();
    s.on_control(millis(10), Control::SetSendBuffer { bytes: 6 * MSS }, &mut out).unwrap();
    assert_eq!(segs(&out.packets), [3, 4, 5]);
    desire.set(4 * MSS);
    assert_eq!(ack(&mut s, millis(100), 1, &[]), Vec::<u64>::new(), "5 outstanding, the buffer holds 4");
    assert_eq!(ack(&mut s, millis(101), 2, &[]), Vec::<u64>::new());
    assert_eq!(ack(&mut s, millis(102), 3, &[]), [6]);
    let state = s.send_state().unwrap();
    assert_eq!((state.desired, state.send_buffer), (4 * MSS, 4 * MSS));
}

/// A buffer that shrinks below what is outstanding blocks new data, but the
/// data already sent is still in it and is retransmitted when lost.
#[test]
fn a_shrunk_buffer_still_retransmits_what_it_holds() {
    let (mut s, desire) = buffered_sender(10 * MSS, u64::MAX);
    assert_eq!(start(&mut s), (0..10).collect::<Vec<_>>());
    desire.set(2 * MSS);
    for (i, t) in [101, 102].into_iter().enumerate() {
        assert_eq!(ack(&mut s, millis(t), 0, &[]), Vec::<u64>::new(), "duplicate ACK {}", i + 1);
    }
    assert_eq!(
        ack(&mut s, millis(103), 0, &[]),
        [0],
        "fast retransmit of a segment beyond the buffer's new size"
    );
}

#[test]
fn a_sender_never_sends_new_data_beyond_its_buffer() {
    for (recovery, sack) in [("newreno", false), ("sack", true), ("sack1", true), ("decoupled", true)] {
        let cfg = transfer(400_000, sack);
        let mut s =
            sender(recovery, &cfg).with_send_buffer(Box::new(Wandering(SplitMix64::new(3))), u64::MAX);
        s.record_transmissions();
        let mut path = Path::with_sender(s, &cfg, random_loss(9, 3));
        let mut limits = SplitMix64::new(4);
        for step in 1..=400 {
            let now = millis(25 * step);
            path.run(now);
            if step % 7 == 0 {
                let bytes = (limits.next_u64() % 30) * MSS;
                path.control(now, Control::SetSendBuffer { bytes });
            }
        }
        assert!(path.delivered_exactly_once_in_order(400_000), "{recovery}");
        let mut highest = 0;
        for t in path.sender.transmissions().unwrap() {
            if t.seg >= highest {
                assert!(
                    t.seg < t.buffer_end,
                    "{recovery}: new segment {} at {} beyond {}",
                    t.seg,
                    t.at,
                    t.buffer_end
                );
                highest = t.seg + 1;
            }
        }
    }
}
