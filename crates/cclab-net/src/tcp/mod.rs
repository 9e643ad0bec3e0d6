//! TCP over real sockets: the simulator's sans-IO TCP endpoints carried in UDP
//! datagrams (cclab's own encapsulation, [`codec`]), with a connection set-up
//! they do not have ([`handshake`]), a sending host that runs several
//! connections under one send-buffer memory cap ([`send`]) and a receiver that
//! takes several ([`recv`]).

pub mod codec;
pub mod handshake;
pub mod recv;
pub mod send;
