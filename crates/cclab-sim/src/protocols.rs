//! The transport protocols a flow group can use (`protocol = NAME`).

use cclab_wire::{Descriptor, Role};

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Protocol {
    Tcp,
    Udp,
    Udt,
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

pub const UDT: ProtocolDescriptor = Descriptor {
    name: "udt",
    role: Role::Protocol,
    summary: "UDT 4: reliable bulk transfer over UDP paced by a sending period (rate control each SYN, \
              NAKs, ACK2, packet-pair capacity); chooses its cc among the UDT congestion controls",
    source: "Gu & Grossman, Computer Networks 51(7) 2007; draft-gg-udt-03; UDT 4.11 src/core.cpp (sans-IO \
             model starting established, as the handshake would leave it)",
    parameters: &[],
    metrics: cclab_transport::udt::sender::METRICS,
    build: Protocol::Udt,
};

pub const PROTOCOLS: &[ProtocolDescriptor] = &[TCP, UDP, UDT];

pub fn find(name: &str) -> Option<&'static ProtocolDescriptor> {
    PROTOCOLS.iter().find(|d| d.name == name)
}
