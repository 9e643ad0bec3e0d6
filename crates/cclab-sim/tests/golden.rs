//! Golden results: each scenario in `tests/golden/*.toml` must reproduce the
//! committed `*.json` summary (time series included) value for value.
//!
//! The files were written by the simulator before the platform rework (the
//! SACK scoreboard, the congestion-control contract, protocol-neutral packets),
//! so this test is the proof that the rework changed no result. A result may
//! gain new fields; every field the golden file has must keep its value.
//! Regenerate deliberately, explaining why in the commit, with
//! `CCLAB_BLESS=1 cargo test --release -p cclab-sim --test integration golden::`.

use serde_json::Value;
use std::path::{Path, PathBuf};

fn golden_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/golden")
}

fn summary(toml_path: &Path) -> Value {
    let text = std::fs::read_to_string(toml_path).expect("golden scenario readable");
    let name = toml_path.file_stem().and_then(|s| s.to_str()).unwrap_or("golden");
    let result = cclab_sim::run_toml(&text, name, None).unwrap_or_else(|e| panic!("{name}: {e}"));
    let mut v = serde_json::to_value(result).expect("result serialises");
    if let Some(o) = v.as_object_mut() {
        o.remove("wall_s");
    }
    v
}

/// Every value in `want` is present and equal in `got`; returns the first difference.
fn first_difference(want: &Value, got: &Value, path: &str) -> Option<String> {
    match (want, got) {
        (Value::Object(w), Value::Object(g)) => w.iter().find_map(|(k, wv)| match g.get(k) {
            Some(gv) => first_difference(wv, gv, &format!("{path}.{k}")),
            None => Some(format!("{path}.{k}: missing")),
        }),
        (Value::Array(w), Value::Array(g)) => {
            if w.len() != g.len() {
                return Some(format!("{path}: {} entries, golden has {}", g.len(), w.len()));
            }
            w.iter()
                .zip(g)
                .enumerate()
                .find_map(|(i, (wv, gv))| first_difference(wv, gv, &format!("{path}[{i}]")))
        }
        _ if want == got => None,
        // JSON text round-trips a float to within an ulp or two; integers compare exactly.
        (Value::Number(w), Value::Number(g)) if w.is_f64() || g.is_f64() => {
            let (a, b) = (w.as_f64().unwrap_or(f64::NAN), g.as_f64().unwrap_or(f64::NAN));
            ((a - b).abs() > 1e-12 * a.abs().max(b.abs())).then(|| format!("{path}: {got} (golden {want})"))
        }
        _ => Some(format!("{path}: {got} (golden {want})")),
    }
}

#[test]
fn golden_scenarios_reproduce_their_committed_results() {
    let bless = std::env::var_os("CCLAB_BLESS").is_some();
    let mut scenarios: Vec<PathBuf> = std::fs::read_dir(golden_dir())
        .expect("golden directory")
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "toml"))
        .collect();
    scenarios.sort();
    assert!(scenarios.len() >= 10, "golden scenarios missing");
    let mut failures = Vec::new();
    for toml_path in &scenarios {
        let got = summary(toml_path);
        let json_path = toml_path.with_extension("json");
        if bless {
            let text = serde_json::to_string(&got).expect("serialise");
            std::fs::write(&json_path, text + "\n").expect("write golden");
            continue;
        }
        let text = std::fs::read_to_string(&json_path)
            .unwrap_or_else(|_| panic!("{}: no golden file (run with CCLAB_BLESS=1)", json_path.display()));
        let want: Value = serde_json::from_str(&text).expect("golden JSON");
        if let Some(d) = first_difference(&want, &got, "") {
            failures.push(format!("{}: {d}", toml_path.file_name().and_then(|n| n.to_str()).unwrap_or("?")));
        }
    }
    assert!(failures.is_empty(), "results differ from the golden files:\n{}", failures.join("\n"));
}
