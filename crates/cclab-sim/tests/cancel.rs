//! Stopping a run from another thread: the typed error, how soon, and that a
//! token nobody cancels changes nothing.

use cclab_sim::{run_toml, run_toml_cancellable, CancelToken, MemoryLimit, RunError};
use std::time::{Duration, Instant};

fn dumbbell(duration: &str) -> String {
    format!(
        r#"
[run]
duration = "{duration}"
warmup = "1s"
[topology]
kind = "dumbbell"
[topology.bottleneck]
rate = "100Mbps"
delay = "10ms"
buffer = "1bdp"
[[flows]]
name = "bulk"
count = 2
recovery = "sack"
cc = "reno"
rtt = "40ms"
"#
    )
}

#[test]
fn a_run_of_two_hours_stops_soon_after_its_token_is_cancelled() {
    let token = CancelToken::new();
    let runner = {
        let token = token.clone();
        std::thread::spawn(move || {
            run_toml_cancellable(&dumbbell("2h"), "t", Some(1), MemoryLimit::Unlimited, false, &token)
        })
    };
    std::thread::sleep(Duration::from_millis(200));
    let cancelled_at = Instant::now();
    token.cancel();
    let outcome = runner.join().expect("the run does not panic");
    // Milliseconds in practice; the bound only has to be far below the two
    // hours (about 80 s of wall time here) the run would otherwise take.
    assert!(cancelled_at.elapsed() < Duration::from_secs(10), "{:?}", cancelled_at.elapsed());
    match outcome {
        Err(RunError::Cancelled(c)) => {
            assert!(c.at < 7_200_000_000_000, "{c:?}");
            assert!(RunError::Cancelled(c).to_string().starts_with("run cancelled at "));
        }
        other => panic!("expected a cancelled run, got {:?}", other.map(|r| r.events)),
    }
}

#[test]
fn a_token_nobody_cancels_gives_the_plain_result() {
    let text = dumbbell("3s");
    let plain = run_toml(&text, "t", Some(4)).unwrap();
    let with_token =
        run_toml_cancellable(&text, "t", Some(4), MemoryLimit::Unlimited, false, &CancelToken::new())
            .unwrap();
    let json = |r: &cclab_sim::RunResult| {
        let mut v = serde_json::to_value(r).unwrap();
        v.as_object_mut().unwrap().remove("wall_s");
        v
    };
    assert_eq!(json(&plain), json(&with_token));
}

#[test]
fn scenario_errors_stay_scenario_errors() {
    let bad = dumbbell("3s").replace("warmup = \"1s\"", "warmup = \"5s\"");
    match run_toml_cancellable(&bad, "t", None, MemoryLimit::Unlimited, false, &CancelToken::new()) {
        Err(RunError::Scenario(e)) => assert_eq!(e.path, "run.warmup"),
        other => panic!("expected a scenario error, got {:?}", other.map(|r| r.events)),
    }
}
