//! An infinite backlog: the sender always has data (an FTP transfer that never ends).

use super::{AppSpec, SourceBuilder, SourceDescriptor};
use cclab_wire::{Descriptor, ParamError, Params, Role};

pub const DESCRIPTOR: SourceDescriptor = Descriptor {
    name: "bulk",
    role: Role::TrafficSource,
    summary: "an infinite backlog: the sender always has data (long-lived FTP)",
    source: "ns-2 Application/FTP",
    parameters: &[],
    metrics: &[],
    build: SourceBuilder { build, protocols: &["tcp", "udt"] },
};

fn build(_: &Params) -> Result<AppSpec, ParamError> {
    Ok(AppSpec::Bulk)
}
