//! Real-network mode (DESIGN.md: `cclab-net`): the link emulator that stands in
//! for netem and a token-bucket shaper where those are not available, and the
//! socket drivers that run the simulator's sans-IO endpoints, UDT and TCP, over UDP.

pub mod cli;
pub mod clock;
pub mod content;
pub mod cookie;
pub mod driver;
pub mod emulator;
pub mod error;
pub mod stream;
pub mod sys;
pub mod tcp;
pub mod udt;

pub use emulator::{
    DirectionArgs, DirectionStats, Emulator, EmulatorError, EmulatorSpec, EmulatorStats, PathSpec,
};
