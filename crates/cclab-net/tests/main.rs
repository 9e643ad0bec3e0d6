//! The real-network tests, one module a file, built as one test binary (as
//! cclab-sim's are: each file its own binary linked the whole crate graph
//! again). `common::serial()` keeps the transfers one at a time across all of
//! them, as it did within each file. Cargo.toml sets `autotests = false`, so a
//! file in `tests/` runs only once listed here (tests/test_quickstart.py checks
//! that every one is).

mod common;

mod emulator;
mod interop_udt4;
mod receiver_robustness;
mod tcp_receiver_robustness;
mod tcp_transfer;
mod transfer;
