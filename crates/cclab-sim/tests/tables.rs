//! The tables that cross to Python (`RunResult::tables`, Arrow's layout) hold
//! exactly what the JSON summary of the same run holds: every key of every
//! row or column, with its value, and no column the summary lacks. The tables
//! list their columns by hand beside the result structs; this keeps the two
//! from drifting apart.

use cclab_sim::run_toml;
use cclab_sim::table::{Column, Kind, Table};
use serde_json::Value;

// TCP and UDP flows (counters each lacks: nulls), finite transfers (one
// unfinished), sampled series.
const MIXED: &str = r#"
[run]
duration = "3s"
warmup = "1s"
sample = "100ms"
[topology]
kind = "dumbbell"
[topology.bottleneck]
rate = "20Mbps"
delay = "5ms"
buffer = "1bdp"
[[flows]]
name = "tcp"
count = 2
recovery = "sack"
rtt = "30ms"
[[flows]]
name = "cross"
protocol = "udp"
rtt = "30ms"
app = { kind = "cbr", rate = "4Mbps", size = "1000B" }
[[flows]]
name = "big"
rtt = "30ms"
start = "2s"
app = { kind = "transfer", size = "50MB" }
"#;

/// Row `i` of `column` as the JSON summary writes it.
fn cell(column: &Column, i: usize) -> Value {
    match column.kind {
        Kind::Utf8 => column.text(i).map_or(Value::Null, Value::from),
        Kind::Boolean => column.flag(i).map_or(Value::Null, Value::from),
        Kind::Float64 | Kind::Int64 => column.number(i).map_or(Value::Null, Value::from),
    }
}

fn as_number(v: &Value) -> Value {
    v.as_f64().map_or_else(|| v.clone(), Value::from)
}

/// A summary table of rows (flows, links) against its columns.
fn rows_match(name: &str, rows: &Value, table: &Table) {
    let rows = rows.as_array().unwrap();
    assert_eq!(table.rows, rows.len(), "{name}: rows");
    let mut keys: Vec<&String> = Vec::new();
    for (i, row) in rows.iter().enumerate() {
        for (key, value) in row.as_object().unwrap() {
            let column = table.get(key).unwrap_or_else(|| panic!("{name}: no column {key}"));
            assert_eq!(cell(column, i), as_number(value), "{name}[{i}].{key}");
            if !keys.contains(&key) {
                keys.push(key);
            }
        }
    }
    // Absent keys are nulls; no column names a key no row has.
    assert_eq!(table.columns.len(), keys.len(), "{name}: columns");
}

/// A summary table of columns (transfers, series) against the table's.
fn columns_match(name: &str, columns: &Value, table: &Table) {
    let columns = columns.as_object().unwrap();
    let mut names: Vec<&str> = table.columns.iter().map(|c| c.name.as_str()).collect();
    names.sort_unstable();
    assert_eq!(names, columns.keys().map(String::as_str).collect::<Vec<_>>(), "{name}");
    for (key, values) in columns {
        let column = table.get(key).unwrap();
        let values = values.as_array().unwrap();
        assert_eq!(column.rows, values.len(), "{name}.{key}");
        for (i, value) in values.iter().enumerate() {
            assert_eq!(cell(column, i), as_number(value), "{name}.{key}[{i}]");
        }
    }
}

#[test]
fn every_table_holds_what_the_json_summary_holds() {
    let result = run_toml(MIXED, "t", Some(3)).unwrap();
    let summary = serde_json::to_value(&result).unwrap();
    let tables: std::collections::BTreeMap<_, _> = result.tables().into_iter().collect();
    rows_match("flows", &summary["flows"], &tables["flows"]);
    rows_match("links", &summary["links"], &tables["links"]);
    columns_match("transfers", &summary["transfers"], &tables["transfers"]);
    let series = &summary["timeseries"];
    columns_match("metrics", &series["metrics"], &tables["metrics"]);
    columns_match("flow_series", &series["flows"], &tables["flow_series"]);
    columns_match("link_series", &series["links"], &tables["link_series"]);
    assert!(tables["flow_series"].rows > 20 && tables["transfers"].rows == 1);
    assert!(tables["flows"].get("packets_lost").unwrap().validity.is_some(), "TCP rows lack UDP's counter");
}
