//! `neardup-fuzz [SECONDS] [TARGET...]`: fuzzes each target (all by default) for SECONDS (60 by
//! default) and prints executions and time; exits 1 at the first crash, whose input is saved
//! under `target/fuzz-crashes/`. `NEARDUP_FUZZ_SEED` picks the random seed (default: the clock).

use std::path::Path;
use std::process::ExitCode;
use std::time::Duration;

fn main() -> ExitCode {
    let mut args = std::env::args().skip(1);
    let seconds = match args.next().map(|a| a.parse::<f64>()) {
        None => 60.0,
        Some(Ok(seconds)) if seconds > 0.0 => seconds,
        Some(_) => {
            eprintln!("usage: neardup-fuzz [SECONDS] [TARGET...]");
            return ExitCode::from(2);
        }
    };
    let names: Vec<String> = args.collect();
    let mut targets = Vec::new();
    for name in &names {
        match neardup_fuzz::target(name) {
            Some(target) => targets.push(target),
            None => {
                let known: Vec<_> = neardup_fuzz::TARGETS.iter().map(|t| t.name).collect();
                eprintln!("unknown target {name:?}; known: {}", known.join(", "));
                return ExitCode::from(2);
            }
        }
    }
    if targets.is_empty() {
        targets = neardup_fuzz::TARGETS.iter().collect();
    }
    let seed = std::env::var("NEARDUP_FUZZ_SEED")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or_else(|| {
            std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map_or(1, |d| d.as_nanos() as u64)
        });
    println!("seed {seed}");
    let crash_dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../target/fuzz-crashes");
    let mut failed = false;
    for target in targets {
        let report = neardup_fuzz::fuzz(target, Duration::from_secs_f64(seconds), seed, &crash_dir);
        println!(
            "{:<10} {:>9} executions in {:>6.1} s ({:>7.0}/s), slowest {:.1} ms",
            report.target,
            report.executions,
            report.elapsed.as_secs_f64(),
            report.executions as f64 / report.elapsed.as_secs_f64().max(1e-9),
            report.slowest.as_secs_f64() * 1e3,
        );
        if let Some((message, path)) = report.failure {
            println!("  CRASH: {message}\n  input saved to {}", path.display());
            failed = true;
        }
    }
    if failed {
        ExitCode::FAILURE
    } else {
        ExitCode::SUCCESS
    }
}
