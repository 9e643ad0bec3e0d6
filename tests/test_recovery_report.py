"""The recovery study's counts from a packet trace and its single-run ordering count, on hand-made tables."""

from __future__ import annotations

import polars as pl
import pytest
from cclab.studies.recovery import FORWARD, PACKET_PAYLOAD, REVERSE, paper_order_fraction, trace_counts


def _event(time_s: float, event: str, link: str, flow: int, seq: int, kind: str = "data") -> dict[str, object]:
    data = kind == "data"
    return {"time_s": time_s, "event": event, "link": link, "kind": kind, "flow_id": flow, "seq": seq,
            "len": PACKET_PAYLOAD if data else 0, "wire_bytes": 1000 if data else 40}  # fmt: skip


def test_trace_counts_counts_what_an_ns2_trace_count_does() -> None:
    p = PACKET_PAYLOAD
    trace = pl.DataFrame(
        [
            # flow 0: packets 0, 1, 2 cross; packet 1 crosses again (a packet the receiver had).
            _event(0.10, "enqueue", FORWARD, 0, 0),
            _event(0.11, "depart", FORWARD, 0, 0),
            _event(0.12, "depart", FORWARD, 0, p),
            _event(0.13, "depart", FORWARD, 0, 2 * p),
            _event(0.50, "depart", FORWARD, 0, p),
            # flow 1: packet 4 crosses; packet 9 leaves 1 ms before the end, so arrives after it.
            _event(0.20, "depart", FORWARD, 1, 4 * p),
            _event(9.999, "depart", FORWARD, 1, 9 * p),
            # ACKs on the reverse direction; one still queued (not received).
            _event(0.30, "depart", REVERSE, 0, 0, kind="ack"),
            _event(0.31, "depart", REVERSE, 1, 0, kind="ack"),
            _event(0.32, "enqueue", REVERSE, 1, 0, kind="ack"),
            # Drops of flow 0: two in one round trip, then one alone; flow 1: one.
            _event(1.00, "drop", FORWARD, 0, 5 * p),
            _event(1.05, "drop", FORWARD, 0, 6 * p),
            _event(2.00, "drop", FORWARD, 0, 9 * p),
            _event(3.00, "drop", FORWARD, 1, 7 * p),
        ]
    )
    counts = trace_counts(trace, duration_s=10.0, rtt_s=0.1, flow_id=0)
    assert counts["trace_data_packets"] == 5
    assert counts["trace_data_mbps"] == pytest.approx(5 * 1000 * 8 / 10 / 1e6)
    assert counts["trace_ack_packets"] == 2
    assert counts["trace_ack_mbps"] == pytest.approx(2 * 40 * 8 / 10 / 1e6)
    assert counts["trace_duplicates"] == 1
    assert counts["trace_seq_flow"] == 3  # packets 0..2 of flow 0
    assert counts["trace_seq_mean"] == 4  # flow 0: 3, flow 1: 5
    assert counts["trace_drops"] == 4
    assert counts["loss_episodes"] == 3
    assert counts["multi_loss_episodes"] == 1


def test_paper_order_fraction_counts_strict_orders_per_speed() -> None:
    values = {
        # speed, replication: tahoe, newreno, sack
        ("5Mbps", 0): (3, 2, 1),  # the order
        ("5Mbps", 1): (3, 3, 1),  # a tie is not the order
        ("5Mbps", 2): (1, 2, 3),
        ("20Mbps", 0): (9, 8, 7),
    }
    runs = pl.DataFrame(
        [
            {"recovery": v, "speed": sp, "replication": r, "x": x, "other": 0}
            for (sp, r), xs in values.items()
            for v, x in zip(("tahoe", "newreno", "sack"), xs, strict=True)
        ]
    )
    assert paper_order_fraction(runs, "x", ("tahoe", "newreno", "sack")) == {"5Mbps": (1, 3), "20Mbps": (1, 1)}
    assert paper_order_fraction(runs, "x", ("sack", "newreno", "tahoe")) == {"5Mbps": (1, 3), "20Mbps": (0, 1)}
