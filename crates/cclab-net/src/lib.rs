//! Real-network mode (DESIGN.md: `cclab-net`): the link emulator that stands in
//! for netem and a token-bucket shaper where those are not available, and (next)
//! the socket drivers that run the simulator's sans-IO endpoints over UDP.

pub mod clock;
pub mod emulator;
pub mod sys;
pub mod udt;

pub use emulator::{
    DirectionArgs, DirectionStats, Emulator, EmulatorError, EmulatorSpec, EmulatorStats, PathSpec,
};
