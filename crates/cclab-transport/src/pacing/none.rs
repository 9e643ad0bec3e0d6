//! No pacing: a packet leaves as soon as the window allows (ACK clocking, RFC 5681).

use super::{Pacer, PacingDescriptor};
use cclab_wire::{Descriptor, ParamError, Params, Role};

pub const DESCRIPTOR: PacingDescriptor = Descriptor {
    name: "none",
    role: Role::Pacing,
    summary: "no pacing: send whenever the window allows",
    source: "RFC 5681 (ACK clocking)",
    parameters: &[],
    metrics: &[],
    build: build_none,
};

fn build_none(_: &Params) -> Result<Option<Box<dyn Pacer>>, ParamError> {
    Ok(None)
}
