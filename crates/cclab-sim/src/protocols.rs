//! The transport protocols a flow group can use (`protocol = NAME`).

use cclab_wire::{Descriptor, Role};

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Protocol {
    Tcp,
    Udp,
}

pub type ProtocolDescriptor = Descriptor<Protocol>;

pub const TCP: ProtocolDescriptor = Descriptor {
    name: "tcp",
    role: Role::Protocol,
    summary:
        "TCP: one-way bulk or finite transfers with cumulative, delayed and selective ACKs, timestamps, \
              RTO; chooses cc, recovery and pacing",
    source: "RFC 9293; RFC 5681, RFC 6298, RFC 2018, RFC 7323 (sans-IO model without connection set-up, as \
             ns-2's one-way agents)",
    parameters: &[],
    metrics: cclab_transport::tcp::sender::METRICS,
    build: Protocol::Tcp,
};

pub const UDP: ProtocolDescriptor = Descriptor {
    name: "udp",
    role: Role::Protocol,
    summary: "UDP: unresponsive datagrams with sequence numbers; the sink counts losses and one-way delay",
    source: "RFC 768",
    parameters: &[],
    metrics: cclab_transport::udp::source::METRICS,
    build: Protocol::Udp,
};

pub const PROTOCOLS: &[ProtocolDescriptor] = &[TCP, UDP];

pub fn find(name: &str) -> Option<&'static ProtocolDescriptor> {
    PROTOCOLS.iter().find(|d| d.name == name)
}
