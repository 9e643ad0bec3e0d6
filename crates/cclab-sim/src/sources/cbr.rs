//! Constant-bit-rate UDP traffic (the endpoint is [`cclab_transport::udp::CbrSource`]).

use super::{AppSpec, SourceBuilder, SourceDescriptor};
use cclab_wire::{Descriptor, ParamDefault, ParamError, ParamType, Parameter, Params, Role};

pub const DESCRIPTOR: SourceDescriptor = Descriptor {
    name: "cbr",
    role: Role::TrafficSource,
    summary: "constant bit rate: packets of `size` bytes on the wire at `rate`, optionally `on` then `off` in turn",
    source: "ns-2 Application/Traffic/CBR over Agent/UDP (on/off: Application/Traffic/Exponential with constant periods)",
    parameters: &[
        Parameter {
            name: "rate",
            ty: ParamType::Rate,
            unit: "",
            min: 1.0,
            max: 1e12,
            default: ParamDefault::Required,
            meaning: "wire bit rate while on (packet headers included)",
        },
        Parameter {
            name: "size",
            ty: ParamType::Size,
            unit: "",
            min: 29.0,
            max: 65_535.0,
            default: ParamDefault::Value("1000B"),
            meaning: "bytes of each packet on the wire, 28 of them UDP and IP headers",
        },
        Parameter {
            name: "on",
            ty: ParamType::Duration,
            unit: "",
            min: 1e-9,
            max: 1e9,
            default: ParamDefault::Absent,
            meaning: "length of each sending period (with `off`; without both the source never pauses)",
        },
        Parameter {
            name: "off",
            ty: ParamType::Duration,
            unit: "",
            min: 1e-9,
            max: 1e9,
            default: ParamDefault::Absent,
            meaning: "length of each silent period between sending periods",
        },
    ],
    metrics: &[],
    build: SourceBuilder { build, protocols: &["udp"] },
};

fn build(params: &Params) -> Result<AppSpec, ParamError> {
    let (on, off) = (params.duration("on")?, params.duration("off")?);
    if on.is_some() != off.is_some() {
        return Err(ParamError {
            name: if on.is_some() { "off" } else { "on" }.into(),
            problem: "is needed with the other of on and off",
        });
    }
    Ok(AppSpec::Cbr { rate: params.rate("rate")?, size: params.size("size")?, on, off })
}
