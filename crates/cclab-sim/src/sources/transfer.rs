//! One finite transfer: the sender has `size` bytes and finishes when all are acknowledged.

use super::{AppSpec, SourceBuilder, SourceDescriptor};
use cclab_wire::{Descriptor, ParamDefault, ParamError, ParamType, Parameter, Params, Role};

pub const DESCRIPTOR: SourceDescriptor = Descriptor {
    name: "transfer",
    role: Role::TrafficSource,
    summary: "one finite transfer of `size` bytes; its completion time is reported",
    source: "ns-2 Application/FTP with `send` of a fixed size",
    parameters: &[Parameter {
        name: "size",
        ty: ParamType::Size,
        unit: "",
        min: 1.0,
        max: 1e15,
        default: ParamDefault::Required,
        meaning: "bytes to transfer",
    }],
    metrics: &[],
    build: SourceBuilder { build, protocols: &["tcp", "udt"] },
};

fn build(params: &Params) -> Result<AppSpec, ParamError> {
    Ok(AppSpec::Transfer { size: params.size("size")? })
}
