//! The scenario tests, one module a file, built as one test binary: each file
//! its own binary linked the whole crate graph again, and linking about thirty
//! of them took most of the test command's compile time. Cargo.toml sets
//! `autotests = false`, so a file in `tests/` runs only once listed here
//! (tests/test_quickstart.py checks that every one is).

mod common;

mod aqm;
mod arrivals;
mod bbr;
mod bbr3;
mod bic_cubic;
mod bursty_loss;
mod cancel;
mod copa;
mod dctcp;
mod delivery_rate;
mod departures;
mod dequeue;
mod determinism;
mod dualpi2;
mod errors;
mod golden;
mod high_speed_pacing;
mod highspeed;
mod invariants;
mod l4s;
mod metrics;
mod pacing;
mod phase;
mod prague;
mod red_cw;
mod resolved;
mod sack1;
mod send_buffer;
mod tables;
mod trace;
mod udp;
mod udt;
mod validation;
mod vegas;
mod web;
mod westwood;
mod wireless_path;
