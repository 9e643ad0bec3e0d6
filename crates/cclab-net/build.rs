//! Whether the UDT 4 interoperability tests (`tests/interop_udt4.rs`) can run
//! here: they compile a small sender and receiver against UDT 4.11 with g++.
//! Where g++ or UDT 4's headers are missing they are ignored, with the line
//! that installs them, so that the README's test command passes on a fresh
//! machine; under CI (the `CI` variable, which `.ci/run` sets) they always
//! run, and fail saying what to install.

use std::path::Path;
use std::process::Command;

const UDT4_HEADER: &str = "/usr/include/udt/udt.h";

fn main() {
    println!("cargo:rustc-check-cfg=cfg(udt4_missing)");
    println!("cargo:rerun-if-env-changed=CI");
    println!("cargo:rerun-if-changed={UDT4_HEADER}");
    let ci = std::env::var("CI").is_ok_and(|v| !v.is_empty() && v != "0" && v != "false");
    let gxx = Command::new("g++").arg("--version").output().is_ok_and(|o| o.status.success());
    let installed = gxx && Path::new(UDT4_HEADER).exists();
    if !(ci || installed) {
        println!("cargo:rustc-cfg=udt4_missing");
    }
}
