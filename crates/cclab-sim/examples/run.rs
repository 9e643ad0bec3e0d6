//! Runs a scenario file from Rust alone (for profilers): `cargo run --release -p cclab-sim --example run -- FILE [REPEAT]`.
//! `CCLAB_JSON=1` prints the summary; `CCLAB_TABLES=1` builds the header and tables the Python binding hands over.
/// Large buffers on huge pages, as in the Python extension (see `cclab_core::huge_pages`).
#[global_allocator]
static ALLOCATOR: cclab_sim::HugePageAlloc = cclab_sim::HugePageAlloc;

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let Some(path) = args.get(1) else {
        eprintln!("usage: run FILE [REPEAT]");
        std::process::exit(2);
    };
    let repeat: usize = args.get(2).and_then(|r| r.parse().ok()).unwrap_or(1);
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| {
        eprintln!("{path}: {e}");
        std::process::exit(2)
    });
    // The cancellable entry point, as the Python binding calls it, so that
    // profiles and timings cover the loop that polls the token.
    let token = cclab_sim::CancelToken::new();
    // Trace files are relative to the scenario file, as from Python.
    let scenario = match cclab_sim::parse_in(&text, path, std::path::Path::new(path).parent()) {
        Ok(s) => s,
        Err(e) => {
            eprintln!("error: {e}");
            std::process::exit(2);
        }
    };
    for _ in 0..repeat {
        match cclab_sim::run_cancellable(&scenario, None, cclab_sim::MemoryLimit::Unlimited, true, &token) {
            Ok(r) if std::env::var_os("CCLAB_JSON").is_some() => {
                println!("{}", serde_json::to_string_pretty(&r).unwrap_or_default());
            }
            Ok(r) if std::env::var_os("CCLAB_TABLES").is_some() => {
                // What the Python binding hands over, for profiling that path from Rust.
                let header = serde_json::to_string(&r.header()).unwrap_or_default();
                let tables = r.tables();
                drop(r);
                let columns: usize = tables.iter().map(|(_, t)| t.columns.len()).sum();
                println!("header {} bytes, {} tables, {columns} columns", header.len(), tables.len());
            }
            Ok(r) => {
                // CCLAB_PCAP_DIR=DIR: also write the run's pcap files there (`[[trace]]`).
                if let (Some(dir), Some(trace)) = (std::env::var_os("CCLAB_PCAP_DIR"), r.trace.as_ref()) {
                    match cclab_sim::pcap::write_all(trace, std::path::Path::new(&dir)) {
                        Ok(paths) => paths.iter().for_each(|p| println!("wrote {}", p.display())),
                        Err(e) => eprintln!("pcap: {e}"),
                    }
                }
                let delivered: u64 = r.flows.iter().map(|f| f.bytes_delivered).sum();
                println!(
                    "wall {:.4}s events {} ({:.1} M/s) hops {} ({:.1} M/s) delivered {} MB",
                    r.wall_s,
                    r.events,
                    r.events as f64 / r.wall_s / 1e6,
                    r.packet_hops,
                    r.packet_hops as f64 / r.wall_s / 1e6,
                    delivered / 1_000_000
                );
            }
            Err(e) => {
                eprintln!("error: {e}");
                std::process::exit(2);
            }
        }
    }
}
